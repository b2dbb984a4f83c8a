// Markdown for model answers: `marked` (GFM, raw HTML escaped) → highlight.js for fenced code →
// DOMPurify.
//
// Answers render block by block: the text is lexed into top-level blocks and each block's HTML
// is cached by its source, so while an answer streams only its last block is parsed,
// highlighted and sanitised again, and the blocks before it keep their DOM nodes.
import DOMPurify from "dompurify";
import { Marked, type Token, type TokensList } from "marked";
import { highlight, languagesLoaded } from "./highlight";

export { highlight, languagesLoaded, loadLanguagesOf, onLanguageLoaded } from "./highlight";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Set when a code block was rendered plain because its language is still loading. */
let pendingLanguage = false;

/**
 * Code blocks longer than this are rendered without highlighting (see [`MarkdownStream`]: the
 * block a long answer is still writing would otherwise be highlighted again on every frame).
 */
let plainCodeOver = Infinity;

/** The live code block of a streaming answer is highlighted up to this length. */
const STREAMING_HIGHLIGHT_LIMIT = 4000;

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    // Raw HTML in an answer is shown as text, not rendered: a coding agent's "<div>" is code
    // more often than markup (and nothing from the model gets to be markup). DOMPurify below
    // still sanitises what Markdown itself produces (e.g. `javascript:` links).
    html({ text }) {
      return escapeHtml(text);
    },
    code({ text, lang }) {
      const { html, language, pending } =
        text.length > plainCodeOver
          ? { html: escapeHtml(text), language: lang?.trim().split(/\s+/)[0] || null, pending: false }
          : highlight(text, lang);
      if (pending) pendingLanguage = true;
      const label = language ? ` data-lang="${escapeHtml(language)}"` : "";
      const cls = language ? ` language-${escapeHtml(language)}` : "";
      // The language label and the copy button's caption are CSS-generated, so the message's
      // text content stays exactly the answer.
      return (
        `<div class="code-block"${label}>` +
        `<button type="button" class="code-copy" data-copy-code title="Copy code" aria-label="Copy code"></button>` +
        `<pre><code class="hljs${cls}">${html}</code></pre></div>\n`
      );
    },
  },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

const PURIFY = {
  // Inline styles are refused by the CSP anyway; forms and embeds have no business here.
  FORBID_ATTR: ["style"],
  FORBID_TAGS: ["style", "form", "iframe", "object", "embed", "link", "meta", "base"],
};

export function sanitize(html: string): string {
  return DOMPurify.sanitize(html, PURIFY) as unknown as string;
}

/** Sanitised HTML of a whole Markdown text. */
export function renderMarkdown(text: string): string {
  return sanitize(marked.parse(text, { async: false }));
}

export interface Block {
  key: number;
  html: string;
}

/** Renders one lexed block (with the text's reference links) to sanitised HTML. */
function renderToken(token: Token, links: TokensList["links"]): string {
  const one = [token] as Token[] as TokensList;
  one.links = links; // reference-style links defined anywhere in the text
  return sanitize(marked.parser(one));
}

/**
 * The cache key of a block: its source, and its text where it has one. (The same source can lex
 * to different text: `marked` merges an indented line into a paragraph differently depending
 * on what follows.)
 */
function cacheKey(token: Token): string {
  return "text" in token && typeof token.text === "string" ? `${token.raw}\u0000${token.text}` : token.raw;
}

/** The blocks of lexed `tokens`, numbered from `firstKey`; see [`renderBlocks`]. */
function blocksOf(tokens: Token[], links: TokensList["links"], cache: Map<string, string>, firstKey: number): Block[] {
  const blocks: Block[] = [];
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.type === "space" || token.type === "def") continue;
    const key = cacheKey(token);
    let html = cache.get(key);
    if (html === undefined) {
      html = renderToken(token, links);
      cache.set(key, html);
    }
    seen.add(key);
    blocks.push({ key: firstKey + blocks.length, html });
  }
  for (const key of cache.keys()) if (!seen.has(key)) cache.delete(key);
  return blocks;
}

/**
 * The sanitised HTML of each top-level block of `text`. `cache` maps block sources to their
 * HTML; it is pruned to the current blocks, so it stays small while the text streams in.
 */
export function renderBlocks(text: string, cache: Map<string, string>): Block[] {
  const tokens = marked.lexer(text);
  return blocksOf(tokens, tokens.links, cache, 0);
}

/** A reference-style link definition (`[label]: url`), which changes links anywhere in the text. */
const LINK_DEFINITION = /^ {0,3}\[[^\]\n]+\]:/m;

const NEWLINE = 10;

