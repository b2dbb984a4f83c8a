// Finished tool cards (issue 13, items 5 and 10): a shell card shows its output once (monospace,
// collapsible) with the exit code core reports; the full output and an applied edit's diff can
// be reopened from the card; a rejected call reads "Rejected"; a folder listing expands to its
// entries; an MCP tool is titled "server › tool".
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as E from "./support/events.mjs";
import { fixture, screenshotPath, sel, setup } from "./support/harness.mjs";

const diffs = fixture("diffs.json");

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** A tool response with the fields core adds for the card. */
const response = (call_id, name, status, fields = {}) => ({
  ...E.toolResponse(call_id, name, status, fields.display ?? null, fields.error ?? null, 120),
  declined: false,
  ...fields,
});

const card = (page, id) => page.locator(`${sel("tool-card")}[data-call-id="${id}"]`);

const SHELL_OUTPUT = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n";

test("a finished shell card shows its output once, monospace and collapsible, with the exit code", async () => {
  const app = await env.open();
  const { page } = app;
  await app.sendPrompt("run it");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("s1", "run_shell_command", { command: "./run.sh" }),
    E.toolState("s1", "executing"),
    E.toolOutput("s1", SHELL_OUTPUT),
    response("s1", "run_shell_command", "success", { display: SHELL_OUTPUT, output: SHELL_OUTPUT, exit_code: 0 }),
    E.toolRequest("s2", "run_shell_command", { command: "false" }),
    response("s2", "run_shell_command", "success", { display: "Command exited with code 2.", output: "", exit_code: 2 }),
  ]);
  const c1 = card(page, "s1");
  await page.waitForSelector(`${sel("tool-card")}[data-call-id="s1"][data-state="success"]`);
  // Once: one output view, and no second copy of it as the result text.
  assert.equal(await c1.getByTestId("tool-output").count(), 1);
  assert.equal(await c1.getByTestId("tool-result").count(), 0, "the output is not repeated as the result");
  assert.equal((await c1.innerText()).split("line 8").length - 1, 1, "the output's text appears once");
  const font = await c1.getByTestId("tool-output").evaluate((el) => getComputedStyle(el).fontFamily);
  assert.match(font, /mono|Menlo|Consolas/i, `monospace (${font})`);
  const toggle = c1.getByTestId("tool-output-toggle");
  assert.equal(await toggle.innerText(), "▾Output · 8 lines");
  assert.equal(await toggle.getAttribute("aria-expanded"), "true");
  await toggle.click();
  assert.equal(await c1.getByTestId("tool-output").count(), 0, "collapsing really hides the output");
  assert.equal(await toggle.getAttribute("aria-expanded"), "false");
  await toggle.click();
  assert.equal(await c1.getByTestId("tool-output").count(), 1);
  // The exit code: 0 plain, 2 as an error.
  assert.equal(await c1.getByTestId("tool-exit-code").innerText(), "exit 0");
  const c2 = card(page, "s2");
  assert.equal(await c2.getByTestId("tool-exit-code").innerText(), "exit 2");
  // A command that exited non-zero is a failed card, not "Done" (issue 34); exit 0 stays done.
  assert.equal(await c2.getAttribute("data-state"), "error");
  assert.match(await c2.getByTestId("tool-state").innerText(), /^Failed/);
  assert.equal(await c1.getAttribute("data-state"), "success");
  assert.match(await c1.getByTestId("tool-state").innerText(), /^Done/);
  const colours = await page.evaluate(() => {
    const [a, b] = Array.from(document.querySelectorAll('[data-testid="tool-exit-code"]'));
    return [getComputedStyle(/** @type {Element} */ (a)).color, getComputedStyle(/** @type {Element} */ (b)).color];
  });
  assert.notEqual(colours[0], colours[1], "a failing exit code is styled differently");
  assert.equal(await c2.getByTestId("tool-result").innerText(), "Command exited with code 2.");
  assert.equal(await c2.getByTestId("tool-output-toggle").count(), 0, "no output, no toggle");
  await c1.screenshot({ path: screenshotPath("tool-card-shell.png") });
  await app.close();
});

test("list_directory expands to its entries, collapsed by default", async () => {
  const app = await env.open();
  const { page } = app;
  await app.sendPrompt("what is here");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("l1", "list_directory", { dir_path: "/home/dev/project" }),
    response("l1", "list_directory", "success", { display: "Listed 3 item(s).", output: "src/\nREADME.md\nhello.txt" }),
  ]);
  const c = card(page, "l1");
  await page.waitForSelector(`${sel("tool-card")}[data-call-id="l1"][data-state="success"]`);
  assert.equal(await c.getByTestId("tool-result").innerText(), "Listed 3 item(s).");
  assert.equal(await c.getByTestId("tool-output").count(), 0, "collapsed by default");
  assert.equal(await c.getByTestId("tool-output-toggle").innerText(), "▸Entries · 3");
  await c.getByTestId("tool-output-toggle").click();
  assert.equal(await c.getByTestId("tool-output").innerText(), "src/\nREADME.md\nhello.txt");
  await app.close();
});

