// The file-tree context picker: tree (lazy, show-ignored toggle, binary/large flags), streamed
// fuzzy search with highlights, keyboard navigation and multi-select into composer chips with a
// token estimate, `@path` references in the sent prompt, the inline `@` search, live updates.
// The backend's picker_* commands are faked in the page (window.__gdExtraIPC).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { bundle, screenshotPath, sel, setup, UI_DIR } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** The fake picker backend, run in the page before the IPC mock. */
function fakePicker() {
  const file = (path, extra = {}) => ({
    name: path.split("/").pop(),
    path,
    kind: "file",
    size: 12,
    ignored: false,
    binary: false,
    huge: false,
    ...extra,
  });
  const dir = (path, extra = {}) => ({ ...file(path), kind: "dir", size: 0, ...extra });
  const tree = {
    "": [dir("docs"), dir("src"), file("huge.bin", { size: 3e6, huge: true }), file("logo.png", { binary: true }), file("README.md")],
    src: [file("src/lib.rs"), file("src/main.rs")],
    docs: [file("docs/maintenance.md")],
  };
  const ignored = { "": [file("build.log", { ignored: true })] };
  const files = ["README.md", "logo.png", "huge.bin", "src/lib.rs", "src/main.rs", "docs/maintenance.md"];
  window.__picker = { watch: null, tree, root: "/home/dev/project" };
  /** A subsequence match with its indices, like the real fuzzy search (roughly). */
  const fuzzy = (path, query) => {
    const indices = [];
    let at = 0;
    for (const ch of query.toLowerCase()) {
      const i = path.toLowerCase().indexOf(ch, at);
      if (i < 0) return null;
      indices.push(i);
      at = i + 1;
    }
    return indices;
  };
  window.__gdExtraIPC = (cmd, args) => {
    switch (cmd) {
      case "picker_open":
        return { roots: [window.__picker.root], building: false, files: files.length };
      case "picker_list_dir":
        return [...(tree[args.path] ?? []), ...(args.showIgnored ? (ignored[args.path] ?? []) : [])];
      case "picker_search": {
        const matches = files
          .map((path) => ({ path, indices: fuzzy(path, args.query) }))
          .filter((m) => m.indices)
          .sort((a, b) => a.path.length - b.path.length)
          .map((m, i) => ({ ...m, score: 100 - i }));
        // Streams like the backend: a partial update while indexing, then the final one.
        window.__gd.emitTo(args.onUpdate.id, { matches: matches.slice(0, 1), matched: 1, indexed: 3, done: false });
        window.__gd.emitTo(args.onUpdate.id, { matches, matched: matches.length, indexed: files.length, done: true });
        return null;
      }
      case "picker_estimate":
        return {
          tokens: args.paths.length * 10,
          items: args.paths.map((path) => ({
            path,
            tokens: 10,
            bytes: 40,
            files: 1,
            binaryFiles: path.endsWith(".png") ? 1 : 0,
            hugeFiles: 0,
            truncated: false,
            error: null,
          })),
        };
      case "picker_watch":
        window.__picker.watch = args.onEvent.id;
        return null;
      default:
        return undefined;
    }
  };
}

const row = (app, path) => app.page.locator(`${sel("picker-row")}[data-path="${path}"]`);
const rowPaths = (app) => app.tid("picker-row").evaluateAll((els) => els.map((e) => e.dataset.path));

async function openPicker() {
  const app = await env.open({ init: [fakePicker] });
  await app.tid("picker-open").click();
  await app.tid("picker").waitFor();
  await row(app, "README.md").waitFor();
  return app;
}