/**
 * Renders an answer while it streams, in time proportional to what arrived, not to the whole
 * answer.
 *
 * Re-lexing the whole text on every frame is quadratic over a stream, and in WebKitGTK it is
 * much worse than that: JavaScriptCore runs some of `marked`'s regular expressions in its
 * regex interpreter rather than its JIT, so a 100 KB answer cost hundreds of milliseconds a
 * frame (bench/RESULTS.md, "Desktop app"). So blocks that can no longer change are frozen:
 * their HTML is kept and only the text after them is lexed again. A block is final once a
 * blank line and a complete first line of another block follow it: Markdown's block structure
 * does not reach back across that (a list, for one, only ends at a line that starts a block of
 * its own at the left margin). The exception is a reference-style link definition,
 * which applies to links anywhere in the text: an answer containing one is rendered whole once
 * more when it ends.
 */
export class MarkdownStream {
  /** The text the frozen blocks were rendered from (a prefix of every later text). */
  private frozenSource = "";
  private frozen: Block[] = [];
  /** HTML of the live blocks by source. */
  private readonly cache = new Map<string, string>();
  private whole: { text: string; blocks: Block[] } | null = null;
  /**
   * `languagesLoaded()` when a code block was last rendered plain because its language was
   * still loading (see highlight.ts); null when none was. Once another language has come in,
   * everything is rendered again.
   */
  private waitingSince: number | null = null;

  /**
   * The blocks of `text`, which extends the text of the previous call while the answer
   * streams. With `final`, the answer is complete: nothing more is frozen, and an answer with
   * link definitions (or one that never streamed) is rendered whole.
   */
  render(text: string, final: boolean): Block[] {
    if (this.waitingSince !== null && this.waitingSince !== languagesLoaded()) this.reset();
    const languages = languagesLoaded();
    pendingLanguage = false;
    try {
      return this.renderNow(text, final);
    } finally {
      if (pendingLanguage) this.waitingSince = languages;
      pendingLanguage = false;
    }
  }

  private renderNow(text: string, final: boolean): Block[] {
    if (!text.startsWith(this.frozenSource)) this.reset();
    if (final && (this.frozen.length === 0 || LINK_DEFINITION.test(text))) {
      if (this.whole?.text !== text) this.whole = { text, blocks: renderBlocks(text, new Map()) };
      return this.whole.blocks;
    }
    const tail = text.slice(this.frozenSource.length);
    const tokens = marked.lexer(tail);
    const cutIndex = final ? 0 : this.freeze(tail, tokens);
    plainCodeOver = final ? Infinity : STREAMING_HIGHLIGHT_LIMIT;
    let live: Block[];
    try {
      live = blocksOf(tokens.slice(cutIndex), tokens.links, final ? new Map() : this.cache, this.frozen.length);
    } finally {
      plainCodeOver = Infinity;
    }
    return this.frozen.length === 0 ? live : this.frozen.concat(live);
  }

  /**
   * Freezes the leading `tokens` of `tail` that are followed by a blank line and then by
   * another block. Returns how many tokens were frozen.
   */
  private freeze(tail: string, tokens: TokensList): number {
    let last = tokens.length - 1;
    while (last >= 0 && tokens[last]!.type === "space") last--;
    let offset = 0;
    let cut = 0;
    let cutIndex = 0;
    for (let i = 0; i < last; i++) {
      const raw = tokens[i]!.raw;
      // The tokens' sources add up to the text; should they ever not, freeze nothing further.
      if (!tail.startsWith(raw, offset)) break;
      offset += raw.length;
      // After a blank line, and once the next block has a complete first line: until then its
      // kind is open ("2" may yet become "2. item", continuing the list before it).
      const blankLineBefore =
        offset >= 2 && tail.charCodeAt(offset - 1) === NEWLINE && tail.charCodeAt(offset - 2) === NEWLINE;
      if (blankLineBefore && tail.indexOf("\n", offset) !== -1) {
        cut = offset;
        cutIndex = i + 1;
      }
    }
    for (const token of tokens.slice(0, cutIndex)) {
      if (token.type === "space" || token.type === "def") continue;
      // Rendered once more as it is final now (a code block's live HTML may lack highlighting,
      // see `plainCodeOver`); each block is frozen once, so this costs one render per block.
      this.cache.delete(cacheKey(token));
      this.frozen.push({ key: this.frozen.length, html: renderToken(token, tokens.links) });
    }
    this.frozenSource += tail.slice(0, cut);
    return cutIndex;
  }

  private reset(): void {
    this.waitingSince = null;
    this.frozenSource = "";
    this.frozen = [];
    this.cache.clear();
    this.whole = null;
  }
}
