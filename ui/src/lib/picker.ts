// The file picker's IPC (src-tauri/src/picker.rs) and its pure helpers. The payload types mirror
// the serde types of crates/workspace-index (camelCase), kept by hand like `AppInfo` in api.ts.
import { Channel, invoke } from "@tauri-apps/api/core";

export interface PickerInfo {
  /** Absolute paths; the first is the workspace. */
  roots: string[];
  building: boolean;
  files: number;
}

export type EntryKind = "dir" | "file" | "symlink" | "other";

export interface Entry {
  name: string;
  /** Relative to its root, `/`-separated. */
  path: string;
  kind: EntryKind;
  size: number;
  ignored: boolean;
  binary: boolean;
  huge: boolean;
}

export interface SearchMatch {
  /** Workspace-relative, or absolute inside an include directory. */
  path: string;
  score: number;
  /** Matched character positions of `path`, ascending. */
  indices: number[];
}

export interface SearchUpdate {
  matches: SearchMatch[];
  matched: number;
  indexed: number;
  done: boolean;
}

export type IndexEvent =
  | { type: "built"; files: number; millis: number }
  | { type: "changed"; root: number; added: string[]; removed: string[]; dirs: string[] };

export interface ItemEstimate {
  path: string;
  tokens: number;
  bytes: number;
  files: number;
  binaryFiles: number;
  hugeFiles: number;
  truncated: boolean;
  error: string | null;
}

export interface SelectionEstimate {
  tokens: number;
  items: ItemEstimate[];
}

export function pickerOpen(): Promise<PickerInfo> {
  return invoke<PickerInfo>("picker_open");
}

export function pickerListDir(root: number, path: string, showIgnored: boolean): Promise<Entry[]> {
  return invoke<Entry[]>("picker_list_dir", { root, path, showIgnored });
}

/** Streams the updates of a fuzzy search to `onUpdate`; resolves after the final one. */
export function pickerSearch(query: string, onUpdate: (update: SearchUpdate) => void): Promise<void> {
  const channel = new Channel<SearchUpdate>();
  channel.onmessage = onUpdate;
  return invoke<void>("picker_search", { query, onUpdate: channel });
}

export function pickerEstimate(paths: string[]): Promise<SelectionEstimate> {
  return invoke<SelectionEstimate>("picker_estimate", { paths });
}

export function pickerWatch(onEvent: (event: IndexEvent) => void): Promise<void> {
  const channel = new Channel<IndexEvent>();
  channel.onmessage = onEvent;
  return invoke<void>("picker_watch", { onEvent: channel });
}

/**
 * The `@path` reference of a picked file or folder, in Gemini CLI's syntax as the core reads it
 * (crates/core/src/at_refs.rs): a backslash before whitespace, backslashes, the characters that
 * end a path (`,;!?()[]{}`) and quotes, and before a final `.` or `:` (else read as
 * punctuation). `tests/fixtures/at-mentions.json` holds the pairs both sides are tested with.
 */
export function mention(path: string): string {
  const escaped = path.replace(/([\s\\,;!?()[\]{}"'`])/g, "\\$1").replace(/([.:])$/, "\\$1");
  return `@${escaped}`;
}

/** The prompt sent for `text` with `paths` picked: their `@path` references, then the text. */
export function withMentions(text: string, paths: string[]): string {
  if (paths.length === 0) return text;
  return `${paths.map(mention).join(" ")}\n${text}`;
}

/** "1.2k" style token counts. */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  if (tokens < 1_000_000) return `${(tokens / 1000).toFixed(tokens < 10_000 ? 1 : 0)}k`;
  return `${(tokens / 1_000_000).toFixed(1)}M`;
}

/** Splits `path` into runs for highlighting the characters at `indices`. */
export function highlight(path: string, indices: number[]): { text: string; hit: boolean }[] {
  const hits = new Set(indices);
  const chars = Array.from(path);
  const runs: { text: string; hit: boolean }[] = [];
  chars.forEach((ch, i) => {
    const hit = hits.has(i);
    const last = runs[runs.length - 1];
    if (last && last.hit === hit) last.text += ch;
    else runs.push({ text: ch, hit });
  });
  return runs;
}

/**
 * The `@query` being typed at `caret` in `text`: an `@` at the start or after whitespace, then
 * no whitespace up to the caret. Null when the caret is not in such a word.
 */
export function atQuery(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const match = /(^|\s)@(\S*)$/.exec(before);
  const query = match?.[2];
  if (query === undefined) return null;
  return { start: caret - query.length - 1, query };
}
