// The memory view and slash commands in the composer: `/memory` opens the view, which shows the
// context files as their import tree with sizes (from `memory_loaded` events); Refresh and "Add a
// memory" send their commands; `/memory add …` and `/memory refresh` work from the composer
// without sending a prompt; typing `/` offers the built-in and custom commands.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { screenshotPath, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const WS = "/home/user/project";

const memoryLoaded = {
  type: "memory_loaded",
  chars: 4321,
  files: [
    { path: "/home/user/.gemini/GEMINI.md", bytes: 120, imports: [] },
    {
      path: `${WS}/GEMINI.md`,
      bytes: 2048,
      imports: [{ path: `${WS}/docs/style.md`, bytes: 300, imports: [{ path: `${WS}/docs/deep.md`, bytes: 5, imports: [] }] }],
    },
  ],
};

const commands = {
  type: "commands",
  commands: [
    { name: "clear", description: "Start a new conversation", source: "built_in", alt_names: ["new"], server: null, arguments: [] },
    { name: "memory", description: "Show, refresh or add to the memory", source: "built_in", alt_names: [], server: null, arguments: [] },
    { name: "git:commit", description: "Writes a commit message", source: "user", alt_names: [], server: null, arguments: [] },
    { name: "review", description: "Project review", source: "project", alt_names: [], server: null, arguments: [] },
  ],
};

async function open() {
  return env.open({ config: { appInfo: { version: "0.1.0", workspace: WS } } });
}

describe("memory view", () => {
  test("/memory opens the import tree with sizes; Refresh and Add send their commands", async () => {
    const app = await open();
    await app.tid("prompt-input").fill("/memory");
    await app.tid("prompt-input").press("Enter");
    await app.tid("memory-panel").waitFor();
    assert.equal(await app.tid("prompt-input").inputValue(), "", "the command is consumed");
    assert.equal(app.opsOf("user_turn").length, 0, "no prompt is sent");
    await app.emit(memoryLoaded);
    await app.page.waitForFunction(() => document.querySelectorAll('[data-testid="memory-file"]').length === 4);
    const rows = await app.tid("memory-file").evaluateAll((els) => els.map((e) => [e.dataset.depth, e.textContent.replace(/\s+/g, " ").trim()]));
    assert.deepEqual(rows, [
      ["0", "~/.gemini/GEMINI.md 120 B"],
      ["0", "GEMINI.md 2.0 KB"],
      ["1", "↳ docs/style.md 300 B"],
      ["2", "↳ docs/deep.md 5 B"],
    ]);
    assert.equal(await app.tid("memory-summary").innerText(), "2 files · 4,321 characters");
    await app.tid("memory-panel").screenshot({ path: screenshotPath("memory-panel-light.png") });

    await app.tid("memory-refresh").click();
    await app.waitForOp("refresh_memory", (a) => a.sessionId === "s1");

    assert.equal(await app.tid("memory-add").isDisabled(), true, "nothing to add yet");
    await app.tid("memory-add-input").fill("I prefer tabs");
    await app.tid("memory-add").click();
    await app.waitForOp("add_memory", (a) => a.sessionId === "s1" && a.text === "I prefer tabs");
    await app.page.waitForFunction(() => document.querySelector('[data-testid="memory-add-input"]').value === "");

    // An empty memory says so.
    await app.emit({ type: "memory_loaded", chars: 0, files: [] });
    await app.tid("memory-empty").waitFor();
    await app.tid("memory-add-input").press("Escape");
    await app.tid("memory-panel").waitFor({ state: "detached" });
    assert.deepEqual(app.errors, []);
    await app.close();
  });

  test("/memory add and /memory refresh work from the composer", async () => {
    const app = await open();
    await app.tid("prompt-input").fill("/memory add likes short answers");
    await app.tid("prompt-input").press("Enter");
    await app.waitForOp("add_memory", (a) => a.text === "likes short answers");
    await app.tid("prompt-input").fill("/memory refresh");
    await app.tid("prompt-input").press("Enter");
    await app.waitForOp("refresh_memory");
    await app.tid("memory-panel").waitFor();
    assert.equal(app.opsOf("user_turn").length, 0);
    assert.deepEqual(app.errors, []);
    await app.close();
  });
});

describe("slash command autocomplete", () => {
  test("typing / offers built-in and custom commands; Tab completes; other prompts are sent", async () => {
    const app = await open();
    await app.waitForOp("list_commands", (a) => a.sessionId === "s1");
    await app.emit(commands);
    const input = app.tid("prompt-input");
    await input.fill("");
    await input.pressSequentially("/");
    await app.tid("slash-suggestions").waitFor();
    const names = () => app.tid("slash-suggestion").evaluateAll((els) => els.map((e) => e.dataset.name));
    assert.deepEqual(await names(), ["clear", "memory", "git:commit", "review"]);
    // Typing "/" asks for the commands again (custom commands are files that may have changed).
    assert.ok(app.opsOf("list_commands").length >= 2);
    await input.pressSequentially("r");
    await app.page.waitForFunction(() => document.querySelectorAll('[data-testid="slash-suggestion"]').length === 1);
    assert.deepEqual(await names(), ["review"]);
    await input.press("Tab");
    assert.equal(await input.inputValue(), "/review ");
    await app.tid("slash-suggestions").waitFor({ state: "detached" });

    // Arrow keys move the selection; Enter completes instead of sending.
    await input.fill("");
    await input.pressSequentially("/");
    await input.press("ArrowDown");
    await input.press("ArrowDown");
    assert.equal(await app.page.locator('[data-testid="slash-suggestion"].selected').getAttribute("data-name"), "git:commit");
    await app.tid("composer").screenshot({ path: screenshotPath("composer-slash-light.png") });
    await input.press("Enter");
    assert.equal(await input.inputValue(), "/git:commit ");
    assert.equal(app.opsOf("user_turn").length, 0);

    // With arguments typed, Enter sends the command as a prompt (the core expands it).
    await input.pressSequentially("fix the parser");
    await input.press("Enter");
    await app.waitForOp("user_turn", (a) => a.text === "/git:commit fix the parser");
    assert.deepEqual(app.errors, []);
    await app.close();
  });
});
