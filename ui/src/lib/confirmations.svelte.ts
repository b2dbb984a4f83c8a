// Pending tool confirmations, answered in the order they arrived. This queue is the only record
// of which calls wait for the user: the dock shows its first entry, and a tool card shows
// "Awaiting approval" while its call is in here (core's `tool_call_state` says the rest).
import * as api from "../api";
import type { ConfirmationDetails } from "../protocol/ConfirmationDetails";
import type { ConfirmationOutcome } from "../protocol/ConfirmationOutcome";
import type { SideBySideDiff } from "../protocol/SideBySideDiff";
import { HunkReview } from "./hunk-review.svelte";
import { type LateKey, typeLate } from "./late-keys";
import { sandboxSummary } from "./sandbox";
import type { SessionStore } from "./session.svelte";

type EditDetails = Extract<ConfirmationDetails, { type: "edit" }>;
/** Computes a side-by-side diff as core does (the backend's `diff_texts`). */
type Differ = (original: string | null, proposed: string) => Promise<SideBySideDiff>;

export class Confirmation {
  /** Edit confirmations: the right pane is an editor holding `edited`. */
  editing = $state(false);
  edited = $state("");
  /**
   * The diff of the user's own version (`edited`) against the original, once they leave the
   * editor to decide its hunks; null while the proposal itself is shown.
   */
  editedDiff = $state.raw<SideBySideDiff | null>(null);
  /** Per-hunk decisions on what the diff shows (edit confirmations with changes only). */
  readonly review: HunkReview | null;
  /** "Review as hunks" is computing the diff of the user's version (the editor is still open). */
  comparing = $state(false);
  /** An answer is on its way to the core. */
  answering = $state(false);
  constructor(
    readonly callId: string,
    readonly name: string,
    readonly details: ConfirmationDetails,
    /** A subagent's call: the agent that asked (the card says "asked by <agent>"). */
    readonly agent: string | null = null,
  ) {
    this.review = details.type === "edit" ? new HunkReview(details.side_by_side) : null;
  }

  /** The edit as the diff shows it now: the proposal, or the user's version of it. */
  get shown(): EditDetails | null {
    if (this.details.type !== "edit") return null;
    if (!this.editedDiff) return this.details;
    return { ...this.details, proposed: this.edited, side_by_side: this.editedDiff };
  }

  /** The user changed the proposal by hand (editing now, or their version shown as a diff). */
  get modified(): boolean {
    return this.editing || this.editedDiff !== null;
  }

  startEditing(): void {
    if (this.details.type !== "edit") return;
    this.late = null;
    // Back into the editor with the user's own version when they had one.
    if (!this.editedDiff) this.edited = this.details.proposed;
    this.editing = true;
  }

  /** Drops the user's version: the proposal and its hunks again. */
  stopEditing(): void {
    this.late = null;
    this.editing = false;
    this.edited = "";
    if (this.editedDiff && this.details.type === "edit") this.review?.reset(this.details.side_by_side);
    this.editedDiff = null;
  }

  /**
   * Leaves the editor keeping the user's version, shown as a diff against the original whose
   * hunks can be accepted or rejected (`diff` computes it as the core does).
   */
  async reviewEdits(diff: Differ, clickStamp = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.details.type !== "edit" || !this.editing || this.comparing) return;
    this.comparing = true;
    try {
      // The editor stays open while the diff is computed, and keys typed before the click can
      // still be arriving: WebKit hands a busy page its queued key events one at a time and a
      // click can overtake them (issue 34: "# edited by hand" was written as "# ed by hand").
      // So the diff is of the text as it is once it comes back: compare again until it is.
      const computed = await this.diffCurrent(diff, this.details.original, () => this.editing);
      // Discarded (Esc) meanwhile: nothing to show.
      if (!this.editing) return;
      this.editedDiff = computed;
      this.review?.reset(computed);
      this.editing = false;
      // Keys typed before the click may still come (see `lateKey`).
      this.late = { stamp: clickStamp, caret: this.caret, diff };
    } finally {
      this.comparing = false;
    }
  }

  /** Where the caret is in the editor (the editor keeps it as the user types). */
  caret = 0;
  /** The click that closed the editor, for keys typed before it that arrive after it. */
  private late: { stamp: number; caret: number; diff: Differ } | null = null;
  private lateComparing = false;

  /**
   * A key typed before the click that closed the editor and delivered after it
   * (lib/late-keys.ts): it goes into the user's version at the editor's caret and the diff
   * follows; it is never a review shortcut. True when `event` was one.
   */
  lateKey(event: LateKey & { timeStamp: number }): boolean {
    const late = this.late;
    if (!late || this.editing || !this.editedDiff) return false;
    if (event.timeStamp >= late.stamp) {
      // Typed after the click: every earlier key has arrived.
      this.late = null;
      return false;
    }
    const typed = typeLate(this.edited, late.caret, event);
    late.caret = typed.caret;
    if (typed.text !== this.edited) {
      this.edited = typed.text;
      void this.compareLate(late.diff);
    }
    return true;
  }

  /**
   * The diff of the user's version as it is when the diff comes back: keys may change it while
   * one is computed, so it is compared again until it is current (or `wanted` says to stop).
   */
  private async diffCurrent(diff: Differ, original: string | null, wanted: () => boolean): Promise<SideBySideDiff> {
    let text: string;
    let computed: SideBySideDiff;
    do {
      text = this.edited;
      computed = await diff(original, text);
    } while (wanted() && text !== this.edited);
    return computed;
  }

  /** The diff of the user's version again, once late keys changed it (until it is current). */
  private async compareLate(diff: Differ): Promise<void> {
    if (this.lateComparing || this.details.type !== "edit") return;
    this.lateComparing = true;
    try {
      const computed = await this.diffCurrent(diff, this.details.original, () => true);
      if (this.editing || !this.editedDiff) return;
      this.editedDiff = computed;
      this.review?.reset(computed);
    } finally {
      this.lateComparing = false;
    }
  }
}

