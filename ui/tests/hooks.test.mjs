// Hooks in the app (issue 20): the /hooks view (configured hooks by event with matcher,
// command, source, switch, last result; untrusted folder's hooks as not run) and the markers a
// run leaves: on the card of the call it ran for, or on a line in the turn, with its output on
// click; a hook's system message as a notice.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const hook = (id, event, command, overrides = {}) => ({ id, event, command, timeout_ms: 60000, sequential: false, source: "user", enabled: true, ...overrides });

const hooksEvent = (overrides = {}) => ({
  type: "hooks",
  enabled: true,
  errors: [{ path: "/home/dev/project/.gemini/settings.json", line: 12, message: "hooks.BeforeTool[1]: missing `command`" }],
  hooks: [
    hook("workspace:BeforeTool:0:0", "BeforeTool", "./.gemini/hooks/no-secrets.sh", {
      name: "no-secrets",
      matcher: "write_file|replace",
      source: "workspace",
      enabled: false,
      note: "folder not trusted",
    }),
    hook("user:AfterModel:0:0", "AfterModel", "python3 ~/.gemini/hooks/ctx.py", { description: "Adds the ticket to the context" }),
    hook("ext:BeforeTool:0:0", "BeforeTool", "/home/dev/.gemini/extensions/guard/check.sh", { source: "extension", extension: "guard", name: "guard" }),
    hook("user:SessionStart:0:0", "SessionStart", "echo hi", {
      last_run: { hook_id: "user:SessionStart:0:0", event: "SessionStart", label: "echo hi", outcome: "success", exit_code: 0, duration_ms: 12, stdout: "hi\n", stderr: "" },
    }),
    ...(overrides.extra ?? []),
  ],
  ...overrides.event,
});

const run = (hook_id, event, label, outcome, extra = {}) => ({ hook_id, event, label, outcome, duration_ms: 31, stdout: "", stderr: "", ...extra });

async function openView(app) {
  const from = app.calls.length;
  await app.tid("prompt-input").fill("/hooks");
  await app.tid("prompt-input").press("Enter");
  await app.waitForOp("list_hooks", () => true, { from });
  await app.tid("hooks-panel").waitFor();
}

describe("/hooks", () => {
  test("lists hooks by event with matcher, command, source, last result; untrusted ones as not run; errors with file:line", async () => {
    const app = await env.open({ viewport: { width: 1440, height: 900 } });
    await openView(app);
    await app.emit(hooksEvent());
    await app.page.waitForSelector(sel("hooks-item"));
    assert.deepEqual(
      await app.page.locator(sel("hooks-group")).evaluateAll((els) => els.map((e) => e.getAttribute("data-event"))),
      ["SessionStart", "AfterModel", "BeforeTool"],
      "lifecycle order",
    );
    const secrets = app.page.locator(`${sel("hooks-item")}[data-name="no-secrets"]`);
    assert.equal(await secrets.getAttribute("data-enabled"), "false");
    assert.match(await secrets.innerText(), /no-secrets[\s\S]*write_file\|replace[\s\S]*Workspace[\s\S]*\.\/\.gemini\/hooks\/no-secrets\.sh[\s\S]*Not run: folder not trusted/);
    assert.equal(await app.page.locator(`${sel("hooks-item")}[data-name="guard"] ${sel("hooks-source")}`).innerText(), "Extension guard");
    const start = app.page.locator(`${sel("hooks-item")}[data-name="echo hi"]`);
    assert.match(await start.getByTestId("hooks-last").innerText(), /Last run: Succeeded · exit 0 · 12 ms/);
    assert.match(await app.page.locator(`${sel("hooks-item")}[data-name="python3 ~/.gemini/hooks/ctx.py"]`).innerText(), /Not run in this session/);
    assert.equal(
      (await app.tid("hooks-error").innerText()).replace(/\s+/g, " ").trim(),
      "/home/dev/project/.gemini/settings.json:12: hooks.BeforeTool[1]: missing `command`",
    );
    await app.page.screenshot({ path: screenshotPath("hooks-view-light-1440.png") });

    // A run that comes in updates the row's last result; clicking it shows what it wrote.
    await app.emit({
      type: "hook_ran",
      run: run("user:AfterModel:0:0", "AfterModel", "python3 ~/.gemini/hooks/ctx.py", "timed_out", { stderr: "still waiting for the ticket server\n", duration_ms: 60000 }),
    });
    const ctx = app.page.locator(`${sel("hooks-item")}[data-name="python3 ~/.gemini/hooks/ctx.py"]`);
    await waitForText(app.page, `${sel("hooks-item")}[data-name="python3 ~/.gemini/hooks/ctx.py"] .last-label`, "Last run: Timed out · 60.0 s");
    await ctx.getByTestId("hook-marker").click();
    await waitForText(app.page, `${sel("hooks-item")}[data-name="python3 ~/.gemini/hooks/ctx.py"] ${sel("hook-details-stderr")}`, "still waiting for the ticket server\n");
    await app.close();
  });

  test("the switch sends set_hook_enabled in the user's settings by default, or the workspace's", async () => {
    const app = await env.open({ colorScheme: "dark", viewport: { width: 800, height: 820 } });
    await openView(app);
    await app.emit(hooksEvent());
    const guard = app.page.locator(`${sel("hooks-item")}[data-name="guard"]`);
    await guard.waitFor();
    await guard.getByTestId("hooks-toggle").click();
    let op = await app.waitForOp("set_hook_enabled");
    assert.deepEqual(op.args, { sessionId: "s1", name: "guard", enabled: false, scope: "user" });
    assert.ok(await guard.getByTestId("hooks-toggle").isDisabled(), "busy until core answers");
    await app.page.screenshot({ path: screenshotPath("hooks-view-dark-800.png") });
    await app.emit(hooksEvent());
    await app.tid("hooks-scope-workspace").check();
    const from = app.calls.length;
    // A hook without a name is named by its command.
    await app.page.locator(`${sel("hooks-item")}[data-name="echo hi"]`).getByTestId("hooks-toggle").click();
    op = await app.waitForOp("set_hook_enabled", () => true, { from });
    assert.deepEqual(op.args, { sessionId: "s1", name: "echo hi", enabled: false, scope: "workspace" });
    await app.emit(hooksEvent({ event: { enabled: false } }));
    await waitForText(app.page, sel("hooks-all-off"), /none runs/);
    await app.close();
  });
});

