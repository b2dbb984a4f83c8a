// Syntax highlighting of code blocks in answers (highlight.js), one language at a time.
//
// highlight.js builds a language's definition when it is registered: registering all 18 of
// ours at start cost the web process ~9 MB (bench/RESULTS.md, desktop section), though a conversation
// uses one or two. So each language is its own chunk, loaded the first time a code block names
// it. Until it is in, the block is plain text (escaped code) and `highlight` says it is
// `pending`; once it is registered, `languagesLoaded` counts up and listeners are told, and
// whoever rendered pending blocks renders them again (see markdown.ts's MarkdownStream).
import hljs from "highlight.js/lib/core";
import type { LanguageFn } from "highlight.js";

type Loader = () => Promise<{ default: LanguageFn }>;

/** Our curated set (the full highlight.js is ~10x larger). */
const LOADERS: Record<string, Loader> = {
  bash: () => import("highlight.js/lib/languages/bash"),
  c: () => import("highlight.js/lib/languages/c"),
  cpp: () => import("highlight.js/lib/languages/cpp"),
  css: () => import("highlight.js/lib/languages/css"),
  diff: () => import("highlight.js/lib/languages/diff"),
  go: () => import("highlight.js/lib/languages/go"),
  ini: () => import("highlight.js/lib/languages/ini"),
  java: () => import("highlight.js/lib/languages/java"),
  javascript: () => import("highlight.js/lib/languages/javascript"),
  json: () => import("highlight.js/lib/languages/json"),
  markdown: () => import("highlight.js/lib/languages/markdown"),
  python: () => import("highlight.js/lib/languages/python"),
  rust: () => import("highlight.js/lib/languages/rust"),
  shell: () => import("highlight.js/lib/languages/shell"),
  sql: () => import("highlight.js/lib/languages/sql"),
  typescript: () => import("highlight.js/lib/languages/typescript"),
  xml: () => import("highlight.js/lib/languages/xml"),
  yaml: () => import("highlight.js/lib/languages/yaml"),
};

/**
 * Fence names that are another name of one of ours: each language's own aliases (as its
 * highlight.js definition lists them, which is only known once it is loaded), plus toml (ini),
 * console and zsh (bash).
 */
const ALIASES: Record<string, string> = {
  sh: "bash", zsh: "bash", console: "bash", shellsession: "shell",
  h: "c",
  cc: "cpp", "c++": "cpp", "h++": "cpp", hpp: "cpp", hh: "cpp", hxx: "cpp", cxx: "cpp",
  patch: "diff",
  golang: "go",
  toml: "ini",
  jsp: "java",
  js: "javascript", jsx: "javascript", mjs: "javascript", cjs: "javascript",
  jsonc: "json", json5: "json",
  md: "markdown", mkdown: "markdown", mkd: "markdown",
  py: "python", gyp: "python", ipython: "python",
  rs: "rust",
  ts: "typescript", tsx: "typescript", mts: "typescript", cts: "typescript",
  html: "xml", xhtml: "xml", rss: "xml", atom: "xml", xjb: "xml", xsd: "xml", xsl: "xml", plist: "xml", wsf: "xml", svg: "xml",
  yml: "yaml",
};

/** Languages whose code another one highlights inside its own (highlight.js `subLanguage`). */
const EMBEDS: Record<string, string[]> = {
  javascript: ["xml", "css"],
  typescript: ["xml", "css"],
  xml: ["css", "javascript"],
  markdown: ["xml"],
  shell: ["bash"],
};

const loading = new Map<string, Promise<void>>();
const listeners = new Set<() => void>();
let loaded = 0;

/** How many languages have been loaded so far (grows by one with each). */
export function languagesLoaded(): number {
  return loaded;
}

/** Calls `listener` each time a language has been loaded; returns the unsubscribe function. */
export function onLanguageLoaded(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Loads `language` (one of ours, by its main name) and the ones it embeds. */
export function loadLanguage(language: string): Promise<void> {
  let promise = loading.get(language);
  if (!promise) {
    const loader = LOADERS[language];
    if (!loader) return Promise.resolve();
    promise = loader().then(
      (module) => {
        // Registered under its main name: `highlight` resolves fence names with ALIASES itself.
        hljs.registerLanguage(language, module.default);
        loaded++;
        for (const listener of listeners) listener();
      },
      () => {
        // A chunk that cannot load (should not happen: they are in the app): stay plain text.
      },
    );
    loading.set(language, promise);
    for (const embedded of EMBEDS[language] ?? []) void loadLanguage(embedded);
  }
  return promise;
}

/** Our language a fence's name means (its first word, any case), or undefined. */
export function languageOf(name: string): string | undefined {
  const key = name.toLowerCase();
  if (key in LOADERS) return key;
  return ALIASES[key];
}

/** Loads the languages the code fences in `texts` name (before showing them, so they are highlighted at once). */
export async function loadLanguagesOf(texts: string[]): Promise<void> {
  const names = new Set<string>();
  for (const text of texts) {
    for (const match of text.matchAll(/^ {0,3}(?:```|~~~)[ \t]*([^\s`~]+)/gm)) {
      const language = languageOf(match[1]!);
      if (language) names.add(language);
    }
  }
  await Promise.all([...names].map(loadLanguage));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * Highlighted HTML of a code block (escaped plain text for unknown languages, and for ours until
 * they are loaded: then `pending` is true and the language is on its way).
 */
export function highlight(code: string, lang: string | undefined): { html: string; language: string | null; pending: boolean } {
  const name = (lang ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  const language = name ? languageOf(name) : undefined;
  if (language && hljs.getLanguage(language)) {
    try {
      return { html: hljs.highlight(code, { language, ignoreIllegals: true }).value, language: name, pending: false };
    } catch {
      // fall through to plain text
    }
  } else if (language) {
    void loadLanguage(language);
    return { html: escapeHtml(code), language: name, pending: true };
  }
  return { html: escapeHtml(code), language: name || null, pending: false };
}
