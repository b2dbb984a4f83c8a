// Session-level controls: approval mode, start failures, opening a folder, switching models.
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

test("the approval-mode switch overrides the session's turn context; YOLO is marked", async () => {
  const app = await env.open();
  const { page } = app;
  const select = app.tid("approval-mode");
  assert.deepEqual(await select.locator("option").evaluateAll((os) => os.map((o) => /** @type {HTMLOptionElement} */ (o).value)), [
    "default",
    "auto_edit",
    "yolo",
    "plan",
  ]);
  await select.selectOption("yolo");
  let call = await app.waitForOp("override_turn_context");
  assert.deepEqual(call.args, { sessionId: "s1", approval_mode: "yolo" });
  const label = page.locator(".approval");
  assert.equal(await label.getAttribute("data-mode"), "yolo");
  assert.match((await label.getAttribute("title")) ?? "", /WITHOUT asking/);
  const colour = await label.evaluate((el) => getComputedStyle(el).backgroundColor);
  const [r, g, b] = (colour.match(/\d+/g) ?? []).map(Number);
  assert.ok(r > 150 && g < 100 && b < 100, `YOLO is red: ${colour}`);
  await page.locator(sel("app-header")).screenshot({ path: screenshotPath("header-yolo.png") });
  const from = app.calls.length;
  await select.selectOption("auto_edit");
  call = await app.waitForOp("override_turn_context", () => true, { from });
  assert.deepEqual(call.args, { sessionId: "s1", approval_mode: "auto_edit" });
  assert.equal(await label.getAttribute("data-mode"), "auto_edit");
  await app.close();
});

test("the header follows the session's turn context (approval mode and model)", async () => {
  const app = await env.open();
  await app.emit(E.sessionConfigured("s1"));
  await app.emit({ type: "turn_context", approval_mode: "auto_edit", model: "gemini-2.5-flash" });
  await app.page.waitForSelector('.approval[data-mode="auto_edit"]');
  assert.equal(await app.tid("approval-mode").inputValue(), "auto_edit");
  await waitForText(app.page, sel("connection-text"), "gemini-2.5-flash");
  assert.equal(app.opsOf("override_turn_context").length, 0, "a reported context is not sent back");
  await app.close();
});

test("the first screen uses the app info handed to the page, without an app_info call", async () => {
  // (The mock's session reports the same workspace; its app_info would answer version 0.1.0.)
  const app = await env.open({
    boot: { version: "9.8.7", workspace: "/srv/injected" },
    config: { appInfo: { version: "0.1.0", workspace: "/srv/injected" } },
  });
  assert.equal(await app.tid("app-version").innerText(), "v9.8.7");
  assert.equal(await app.tid("workspace-path").innerText(), "/srv/injected");
  assert.equal(app.callsOf("app_info").length, 0, "no round trip before the first screen");
  await app.waitForCall("start_session");
  assert.ok(
    app.calls.findIndex((c) => c.cmd === "start_session") >= 0 &&
      (await app.page.evaluate(() => performance.getEntriesByName("content").length)) === 1,
    "content is marked",
  );
  await app.close();
});

// (Missing credentials, kind `auth`, show the sign-in screen instead: see signin.test.mjs.)
test("a failed start_session is shown prominently and keeps Send disabled", async () => {
  const reason = "settings.json is not valid JSON (line 3): model.name is not configured.";
  const app = await env.open({ config: { startError: { kind: "config", message: reason } }, session: false });
  const { page } = app;
  const notice = await waitForText(page, sel("notice"), /settings\.json/);
  assert.match(notice, /Gemini is not connected/);
  assert.match(notice, /not configured/);
  await waitForText(page, sel("composer-hint"), reason);
  await waitForText(page, sel("connection-text"), "Agent not connected");
  const send = app.tid("send");
  assert.ok(await send.isDisabled());
  assert.equal(await send.getAttribute("title"), `Agent not connected: ${reason}`);
  assert.ok(await app.tid("approval-mode").isDisabled());
  await page.screenshot({ path: screenshotPath("start-failed-light.png") });
  // Retry tries again (and fails again here, without piling up notices).
  const from = app.calls.length;
  await app.tid("retry").click();
  await app.waitForCall("start_session", () => true, { from });
  await waitForText(page, sel("notice"), /settings\.json/);
  assert.equal(await page.locator(sel("notice")).count(), 1);
  await app.close();
});

test("Open folder… opens the picker; a new folder starts a new session with an empty chat", async () => {
  const app = await env.open({ config: { openWorkspace: "/home/dev/other project" } });
  const { page } = app;
  await app.sendPrompt("hello");
  await app.emitAll([E.turnStarted(), E.delta("hi"), E.turnComplete()]);
  await waitForText(page, sel("message-model"), "hi");
  await app.tid("open-workspace").click();
  const call = await app.waitForCall("open_workspace");
  assert.deepEqual(call.args, { path: null }, "no path: the native folder picker");
  await waitForText(page, sel("workspace-path"), "/home/dev/other project");
  await app.waitForCall("start_session", () => true, { from: app.calls.indexOf(call) });
  await page.waitForFunction(() => !document.querySelector('[data-testid="message-user"]'));
  assert.equal(await app.tid("message-model").count(), 0, "the chat was cleared");
  await page.waitForSelector(`${sel("connection-status")}[data-state="connected"]`);
  // Events go to the new session's channel.
  await app.sendPrompt("in the new folder");
  assert.equal(app.opsOf("user_turn").at(-1)?.args.sessionId, "s2");
  await app.close();
});

test("cancelling the folder picker changes nothing", async () => {
  const app = await env.open({ config: { openWorkspace: null } });
  await app.sendPrompt("keep me");
  assert.ok(await app.tid("open-workspace").isDisabled(), "no folder switch during a turn");
  await app.emitAll([E.turnStarted(), E.turnComplete()]);
  await app.tid("open-workspace").click();
  await app.waitForCall("open_workspace");
  // The answer (null) has been handled once the page ran another task.
  await app.page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
  assert.equal(await app.tid("workspace-path").innerText(), "/home/dev/project");
  assert.equal(await app.tid("message-user").innerText(), "keep me");
  assert.equal(app.callsOf("start_session").length, 1);
  await app.close();
});

test("the model picker switches models by starting a new session", async () => {
  const models = [
    { name: "gemini-2.5-pro", display_name: "Gemini 2.5 Pro" },
    { name: "gemini-2.5-flash", display_name: "Gemini 2.5 Flash" },
  ];
  const app = await env.open({ config: { models } });
  const { page } = app;
  await app.waitForOp("list_models");
  const picker = app.tid("model-select");
  await picker.waitFor({ state: "attached" });
  assert.equal(await picker.inputValue(), "gemini-2.5-pro");
  const from = app.calls.length;
  await picker.selectOption("gemini-2.5-flash");
  const stop = await app.waitForCall("stop_session", () => true, { from });
  assert.deepEqual(stop.args, { sessionId: "s1" });
  const start = await app.waitForCall("start_session", () => true, { from });
  assert.equal(start.args.model, "gemini-2.5-flash");
  await waitForText(page, sel("connection-text"), "gemini-2.5-flash");
  await app.close();
});