describe("refresh", () => {
  test("Refresh reads the hooks from the settings again: the session restarts, the conversation goes on, the new hook is listed", async () => {
    const app = await env.open({ viewport: { width: 1100, height: 820 } });
    await app.sendPrompt("first");
    await app.emitAll([E.turnStarted("t1"), E.delta("one"), E.turnComplete("completed", "t1")]);
    await openView(app);
    await app.emit(hooksEvent());
    await app.page.waitForSelector(sel("hooks-item"));
    assert.match(await app.tid("hooks-refresh").getAttribute("title"), /settings files again/);
    const from = app.calls.length;
    await app.tid("hooks-refresh").click();
    // A session reads its hooks when it starts: it starts again, resuming this conversation…
    const start = await app.waitForCall("start_session", () => true, { from });
    assert.equal(start.args.resume, "s1", "the same conversation goes on");
    await app.waitForOp("list_hooks", () => true, { from: app.calls.indexOf(start) });
    await app.emit(hooksEvent({ extra: [hook("user:BeforeTool:1:0", "BeforeTool", "./new-guard.sh", { name: "new-guard" })] }));
    // …and lists the hook just added to settings.json, the panel still open.
    await app.page.waitForSelector(`${sel("hooks-item")}[data-name="new-guard"]`);
    assert.equal(await app.tid("hooks-panel").count(), 1);
    await app.close();
  });
});

