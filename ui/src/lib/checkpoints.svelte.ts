// Checkpoints taken before edits, and restoring them: from an edit's tool card in the chat, from
// the list of the session's checkpoints, and from an edit in the history browser's transcript.
//
// The session emits `checkpoint_created` right before an approved write_file / replace runs, and
// answers `list_checkpoints` with `checkpoints` (the folder's, newest first: that is how the cards
// of a resumed session, rebuilt from the stored transcript, get theirs back). A restore is one op:
// `restore_checkpoint` with the code and/or the conversation, done by the session itself (code
// first, then the conversation rewound to the prompt of the edit's turn); the answer
// (`checkpoint_restored` / `checkpoint_error`) arrives later on the session's event channel, after
// a running turn, matched back by checkpoint id. The state lives here rather than in the
// components, so a card scrolled out of the virtualised list and back keeps its confirmation and
// result.
import * as api from "../api";
import type { CheckpointInfo } from "../protocol/CheckpointInfo";
import type { CheckpointScope } from "../protocol/CheckpointScope";
import type { Event } from "../protocol/Event";
import type { RestoredConversation } from "../protocol/RestoredConversation";
import type { RestoredFile } from "../protocol/RestoredFile";

export type RestorePhase = "idle" | "restoring" | "restored" | "failed";

/** What a restore should put back. */
export interface RestoreChoice {
  code: boolean;
  conversation: boolean;
}

/**
 * Where a restore control is shown; the test ids are prefixed by it (`restore-code` in the chat,
 * `checkpoints-restore-code` in the checkpoint list, `history-restore-code` in the transcript).
 */
export type RestorePlace = "chat" | "checkpoints" | "history";

/** The test id of a restore control shown in `place`. */
export function restoreTestId(place: RestorePlace, name: string): string {
  return place === "chat" ? name : `${place}-${name}`;
}

export class Checkpoint {
  /** Where the confirmation is open (one place at a time), or null. */
  confirmingIn = $state<RestorePlace | null>(null);
  phase = $state<RestorePhase>("idle");
  /** The result line ("Restored 2 files to before this edit" or the error), once answered. */
  result = $state<string | null>(null);
  /** What the last restore did to each file. */
  restored = $state.raw<RestoredFile[]>([]);
  /** What the last restore asked for (the result's wording depends on it). */
  choice: RestoreChoice = { code: true, conversation: false };
  /** The user just opened the confirmation: its first button takes the focus once (not when
   * the card is merely re-rendered, e.g. scrolled back into the virtualised list). */
  private focusRequested = false;
  /** The edit's tool (`replace`, `write_file`); null for a snapshot taken before a restore. */
  tool = $state<string | null>(null);
  /** RFC 3339, UTC; null until listed (a `checkpoint_created` just now). */
  createdAt = $state<string | null>(null);
  private waiting: (() => void)[] = [];

  constructor(
    readonly id: string,
    /** The edit's tool call; null for the snapshot taken before a restore. */
    readonly callId: string | null,
    readonly scope: CheckpointScope,
    /** Workspace-relative paths the edit was about to change. */
    readonly files: string[],
    /** The session the edit belongs to (its conversation is the one a restore rewinds). */
    readonly sessionId: string | null,
    /** What a snapshot not made for an edit was for ("before restoring …"). */
    readonly label: string | null,
    /** Sends the restore (the chat's session, or the history browser's resume-then-restore). */
    private readonly restorer: (checkpoint: Checkpoint, choice: RestoreChoice) => Promise<void>,
  ) {}

  static fromInfo(info: CheckpointInfo, restorer: Checkpoint["restorer"]): Checkpoint {
    const checkpoint = new Checkpoint(info.checkpoint_id, info.call_id, info.scope, info.files, info.session_id, info.label, restorer);
    checkpoint.describe(info);
    return checkpoint;
  }

  /** Takes what a listing knows about it (its tool and time). */
  describe(info: CheckpointInfo): void {
    this.tool = info.tool;
    this.createdAt = info.created_at;
  }

  /**
   * Why the conversation of this checkpoint cannot be restored in session `sessionId` (the
   * buttons' tooltip), or null when it can.
   */
  conversationBlocked(sessionId: string | null): string | null {
    if (!this.sessionId || !this.callId) return "This snapshot has no conversation of its own; restore the code only";
    if (this.sessionId !== sessionId) return "From another session: open it from the history to restore its conversation";
    return null;
  }

  /** Opens or closes the confirmation in `place` (the Restore button there). */
  toggleConfirm(place: RestorePlace): void {
    this.confirmingIn = this.confirmingIn === place ? null : place;
    this.focusRequested = this.confirmingIn !== null;
  }

  /** True once after the user opened the confirmation. */
  takeFocusRequest(): boolean {
    const requested = this.focusRequested;
    this.focusRequested = false;
    return requested;
  }

  restore(choice: RestoreChoice): Promise<void> {
    if (this.phase === "restoring") return Promise.resolve();
    return this.restorer(this, choice);
  }

  /** The restore was sent (or is about to be): the card says "Restoring…". */
  begin(choice: RestoreChoice): void {
    this.confirmingIn = null;
    this.choice = choice;
    this.restored = [];
    this.phase = "restoring";
    this.result = null;
  }

  succeed(files: RestoredFile[], conversation: RestoredConversation | null): void {
    this.restored = files;
    this.phase = "restored";
    this.result = restoredText(files.length, this.choice, conversation);
    this.settle();
  }

  fail(message: string): void {
    this.phase = "failed";
    this.result = message;
    this.settle();
  }

  /** Shows the state of `other` (the same checkpoint restored through another object). */
  copyFrom(other: Checkpoint): void {
    this.choice = other.choice;
    this.restored = other.restored;
    this.phase = other.phase;
    this.result = other.result;
    if (this.phase !== "restoring") this.settle();
  }

