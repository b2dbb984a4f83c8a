// Turns the core's side-by-side diff into rows for the two-pane view.
//
// The core sends only the changed regions (hunks, with a few lines of context) plus the full
// original and proposed texts; the regions between hunks become collapsed "gap" rows that can be
// expanded from those texts. Word-level highlights come as byte ranges into UTF-8 text, which
// are converted to UTF-16 string indices here.
import type { DiffHunk } from "../protocol/DiffHunk";
import type { DiffLine } from "../protocol/DiffLine";
import type { DiffRowKind } from "../protocol/DiffRowKind";
import type { DiffSpan } from "../protocol/DiffSpan";
import type { SideBySideDiff } from "../protocol/SideBySideDiff";

/** A run of text in a line; `changed` runs are highlighted. */
export interface Segment {
  text: string;
  changed: boolean;
}

/** One side of a row. */
export interface Cell {
  number: number;
  segments: Segment[];
}

export interface LineRow {
  type: "line";
  kind: DiffRowKind;
  left: Cell | null;
  right: Cell | null;
  /** The hunk the row belongs to (absent for rows of an expanded gap). */
  hunk?: number;
  /**
   * For changed lines: their index among the hunk's changed lines, the numbering per-line
   * decisions use (`HunkChoice.lines`): region by region (a region is a run of non-equal rows),
   * the region's removed lines in order, then its added lines.
   */
  leftChange?: number;
  rightChange?: number;
}

/** The head of a hunk (shown when the hunks can be decided one by one). */
export interface HunkHeadRow {
  type: "hunk";
  index: number;
  header: string;
  /** The hunk's changed lines: how many there are, and how many of each kind. */
  changes: number;
  added: number;
  removed: number;
}

/** Unchanged lines hidden between (or around) hunks. */
export interface GapRow {
  type: "gap";
  /** Stable id of the gap within its diff (for the expanded set). */
  id: number;
  count: number;
  /** First hidden line number on each side (1-based). */
  leftStart: number;
  rightStart: number;
  /** Where the gap sits: before the first hunk, between two, or after the last. */
  position: "start" | "middle" | "end";
  /** The `@@` header of the hunk that follows, if any. */
  header: string | null;
}

export type Row = LineRow | GapRow | HunkHeadRow;

/**
 * Splits a text into lines without their endings, as the core does: on "\n", dropping a "\r"
 * before it; a final newline ends the last line rather than starting an empty one.
 */
export function splitLines(text: string | null): string[] {
  if (text === null || text === "") return [];
  const pieces = text.split("\n");
  const last = pieces.length - 1;
  const lines = pieces.map((l, i) => (i < last && l.endsWith("\r") ? l.slice(0, -1) : l));
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

/** UTF-16 index of every UTF-8 byte offset of `text` (length: byte length + 1). */
function byteToUtf16Index(text: string): Uint32Array {
  const bytes = new TextEncoder().encode(text).length;
  const map = new Uint32Array(bytes + 1);
  let byte = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.codePointAt(i) ?? 0;
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    const units = code >= 0x10000 ? 2 : 1;
    // Offsets inside a multi-byte character map to the character's start.
    for (let k = 0; k < width; k++) map[byte + k] = i;
    byte += width;
    i += units;
  }
  map[byte] = text.length;
  return map;
}

/**
 * Splits `text` into runs following `spans` (UTF-8 byte ranges, possibly partial or unsorted).
 * Parts not covered by a span are unchanged; out-of-range offsets are clamped.
 */
export function segmentsFromSpans(text: string, spans: readonly DiffSpan[]): Segment[] {
  if (spans.length === 0 || text === "") return text === "" ? [] : [{ text, changed: false }];
  const map = byteToUtf16Index(text);
  const maxByte = map.length - 1;
  const toIndex = (byte: number) => map[Math.max(0, Math.min(maxByte, byte))] ?? text.length;
  const ranges = spans
    .filter((s) => s.changed)
    .map((s) => [toIndex(s.start), toIndex(s.end)] as const)
    .filter(([a, b]) => b > a)
    .sort((a, b) => a[0] - b[0]);
  const segments: Segment[] = [];
  let at = 0;
  const push = (end: number, changed: boolean) => {
    if (end <= at) return;
    const piece = text.slice(at, end);
    const last = segments[segments.length - 1];
    if (last && last.changed === changed) last.text += piece;
    else segments.push({ text: piece, changed });
    at = end;
  };
  for (const [start, end] of ranges) {
    push(start, false);
    push(end, true);
  }
  push(text.length, false);
  return segments;
}

function cell(line: DiffLine | null, highlight: boolean): Cell | null {
  if (!line) return null;
  return {
    number: line.number,
    segments: highlight
      ? segmentsFromSpans(line.text, line.spans)
      : line.text === ""
        ? []
        : [{ text: line.text, changed: false }],
  };
}

function hunkHeader(h: DiffHunk): string {
  return `@@ -${h.old_start},${h.old_lines} +${h.new_start},${h.new_lines} @@`;
}

/**
 * Each row's changed-line indexes within its hunk, as the core numbers them for per-line
 * decisions: region by region, the region's removed (left) lines, then its added (right) lines.
 */
