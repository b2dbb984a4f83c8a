// Checkpoints taken before edits, and restoring them from the edit's tool card.
//
// The session emits `checkpoint_created` right before an approved write_file / replace runs;
// the card of that call then offers "Restore". A restore is an op: `restore_checkpoint` only
// submits it, and the answer (`checkpoint_restored` / `checkpoint_error`) arrives later on the
// session's event channel (after a running turn), matched back to the card by checkpoint id.
// The state lives here rather than in the card's component, so a card scrolled out of the
// virtualised list and back keeps its confirmation and result.
import * as api from "../api";
import type { CheckpointInfo } from "../protocol/CheckpointInfo";
import type { CheckpointScope } from "../protocol/CheckpointScope";
import type { Event } from "../protocol/Event";
import type { RestoredFile } from "../protocol/RestoredFile";

/**
 * Whether "Restore conversation" and "Restore code and conversation" can be used. They rewind
 * the recorded history to the prompt that started the edit's turn (`rewind_conversation`), so
 * the model forgets that turn; code is restored first, and the conversation only when that
 * succeeded, so a "both" never happens by halves.
 */
export const CONVERSATION_RESTORE_AVAILABLE = true;
/** Why the conversation choices are disabled (their tooltip) while they are not available. */
export const CONVERSATION_RESTORE_PENDING = "Coming with session history";

export type RestorePhase = "idle" | "restoring" | "restored" | "failed";

/** What a restore should put back. */
export interface RestoreChoice {
  code: boolean;
  conversation: boolean;
}

export class Checkpoint {
  /** The confirmation under the card is open. */
  confirming = $state(false);
  phase = $state<RestorePhase>("idle");
  /** The result line ("Restored 2 files to before this edit" or the error), once answered. */
  result = $state<string | null>(null);
  /** What the last restore did to each file. */
  restored = $state.raw<RestoredFile[]>([]);
  /** The user just opened the confirmation: its first button takes the focus once (not when
   * the card is merely re-rendered, e.g. scrolled back into the virtualised list). */
  private focusRequested = false;
  /** What the last restore asked for (the result's wording depends on it). */
  choice: RestoreChoice = { code: true, conversation: false };

  constructor(
    readonly id: string,
    readonly callId: string,
    readonly scope: CheckpointScope,
    /** Workspace-relative paths the edit was about to change. */
    readonly files: string[],
    private readonly store: CheckpointStore,
    /** Listed by `/restore` rather than met as an edit of this conversation. */
    readonly listed = false,
  ) {}

  /**
   * Whether the conversation can be rewound to before this edit: it must have been made in this
   * conversation (a checkpoint listed by `/restore` may come from an earlier one).
   */
  get conversationAvailable(): boolean {
    return CONVERSATION_RESTORE_AVAILABLE && (!this.listed || this.store.conversationTarget(this.callId) !== null);
  }

  /** Opens or closes the confirmation (the card's Restore button). */
  toggleConfirm(): void {
    this.confirming = !this.confirming;
    this.focusRequested = this.confirming;
  }

  /** True once after the user opened the confirmation. */
  takeFocusRequest(): boolean {
    const requested = this.focusRequested;
    this.focusRequested = false;
    return requested;
  }

  restore(choice: RestoreChoice): Promise<void> {
    return this.store.restore(this, choice);
  }
}

export class CheckpointStore {
  /** The session restores go to (from `session_configured`, the first event of a session). */
  sessionId: string | null = null;
  /**
   * The recorded message a conversation restore of an edit (by call id) rewinds to: the prompt
   * that started the edit's turn (set by the chat, which follows `message_recorded`).
   */
  conversationTarget: (callId: string) => string | null = () => null;
  private readonly byId = new Map<string, Checkpoint>();
  /** The checkpoint whose restore was sent last: a `checkpoint_error` without an id is its. */
  private pending: Checkpoint | null = null;
  /** The checkpoint whose conversation rewind was sent, and the message it rewinds to. */
  private rewinding: { checkpoint: Checkpoint; messageId: string } | null = null;

  clear(): void {
    this.sessionId = null;
    this.byId.clear();
    this.pending = null;
    this.rewinding = null;
  }

  /** A `rewound` arrived: the result line of the checkpoint that asked for it, if one did. */
  rewound(messageId: string): string | null {
    const r = this.rewinding;
    if (!r || r.messageId !== messageId) return null;
    this.rewinding = null;
    r.checkpoint.phase = "restored";
    r.checkpoint.result = restoredText(r.checkpoint.restored.length, r.checkpoint.choice);
    return r.checkpoint.result;
  }

