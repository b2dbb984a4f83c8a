// The file picker's pure helpers: `@path` mentions, token counts, highlighted matches and the
// `@query` under the caret. Its IPC (src-tauri/src/picker.rs) is in the generated client
// (protocol/commands.ts); its state in picker.svelte.ts.

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
