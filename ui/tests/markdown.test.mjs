// Streaming Markdown (src/lib/markdown.ts) in the browser: an answer rendered while it streams,
// with finished blocks frozen, must equal the same text rendered whole, at every step.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { bundle, launchBrowser, UI_DIR } from "./support/harness.mjs";

let browser;
let page;
before(async () => {
  // Bundled from the source itself (not ui/dist, where it is minified into the app).
  const script = readFileSync(await bundle(path.join(UI_DIR, "src", "lib", "markdown.ts"), "GdMarkdown"), "utf8");
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setContent("<!doctype html><html><body></body></html>");
  await page.addScriptTag({ content: script });
});
after(async () => {
  await browser?.close();
});

test("streamed answers render like whole ones after every chunk (differential, 800 random documents)", async () => {
  const result = await page.evaluate(() => {
    const { MarkdownStream, renderBlocks } = /** @type {any} */ (window).GdMarkdown;
    // Lines that start, continue, interrupt or close every kind of block.
    const parts = [
      "# H\n", "\n", "para text\n", "- a\n", "- b\n", "1. x\n", "2. y\n", "10. z\n", "2\n", "  cont\n",
      "   nested\n", "    code\n", "> q\n", "```\n", "```js\n", "~~~\n", "| a | b |\n", "|---|---|\n",
      "---\n", "===\n", "* s\n", "+ p\n", "<div>\n", "</div>\n", "text *em\n", "tail** x\n",
      "\t\ttab\n", "  - sub\n", "- [ ] task\n", "\n\n", "[ref]: https://example.com/r\n", "see [ref]\n",
    ];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed / 2147483648);
    const whole = (text) => renderBlocks(text, new Map()).map((b) => b.html).join("");
    const html = (blocks) => blocks.map((b) => b.html).join("");
    let checks = 0;
    let froze = 0;
    for (let doc = 0; doc < 800; doc++) {
      let text = "";
      const lines = 3 + Math.floor(random() * 14);
      for (let i = 0; i < lines; i++) text += parts[Math.floor(random() * parts.length)];
      const step = 1 + (doc % 3);
      const stream = new MarkdownStream();
      for (let n = step; n < text.length + step; n += step) {
        const prefix = text.slice(0, n);
        const blocks = stream.render(prefix, false);
        // Link definitions may resolve links in frozen blocks only at the end (see the class).
        if (!/^ {0,3}\[[^\]\n]+\]:/m.test(prefix) && html(blocks) !== whole(prefix)) {
          return { failed: "while streaming", text: prefix, streamed: html(blocks), expected: whole(prefix) };
        }
        checks++;
      }
      froze += stream.frozen.length > 0 ? 1 : 0;
      const final = html(stream.render(text, true));
      if (final !== whole(text)) return { failed: "at the end", text, streamed: final, expected: whole(text) };
    }
    return { checks, froze };
  });
  assert.equal(result.failed, undefined, JSON.stringify(result, null, 1));
  assert.ok(result.checks > 10_000, `${result.checks} prefixes checked`);
  assert.ok(result.froze > 120, `blocks were frozen in ${result.froze} of the documents`);
});

test("a long stream lexes only what is still open", async () => {
  const result = await page.evaluate(() => {
    const { MarkdownStream } = /** @type {any} */ (window).GdMarkdown;
    const paragraph = "The agent reads files in your workspace and proposes small changes.\n\n";
    const stream = new MarkdownStream();
    let text = "";
    for (let i = 0; i < 2000; i++) {
      text += paragraph;
      stream.render(text, false);
    }
    return { frozen: stream.frozen.length, source: stream.frozenSource.length, expected: text.length - paragraph.length };
  });
  // Everything but the last paragraph (whose successor has not started) is frozen.
  assert.equal(result.frozen, 1999);
  assert.equal(result.source, result.expected);
});