describe("file picker", () => {
  test("shows the first level, flags binary and large files, toggles ignored entries", async () => {
    const app = await openPicker();
    assert.deepEqual(await rowPaths(app), ["docs", "src", "huge.bin", "logo.png", "README.md"]);
    assert.equal(await row(app, "logo.png").getByTestId("picker-flag").getAttribute("data-flag"), "binary");
    assert.equal(await row(app, "huge.bin").getByTestId("picker-flag").getAttribute("data-flag"), "large");
    assert.equal(await row(app, "README.md").getByTestId("picker-flag").count(), 0);

    await app.tid("picker-show-ignored").check();
    await row(app, "build.log").waitFor();
    assert.equal(await row(app, "build.log").getByTestId("picker-flag").getAttribute("data-flag"), "ignored");
    await app.waitForCall("picker_list_dir", (a) => a.showIgnored === true);
    await app.tid("picker-show-ignored").uncheck();
    await row(app, "build.log").waitFor({ state: "detached" });
    // The watcher channel was opened with the picker.
    await app.waitForCall("picker_watch");
    await app.close();
  });

  test("expands folders, selects two files into chips with a token estimate, sends @paths", async () => {
    const app = await openPicker();
    await row(app, "src").getByTestId("picker-expand").click();
    await row(app, "src/main.rs").waitFor();
    assert.deepEqual(await rowPaths(app), ["docs", "src", "src/lib.rs", "src/main.rs", "huge.bin", "logo.png", "README.md"]);

    await row(app, "README.md").getByTestId("picker-check").check();
    await row(app, "src/main.rs").getByTestId("picker-check").check();
    assert.equal(await row(app, "src/main.rs").getAttribute("aria-selected"), "true");
    await app.tid("picker-done").click();
    await app.tid("picker").waitFor({ state: "detached" });
    assert.deepEqual(
      await app.tid("picker-chip").evaluateAll((els) => els.map((e) => e.dataset.path)),
      ["README.md", "src/main.rs"],
    );
    await app.page.waitForSelector(`${sel("picker-tokens")}[data-tokens="20"]`);
    assert.equal(await app.tid("picker-tokens").innerText(), "~20 tokens");
    await app.tid("picker-chips").screenshot({ path: screenshotPath("picker-chips.png") });

    await app.tid("prompt-input").fill("explain these");
    await app.tid("prompt-input").press("Enter");
    await app.waitForOp("user_turn", (a) => a.text === "@README.md @src/main.rs\nexplain these");
    await app.tid("picker-chips").waitFor({ state: "detached" });
    await app.close();
  });

  test("keyboard: arrows move, Space and Enter select, Right expands, Esc closes", async () => {
    const app = await openPicker();
    const search = app.tid("picker-search");
    await search.press("ArrowDown"); // src
    await search.press("ArrowRight");
    await row(app, "src/lib.rs").waitFor();
    await search.press("ArrowDown"); // src/lib.rs
    await search.press("Enter");
    assert.equal(await row(app, "src/lib.rs").getAttribute("aria-selected"), "true");
    // Picking a binary file flags its chip.
    for (let i = 0; i < 3; i++) await search.press("ArrowDown"); // logo.png
    await app.tid("picker").press(" ");
    await search.press("Escape");
    await app.tid("picker").waitFor({ state: "detached" });
    const chips = await app.tid("picker-chip").evaluateAll((els) => els.map((e) => [e.dataset.path, e.classList.contains("flagged")]));
    assert.deepEqual(chips, [
      ["src/lib.rs", false],
      ["logo.png", true],
    ]);
    await app.tid("picker-chip-remove").first().click();
    assert.equal(await app.tid("picker-chip").count(), 1);
    await app.close();
  });

  test("Space in the search box selects the highlighted entry (it does not type)", async () => {
    const app = await openPicker();
    const search = app.tid("picker-search");
    for (let i = 0; i < 4; i++) await search.press("ArrowDown"); // README.md
    await search.press(" ");
    assert.equal(await row(app, "README.md").getAttribute("aria-selected"), "true");
    assert.equal(await search.inputValue(), "");
    await app.close();
  });

  for (const how of ["Esc", "Done"]) {
    test(`closing the picker (${how}) gives the focus back to the prompt box, where Enter sends`, async () => {
      const app = await openPicker();
      const search = app.tid("picker-search");
      await search.press("ArrowDown");
      await search.press("Enter");
      if (how === "Esc") await search.press("Escape");
      else await app.tid("picker-done").click();
      await app.tid("picker").waitFor({ state: "detached" });
      assert.equal(await app.page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "prompt-input");
      await app.page.keyboard.type("what is in there");
      await app.page.keyboard.press("Enter");
      await app.waitForOp("user_turn", (a) => a.text.endsWith("what is in there"));
      await app.close();
    });
  }

  test("the picker is one overlay among the panels: opening one closes the other", async () => {
    const app = await env.open({ init: [fakePicker] });
    await app.tid("settings-open").click();
    await app.tid("settings-panel").waitFor();
    await app.tid("picker-open").click();
    await app.tid("picker").waitFor();
    await app.tid("settings-panel").waitFor({ state: "detached" });
    await app.tid("mcp-open").click();
    await app.tid("mcp-panel").waitFor();
    await app.tid("picker").waitFor({ state: "detached" });
    await app.close();
  });

  test("search streams ranked results with highlighted matches", async () => {
    const app = await openPicker();
    await app.tid("picker-search").fill("main");
    await app.page.waitForSelector(`${sel("picker-status")}[data-searching="false"]`);
    await row(app, "docs/maintenance.md").waitFor();
    assert.deepEqual(await rowPaths(app), ["src/main.rs", "docs/maintenance.md"]);
    assert.equal(await row(app, "src/main.rs").locator("mark").allInnerTexts().then((t) => t.join("")), "main");
    assert.match(await app.tid("picker-status").innerText(), /2 matches · 6 files indexed/);
    await app.tid("picker").screenshot({ path: screenshotPath("picker-search.png") });
    await app.tid("picker-search").press("Enter");
    assert.equal(await row(app, "src/main.rs").getAttribute("aria-selected"), "true");
    await app.close();
  });

  test("typing @ in the prompt opens the same search inline and inserts the reference", async () => {
    const app = await env.open({ init: [fakePicker] });
    const input = app.tid("prompt-input");
    await input.click();
    await input.pressSequentially("look at @mai");
    await app.tid("picker-inline").waitFor();
    await app.page.locator(`${sel("picker-inline-row")}[data-path="src/main.rs"]`).waitFor();
    await input.press("ArrowDown");
    await input.press("ArrowUp");
    await input.press("Enter");
    await app.tid("picker-inline").waitFor({ state: "detached" });
    assert.equal(await input.inputValue(), "look at @src/main.rs ");
    // Esc closes the inline search without inserting.
    await input.pressSequentially("and @rea");
    await app.tid("picker-inline").waitFor();
    await input.press("Escape");
    await app.tid("picker-inline").waitFor({ state: "detached" });
    assert.equal(await input.inputValue(), "look at @src/main.rs and @rea");
    await app.close();
  });

  test("a binary or large file inserted with @ is flagged like its chip would be", async () => {
    const app = await env.open({ init: [fakePicker] });
    const input = app.tid("prompt-input");
    await input.click();
    await input.pressSequentially("what is in @logo");
    await app.page.locator(`${sel("picker-inline-row")}[data-path="logo.png"]`).waitFor();
    await input.press("Enter");
    assert.equal(await input.inputValue(), "what is in @logo.png ");
    const flag = app.page.locator(`${sel("picker-inline-flag")}[data-path="logo.png"]`);
    await flag.waitFor();
    assert.equal(await flag.getAttribute("data-flag"), "binary");
    assert.match(await flag.innerText(), /binary: not sent as text/);
    await app.waitForCall("picker_estimate", (a) => a.paths.length === 1 && a.paths[0] === "logo.png");
    // A text file is not flagged; removing the reference removes its flag.
    await input.pressSequentially("and @READ");
    await app.page.locator(`${sel("picker-inline-row")}[data-path="README.md"]`).waitFor();
    await input.press("Enter");
    await app.waitForCall("picker_estimate", (a) => a.paths[0] === "README.md");
    assert.equal(await app.tid("picker-inline-flag").count(), 1);
    await input.fill("never mind");
    await app.tid("picker-inline-flag").waitFor({ state: "detached" });
    await app.close();
  });

  test("a change on disk reloads the listed folder", async () => {
    const app = await openPicker();
    await app.waitForCall("picker_watch");
    await app.page.evaluate(() => {
      window.__picker.tree[""].push({ name: "NEW.md", path: "NEW.md", kind: "file", size: 1, ignored: false, binary: false, huge: false });
      window.__gd.emitTo(window.__picker.watch, { type: "changed", root: 0, added: ["NEW.md"], removed: [], dirs: [""] });
    });
    await row(app, "NEW.md").waitFor();
    await app.close();
  });

  test("another workspace resets the tree and the picked files", async () => {
    const app = await openPicker();
    await row(app, "README.md").getByTestId("picker-check").check();
    await app.tid("picker-done").click();
    assert.equal(await app.tid("picker-chip").count(), 1);
    await app.page.evaluate(() => (window.__picker.root = "/home/dev/other"));
    await app.tid("picker-open").click();
    await app.tid("picker-chips").waitFor({ state: "detached" });
    await row(app, "README.md").waitFor();
    assert.equal(await row(app, "README.md").getAttribute("aria-selected"), "false");
    // A new event stream for the new index.
    assert.equal(app.callsOf("picker_watch").length, 2);
    await app.close();
  });
});

describe("@ mentions", () => {
  test("mention() writes each awkward name as the core reads it back (tests/fixtures/at-mentions.json)", async () => {
    const script = readFileSync(await bundle(path.join(UI_DIR, "src", "lib", "picker.ts"), "GdPicker"), "utf8");
    const fixture = JSON.parse(readFileSync(path.join(UI_DIR, "..", "tests", "fixtures", "at-mentions.json"), "utf8"));
    const page = await env.browser.newPage();
    await page.setContent("<!doctype html><html><body></body></html>");
    await page.addScriptTag({ content: script });
    const written = await page.evaluate((paths) => paths.map((p) => window.GdPicker.mention(p)), fixture.cases.map((c) => c.path));
    assert.deepEqual(written, fixture.cases.map((c) => c.mention));
    await page.close();
  });
});
