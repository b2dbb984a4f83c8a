// Several conversations in one window (issue 16): the sidebar, switching without reloading a
// transcript, live statuses of hidden conversations, the approval inbox answering through the
// right session, closing, and the keyboard.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const items = (app) => app.page.locator(sel("conversation-item"));
/** Each sidebar entry's status and whether it is the shown one. */
const statuses = (app) =>
  items(app).evaluateAll((els) => els.map((el) => `${el.dataset.status}${el.classList.contains("active") ? "*" : ""}`));
/** Delivers events on the channel of the `n`-th session started (0-based). */
const emitTo = (app, n, events) =>
  app.page.evaluate(([n, events]) => {
    for (const e of events) window.__gd.emitTo(window.__gd.channels[n], e);
  }, [n, events]);
const waitStatuses = (app, expected) =>
  app.until((exp) => {
    const els = [...document.querySelectorAll('[data-testid="conversation-item"]')];
    const now = els.map((el) => `${el.dataset.status}${el.classList.contains("active") ? "*" : ""}`);
    return JSON.stringify(now) === JSON.stringify(exp) ? now : null;
  }, expected);

/** Opens the app with a second conversation (Ctrl+N) started; the second is shown. */
async function twoConversations(options) {
  const app = await env.open(options);
  const from = app.calls.length;
  await app.page.keyboard.press("Control+n");
  await app.waitForCall("start_session", () => true, { from });
  await waitStatuses(app, ["idle", "idle*"]);
  await app.page.waitForFunction(() => document.querySelector('[data-testid="connection-status"]')?.getAttribute("data-state") === "connected");
  return app;
}

test("New conversation: a second live session in the same folder; switching keeps each transcript", async () => {
  const app = await twoConversations();
  assert.equal(app.callsOf("start_session").length, 2);
  assert.deepEqual(
    await items(app).evaluateAll((els) => els.map((el) => el.dataset.folder)),
    ["/home/dev/project", "/home/dev/project"],
  );
  // A turn in the second one.
  await app.sendPrompt("second question");
  await emitTo(app, 1, [E.turnStarted("b1"), E.delta("Answer in **two**."), E.turnComplete("completed", "b1")]);
  await waitForText(app.page, sel("message-model"), "Answer in two.");
  // Back to the first (click): its chat is empty, the second's prompt is its title.
  await items(app).nth(0).locator("button.open").click();
  await waitStatuses(app, ["idle*", "idle"]);
  assert.equal(await app.tid("message-model").count(), 0);
  assert.equal(await items(app).nth(1).getByTestId("conversation-title").innerText(), "second question");
  // And back (Ctrl+2): the transcript is still there, read from memory, not from the history.
  const pages = app.callsOf("history_page").length;
  await app.page.keyboard.press("Control+2");
  await waitForText(app.page, sel("message-model"), "Answer in two.");
  assert.equal(app.callsOf("history_page").length, pages);
  // Prompts go to the shown conversation's session.
  const turn = await app.sendPrompt("more");
  assert.equal(turn.args.sessionId, "s2");
  await app.close();
});

test("a hidden conversation's status is live: streaming, running a tool, waiting for approval, failed", async () => {
  const app = await twoConversations();
  await app.page.keyboard.press("Control+1");
  await app.sendPrompt("long job");
  await app.page.keyboard.press("Control+Tab");
  await waitStatuses(app, ["streaming", "idle*"]);
  await emitTo(app, 0, [E.turnStarted("a1"), E.delta("Working"), E.toolRequest("c1", "run_shell_command", { command: "make" }), E.toolState("c1", "executing")]);
  await waitStatuses(app, ["tool", "idle*"]);
  await emitTo(app, 0, [E.toolRequest("c2", "replace", { file_path: "/home/dev/project/a.txt" }), E.confirmation("c2", "run_shell_command", E.executeDetails("rm -rf build", ["rm"]))]);
  await waitStatuses(app, ["approval", "idle*"]);
  await waitForText(app.page, sel("approval-inbox"), "1");
  await waitForText(app.page, sel("conversation-approvals"), "1");
  assert.equal(await items(app).nth(0).getByTestId("conversation-status").innerText(), "Needs approval");
  assert.equal(await items(app).nth(0).getByTestId("conversation-status").getAttribute("title"), "Waiting for approval (1)");
  // The shown conversation has no confirmation dock: the call is not its own.
  assert.equal(await app.tid("confirmation-dock").count(), 0);
  await emitTo(app, 0, [E.toolResponse("c2", "run_shell_command", "error", null, "cancelled"), E.turnComplete("failed", "a1")]);
  await waitStatuses(app, ["failed", "idle*"]);
  await waitForText(app.page, sel("approval-inbox"), "0");
  await app.page.screenshot({ path: screenshotPath("conversations-statuses.png") });
  await app.close();
});

