// The Markdown renderer (markdown.ts: marked, DOMPurify and highlight.js) is a chunk of its own,
// loaded when the first answer needs it rather than with the app.
//
// It is 40% of the UI's script (167 of 422 kB minified) and, with the languages it used to
// register at start, ~17 MB of the web process (bench/RESULTS.md, desktop section), while the window
// opens on an empty chat. It is asked for as soon as one can tell it will be needed: a prompt is
// sent (app.svelte.ts's `send`), a conversation is reopened (its transcript waits for it, so it
// shows formatted at once), or an answer is on screen (ModelItem.render). An answer that
// arrives before it (a few milliseconds: the chunk is in the app) shows as plain text until then.
import type * as Markdown from "./markdown";

class MarkdownLoader {
  /** The loaded module; null until then. Reactive: answers render again when it arrives. */
  module = $state.raw<typeof Markdown | null>(null);
  /** Counts languages loaded (highlight.ts); reactive, so blocks shown plain render again. */
  languages = $state(0);
  private loading: Promise<typeof Markdown> | null = null;

  /** Loads the renderer (once); resolves when it is ready. */
  load(): Promise<typeof Markdown> {
    this.loading ??= import("./markdown").then((module) => {
      module.onLanguageLoaded(() => (this.languages = module.languagesLoaded()));
      this.module = module;
      return module;
    });
    return this.loading;
  }
}

export const markdown = new MarkdownLoader();
