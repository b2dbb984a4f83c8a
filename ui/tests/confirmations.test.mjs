// Confirmation cards: every answer button, editing the proposal, keyboard shortcuts, the queue,
// and the execute / MCP / info cards.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { fixture, screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

const diffs = fixture("diffs.json");
let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const shell = (id, command = "rm -rf target && cargo build", roots = ["rm", "cargo"]) => [
  E.toolRequest(id, "run_shell_command", { command }),
  E.confirmation(id, "run_shell_command", E.executeDetails(command, roots)),
];
const edit = (id, name = "two_hunks") => [
  E.toolRequest(id, "replace", { file_path: `/home/dev/project/src/${diffs[name].file_name}` }),
  E.confirmation(id, "replace", E.editDetails(diffs[name])),
];

/** Opens the app, sends a prompt and delivers `events` in a running turn. */
async function pending(events, options) {
  const app = await env.open(options);
  await app.sendPrompt("do it");
  await app.emitAll([E.turnStarted(), ...events]);
  await app.tid("confirmation").waitFor();
  return app;
}

const gone = (app) => app.page.waitForSelector(sel("confirmation"), { state: "detached" });

describe("answer buttons", () => {
  for (const [button, outcome] of [
    ["approve", "proceed_once"],
    ["reject", "cancel"],
    ["always-allow", "proceed_always"],
    ["always-allow-save", "proceed_always_and_save"],
  ]) {
    test(`${button} answers ${outcome}`, async () => {
      const app = await pending(shell("x1"));
      await app.tid(button).click();
      const call = await app.waitForOp("confirm_tool");
      assert.deepEqual(call.args, { sessionId: "s1", call_id: "x1", outcome, content: null });
      await gone(app);
      assert.equal(app.opsOf("confirm_tool").length, 1);
      await app.close();
    });
  }

  test("Edit: the right pane becomes an editor; Approve sends modify_with_editor with the text", async () => {
    const app = await pending(edit("e1", "new_file"));
    const { page } = app;
    assert.equal(await app.tid("diff-editor").count(), 0);
    await app.tid("edit-proposal").click();
    const editor = app.tid("diff-editor");
    await editor.waitFor();
    // The editor sits in the right pane, holds the full proposed text and has the focus.
    assert.equal(await page.locator(`${sel("diff-right")} ${sel("diff-editor")}`).count(), 1);
    assert.equal(await editor.inputValue(), diffs.new_file.proposed);
    assert.ok(await editor.evaluate((el) => el === document.activeElement));
    assert.equal(await app.tid("approve").innerText().then((t) => t.split("\n")[0].trim()), "Approve edited");
    assert.ok(await app.tid("always-allow").isDisabled(), "always-allow does not apply to an edited version");
    await page.locator(sel("confirmation")).screenshot({ path: screenshotPath("edit-mode-light.png") });
    const edited = 'def hello(name):\n    return f"Hi, {name}!"\n';
    await editor.fill(edited);
    await app.tid("approve").click();
    const call = await app.waitForOp("confirm_tool");
    assert.deepEqual(call.args, { sessionId: "s1", call_id: "e1", outcome: "modify_with_editor", content: edited });
    await gone(app);
    await app.close();
  });
});

describe("keyboard", () => {
  test("Ctrl+Enter approves, also from the prompt box", async () => {
    const app = await pending(shell("k1"));
    await app.tid("prompt-input").click();
    await app.page.keyboard.press("Control+Enter");
    const call = await app.waitForOp("confirm_tool");
    assert.equal(call.args.outcome, "proceed_once");
    assert.equal(app.opsOf("user_turn").length, 1, "Ctrl+Enter did not send the prompt");
    await app.close();
  });

  test("Esc rejects the confirmation (and does not stop the turn)", async () => {
    const app = await pending(shell("k2"));
    assert.match(await app.tid("composer-hint").innerText(), /Esc rejects/);
    await app.page.keyboard.press("Escape");
    const call = await app.waitForOp("confirm_tool");
    assert.equal(call.args.outcome, "cancel");
    assert.equal(app.opsOf("interrupt").length, 0);
    await app.close();
  });

  test("Ctrl+Backspace rejects outside text fields", async () => {
    const app = await pending(shell("k3"));
    await app.tid("prompt-input").fill("draft words");
    await app.tid("prompt-input").press("Control+Backspace");
    assert.equal(await app.tid("prompt-input").inputValue(), "draft ", "in the prompt box it deletes a word");
    assert.equal(app.opsOf("confirm_tool").length, 0);
    await app.page.evaluate(() => /** @type {HTMLElement} */ (document.activeElement)?.blur());
    await app.page.keyboard.press("Control+Backspace");
    const call = await app.waitForOp("confirm_tool");
    assert.equal(call.args.outcome, "cancel");
    await app.close();
  });

  test("in edit mode Esc discards the edits; Ctrl+Enter approves the edited text", async () => {
    const app = await pending(edit("k4", "emptied"));
    const { page } = app;
    await app.tid("edit-proposal").click();
    await app.tid("diff-editor").fill("kept\n");
    await page.keyboard.press("Escape");
    await app.tid("diff-editor").waitFor({ state: "detached" });
    assert.equal(app.opsOf("confirm_tool").length, 0, "Esc only left edit mode");
    await app.tid("edit-proposal").click();
    assert.equal(await app.tid("diff-editor").inputValue(), "", "the edits were discarded");
    await app.tid("diff-editor").fill("kept\n");
    await page.keyboard.press("Control+Enter");
    const call = await app.waitForOp("confirm_tool");
    assert.deepEqual(call.args, { sessionId: "s1", call_id: "k4", outcome: "modify_with_editor", content: "kept\n" });
    await app.close();
  });
});