export function numberChanges(h: DiffHunk): { leftChange?: number; rightChange?: number }[] {
  const out: { leftChange?: number; rightChange?: number }[] = h.rows.map(() => ({}));
  let next = 0;
  // The current region: indexes of its rows (a run of non-equal rows).
  let region: number[] = [];
  const flush = () => {
    for (const r of region) if (h.rows[r]?.left) out[r] = { ...out[r], leftChange: next++ };
    for (const r of region) if (h.rows[r]?.right) out[r] = { ...out[r], rightChange: next++ };
    region = [];
  };
  h.rows.forEach((row, r) => {
    if (row.kind === "equal") flush();
    else region.push(r);
  });
  flush();
  return out;
}

/** First and last line numbers a hunk shows on one side, or null if it shows none there. */
function sideRange(h: DiffHunk, side: "left" | "right"): [number, number] | null {
  let first = Infinity;
  let last = -Infinity;
  for (const row of h.rows) {
    const line = row[side];
    if (line) {
      first = Math.min(first, line.number);
      last = Math.max(last, line.number);
    }
  }
  return first === Infinity ? null : [first, last];
}

/**
 * The rows of the view: each hunk's rows, with gap rows for the unchanged lines before, between
 * and after the hunks. `originalLines`/`proposedLines` are the full texts split into lines.
 */
export function buildRows(
  diff: SideBySideDiff,
  originalLines: readonly string[],
  proposedLines: readonly string[],
  options: { heads?: boolean } = {},
): Row[] {
  const rows: Row[] = [];
  let lastLeft = 0; // last line number shown on each side
  let lastRight = 0;
  let gapId = 0;
  diff.hunks.forEach((hunk, index) => {
    const left = sideRange(hunk, "left");
    const right = sideRange(hunk, "right");
    // Unchanged lines before this hunk: the same count on both sides. Take it from a side the
    // hunk shows lines on (a pure insertion into an empty file shows none on the left).
    let count = 0;
    if (left) count = left[0] - lastLeft - 1;
    else if (right) count = right[0] - lastRight - 1;
    if (count > 0) {
      rows.push({
        type: "gap",
        id: gapId++,
        count,
        leftStart: lastLeft + 1,
        rightStart: lastRight + 1,
        position: index === 0 ? "start" : "middle",
        header: hunkHeader(hunk),
      });
    }
    const numbered = numberChanges(hunk);
    if (options.heads) {
      const added = numbered.filter((r) => r.rightChange !== undefined).length;
      const removed = numbered.filter((r) => r.leftChange !== undefined).length;
      rows.push({ type: "hunk", index, header: hunkHeader(hunk), changes: added + removed, added, removed });
    }
    hunk.rows.forEach((row, k) => {
      const highlight = row.kind === "changed";
      rows.push({
        type: "line",
        kind: row.kind,
        left: cell(row.left, highlight),
        right: cell(row.right, highlight),
        hunk: index,
        ...numbered[k],
      });
    });
    lastLeft = left ? left[1] : lastLeft + Math.max(0, count);
    lastRight = right ? right[1] : lastRight + Math.max(0, count);
  });
  const trailing = Math.min(originalLines.length - lastLeft, proposedLines.length - lastRight);
  if (trailing > 0 && diff.hunks.length > 0) {
    rows.push({
      type: "gap",
      id: gapId++,
      count: trailing,
      leftStart: lastLeft + 1,
      rightStart: lastRight + 1,
      position: "end",
      header: null,
    });
  }
  return rows;
}

/** The unchanged rows a gap hides, from the full texts. */
export function expandGap(
  gap: GapRow,
  originalLines: readonly string[],
  proposedLines: readonly string[],
): LineRow[] {
  const rows: LineRow[] = [];
  for (let k = 0; k < gap.count; k++) {
    const l = gap.leftStart + k;
    const r = gap.rightStart + k;
    const leftText = originalLines[l - 1] ?? "";
    const rightText = proposedLines[r - 1] ?? "";
    rows.push({
      type: "line",
      kind: "equal",
      left: { number: l, segments: leftText ? [{ text: leftText, changed: false }] : [] },
      right: { number: r, segments: rightText ? [{ text: rightText, changed: false }] : [] },
    });
  }
  return rows;
}

/**
 * How far to scroll (px, down positive) so that a block from `top` to `bottom` — measured from the
 * top of a visible area `height` px high — is in view: all of it when it fits, else its top at the
 * area's top. 0 when it is in view already.
 */
export function revealDelta(top: number, bottom: number, height: number): number {
  if (top < 0) return top;
  if (bottom <= height) return 0;
  return bottom - top <= height ? bottom - height : top;
}

/** The nearest ancestor of `el` that scrolls vertically and has something to scroll. */
export function scrollingAncestor(el: HTMLElement): HTMLElement | null {
  for (let box = el.parentElement; box; box = box.parentElement) {
    const overflow = getComputedStyle(box).overflowY;
    if ((overflow === "auto" || overflow === "scroll") && box.scrollHeight > box.clientHeight) return box;
  }
  return null;
}