/** Each sidebar status: its text, and whether any of it is cut (wider than its line, or past the entry's text column). */
const statusFit = (app) =>
  items(app).evaluateAll((els) =>
    els.map((el) => {
      const status = /** @type {HTMLElement} */ (el.querySelector('[data-testid="conversation-status"]'));
      const column = /** @type {HTMLElement} */ (status.closest(".text")).getBoundingClientRect();
      const r = status.getBoundingClientRect();
      return { text: status.innerText, cut: status.scrollWidth > status.clientWidth + 0.5 || r.right > column.right + 0.5 || r.width === 0 };
    }),
  );

for (const width of [1100, 1440]) {
  test(`${width} px: every sidebar status is whole, none cut ("Waiti…", issue 34)`, async () => {
    const app = await twoConversations({ viewport: { width, height: 800 } });
    await app.page.keyboard.press("Control+1");
    await app.sendPrompt("long job");
    await app.page.keyboard.press("Control+Tab");
    const seen = [];
    const check = async (status) => {
      await waitStatuses(app, [status, "idle*"]);
      const fit = await statusFit(app);
      seen.push(fit[0].text);
      assert.deepEqual(fit.filter((f) => f.cut), [], `${width}px, ${status}: no status cut`);
    };
    await check("streaming");
    await emitTo(app, 0, [E.turnStarted("a1"), E.toolRequest("c1", "run_shell_command", { command: "make" }), E.toolState("c1", "executing")]);
    await check("tool");
    await emitTo(app, 0, [E.toolRequest("c2", "run_shell_command", { command: "rm -rf build" }), E.confirmation("c2", "run_shell_command", E.executeDetails("rm -rf build", ["rm"]))]);
    await check("approval");
    await emitTo(app, 0, [E.toolResponse("c2", "run_shell_command", "error", null, "cancelled"), E.turnComplete("failed", "a1")]);
    await check("failed");
    assert.deepEqual(seen, ["Answering", "Running a tool", "Needs approval", "Failed"]);
    await app.close();
  });
}

test("the inbox answers a hidden conversation's call through its own session, with its full card", async () => {
  const app = await twoConversations();
  await app.page.keyboard.press("Control+1");
  await app.sendPrompt("delete it");
  await app.page.keyboard.press("Control+2");
  await emitTo(app, 0, [E.turnStarted("a1"), E.toolRequest("x1", "run_shell_command", { command: "rm -rf target" }), E.confirmation("x1", "run_shell_command", E.executeDetails("rm -rf target", ["rm"]))]);
  await waitForText(app.page, sel("approval-inbox"), "1");
  await app.tid("approval-inbox").click();
  const entry = app.tid("inbox-item");
  await entry.waitFor();
  assert.equal(await entry.getAttribute("data-folder"), "/home/dev/project");
  // The same card as in the conversation: the command, and the same buttons.
  assert.equal(await entry.getByTestId("confirm-command").innerText(), "rm -rf target");
  await entry.getByTestId("approve").click();
  const call = await app.waitForOp("confirm_tool");
  assert.deepEqual(call.args, { sessionId: "s1", call_id: "x1", outcome: "proceed_once", content: null });
  await emitTo(app, 0, [E.toolResponse("x1", "run_shell_command")]);
  await app.tid("inbox-empty").waitFor();
  await waitForText(app.page, sel("approval-inbox"), "0");
  // The shown conversation did not change.
  await waitStatuses(app, ["streaming", "idle*"]);
  await app.close();
});

