// Reverting an applied edit from its tool card (`Op::RevertEdit`). Core writes the inverse only
// when the file is still what the edit wrote; otherwise it answers with a three-way view (what
// the edit wrote, the disk, the revert) and a merged proposal the user edits and confirms. The
// model hears about a revert with the next message. Each edit's card has one `RevertState`;
// the conversation's `RevertStore` sends the ops and routes the answers to it.
//
// What a card shows after a revert lives here, for the conversation's life: the history keeps
// the edit's original diff, so a resumed conversation shows the edit as applied again (a second
// revert then finds the file already reverted and says so).
import * as api from "../api";
import type { ConfirmationDetails } from "../protocol/ConfirmationDetails";
import type { Event } from "../protocol/Event";
import type { RevertConflict } from "../protocol/RevertConflict";

type EditDetails = Extract<ConfirmationDetails, { type: "edit" }>;

/**
 * `idle`: nothing asked; `confirming`: the user is asked to confirm `hunks`; `reverting`: sent,
 * waiting; `conflict`: the three-way view is open; `resolving`: its result was sent.
 */
export type RevertPhase = "idle" | "confirming" | "reverting" | "conflict" | "resolving";

/** The events a revert is answered with. */
export type RevertEvent = Extract<Event, { type: "edit_reverted" | "revert_conflict" | "revert_failed" }>;

/** One applied edit's revert, as its card shows it. */
export class RevertState {
  phase = $state<RevertPhase>("idle");
  /** The hunks asked for (indexes into the card's diff), or null for the whole edit. */
  hunks = $state.raw<number[] | null>(null);
  /** The open three-way view. */
  conflict = $state.raw<RevertConflict | null>(null);
  /** The user's result in the three-way view (starts as the merged proposal). */
  result = $state("");
  /** The whole edit is undone (the card reads "Reverted"). */
  reverted = $state(false);
  /** The created file was deleted by the revert. */
  deleted = $state(false);
  /** What the last answer said: a failure, or which hunks were reverted. */
  message = $state<string | null>(null);
  failed = $state(false);

  constructor(
    readonly callId: string,
    private readonly store: RevertStore,
  ) {}

  /** Asks the user to confirm reverting `hunks` (null: the whole edit). */
  ask(hunks: number[] | null): void {
    if (this.busy) return;
    this.hunks = hunks;
    this.phase = "confirming";
  }

  cancel(): void {
    this.phase = "idle";
    this.conflict = null;
  }

  get busy(): boolean {
    return this.phase === "reverting" || this.phase === "resolving";
  }

  /** Sends the confirmed revert. */
  confirm(): Promise<void> {
    this.phase = "reverting";
    return this.store.send(this, this.hunks, null);
  }

  /** Writes the user's result of the three-way view. */
  resolve(): Promise<void> {
    this.phase = "resolving";
    return this.store.send(this, this.hunks, this.result);
  }

  fail(message: string): void {
    this.phase = this.conflict ? "conflict" : "idle";
    this.failed = true;
    this.message = message;
  }
}

/** The reverts of one conversation's edits. */
export class RevertStore {
  private readonly states = new Map<string, RevertState>();

  /** `sessionId`: the session the ops go to now (the conversation's, which may change). */
  constructor(private readonly sessionId: () => string | null) {}

  /** The revert state of the edit `callId` (made once). */
  state(callId: string): RevertState {
    let state = this.states.get(callId);
    if (!state) {
      state = new RevertState(callId, this);
      this.states.set(callId, state);
    }
    return state;
  }

  async send(state: RevertState, hunks: number[] | null, resolved: string | null): Promise<void> {
    state.failed = false;
    state.message = null;
    const sessionId = this.sessionId();
    if (!sessionId) {
      state.fail("Could not revert: the agent is not connected.");
      return;
    }
    try {
      await api.submit(sessionId, {
        type: "revert_edit",
        call_id: state.callId,
        ...(hunks ? { hunks } : {}),
        ...(resolved !== null ? { resolved } : {}),
      });
    } catch (error) {
      state.fail(`Could not revert: ${api.errorMessage(error)}`);
    }
  }

  /**
   * Applies an answer to its edit's state; returns the diff the card shows from now on (what is
   * still applied) when some hunks were reverted, else null.
   */
  handle(event: RevertEvent): EditDetails | null {
    const state = this.states.get(event.call_id);
    if (!state) return null;
    switch (event.type) {
      case "edit_reverted": {
        state.conflict = null;
        state.phase = "idle";
        const remaining = event.remaining?.type === "edit" ? event.remaining : null;
        if (remaining) {
          const n = event.hunks?.length ?? 0;
          state.message = `Reverted ${n} hunk${n === 1 ? "" : "s"}; the rest stays applied.`;
          return remaining;
        }
        state.reverted = true;
        state.deleted = event.deleted;
        state.message = event.deleted
          ? "The file this edit created was deleted."
          : event.resolved
            ? "Your merge was written."
            : "The file is back to what it was before this edit.";
        return null;
      }
      case "revert_conflict":
        state.conflict = event;
        state.result = event.merged;
        state.phase = "conflict";
        return null;
      case "revert_failed":
        state.fail(event.message);
        return null;
    }
  }
}