  /** Resolves once the restore under way (if any) has its answer. */
  settled(): Promise<void> {
    if (this.phase !== "restoring") return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private settle(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}

export class CheckpointStore {
  /** The list of the folder's checkpoints is open (Header's Checkpoints button, `/restore`). */
  panelOpen = $state(false);
  /** The session restores go to (set when it starts). */
  sessionId: string | null = null;
  /**
   * The conversation that session records now: its id at first, a new one after `/clear`
   * (`conversation_cleared`). New edits belong to it, and only its conversation can be rewound.
   */
  conversationId = $state<string | null>(null);
  /** The folder's checkpoints, newest first: this session's edits and restores, then others'. */
  list = $state.raw<Checkpoint[]>([]);
  /** Each checkpoint's object (shared by its card, the list and a history transcript). */
  private readonly byId = new Map<string, Checkpoint>();
  /** The checkpoint whose restore was sent last: a `checkpoint_error` without an id is its. */
  private pending: Checkpoint | null = null;

  clear(): void {
    this.sessionId = null;
    this.conversationId = null;
    this.byId.clear();
    this.list = [];
    this.pending = null;
  }

  get(id: string): Checkpoint | undefined {
    return this.byId.get(id);
  }

  /** The object of a listed checkpoint (made once per id). */
  adopt(info: CheckpointInfo): Checkpoint {
    let checkpoint = this.byId.get(info.checkpoint_id);
    if (!checkpoint) {
      checkpoint = Checkpoint.fromInfo(info, (c, choice) => this.restore(c, choice));
      this.byId.set(checkpoint.id, checkpoint);
    } else {
      checkpoint.describe(info);
    }
    return checkpoint;
  }

  /**
   * Makes `checkpoint` (made elsewhere, e.g. the history browser's) the one answers of its id
   * apply to, unless this store already has one; returns the one in use.
   */
  track(checkpoint: Checkpoint): Checkpoint {
    const known = this.byId.get(checkpoint.id);
    if (known) return known;
    this.byId.set(checkpoint.id, checkpoint);
    return checkpoint;
  }

  /**
   * Records a `checkpoint_created` (before an edit of `tool`); the chat attaches it to the call's
   * tool card.
   */
  created(event: Extract<Event, { type: "checkpoint_created" }>, tool: string | null): Checkpoint {
    const owner = this.conversationId ?? this.sessionId;
    const checkpoint = new Checkpoint(event.checkpoint_id, event.call_id, event.scope, event.files, owner, null, (c, choice) =>
      this.restore(c, choice),
    );
    checkpoint.tool = tool;
    this.byId.set(checkpoint.id, checkpoint);
    this.list = [checkpoint, ...this.list];
    return checkpoint;
  }

  /** A `checkpoints` answer: the list shown, its objects reused where known. */
  listed(checkpoints: CheckpointInfo[]): Checkpoint[] {
    const adopted = checkpoints.map((info) => this.adopt(info));
    this.list = adopted;
    return adopted;
  }

  /** Asks the session for the folder's checkpoints again (a `checkpoints` event answers). */
  async refresh(): Promise<void> {
    if (!this.sessionId) return;
    try {
      await api.submit(this.sessionId, { type: "list_checkpoints" });
    } catch {
      // The session ended; the next one lists them.
    }
  }

  /**
   * Applies a restore's answer to the checkpoint that asked for it. Returns it, or null when no
   * restore did (e.g. an error of listing), so the chat shows it on its own.
   */
  answered(event: Extract<Event, { type: "checkpoint_restored" | "checkpoint_error" }>): Checkpoint | null {
    const checkpoint =
      (event.checkpoint_id !== null ? this.byId.get(event.checkpoint_id) : undefined) ??
      (event.type === "checkpoint_error" && event.checkpoint_id === null ? this.pending : null);
    if (!checkpoint || checkpoint.phase !== "restoring") return null;
    if (checkpoint === this.pending) this.pending = null;
    if (event.type === "checkpoint_restored") {
      checkpoint.succeed(event.files, event.conversation);
      // The snapshot taken before the restore (to undo it) is new in the list.
      void this.refresh();
    } else {
      checkpoint.fail(`Could not restore: ${event.message}`);
    }
    return checkpoint;
  }

  /** Sends the restore of `checkpoint` to this store's session. */
  async restore(checkpoint: Checkpoint, choice: RestoreChoice): Promise<void> {
    checkpoint.begin(choice);
    if (!this.sessionId) {
      checkpoint.fail("Could not restore: the agent is not connected.");
      return;
    }
    // The answer goes to the object that asked (and is shown wherever it is).
    this.byId.set(checkpoint.id, checkpoint);
    this.pending = checkpoint;
    try {
      await api.submit(this.sessionId, { type: "restore_checkpoint", checkpoint_id: checkpoint.id, code: choice.code, conversation: choice.conversation });
    } catch (error) {
      if (this.pending === checkpoint) this.pending = null;
      checkpoint.fail(`Could not restore: ${api.errorMessage(error)}`);
    }
  }
}

function restoredText(count: number, choice: RestoreChoice, conversation: RestoredConversation | null): string {
  if (!choice.code) return "Restored the conversation to before this edit";
  const rewound = choice.conversation && conversation !== null;
  if (count === 0) {
    return rewound
      ? "Restored the conversation; the files were already as they were before this edit"
      : "Nothing to restore: the files are as they were before this edit";
  }
  const files = `${count} file${count === 1 ? "" : "s"}`;
  return `Restored ${files}${rewound ? " and the conversation" : ""} to before this edit`;
}
