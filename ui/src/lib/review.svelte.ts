// The whole-turn review of one conversation ("Review at end of turn"): the switch's state, and
// the files a turn staged (core's `turn_review`), each with the user's decision, until they are
// applied or discarded (`apply_turn_review`, answered by `turn_review_applied`).
import * as api from "../api";
import type { ConfirmationDetails } from "../protocol/ConfirmationDetails";
import type { ReviewAccept } from "../protocol/ReviewAccept";
import type { ReviewDecision } from "../protocol/ReviewDecision";
import type { ReviewFile } from "../protocol/ReviewFile";
import type { ReviewNotApplied } from "../protocol/ReviewNotApplied";
import { Confirmation } from "./confirmations.svelte";
import type { HunkReview } from "./hunk-review.svelte";
import type { SessionStore } from "./session.svelte";

type EditDetails = Extract<ConfirmationDetails, { type: "edit" }>;

/**
 * One staged file and what the user decided on it. The per-hunk decisions and the editor live in
 * a `Confirmation` (with its `HunkReview`), so the file's DiffView is the confirmation's: the same
 * hunk controls (`hunk`, `hunk-accept`, `hunk-reject`, picked lines) and the same editable pane.
 */
export class ReviewEntry {
  readonly editor: Confirmation;
  readonly details: EditDetails;

  constructor(readonly file: ReviewFile) {
    this.details = {
      type: "edit",
      title: file.new_file ? `Create ${file.shown_path}` : `Edit ${file.shown_path}`,
      file_path: file.path,
      file_name: file.shown_path.split("/").pop() ?? file.shown_path,
      original: file.original,
      proposed: file.staged,
      unified_diff: "",
      side_by_side: file.side_by_side,
      is_new_file: file.new_file,
    };
    this.editor = new Confirmation(`review:${file.path}`, "review", this.details);
  }

  private get hunks(): HunkReview {
    // Edit details always get a HunkReview.
    return this.editor.review as HunkReview;
  }

  /** Something of the file will be written. */
  get accepted(): boolean {
    return this.editor.editing || !this.hunks.nothingAccepted;
  }

  /** Only some of its changes will be written. */
  get partial(): boolean {
    return !this.editor.editing && !this.hunks.untouched && !this.hunks.nothingAccepted;
  }

  /** Accepts or rejects the whole file (rejecting drops the user's own version). */
  setAll(accept: boolean): void {
    if (!accept && this.editor.modified) this.editor.stopEditing();
    this.hunks.all(accept);
  }

  /** What goes to the core for this file. */
  decision(): ReviewDecision {
    const path = this.file.path;
    // Still in the editor: the user's version, whole.
    if (this.editor.editing) return { path, accept: { type: "all" }, edited: this.editor.edited };
    if (this.hunks.nothingAccepted) return { path, accept: { type: "none" } };
    const hunks = this.hunks.decisions();
    const accept: ReviewAccept = hunks ? { type: "hunks", hunks } : { type: "all" };
    // Their version reviewed as hunks: the decisions are on its diff.
    return this.editor.editedDiff ? { path, accept, edited: this.editor.edited } : { path, accept };
  }
}

export class TurnReviewStore {
  /** "Review at end of turn" is on for this conversation (as core echoes it). */
  mode = $state(false);
  entries = $state.raw<ReviewEntry[]>([]);
  /** The review was found pending when the session (re)started. */
  restored = $state(false);
  /** The decisions are on their way (until `turn_review_applied`). */
  applying = $state(false);
  /** The file the review keys (J/K, A/R, Shift+A/R, E) act on. */
  selected = $state(0);

  constructor(
    private readonly session: SessionStore,
    /** Says in the conversation what happened (applied, failed). */
    private readonly notice: (level: "info" | "warning" | "error", text: string) => void,
  ) {}

  get pending(): boolean {
    return this.entries.length > 0;
  }

  /** The selected file's decisions, for the review keys (null while applying). */
  get current(): Confirmation | null {
    if (this.applying) return null;
    return this.entries[this.selected]?.editor ?? null;
  }

  select(path: string): void {
    const i = this.entries.findIndex((e) => e.file.path === path);
    if (i >= 0) this.selected = i;
  }

  /** A turn ended with staged files (or a resumed session had a review pending). */
  show(files: ReviewFile[], restored: boolean): void {
    this.entries = files.map((f) => new ReviewEntry(f));
    this.selected = 0;
    this.restored = restored;
    this.applying = false;
  }

  /** Core wrote what was accepted. */
  applied(written: string[], notApplied: ReviewNotApplied[]): void {
    this.entries = [];
    this.applying = false;
    const parts = [`Review applied: ${written.length} file${written.length === 1 ? "" : "s"} written.`];
    for (const n of notApplied) parts.push(n.message);
    const refused = notApplied.some((n) => n.reason === "changed_on_disk" || n.reason === "failed");
    this.notice(refused ? "warning" : "info", parts.join(" "));
  }

  clear(): void {
    this.entries = [];
    this.applying = false;
    this.restored = false;
  }

  async setMode(on: boolean): Promise<void> {
    const previous = this.mode;
    this.mode = on;
    if (!this.session.info) return;
    try {
      await this.session.submit({ type: "override_turn_context", review_mode: on });
    } catch (error) {
      this.mode = previous;
      this.notice("error", `Could not change the review mode: ${api.errorMessage(error)}`);
    }
  }

  /** Writes what the user accepted. */
  apply(): Promise<void> {
    return this.send(this.entries.map((e) => e.decision()));
  }

  /** Writes nothing: every staged change is reported to the model as not applied. */
  discard(): Promise<void> {
    return this.send([]);
  }

  private async send(decisions: ReviewDecision[]): Promise<void> {
    if (this.applying || !this.pending) return;
    this.applying = true;
    try {
      await this.session.submit({ type: "apply_turn_review", decisions });
    } catch (error) {
      this.applying = false;
      this.notice("error", `Could not apply the review: ${api.errorMessage(error)}`);
    }
  }
}