test("any finished tool reopens its full output; an applied edit reopens its diff (read-only)", async () => {
  const app = await env.open();
  const { page } = app;
  const full = Array.from({ length: 40 }, (_, i) => `fn line_${i}() {}`).join("\n");
  const diff = E.editDetails(diffs.two_hunks);
  await app.sendPrompt("read and edit");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("r1", "read_file", { absolute_path: "/home/dev/project/src/lib.rs" }),
    response("r1", "read_file", "success", { display: "Read 40 lines", output: full }),
    E.toolRequest("e1", "replace", { file_path: "/home/dev/project/src/main.rs" }),
    response("e1", "replace", "success", { display: "Edited main.rs", diff }),
  ]);
  const r = card(page, "r1");
  await page.waitForSelector(`${sel("tool-card")}[data-call-id="e1"][data-state="success"]`);
  assert.equal(await r.getByTestId("tool-output-toggle").innerText(), "▸Full output · 40 lines");
  await r.getByTestId("tool-output-toggle").click();
  assert.equal(await r.getByTestId("tool-output").innerText(), full, "the full, untruncated output");

  const e = card(page, "e1");
  assert.equal(await e.getByTestId("diff-view").count(), 0);
  await e.getByTestId("tool-view-diff").click();
  const view = e.getByTestId("diff-view");
  await view.waitFor();
  assert.equal(await view.getAttribute("data-call-id"), "e1");
  assert.match(await view.getByTestId("diff-right").innerText(), /compute_fast\(10\)/);
  assert.equal(await e.getByTestId("diff-editor").count(), 0, "read-only: no editor");
  assert.match(await view.getByTestId("diff-right").innerText(), /^Applied/);
  await e.screenshot({ path: screenshotPath("tool-card-diff.png") });
  await e.getByTestId("tool-view-diff").click();
  assert.equal(await e.getByTestId("diff-view").count(), 0);
  await app.close();
});

test("a rejected call reads Rejected, without the message meant for the model", async () => {
  const app = await env.open();
  const { page } = app;
  await app.sendPrompt("edit it");
  const reason = "[Operation Cancelled] Reason: User did not allow tool call";
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("x1", "replace", { file_path: "/home/dev/project/a.txt" }),
    response("x1", "replace", "cancelled", { error: reason, declined: true }),
    E.toolRequest("x2", "run_shell_command", { command: "sleep 100" }),
    response("x2", "run_shell_command", "cancelled", { error: "[Operation Cancelled] Reason: User cancelled the operation." }),
  ]);
  const rejected = card(page, "x1");
  await page.waitForSelector(`${sel("tool-card")}[data-call-id="x1"][data-state="cancelled"]`);
  assert.equal(await rejected.getByTestId("tool-state").innerText(), "Rejected");
  assert.ok(!(await rejected.innerText()).includes("Operation Cancelled"), await rejected.innerText());
  // Stopped (not rejected): still "Cancelled", also without the note for the model.
  assert.match(await card(page, "x2").getByTestId("tool-state").innerText(), /^Cancelled/);
  assert.ok(!(await card(page, "x2").innerText()).includes("Operation Cancelled"));
  await app.close();
});

test("an MCP tool card is titled server › tool from what core reports", async () => {
  const app = await env.open();
  const { page } = app;
  await app.sendPrompt("add");
  await app.emitAll([
    E.turnStarted(),
    { ...E.toolRequest("m1", "mcp_tiny_add", { a: 1, b: 2 }), mcp: { server: "tiny", tool: "add" } },
    // A server whose name has an underscore: the declared name cannot be split back.
    { ...E.toolRequest("m2", "mcp_my_srv_do_it", {}), mcp: { server: "my_srv", tool: "do_it" } },
  ]);
  await page.waitForSelector(`${sel("tool-card")}[data-call-id="m2"]`);
  assert.equal(await card(page, "m1").getByTestId("tool-title").innerText(), "tiny › add");
  assert.equal(await card(page, "m2").getByTestId("tool-title").innerText(), "my_srv › do_it");
  assert.equal(await card(page, "m1").getAttribute("data-tool"), "mcp_tiny_add");
  await app.close();
});

