// "Why was this allowed?" (issue 17, item 4): every tool card has a quiet `decided-by` line — the
// policy rule with its file, line, tier and priority; the approval mode; this session's "always
// allow"; the user's click; or no rule — which opens to the rule's text. A reopened conversation
// shows the same line from the stored record.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import vm from "node:vm";
import * as E from "./support/events.mjs";
import { bundle, screenshotPath, sel, setup, UI_DIR } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const RULE_TEXT = '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "cargo build"\ndecision = "allow"\npriority = 100\n';

const fileRule = {
  tier: "user",
  priority: 100,
  effective_priority: 4100,
  decision: "allow",
  modes: [],
  path: "/home/dev/.gemini/policies/dev.toml",
  line: 12,
  text: RULE_TEXT,
  origin: "/home/dev/.gemini/policies/dev.toml",
};
const byFile = { kind: "policy", outcome: "allow", rule: fileRule };
const denied = {
  kind: "policy",
  outcome: "deny",
  rule: { ...fileRule, decision: "deny", priority: 300, effective_priority: 4300, line: 20, text: '[[rule]]\ntoolName = "write_file"\ndecision = "deny"\npriority = 300\n' },
};
const yolo = {
  kind: "approval_mode",
  outcome: "allow",
  mode: "yolo",
  rule: { tier: "default", priority: 998, effective_priority: 1998, decision: "allow", modes: ["yolo"], path: "<built-in>/yolo.toml", line: 5, text: '[[rule]]\ndecision = "allow"\npriority = 998\nmodes = ["yolo"]\n', origin: "default policy (yolo.toml)" },
};
const session = {
  kind: "session_allow",
  rule: { tier: "workspace", priority: 950, effective_priority: 3950, decision: "allow", modes: [], text: '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "ls"\ndecision = "allow"\npriority = 950\n', origin: "this session's Always allow" },
};
const decided = (call_id, decided_by) => ({ type: "tool_call_decided", call_id, decided_by });
const response = (call_id, name, status, fields = {}) => ({
  ...E.toolResponse(call_id, name, status, fields.display ?? null, fields.error ?? null, 120),
  declined: false,
  ...fields,
});
const line = (page, id) => page.locator(`${sel("tool-card")}[data-call-id="${id}"] ${sel("decided-by")}`);
const label = (page, id) => line(page, id).getByTestId("decided-by-label").innerText();

test("each card says what decided it, and a rule's line opens to its text and file", async () => {
  const app = await env.open();
  const { page } = app;
  await app.sendPrompt("build");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("a", "run_shell_command", { command: "cargo build" }),
    decided("a", byFile),
    response("a", "run_shell_command", "success", { display: "ok", decided_by: byFile }),
    E.toolRequest("b", "write_file", { file_path: "/home/dev/project/x.txt", content: "x" }),
    decided("b", denied),
    response("b", "write_file", "error", { error: "Tool execution denied by policy.", decided_by: denied }),
    E.toolRequest("c", "run_shell_command", { command: "make" }),
    decided("c", { kind: "default", outcome: "ask" }),
    E.toolState("c", "awaiting_approval"),
  ]);
  await page.waitForSelector(`${sel("tool-card")}[data-call-id="c"] ${sel("decided-by")}`);
  assert.equal(await label(page, "a"), "Allowed by rule · ~/.gemini/policies/dev.toml:12 · user tier · priority 100");
  assert.match(await label(page, "b"), /^Denied by rule · ~\/\.gemini\/policies\/dev\.toml:20 · user tier · priority 300$/);
  assert.equal(await line(page, "b").getAttribute("data-outcome"), "deny");
  // While the question waits: no rule matched.
  assert.equal(await label(page, "c"), "Asked: no rule matched");
  assert.equal(await line(page, "c").getByTestId("decided-by-toggle").count(), 0, "nothing to open without a rule");
  // The user's click replaces it.
  await app.emitAll([decided("c", { kind: "user", outcome: "proceed_once" }), response("c", "run_shell_command", "success", { display: "made" })]);
  await page.waitForFunction(() => document.querySelector('[data-call-id="c"] [data-testid="decided-by"]')?.textContent?.includes("You approved"));
  assert.equal(await label(page, "c"), "You approved");

  // Closed by default; the toggle opens the rule: its file, weight, modes and text.
  const a = line(page, "a");
  assert.equal(await a.getByTestId("decided-by-details").count(), 0);
  const toggle = a.getByTestId("decided-by-toggle");
  assert.equal(await toggle.getAttribute("aria-expanded"), "false");
  await toggle.click();
  assert.equal(await toggle.getAttribute("aria-expanded"), "true");
  assert.equal(await a.getByTestId("decided-by-rule").innerText(), RULE_TEXT);
  assert.equal(await a.getByTestId("decided-by-origin").innerText(), "~/.gemini/policies/dev.toml:12");
  assert.equal(await a.getByTestId("decided-by-origin").locator("code").getAttribute("title"), fileRule.path);
  assert.match(await a.getByTestId("decided-by-details").innerText(), /user tier · priority 100 \(effective 4\.100\)/);
  const font = await a.getByTestId("decided-by-rule").evaluate((el) => getComputedStyle(el).fontFamily);
  assert.match(font, /mono|Menlo|Consolas/i, font);
  await page.locator(`${sel("tool-card")}[data-call-id="a"]`).screenshot({ path: screenshotPath("decided-by.png") });
  await toggle.click();
  assert.equal(await a.getByTestId("decided-by-details").count(), 0, "closing really hides it");
  await app.close();
});