describe("markers", () => {
  test("a run with a call id marks that call's card; details on click; without one it marks the turn; system messages are notices", async () => {
    const app = await env.open({ viewport: { width: 800, height: 820 } });
    await app.sendPrompt("write the files");
    // A run announced before its call's card still lands on that card.
    await app.emitAll([
      E.turnStarted(),
      {
        type: "hook_ran",
        run: run("user:BeforeAgent:0:0", "BeforeAgent", "ticket", "success", { additional_context: "Ticket: GD-20", stdout: '{"hookSpecificOutput":{"additionalContext":"Ticket: GD-20"}}' }),
      },
      { type: "hook_ran", run: run("ws:BeforeTool:0:0", "BeforeTool", "no-secrets", "success", { call_id: "c2", tool_name: "write_file", exit_code: 0 }) },
      E.toolRequest("c1", "read_file", { absolute_path: "/home/dev/project/a.txt" }),
      E.toolResponse("c1", "read_file", "success", "Read a.txt"),
      E.toolRequest("c2", "write_file", { file_path: "/home/dev/project/.env", content: "KEY=1" }),
      {
        type: "hook_ran",
        run: run("ws:BeforeTool:0:1", "BeforeTool", "./.gemini/hooks/block-env.sh", "blocked", {
          call_id: "c2",
          tool_name: "write_file",
          exit_code: 2,
          stderr: "Writing .env files is not allowed\n",
          reason: "Writing .env files is not allowed",
          system_message: "Blocked a write to .env (policy GD-7)",
        }),
      },
      E.toolResponse("c2", "write_file", "error", null, "Writing .env files is not allowed"),
    ]);
    const c1 = app.page.locator(`${sel("tool-card")}[data-call-id="c1"]`);
    const c2 = app.page.locator(`${sel("tool-card")}[data-call-id="c2"]`);
    await c2.getByTestId("hook-marker").nth(1).waitFor();
    assert.equal(await c1.getByTestId("hook-marker").count(), 0, "nothing on the other card");
    assert.deepEqual(await c2.getByTestId("hook-marker").allInnerTexts(), ["hook: ran", "hook: blocked"]);
    assert.equal(await c2.getByTestId("hook-marker").nth(1).getAttribute("aria-expanded"), "false");
    await c2.getByTestId("hook-marker").nth(1).click();
    assert.equal(await c2.getByTestId("hook-marker").nth(1).getAttribute("aria-expanded"), "true");
    const details = c2.getByTestId("hook-details");
    assert.equal(await details.getByTestId("hook-details-outcome").innerText(), "Blocked");
    assert.equal(await details.getByTestId("hook-details-reason").innerText(), "Reason Writing .env files is not allowed");
    assert.equal(await details.getByTestId("hook-details-stderr").innerText(), "Writing .env files is not allowed\n");
    assert.match(await details.innerText(), /exit 2 · 31 ms[\s\S]*Message Blocked a write to \.env \(policy GD-7\)/);

    // The BeforeAgent run marks the turn, with its event named.
    const line = app.tid("hook-line");
    assert.equal(await line.count(), 1);
    assert.match(await line.getByTestId("hook-marker").innerText(), /^BeforeAgent\s*hook: \+context$/);
    await line.getByTestId("hook-marker").click();
    assert.equal(await line.getByTestId("hook-details-context").innerText(), "Ticket: GD-20");
    // The system message is shown to the user, as 0.61 does.
    await waitForText(app.page, sel("notice"), "Blocked a write to .env (policy GD-7)");
    await app.page.screenshot({ path: screenshotPath("hook-markers-light-800.png") });
    await app.close();
  });

  test("AfterModel runs once per streamed chunk: one marker with a count above one whole answer", async () => {
    const app = await env.open({ viewport: { width: 800, height: 700 } });
    await app.sendPrompt("explain");
    const chunk = (i) => ({
      type: "hook_ran",
      run: run("user:AfterModel:0:0", "AfterModel", "redact", "success", { stdout: `{"chunk":${i}}` }),
    });
    await app.emitAll([E.turnStarted(), chunk(1), E.delta("The answer "), chunk(2), E.delta("comes in "), chunk(3), E.delta("three chunks."), E.turnComplete()]);
    const marker = app.tid("hook-line").getByTestId("hook-marker");
    await marker.waitFor();
    assert.equal(await app.tid("hook-line").count(), 1, "one line for the request");
    assert.equal(await marker.count(), 1, "one marker for the three runs");
    assert.match(await marker.innerText(), /^AfterModel\s*hook: ran\s*×3$/);
    assert.equal(await app.tid("message-model").count(), 1, "the answer is in one piece");
    assert.equal(await app.tid("message-model").innerText(), "The answer comes in three chunks.");
    await marker.click();
    assert.equal(await app.tid("hook-details-stdout").innerText(), '{"chunk":3}');
    await app.page.screenshot({ path: screenshotPath("hook-after-model-light-800.png") });
    await app.close();
  });

  test("a hook's tail call is its own card saying which call it answers for", async () => {
    const app = await env.open({ viewport: { width: 800, height: 700 } });
    await app.sendPrompt("read it");
    await app.emitAll([
      E.turnStarted(),
      E.toolRequest("c1", "read_file", { absolute_path: "/home/dev/project/a.txt" }),
      { type: "hook_ran", run: run("user:AfterTool:0:0", "AfterTool", "route", "success", { call_id: "c1", tool_name: "read_file" }) },
      E.toolResponse("c1", "read_file", "success", "Read a.txt"),
      { ...E.toolRequest("c1#tail1", "grep_search", { pattern: "TODO" }), in_place_of: "c1" },
      E.toolResponse("c1#tail1", "grep_search", "success", "Found 2 matches"),
      E.turnComplete(),
    ]);
    const tail = app.page.locator(`${sel("tool-card")}[data-call-id="c1#tail1"]`);
    await tail.waitFor();
    assert.equal(await tail.getByTestId("tool-tail-note").innerText(), "Run by a hook in place of read_file: the model gets this result.");
    const first = app.page.locator(`${sel("tool-card")}[data-call-id="c1"]`);
    assert.equal(await first.getByTestId("tool-tail-note").count(), 0);
    await app.page.screenshot({ path: screenshotPath("hook-tail-call-light-800.png") });
    await app.close();
  });
});