test("finished cards in the dark theme at 800 px (screenshot)", async () => {
  const app = await env.open({ colorScheme: "dark", viewport: { width: 800, height: 760 } });
  const { page } = app;
  await app.sendPrompt("do things");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("s1", "run_shell_command", { command: "./run.sh" }),
    response("s1", "run_shell_command", "success", { display: SHELL_OUTPUT, output: SHELL_OUTPUT, exit_code: 2 }),
    E.toolRequest("l1", "list_directory", { dir_path: "/home/dev/project" }),
    response("l1", "list_directory", "success", { display: "Listed 3 item(s).", output: "src/\nREADME.md\nhello.txt" }),
    E.toolRequest("x1", "replace", { file_path: "/home/dev/project/a.txt" }),
    response("x1", "replace", "cancelled", { error: "[Operation Cancelled] Reason: User did not allow tool call", declined: true }),
    { ...E.toolRequest("m1", "mcp_tiny_add", { a: 1, b: 2 }), mcp: { server: "tiny", tool: "add" } },
    response("m1", "mcp_tiny_add", "success", { display: "3" }),
    E.delta("All done."),
    E.turnComplete(),
  ]);
  await page.waitForSelector(`${sel("tool-card")}[data-call-id="m1"][data-state="success"]`);
  await card(page, "l1").getByTestId("tool-output-toggle").click();
  await page.screenshot({ path: screenshotPath("tool-cards-dark-800.png") });
  await app.close();
});

// Issue 34, item 10b: a write that plan mode refused read as a red "Failed" card with the
// message meant for the model. It is "Refused by plan mode" (amber), with the reason in the
// user's words; only a `deny` of the policy or the mode makes that state.
const PLAN_RULE = { tier: "default", priority: 65, effective_priority: 1065, decision: "deny", modes: ["plan"], path: "<built-in>/plan.toml", line: 90, text: '[[rule]]\ntoolName = ["write_file", "replace"]\ndecision = "deny"\npriority = 65\nmodes = ["plan"]\n', origin: "default policy (plan.toml)" };
const PLAN_DENY = { kind: "approval_mode", outcome: "deny", mode: "plan", rule: PLAN_RULE };
const PLAN_MESSAGE = "Tool execution denied by policy. You are in Plan Mode and cannot modify source code. You may ONLY use write_file or replace to save plans to the designated plans directory as .md files.";

test("a call refused by plan mode or a rule reads Refused (amber), with the reason for the user; a failure stays Failed", async () => {
  const app = await env.open();
  const { page } = app;
  await app.sendPrompt("write it");
  const userRule = { tier: "user", priority: 300, effective_priority: 4300, decision: "deny", modes: [], path: "/home/dev/.gemini/policies/dev.toml", line: 20, text: '[[rule]]\ntoolName = "run_shell_command"\ndecision = "deny"\n', origin: "/home/dev/.gemini/policies/dev.toml" };
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("p", "write_file", { file_path: "/home/dev/project/src/main.rs", content: "x" }),
    { type: "tool_call_decided", call_id: "p", decided_by: PLAN_DENY },
    response("p", "write_file", "error", { error: PLAN_MESSAGE, decided_by: PLAN_DENY }),
    E.toolRequest("r", "run_shell_command", { command: "curl x | sh" }),
    response("r", "run_shell_command", "error", { error: "Tool execution denied by policy. Piping downloads into a shell is not allowed here.", decided_by: { kind: "policy", outcome: "deny", rule: userRule } }),
    // Allowed by the mode, then failed while running: a failure, not a refusal.
    E.toolRequest("f", "write_file", { file_path: "/home/dev/project/ro.txt", content: "x" }),
    response("f", "write_file", "error", { error: "Permission denied (os error 13)", decided_by: { kind: "user", outcome: "proceed_once" } }),
  ]);
  await card(page, "f").getByTestId("tool-result").waitFor();
  assert.equal(await card(page, "p").getAttribute("data-state"), "refused");
  assert.match(await card(page, "p").getByTestId("tool-state").innerText(), /^Refused by plan mode/);
  const reason = await card(page, "p").getByTestId("tool-result").innerText();
  assert.match(reason, /^Plan mode only reads and researches/);
  assert.doesNotMatch(reason, /Tool execution denied|plans directory/, "not the message meant for the model");
  assert.equal(await card(page, "p").getByTestId("tool-result").getAttribute("title"), `What the model was told: ${PLAN_MESSAGE}`);
  // Amber (the warning colour), not the danger red.
  const colours = await card(page, "p").evaluate((el) => {
    const probe = (v) => {
      const d = document.createElement("div");
      d.style.color = `var(${v})`;
      document.body.append(d);
      const c = getComputedStyle(d).color;
      d.remove();
      return c;
    };
    return { state: getComputedStyle(el.querySelector('[data-testid="tool-state"]')).color, warning: probe("--warning") };
  });
  assert.equal(colours.state, colours.warning);
  // A user rule's refusal: its own deny_message is the reason.
  assert.equal(await card(page, "r").getAttribute("data-state"), "refused");
  assert.match(await card(page, "r").getByTestId("tool-state").innerText(), /^Refused by a policy rule/);
  assert.equal(await card(page, "r").getByTestId("tool-result").innerText(), "Piping downloads into a shell is not allowed here.");
  // Allowed, then failed: still Failed, with its error.
  assert.equal(await card(page, "f").getAttribute("data-state"), "error");
  assert.match(await card(page, "f").getByTestId("tool-state").innerText(), /^Failed/);
  assert.equal(await card(page, "f").getByTestId("tool-result").innerText(), "Permission denied (os error 13)");
  await app.close();
});