test("the approval mode, this session's always allow and a downgrade read plainly", async () => {
  const app = await env.open();
  const { page } = app;
  await app.sendPrompt("go");
  const downgraded = { ...byFile, outcome: "ask", downgrade: "`echo hi > f` redirects to or from a file, which the allowing rule does not cover (no allowRedirection)" };
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("y", "run_shell_command", { command: "rm -rf build" }),
    response("y", "run_shell_command", "success", { display: "", decided_by: yolo }),
    E.toolRequest("s", "run_shell_command", { command: "ls -l" }),
    response("s", "run_shell_command", "success", { display: "", decided_by: session }),
    E.toolRequest("r", "run_shell_command", { command: "echo hi > f" }),
    decided("r", downgraded),
    E.toolRequest("u", "replace", { file_path: "/home/dev/project/a.txt" }),
    response("u", "replace", "cancelled", { error: "[Operation Cancelled] Reason: User did not allow tool call", declined: true, decided_by: { kind: "user", outcome: "rejected" } }),
  ]);
  await page.waitForSelector(`${sel("tool-card")}[data-call-id="u"] ${sel("decided-by")}`);
  assert.equal(await label(page, "y"), "Allowed: YOLO mode");
  assert.equal(await label(page, "s"), "Allowed: Always allow (this session)");
  assert.match(await label(page, "r"), /^Asked: `echo hi > f` redirects .*allowRedirection\)$/);
  assert.equal(await label(page, "u"), "You rejected");
  // The session rule has no file: its origin in words, and the rendered rule.
  await line(page, "s").getByTestId("decided-by-toggle").click();
  assert.equal(await line(page, "s").getByTestId("decided-by-origin").innerText(), "this session's Always allow");
  assert.match(await line(page, "s").getByTestId("decided-by-rule").innerText(), /commandPrefix = "ls"/);
  await app.close();
});

test("a reopened conversation's cards keep what decided them", async () => {
  const script = readFileSync(await bundle(path.join(UI_DIR, "src", "lib", "transcript.ts"), "GdTranscript"), "utf8");
  const context = vm.createContext({});
  vm.runInContext(script, context);
  const base = { session_id: "s", in_context: true, parts: null, text: "", truncated: false, size: 10, thoughts: [], usage: null, model: null, created_at: "2026-05-01T10:00:00Z" };
  const messages = [
    { ...base, id: "m1", seq: 1, kind: "prompt", text: "build", tool_calls: [] },
    { ...base, id: "m2", seq: 2, kind: "model", parts: [{ functionCall: { id: "a", name: "run_shell_command", args: { command: "cargo build" } } }], tool_calls: [{ call_id: "a", name: "run_shell_command", args: { command: "cargo build" } }] },
    { ...base, id: "m3", seq: 3, kind: "tool_result", tool_calls: [{ call_id: "a", name: "run_shell_command", status: "success", display: "ok", duration_ms: 3, decided_by: byFile }] },
  ];
  const entries = JSON.parse(JSON.stringify(context.GdTranscript.transcriptEntries(messages)));
  const tool = entries.find((e) => e.kind === "tool");
  assert.deepEqual(tool.decidedBy, byFile);
  // An older record has none: the card shows no line rather than a wrong one.
  delete messages[2].tool_calls[0].decided_by;
  const old = JSON.parse(JSON.stringify(context.GdTranscript.transcriptEntries(messages))).find((e) => e.kind === "tool");
  assert.equal(old.decidedBy, null);
});