test("the inbox's Open jumps to the conversation, whose dock shows the call", async () => {
  const app = await twoConversations();
  await app.page.keyboard.press("Control+1");
  await app.sendPrompt("go");
  await app.page.keyboard.press("Control+2");
  await emitTo(app, 0, [E.turnStarted("a1"), E.confirmation("y1", "run_shell_command", E.executeDetails("make install", ["make"]))]);
  await app.tid("approval-inbox").click();
  await app.tid("inbox-open").click();
  await app.tid("confirmation-dock").waitFor();
  await waitStatuses(app, ["approval*", "idle"]);
  assert.equal(await app.tid("approval-inbox-panel").count(), 0);
  await app.close();
});

test("closing a conversation stops its session; the last one is replaced by a fresh one", async () => {
  const app = await twoConversations();
  await items(app).nth(1).hover();
  await items(app).nth(1).getByTestId("close-conversation").click();
  const stop = await app.waitForCall("stop_session");
  assert.deepEqual(stop.args, { sessionId: "s2" });
  await waitStatuses(app, ["idle*"]);
  const from = app.calls.length;
  await items(app).nth(0).getByTestId("close-conversation").click();
  await app.waitForCall("stop_session", (a) => a.sessionId === "s1", { from });
  await app.waitForCall("start_session", () => true, { from });
  await waitStatuses(app, ["idle*"]);
  await app.close();
});

test("Open folder… on a conversation in use opens the folder as a new conversation", async () => {
  const app = await env.open({ config: { openWorkspace: "/home/dev/other" } });
  await app.sendPrompt("first");
  await app.emitAll([E.turnStarted(), E.delta("ok"), E.turnComplete()]);
  const from = app.calls.length;
  await app.tid("open-workspace").click();
  const start = await app.waitForCall("start_session", () => true, { from });
  assert.equal(start.args.workspace, "/home/dev/other");
  await waitForText(app.page, sel("workspace-path"), "/home/dev/other");
  assert.deepEqual(
    await items(app).evaluateAll((els) => els.map((el) => el.dataset.folder)),
    ["/home/dev/project", "/home/dev/other"],
  );
  // Back to the first: the window's folder follows the conversation shown.
  const back = app.calls.length;
  await app.page.keyboard.press("Control+1");
  const open = await app.waitForCall("open_workspace", () => true, { from: back });
  assert.deepEqual(open.args, { path: "/home/dev/project" });
  await waitForText(app.page, sel("workspace-path"), "/home/dev/project");
  await app.close();
});

test("the sidebar collapses to its status dots and opens again", async () => {
  const app = await twoConversations();
  await app.tid("sidebar-toggle").click();
  const width = await app.tid("conversation-list").evaluate((el) => el.getBoundingClientRect().width);
  assert.ok(width < 60, `collapsed width ${width}`);
  assert.equal(await items(app).count(), 2);
  await app.tid("sidebar-toggle").click();
  const open = await app.tid("conversation-list").evaluate((el) => el.getBoundingClientRect().width);
  assert.ok(open > 150, `open width ${open}`);
  await app.close();
});

/** The attention_notify calls so far, as their requests. */
const notified = (app) => app.callsOf("attention_notify").map((c) => c.args.request);
const blurWindow = (app) => app.page.evaluate(() => window.dispatchEvent(new Event("blur")));

test("attention: a hidden conversation's approval and finished turn call the user; the shown one in a focused window does not", async () => {
  const app = await twoConversations();
  await app.page.evaluate(() => window.dispatchEvent(new Event("focus")));
  await app.page.keyboard.press("Control+1");
  await app.sendPrompt("job one");
  await app.page.keyboard.press("Control+2");
  await emitTo(app, 0, [E.turnStarted("a1"), E.confirmation("z1", "run_shell_command", E.executeDetails("make deploy", ["make"]))]);
  const call = await app.waitForCall("attention_notify");
  assert.equal(call.args.request.reason, "approval");
  assert.equal(call.args.request.title, "Approval needed");
  assert.match(call.args.request.body, /^job one \(project\): .*make deploy/);
  assert.equal(call.args.pending, 1);
  // The key it carries opens that conversation when the notification is clicked.
  const key = call.args.request.conversation;
  assert.equal(typeof key, "number");
  // The shown conversation, window focused: its finished turn calls nobody.
  await app.sendPrompt("job two");
  await emitTo(app, 1, [E.turnStarted("b1"), E.delta("done"), E.turnComplete("completed", "b1")]);
  await waitStatuses(app, ["approval", "idle*"]);
  assert.equal(notified(app).length, 1);
  // The window loses the focus: now even the shown conversation's turn calls the user.
  await blurWindow(app);
  await app.sendPrompt("job three");
  await emitTo(app, 1, [E.turnStarted("b2"), E.delta("done"), E.turnComplete("failed", "b2")]);
  const failed = await app.waitForCall("attention_notify", (a) => a.request.reason === "failed");
  assert.equal(failed.args.request.title, "A turn failed");
  // Coming back clears the urgency hint (the badge keeps what still waits).
  await app.page.evaluate(() => window.dispatchEvent(new Event("focus")));
  const clear = await app.waitForCall("attention_clear");
  assert.deepEqual(clear.args, { pending: 1 });
  // A turn the user stopped calls nobody.
  await emitTo(app, 0, [E.turnComplete("cancelled", "a1")]);
  await waitStatuses(app, ["idle", "failed*"]);
  assert.equal(notified(app).length, 2);
  await app.close();
});