describe("queue and cards", () => {
  test("several pending confirmations queue visibly and are answered in order", async () => {
    const app = await pending([
      ...edit("q1"),
      ...shell("q2", "npm install", ["npm"]),
      E.confirmation("q3", "web_fetch", E.infoDetails("Summarise https://example.com/a", ["https://example.com/a"])),
    ]);
    const { page } = app;
    await waitForText(page, sel("confirmation-queue"), "1 of 3 pending");
    assert.equal(await app.tid("confirmation").getAttribute("data-call-id"), "q1");
    assert.equal(await app.tid("confirmation").getAttribute("data-kind"), "edit");
    assert.deepEqual(
      await page.locator(sel("confirmation-queued")).evaluateAll((els) => els.map((e) => e.getAttribute("data-call-id"))),
      ["q2", "q3"],
    );
    assert.match(await page.locator(sel("confirmation-queued")).first().innerText(), /Run npm install/);
    await page.screenshot({ path: screenshotPath("queue-light.png") });

    await app.tid("approve").click();
    await page.waitForSelector(`${sel("confirmation")}[data-call-id="q2"]`);
    await waitForText(page, sel("confirmation-queue"), "1 of 2 pending");
    await app.tid("reject").click();
    await page.waitForSelector(`${sel("confirmation")}[data-call-id="q3"]`);
    assert.equal(await app.tid("confirmation-queue").count(), 0, "no counter for the last one");
    await app.tid("always-allow").click();
    await gone(app);
    assert.deepEqual(
      app.opsOf("confirm_tool").map((c) => [c.args.call_id, c.args.outcome]),
      [
        ["q1", "proceed_once"],
        ["q2", "cancel"],
        ["q3", "proceed_always"],
      ],
    );
    await app.close();
  });

  test("tool cards show that they await approval; the end of the turn clears the queue", async () => {
    const app = await pending(shell("w1"));
    const { page } = app;
    await page.waitForSelector(`${sel("tool-card")}[data-call-id="w1"][data-state="awaiting_approval"]`);
    assert.equal(await page.locator(`${sel("tool-card")}[data-call-id="w1"] ${sel("tool-state")}`).innerText(), "Awaiting approval");
    // The core resolved it by itself (e.g. the turn was cancelled).
    await app.emitAll([E.toolResponse("w1", "run_shell_command", "cancelled"), E.turnComplete("cancelled")]);
    await gone(app);
    await page.waitForSelector(`${sel("tool-card")}[data-call-id="w1"][data-state="cancelled"]`);
    await app.close();
  });

  test("execute card: exact command, directory and root commands", async () => {
    const command = "git add -A && git commit -m 'wip: \"quoted\"' | tee log.txt";
    const app = await pending(shell("c1", command, ["git", "tee"]));
    const card = app.tid("confirmation");
    assert.equal(await card.getAttribute("data-kind"), "execute");
    assert.equal(await app.tid("confirm-command").textContent(), command);
    assert.equal(await app.tid("confirm-directory").innerText(), "/home/dev/project");
    assert.deepEqual(await app.page.locator(`${sel("confirm-root-commands")} code`).allInnerTexts(), ["git", "tee"]);
    assert.equal(await app.tid("always-allow").innerText(), "Always allow git, tee");
    assert.equal(await app.tid("edit-proposal").count(), 0, "only edits can be edited");
    await card.screenshot({ path: screenshotPath("execute-light.png") });
    await app.close();
  });

  test("MCP card: server, tool and arguments", async () => {
    const args = { owner: "acme", repo: "widgets", labels: ["bug", "p1"] };
    const app = await pending([E.confirmation("m1", "create_issue", E.mcpDetails("github", "create_issue", "Create issue", args))]);
    assert.equal(await app.tid("confirmation").getAttribute("data-kind"), "mcp");
    assert.equal(await app.tid("confirm-mcp-server").innerText(), "github");
    assert.equal(await app.tid("confirm-mcp-tool").innerText(), "Create issue");
    assert.deepEqual(JSON.parse(await app.tid("confirm-mcp-args").innerText()), args);
    assert.equal(await app.tid("always-allow").innerText(), "Always allow Create issue");
    await app.tid("always-allow-save").click();
    const call = await app.waitForOp("confirm_tool");
    assert.deepEqual(call.args, { sessionId: "s1", call_id: "m1", outcome: "proceed_always_and_save", content: null });
    await app.close();
  });

  test("info card: prompt and URLs (opened in the system browser)", async () => {
    const app = await pending([
      E.confirmation("i1", "web_fetch", E.infoDetails("Summarise these pages", ["https://example.com/a", "https://example.org/b"])),
    ]);
    assert.equal(await app.tid("confirmation").getAttribute("data-kind"), "info");
    assert.equal(await app.tid("confirm-prompt").innerText(), "Summarise these pages");
    assert.deepEqual(await app.page.locator(`${sel("confirm-urls")} a`).allInnerTexts(), ["https://example.com/a", "https://example.org/b"]);
    await app.page.locator(`${sel("confirm-urls")} a`).nth(1).click();
    const call = await app.waitForCall("plugin:opener|open_url");
    assert.deepEqual(call.args, { url: "https://example.org/b" });
    assert.equal(app.opsOf("confirm_tool").length, 0, "opening a URL answers nothing");
    await app.close();
  });
});
