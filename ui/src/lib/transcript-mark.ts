// Marks a search hit's words inside a rendered transcript message (history browser), so the
// user sees where the hit is, not only which message.

/** Words of a search hit, for `markTerms`: the snippet's matched words, else the query's words. */
export function hitTerms(matched: string[], query: string): string[] {
  const words = matched.length > 0 ? matched : query.split(/[^\p{L}\p{N}_]+/u);
  return [...new Set(words.map((w) => w.trim().toLowerCase()).filter((w) => w.length > 0))];
}

/**
 * Wraps each occurrence of `terms` (case-insensitive) in the text under `root` in
 * `<mark data-testid="transcript-hit">`; returns the first mark (also one already there from an
 * earlier call), or null when no term occurs.
 */
export function markTerms(root: HTMLElement, terms: string[]): HTMLElement | null {
  const existing = root.querySelector<HTMLElement>('mark[data-testid="transcript-hit"]');
  if (existing || terms.length === 0) return existing;
  const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).sort((a, b) => b.length - a.length);
  const pattern = new RegExp(escaped.join("|"), "giu");
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) =>
      node.parentElement?.closest("mark, script, style, textarea, button") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const nodes: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n as Text);
  let first: HTMLElement | null = null;
  for (const node of nodes) {
    const text = node.data;
    pattern.lastIndex = 0;
    let match = pattern.exec(text);
    if (!match) continue;
    const fragment = root.ownerDocument.createDocumentFragment();
    let at = 0;
    while (match) {
      if (match[0] === "") break;
      fragment.append(text.slice(at, match.index));
      const mark = root.ownerDocument.createElement("mark");
      mark.dataset.testid = "transcript-hit";
      mark.textContent = match[0];
      fragment.append(mark);
      first ??= mark;
      at = match.index + match[0].length;
      match = pattern.exec(text);
    }
    fragment.append(text.slice(at));
    node.replaceWith(fragment);
  }
  return first;
}