test("attention: with notifications limited to approvals, finished turns stay silent; off silences all", async () => {
  const settings = (mode) => ({
    layers: [],
    values: [{ key: "ui.desktopNotifications", value: mode, source: "user", user: mode, workspace: null }],
    mcp_servers: [],
    workspace_trusted: true,
  });
  const app = await env.open({ config: { settings: settings("approvals") } });
  await blurWindow(app);
  await app.sendPrompt("go");
  await app.emitAll([E.turnStarted(), E.delta("ok"), E.turnComplete()]);
  await app.emitAll([E.turnStarted("t2"), E.confirmation("w1", "run_shell_command", E.executeDetails("ls", ["ls"]))]);
  await app.waitForCall("attention_notify");
  assert.deepEqual(notified(app).map((r) => r.reason), ["approval"]);
  await app.close();

  const off = await env.open({ config: { settings: settings("off") } });
  await blurWindow(off);
  await off.sendPrompt("go");
  await off.emitAll([E.turnStarted(), E.confirmation("w2", "run_shell_command", E.executeDetails("ls", ["ls"])), E.toolResponse("w2", "run_shell_command"), E.turnComplete()]);
  await waitStatuses(off, ["idle*"]);
  assert.equal(off.callsOf("attention_notify").length, 0);
  await off.close();
});

test("attention: a click on a notification (the backend's attention-open) shows its conversation", async () => {
  const app = await twoConversations();
  // The first conversation's key: its notification names it.
  await app.page.keyboard.press("Control+1");
  await app.sendPrompt("first");
  await blurWindow(app);
  await app.page.keyboard.press("Control+2");
  await emitTo(app, 0, [E.turnStarted("a1"), E.delta("ok"), E.turnComplete("completed", "a1")]);
  const call = await app.waitForCall("attention_notify");
  await waitStatuses(app, ["idle", "idle*"]);
  await app.page.evaluate((k) => window.__gd.emitAppEvent("attention-open", { conversation: k }), call.args.request.conversation);
  await waitStatuses(app, ["idle*", "idle"]);
  await app.close();
});

test("a conversation moves to its own window only when idle, without stopping its session", async () => {
  const extra = () => {
    window.__gdExtraIPC = (cmd) => (cmd === "conversation_window" ? null : undefined);
  };
  const app = await env.open({ init: [extra] });
  const from = app.calls.length;
  await app.page.keyboard.press("Control+n");
  await app.waitForCall("start_session", () => true, { from });
  await waitStatuses(app, ["idle", "idle*"]);
  await app.sendPrompt("a long job");
  // While its turn runs, it stays.
  assert.equal(await items(app).nth(1).getByTestId("conversation-window").isDisabled(), true);
  await app.emitAll([E.turnStarted("b1"), E.delta("done"), E.turnComplete("completed", "b1")]);
  await waitStatuses(app, ["idle", "idle*"]);
  await items(app).nth(1).getByTestId("conversation-window").click();
  const call = await app.waitForCall("conversation_window");
  assert.deepEqual(call.args, { sessionId: "s2", title: "a long job" });
  await waitStatuses(app, ["idle*"]);
  assert.equal(app.callsOf("stop_session").length, 0, "the session goes on in the other window");
  await app.close();
});
