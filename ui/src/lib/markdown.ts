// Markdown for model answers: `marked` (GFM, raw HTML escaped) → highlight.js for fenced code →
// DOMPurify.
//
// Answers render block by block: the text is lexed into top-level blocks and each block's HTML
// is cached by its source, so while an answer streams only its last block is parsed,
// highlighted and sanitised again, and the blocks before it keep their DOM nodes.
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { Marked, type Token, type TokensList } from "marked";

// A curated set (the full highlight.js is ~10x larger). Each brings its usual aliases
// (ts, js, sh, rs, py, html, yml, toml via ini, ...).
const languages = {
  bash,
  c,
  cpp,
  css,
  diff,
  go,
  ini,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);
hljs.registerAliases(["toml"], { languageName: "ini" });
hljs.registerAliases(["console", "zsh"], { languageName: "bash" });
hljs.registerAliases(["jsonc"], { languageName: "json" });

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Highlighted HTML of a code block (escaped plain text for unknown languages). */
export function highlight(code: string, lang: string | undefined): { html: string; language: string | null } {
  const name = (lang ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  const language = name ? hljs.getLanguage(name) : undefined;
  if (language && name) {
    try {
      return { html: hljs.highlight(code, { language: name, ignoreIllegals: true }).value, language: name };
    } catch {
      // fall through to plain text
    }
  }
  return { html: escapeHtml(code), language: name || null };
}

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
      const { html, language } = highlight(text, lang);
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

/**
 * The sanitised HTML of each top-level block of `text`. `cache` maps block sources to their
 * HTML; it is pruned to the current blocks, so it stays small while the text streams in.
 */
export function renderBlocks(text: string, cache: Map<string, string>): Block[] {
  const tokens = marked.lexer(text);
  const blocks: Block[] = [];
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.type === "space" || token.type === "def") continue;
    let html = cache.get(token.raw);
    if (html === undefined) {
      const one = [token] as Token[] as TokensList;
      one.links = tokens.links; // reference-style links defined anywhere in the text
      html = sanitize(marked.parser(one));
      cache.set(token.raw, html);
    }
    seen.add(token.raw);
    blocks.push({ key: blocks.length, html });
  }
  for (const raw of cache.keys()) if (!seen.has(raw)) cache.delete(raw);
  return blocks;
}