  /** An `error` event while a rewind was pending is its failure; true when it was. */
  rewindFailed(message: string): boolean {
    const r = this.rewinding;
    if (!r) return false;
    this.rewinding = null;
    r.checkpoint.phase = "failed";
    r.checkpoint.result = `Could not restore the conversation: ${message}`;
    return true;
  }

  private async rewind(checkpoint: Checkpoint): Promise<void> {
    const messageId = this.conversationTarget(checkpoint.callId);
    if (!this.sessionId || !messageId) {
      checkpoint.phase = "failed";
      checkpoint.result = "Could not restore the conversation: this edit is not in the recorded history.";
      return;
    }
    this.rewinding = { checkpoint, messageId };
    try {
      await api.rewindConversation(this.sessionId, messageId);
    } catch (error) {
      this.rewinding = null;
      checkpoint.phase = "failed";
      checkpoint.result = `Could not restore the conversation: ${api.errorMessage(error)}`;
    }
  }

  /** Records a `checkpoint_created`; the chat attaches it to the call's tool card. */
  created(event: Extract<Event, { type: "checkpoint_created" }>): Checkpoint {
    const checkpoint = new Checkpoint(event.checkpoint_id, event.call_id, event.scope, event.files, this);
    this.byId.set(checkpoint.id, checkpoint);
    return checkpoint;
  }

  /** A checkpoint listed by `/restore` (the same object when an edit card already has it). */
  listed(info: CheckpointInfo): Checkpoint {
    const known = this.byId.get(info.checkpoint_id);
    if (known) return known;
    const checkpoint = new Checkpoint(info.checkpoint_id, info.call_id ?? "", info.scope, info.files, this, true);
    this.byId.set(checkpoint.id, checkpoint);
    return checkpoint;
  }

  /**
   * Applies a restore's answer to the card that asked for it. Returns false when no card did
   * (e.g. an error of listing), so the chat shows it on its own.
   */
  answered(event: Extract<Event, { type: "checkpoint_restored" | "checkpoint_error" }>): boolean {
    const checkpoint = (event.checkpoint_id !== null ? this.byId.get(event.checkpoint_id) : undefined) ?? (
      event.type === "checkpoint_error" && event.checkpoint_id === null ? this.pending : null
    );
    if (!checkpoint) return false;
    if (checkpoint === this.pending) this.pending = null;
    if (event.type === "checkpoint_restored") {
      checkpoint.restored = event.files;
      if (checkpoint.choice.conversation) {
        // The code is back; now the conversation (answered by `rewound`).
        void this.rewind(checkpoint);
        return true;
      }
      checkpoint.phase = "restored";
      checkpoint.result = restoredText(event.files.length, checkpoint.choice);
    } else {
      checkpoint.phase = "failed";
      checkpoint.result = `Could not restore: ${event.message}`;
    }
    return true;
  }

  async restore(checkpoint: Checkpoint, choice: RestoreChoice): Promise<void> {
    if (checkpoint.phase === "restoring") return;
    checkpoint.confirming = false;
    checkpoint.choice = choice;
    checkpoint.restored = [];
    if (!this.sessionId) {
      checkpoint.phase = "failed";
      checkpoint.result = "Could not restore: the agent is not connected.";
      return;
    }
    checkpoint.phase = "restoring";
    checkpoint.result = null;
    if (!choice.code) return this.rewind(checkpoint);
    this.pending = checkpoint;
    try {
      // The code only: the conversation is rewound once the code is back (see `answered`).
      await api.restoreCheckpoint(this.sessionId, checkpoint.id, true, false);
    } catch (error) {
      if (this.pending === checkpoint) this.pending = null;
      checkpoint.phase = "failed";
      checkpoint.result = `Could not restore: ${api.errorMessage(error)}`;
    }
  }
}

function restoredText(count: number, choice: RestoreChoice): string {
  if (!choice.code) return "Restored the conversation to before this edit";
  if (count === 0) {
    return choice.conversation
      ? "Restored the conversation; the files were already as they were before this edit"
      : "Nothing to restore: the files are as they were before this edit";
  }
  const files = `${count} file${count === 1 ? "" : "s"}`;
  return `Restored ${files}${choice.conversation ? " and the conversation" : ""} to before this edit`;
}