/** What a confirmation card answers through: its conversation's session, queue and folder. */
export interface ConfirmationContext {
  readonly session: SessionStore;
  readonly confirmations: ConfirmationQueue;
  readonly workspace: string | null;
  /** The previews of "always allow and save" (absent: it saves without one). */
  readonly policies?: import("./policies.svelte").PolicyStore;
}

export class ConfirmationQueue {
  items = $state.raw<Confirmation[]>([]);

  constructor(
    private readonly session: SessionStore,
    /** Says in the conversation that an answer could not be sent. */
    private readonly failed: (text: string) => void,
  ) {}

  get current(): Confirmation | null {
    return this.items[0] ?? null;
  }

  /** What the dock shows: every confirmation but plans, which the plan pane shows. */
  get docked(): Confirmation[] {
    return this.items.filter((c) => c.details.type !== "exit_plan_mode");
  }

  /** Whether call `callId` waits for the user's answer. */
  has(callId: string): boolean {
    return this.items.some((c) => c.callId === callId);
  }

  /** The pending confirmation of call `callId`, if it waits. */
  get(callId: string): Confirmation | undefined {
    return this.items.find((c) => c.callId === callId);
  }

  add(callId: string, name: string, details: ConfirmationDetails, agent: string | null = null): void {
    if (this.items.some((c) => c.callId === callId)) return;
    this.items = [...this.items, new Confirmation(callId, name, details, agent)];
  }

  remove(callId: string): void {
    if (this.items.some((c) => c.callId === callId)) {
      this.items = this.items.filter((c) => c.callId !== callId);
    }
  }

  clear(): void {
    if (this.items.length > 0) this.items = [];
  }

  /** Answers a confirmation (the current one unless given); it leaves the queue once sent. */
  async answer(outcome: ConfirmationOutcome, confirmation = this.current): Promise<void> {
    if (!this.session.info || !confirmation || confirmation.answering) return;
    let content: string | null = null;
    if (outcome === "proceed_once" && confirmation.modified) outcome = "modify_with_editor";
    if (outcome === "modify_with_editor") content = confirmation.edited;
    // Hunk decisions go with an approval of what the diff shows (not from inside the editor,
    // where no hunks are shown).
    const approving = outcome === "proceed_once" || outcome === "modify_with_editor";
    const hunks = approving && !confirmation.editing ? (confirmation.review?.decisions() ?? null) : null;
    confirmation.answering = true;
    try {
      await this.session.submit({ type: "confirm_tool", call_id: confirmation.callId, outcome, content, ...(hunks ? { hunks } : {}) });
      this.remove(confirmation.callId);
    } catch (error) {
      confirmation.answering = false;
      this.failed(`Could not answer the confirmation: ${api.errorMessage(error)}`);
    }
  }

  approve(c?: Confirmation): Promise<void> {
    return this.answer("proceed_once", c ?? this.current);
  }

  reject(c?: Confirmation): Promise<void> {
    return this.answer("cancel", c ?? this.current);
  }
}

/** A short one-line summary of a confirmation (for the queue list). */
export function summarize(details: ConfirmationDetails): string {
  switch (details.type) {
    case "edit":
      return `${details.is_new_file ? "Create" : "Edit"} ${details.file_name}`;
    case "execute":
      return `Run ${details.command}`;
    case "mcp":
      return `${details.server_name}: ${details.tool_display_name || details.tool_name}`;
    case "info":
      return details.title || "Fetch";
    case "exit_plan_mode":
      return "Plan ready for review";
    case "activate_skill":
      return `Activate skill ${details.name}`;
    case "sandbox":
      return sandboxSummary(details);
  }
}
