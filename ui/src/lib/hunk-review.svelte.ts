// The user's decisions on the hunks of one edit proposal, before anything is written.
//
// Every hunk starts accepted (approving without touching anything writes the whole proposal, as
// before). A hunk can be rejected, or narrowed to some of its changed lines; the lines are
// numbered as the core numbers them (`numberChanges` in diff.ts), so `decisions()` is exactly
// what `Op::ConfirmTool.hunks` expects. `focused` is the hunk the keyboard acts on (J/K, A/R).
import type { HunkDecision } from "../protocol/HunkDecision";
import type { SideBySideDiff } from "../protocol/SideBySideDiff";
import { numberChanges } from "./diff";

/** One hunk's state: all of it, none of it, or the picked changed lines (sorted). */
export type HunkPick = "accept" | "reject" | number[];

export type HunkStatus = "accepted" | "rejected" | "partly";

export class HunkReview {
  picks = $state<HunkPick[]>([]);
  focused = $state(0);
  /** Per hunk, how many changed lines it has. */
  private sizes: number[] = [];

  constructor(diff: SideBySideDiff) {
    this.reset(diff);
  }

  /** Starts over on `diff` (after the user edited the proposal by hand): all accepted. */
  reset(diff: SideBySideDiff): void {
    this.sizes = diff.hunks.map((h) => {
      const n = numberChanges(h);
      return n.filter((r) => r.leftChange !== undefined).length + n.filter((r) => r.rightChange !== undefined).length;
    });
    this.picks = this.sizes.map(() => "accept");
    this.focused = 0;
  }

  get count(): number {
    return this.picks.length;
  }

  status(hunk: number): HunkStatus {
    const pick = this.picks[hunk];
    return pick === "accept" ? "accepted" : pick === "reject" ? "rejected" : "partly";
  }

  accept(hunk: number): void {
    this.set(hunk, "accept");
  }

  reject(hunk: number): void {
    this.set(hunk, "reject");
  }

  /** Accept (or reject) the whole file. */
  all(accept: boolean): void {
    this.picks = this.picks.map(() => (accept ? "accept" : "reject"));
  }

  /** Whether changed line `change` of `hunk` will be written. */
  picked(hunk: number, change: number): boolean {
    const pick = this.picks[hunk];
    return pick === "accept" || (Array.isArray(pick) && pick.includes(change));
  }

  /** Includes or leaves out one changed line; all or none picked is a plain accept or reject. */
  toggleLine(hunk: number, change: number): void {
    const size = this.sizes[hunk] ?? 0;
    if (change < 0 || change >= size) return;
    const pick = this.picks[hunk];
    const current = pick === "accept" ? [...Array(size).keys()] : Array.isArray(pick) ? pick : [];
    const next = current.includes(change) ? current.filter((c) => c !== change) : [...current, change].sort((a, b) => a - b);
    this.set(hunk, next.length === size ? "accept" : next.length === 0 ? "reject" : next);
    this.focused = hunk;
  }

  /** Moves the keyboard focus to the next (`+1`) or previous (`-1`) hunk. */
  move(step: 1 | -1): void {
    if (this.count === 0) return;
    this.focused = Math.min(this.count - 1, Math.max(0, this.focused + step));
  }

  /** Nothing changed from "the whole proposal". */
  get untouched(): boolean {
    return this.picks.every((p) => p === "accept");
  }

  get nothingAccepted(): boolean {
    return this.picks.length > 0 && this.picks.every((p) => p === "reject");
  }

  /** Counts for the approve button: hunks written whole or in part, of all. */
  get accepted(): number {
    return this.picks.filter((p) => p !== "reject").length;
  }

  /** The per-hunk answer, or null when every hunk is accepted (the plain approval). */
  decisions(): HunkDecision[] | null {
    if (this.untouched) return null;
    return this.picks.map((pick, hunk) => ({
      hunk,
      choice: pick === "accept" ? { type: "accept" } : pick === "reject" ? { type: "reject" } : { type: "lines", lines: [...pick] },
    }));
  }

  private set(hunk: number, pick: HunkPick): void {
    if (hunk < 0 || hunk >= this.picks.length) return;
    const next = [...this.picks];
    next[hunk] = pick;
    this.picks = next;
    this.focused = hunk;
  }
}
