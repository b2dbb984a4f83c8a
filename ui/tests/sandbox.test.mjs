// The command sandbox (issue 36): a shell card says whether its command ran sandboxed (live, in
// a reopened conversation and in the history browser); a command the sandbox refused something
// asks to run again with it granted (its card, its three answers, the keys, the dock's queue and
// the approval inbox); the approval switch says what YOLO means without the sandbox; the chat
// says when the sandbox cannot start; the settings screen shows core's new switch as it is.
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

const WS = "/home/dev/project";
const card = (page, id) => page.locator(`${sel("tool-card")}[data-call-id="${id}"]`);
const badge = (page, id) => card(page, id).getByTestId("tool-sandbox");

/** A finished shell call, with how it ran (`sandbox` undefined: core said nothing). */
const shell = (id, command, sandbox, output = "ok\n") => [
  E.toolRequest(id, "run_shell_command", { command }),
  E.toolState(id, "executing"),
  { ...E.toolResponse(id, "run_shell_command", "success", output, null, 840), output, exit_code: 0, declined: false, ...(sandbox ? { sandbox } : {}) },
];

const SANDBOXED_TIP = "Ran in the sandbox: writes only in the workspace, no network";
const UNCONFINED_TIP = "Ran without the sandbox: it could write anywhere you can and use the network";

describe("shell card badge", () => {
  test("Sandboxed (with what it was granted) or Not sandboxed; none when core does not say", async () => {
    const app = await env.open();
    const { page } = app;
    await app.sendPrompt("build it");
    await app.emitAll([
      E.turnStarted(),
      ...shell("b1", "cargo build", E.sandboxUse(true)),
      ...shell("b2", "npm install", E.sandboxUse(true, { network: true, granted_paths: ["/home/dev/.npm", "/home/dev/.cache"] })),
      ...shell("b3", "make install", E.sandboxUse(false)),
      ...shell("b4", "ls", undefined),
      E.toolRequest("r1", "read_file", { absolute_path: `${WS}/a.txt` }),
      E.toolResponse("r1", "read_file", "success", "Read 3 lines"),
    ]);
    await page.waitForSelector(`${sel("tool-card")}[data-call-id="r1"][data-state="success"]`);

    assert.equal(await badge(page, "b1").getAttribute("data-sandboxed"), "true");
    assert.equal(await badge(page, "b1").innerText(), "Sandboxed");
    assert.equal(await badge(page, "b1").getAttribute("title"), SANDBOXED_TIP);
    // What it was granted on top, one line each.
    assert.equal(
      await badge(page, "b2").getAttribute("title"),
      `${SANDBOXED_TIP}\nnetwork allowed for this command\nmay write in /home/dev/.npm\nmay write in /home/dev/.cache`,
    );
    assert.equal(await badge(page, "b3").getAttribute("data-sandboxed"), "false");
    assert.equal(await badge(page, "b3").innerText(), "Not sandboxed");
    assert.equal(await badge(page, "b3").getAttribute("title"), UNCONFINED_TIP);
    // No badge without core's word, nor on other tools.
    assert.equal(await badge(page, "b4").count(), 0);
    assert.equal(await badge(page, "r1").count(), 0);
    // Unconfined reads in the warning colour, not as the sandboxed one does.
    const [on, off] = await Promise.all(["b1", "b3"].map((id) => badge(page, id).evaluate((el) => getComputedStyle(el).color)));
    assert.notEqual(on, off);
    // In the header's one line, after the command and before the state.
    for (const id of ["b1", "b3"]) {
      const order = await card(page, id)
        .locator(".tool-head > *")
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-testid")).filter(Boolean));
      assert.deepEqual(order, ["tool-title", "tool-description", "tool-sandbox", "tool-exit-code", "tool-state"]);
    }
    await app.close();
  });

  for (const [colorScheme, width] of [
    ["light", 800],
    ["light", 1440],
    ["dark", 800],
    ["dark", 1440],
  ]) {
    test(`badged cards (screenshot, ${colorScheme}, ${width} px)`, async () => {
      const app = await env.open({ colorScheme, viewport: { width, height: 820 } });
      const { page } = app;
      await app.sendPrompt("build it");
      await app.emitAll([
        E.turnStarted(),
        ...shell("b1", "cargo build --release --workspace --all-features --locked", E.sandboxUse(true, { network: true }), "   Compiling okapi v0.1.0\n    Finished release [optimized] target(s) in 4.2s\n"),
        ...shell("b3", "make install PREFIX=/usr/local", E.sandboxUse(false), "install -m 755 okapi /usr/local/bin\n"),
        E.turnComplete(),
      ]);
      await page.waitForSelector(`${sel("tool-card")}[data-call-id="b3"][data-state="success"]`);
      // The badge stays on the header's one line, whole, at every width.
      for (const id of ["b1", "b3"]) {
        const fit = await card(page, id).evaluate((el) => {
          const b = /** @type {HTMLElement} */ (el.querySelector('[data-testid="tool-sandbox"]'));
          const t = /** @type {HTMLElement} */ (el.querySelector('[data-testid="tool-title"]'));
          const r = b.getBoundingClientRect();
          const s = t.getBoundingClientRect();
          return { line: Math.abs(r.top + r.height / 2 - (s.top + s.height / 2)) < 2, whole: b.scrollWidth <= b.clientWidth + 0.5, inside: r.right <= el.getBoundingClientRect().right };
        });
        assert.deepEqual(fit, { line: true, whole: true, inside: true }, `${id} at ${width} px`);
      }
      await page.locator(sel("message-list")).screenshot({ path: screenshotPath(`sandbox-badge-${colorScheme}-${width}.png`) });
      await app.close();
    });
  }
});

/** A stored conversation whose commands recorded how they ran (and one from before that). */
function storedSession(now) {
  const id = "sb1";
  const base = { role: "user", in_context: true, truncated: false, size: 10, thoughts: [], usage: null, model: null, parts: null, text: "", tool_calls: [] };
  const m = (seq, kind, fields) => ({ ...base, id: `${id}-m${seq}`, seq, kind, role: kind === "model" ? "model" : "user", created_ms: now - 50_000 + seq * 1000, ...fields });
  const call = (call_id, command) => ({ call_id, name: "run_shell_command", args: { command } });
  const result = (call_id, sandbox) => ({ call_id, name: "run_shell_command", status: "success", display: "ok", output: "ok\n", exit_code: 0, duration_ms: 12, ...(sandbox ? { sandbox } : {}) });
  const messages = [
    m(1, "prompt", { text: "build and install" }),
    m(2, "model", { tool_calls: [call("h1", "cargo build"), call("h2", "make install"), call("h3", "ls")] }),
    m(3, "tool_result", { tool_calls: [result("h1", E.sandboxUse(true, { network: true })), result("h2", E.sandboxUse(false)), result("h3", null)] }),
    m(4, "model", { parts: [{ text: "Installed." }], text: "Installed." }),
  ];
  const summary = {
    id,
    workspace: WS,
    title: "Build and install",
    created_ms: now - 60_000,
    updated_ms: now - 30_000,
    model: "gemini-2.5-pro",
    message_count: messages.length,
    tokens: { prompt: 0, output: 0, cached: 0, thoughts: 0, tool: 0, total: 0 },
    source: "gemini-desktop",
    origin: null,
  };
  return { summary, messages };
}

/** Init script: a history of the one stored session, reopened at start. */
function installHistory({ summary, messages }) {
  window.__gdExtraIPC = (cmd) => {
    switch (cmd) {
      case "history_last_session":
        return summary;
      case "history_list":
        return [summary];
      case "history_gemini_cli_sessions":
      case "history_checkpoints":
        return [];
      case "history_page":
        return { messages, has_before: false, has_after: false };
      default:
        return undefined;
    }
  };
}

test("a reopened conversation and the history transcript show the stored badges", async () => {
  const app = await env.open({ init: [installHistory, storedSession(Date.now())] });
  const { page } = app;
  const check = async (scope) => {
    const at = (id) => page.locator(`${scope} ${sel("tool-card")}[data-call-id="${id}"] ${sel("tool-sandbox")}`);
    await at("h1").waitFor();
    assert.equal(await at("h1").getAttribute("data-sandboxed"), "true");
    assert.equal(await at("h1").getAttribute("title"), `${SANDBOXED_TIP}\nnetwork allowed for this command`);
    assert.equal(await at("h2").getAttribute("data-sandboxed"), "false");
    assert.equal(await at("h2").innerText(), "Not sandboxed");
    // Recorded before the sandbox: no badge rather than a guess.
    assert.equal(await page.locator(`${scope} ${sel("tool-card")}[data-call-id="h3"]`).count(), 1);
    assert.equal(await at("h3").count(), 0);
  };
  await check(sel("message-list"));
  await app.tid("history-open").click();
  await app.page.locator(`${sel("history-session")}[data-session-id="sb1"]`).click();
  await check(`${sel("history-transcript")}[data-session-id="sb1"]`);
  await app.close();
});

const EVIDENCE = "npm ERR! code EAI_AGAIN\nnpm ERR! errno EAI_AGAIN\nnpm ERR! request to https://registry.npmjs.org/okapi failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org";

/** A command the sandbox refused: its card, then the question. */
const refused = (id, command, details) => [
  E.toolRequest(id, "run_shell_command", { command }),
  E.toolState(id, "executing"),
  E.confirmation(id, "run_shell_command", E.sandboxDetails(command, details)),
];

async function asked(events, options) {
  const app = await env.open(options);
  await app.sendPrompt("install it");
  await app.emitAll([E.turnStarted(), ...events]);
  await app.tid("sandbox-confirm").waitFor();
  return app;
}

describe("sandbox confirmation", () => {
  test("the card: title, command, what it needs, the evidence on demand", async () => {
    const app = await asked(refused("n1", "npm install && npm run build", { network: true, paths: ["/home/dev/.npm"], evidence: EVIDENCE, title: "This command needs network access" }));
    const { page } = app;
    const c = app.tid("sandbox-confirm");
    assert.equal(await c.getAttribute("data-call-id"), "n1");
    assert.equal(await app.tid("confirmation").count(), 0, "not the generic card");
    assert.equal(await app.tid("sandbox-title").innerText(), "This command needs network access");
    assert.equal(await app.tid("sandbox-command").textContent(), "npm install && npm run build");
    assert.match(await app.tid("sandbox-command").evaluate((el) => getComputedStyle(el).fontFamily), /mono|Menlo|Consolas/i);
    assert.equal(await app.tid("sandbox-directory").innerText(), WS);
    assert.deepEqual(await app.tid("sandbox-need").allInnerTexts(), ["Network access", "Write in /home/dev/.npm"]);
    assert.deepEqual(await app.tid("sandbox-need").evaluateAll((els) => els.map((e) => e.dataset.need)), ["network", "write"]);
    // The evidence is collapsed until asked for.
    assert.equal(await app.tid("sandbox-evidence").count(), 0);
    const why = app.tid("sandbox-why");
    assert.equal(await why.innerText(), "▸Show why");
    assert.equal(await why.getAttribute("aria-expanded"), "false");
    await why.click();
    assert.equal(await app.tid("sandbox-evidence").textContent(), EVIDENCE);
    assert.equal(await why.getAttribute("aria-expanded"), "true");
    assert.equal(await why.innerText(), "▾Hide why");
    // The call's card waits for the answer; the composer says how to answer.
    await page.waitForSelector(`${sel("tool-card")}[data-call-id="n1"][data-state="awaiting_approval"]`);
    assert.match(await app.tid("composer-hint").innerText(), /Esc rejects/);
    assert.deepEqual(await c.locator("footer button").allInnerTexts().then((t) => t.map((s) => s.split("\n")[0].trim())), ["Allow once", "Always for this command", "No"]);
    await app.close();
  });

  test("a card without evidence has no Show why; a write-only need lists the folder", async () => {
    const app = await asked(refused("w1", "cargo build", { paths: ["/home/dev/.cargo/registry"] }));
    assert.equal(await app.tid("sandbox-title").innerText(), "This command needs to write to /home/dev/.cargo/registry");
    assert.deepEqual(await app.tid("sandbox-need").allInnerTexts(), ["Write in /home/dev/.cargo/registry"]);
    assert.equal(await app.tid("sandbox-why").count(), 0);
    await app.close();
  });

  for (const [button, outcome] of [
    ["sandbox-allow-once", "proceed_once"],
    ["sandbox-allow-always", "proceed_always"],
    ["sandbox-deny", "cancel"],
  ]) {
    test(`${button} answers ${outcome}`, async () => {
      const app = await asked(refused("a1", "npm install", { network: true, evidence: EVIDENCE }));
      await app.tid(button).click();
      const call = await app.waitForOp("confirm_tool");
      assert.deepEqual(call.args, { sessionId: "s1", call_id: "a1", outcome, content: null });
      await app.page.waitForSelector(sel("sandbox-confirm"), { state: "detached" });
      assert.equal(app.opsOf("confirm_tool").length, 1);
      await app.close();
    });
  }

  for (const [keys, outcome] of [
    ["Control+Enter", "proceed_once"],
    ["Escape", "cancel"],
  ]) {
    test(`${keys} answers ${outcome}, as on every confirmation`, async () => {
      const app = await asked(refused("k1", "npm install", { network: true }));
      await app.page.keyboard.press(keys);
      const call = await app.waitForOp("confirm_tool");
      assert.deepEqual(call.args, { sessionId: "s1", call_id: "k1", outcome, content: null });
      assert.equal(app.opsOf("interrupt").length, 0, "Esc answered, it did not stop the turn");
      await app.close();
    });
  }

  for (const [colorScheme, width] of [
    ["light", 800],
    ["light", 1440],
    ["dark", 800],
    ["dark", 1440],
  ]) {
    test(`the card (screenshot, ${colorScheme}, ${width} px)`, async () => {
      const app = await asked(refused("s1", "npm install --no-audit && npm run build -- --mode production", { network: true, paths: ["/home/dev/.npm", "/home/dev/.cache/node-gyp"], evidence: EVIDENCE }), {
        colorScheme,
        viewport: { width, height: 820 },
      });
      await app.tid("sandbox-why").click();
      const c = app.tid("sandbox-confirm");
      // The buttons stay whole, on the card, in one row at both widths.
      const buttons = await c.locator("footer button").evaluateAll((els) =>
        els.map((b) => {
          const r = b.getBoundingClientRect();
          return { top: Math.round(r.top), whole: b.scrollWidth <= b.clientWidth + 0.5 };
        }),
      );
      assert.ok(buttons.every((b) => b.whole && b.top === buttons[0]?.top), JSON.stringify(buttons));
      await c.screenshot({ path: screenshotPath(`sandbox-confirm-${colorScheme}-${width}.png`) });
      await app.close();
    });
  }
});

describe("queue and inbox", () => {
  test("the dock's queue and the inbox say what a waiting sandbox question asks, in one line", async () => {
    const app = await env.open();
    await app.sendPrompt("install it");
    await app.emitAll([
      E.turnStarted(),
      ...refused("q1", "npm install", { network: true }),
      ...refused("q2", "cargo build", { paths: ["/home/dev/.cargo/registry"] }),
      ...refused("q3", "pip install -r requirements.txt", { network: true, paths: ["/home/dev/.cache/pip", "/home/dev/.local"] }),
    ]);
    await app.tid("sandbox-confirm").waitFor();
    assert.deepEqual(await app.tid("confirmation-queued").evaluateAll((els) => els.map((e) => e.dataset.kind)), ["sandbox", "sandbox"]);
    await waitForText(app.page, sel("confirmation-queued"), /Allow writing in \/home\/dev\/\.cargo\/registry: cargo build/, { index: 0 });
    await waitForText(app.page, sel("confirmation-queued"), /Allow network access and writing in 2 folders: pip install -r requirements.txt/, { index: 1 });

    await app.tid("approval-inbox").click();
    const panel = app.tid("approval-inbox-panel");
    await panel.waitFor();
    // The first as its full card, the others as one line each.
    assert.equal(await panel.getByTestId("sandbox-confirm").count(), 1);
    assert.deepEqual(await panel.getByTestId("inbox-summary").allInnerTexts(), [
      "Allow writing in /home/dev/.cargo/registry: cargo build",
      "Allow network access and writing in 2 folders: pip install -r requirements.txt",
    ]);
    await panel.screenshot({ path: screenshotPath("sandbox-inbox.png") });
    // Answered from the inbox, through the conversation's session.
    await panel.getByTestId("sandbox-allow-always").click();
    const call = await app.waitForOp("confirm_tool");
    assert.deepEqual(call.args, { sessionId: "s1", call_id: "q1", outcome: "proceed_always", content: null });
    await app.close();
  });
});

/** Core's summaries (crates/core/src/sandbox/mod.rs `state`). */
const YOLO_OFF =
  "Commands run without a sandbox: they can change or delete any file you can, read your keys and credentials and use the network. In YOLO mode nobody is asked first. Turn on Tool sandboxing in Settings (security.toolSandboxing) to confine them.";
const SANDBOX_ON =
  "Commands run in the sandbox: they write only in the workspace and a private /tmp, cannot read your keys and credentials, and have no network unless you allow it.";

describe("approval switch", () => {
  test("with YOLO and the sandbox off, the switch warns in core's words (pointed at or focused)", async () => {
    const app = await env.open();
    const { page } = app;
    await app.emit(E.turnContext("yolo", E.sandboxState({ enabled: false, summary: YOLO_OFF })));
    await page.waitForSelector(`${sel("app")}[data-mode="yolo"]`);
    const warning = app.tid("yolo-sandbox-warning");
    assert.equal(await warning.count(), 1);
    assert.equal(await warning.isVisible(), false, "out of the chat's way until the switch is looked at");
    await app.tid("approval-mode").hover();
    await warning.waitFor({ state: "visible" });
    assert.equal(await warning.innerText(), YOLO_OFF);
    // Said in the YOLO option's tooltip and the switch's too, and read with the switch.
    const yolo = app.tid("approval-mode").locator('option[value="yolo"]');
    assert.ok((await yolo.getAttribute("title"))?.endsWith(`\n${YOLO_OFF}`), "the YOLO option's tooltip ends with core's summary");
    assert.equal(await app.tid("approval-mode").getAttribute("aria-describedby"), "yolo-sandbox-note");
    await page.mouse.move(5, 700);
    await warning.waitFor({ state: "hidden" });
    await app.tid("approval-mode").focus();
    await warning.waitFor({ state: "visible" });
    await page.screenshot({ path: screenshotPath("sandbox-yolo-warning.png"), clip: { x: 600, y: 0, width: 600, height: 160 } });
    await app.close();
  });

  test("choosing YOLO while the sandbox is off shows the warning at once; other modes show none", async () => {
    const app = await env.open();
    const { page } = app;
    await app.emit(E.turnContext("default", E.sandboxState({ enabled: false, summary: YOLO_OFF })));
    // Not YOLO: nothing to warn about (the option's tooltip still says it).
    assert.equal(await app.tid("yolo-sandbox-warning").count(), 0);
    assert.match(await app.tid("approval-mode").locator('option[value="yolo"]').getAttribute("title"), /without a sandbox/);
    assert.doesNotMatch(await app.tid("approval-mode").locator('option[value="default"]').getAttribute("title"), /sandbox/);
    await app.tid("approval-mode").focus();
    await app.tid("approval-mode").selectOption("yolo");
    await app.waitForOp("override_turn_context", (a) => a.approval_mode === "yolo");
    await app.tid("yolo-sandbox-warning").waitFor({ state: "visible" });
    await app.tid("approval-mode").selectOption("auto_edit");
    await page.waitForSelector(sel("yolo-sandbox-warning"), { state: "detached" });
    await app.close();
  });

  test("with the sandbox on, YOLO says commands run in it, and no warning", async () => {
    const app = await env.open();
    await app.emit(E.turnContext("yolo", E.sandboxState({ enabled: true, summary: SANDBOX_ON })));
    await app.page.waitForSelector(`${sel("app")}[data-mode="yolo"]`);
    await app.tid("approval-mode").hover();
    const note = app.tid("yolo-sandbox-note");
    await note.waitFor({ state: "visible" });
    assert.equal(await note.innerText(), SANDBOX_ON);
    assert.equal(await note.getAttribute("data-kind"), "on");
    assert.equal(await app.tid("yolo-sandbox-warning").count(), 0);
    await app.close();
  });

  test("before core says anything about the sandbox, the switch is as it was", async () => {
    const app = await env.open();
    await app.emit(E.turnContext("yolo"));
    await app.page.waitForSelector(`${sel("app")}[data-mode="yolo"]`);
    await app.tid("approval-mode").hover();
    assert.equal(await app.page.locator(`${sel("yolo-sandbox-warning")}, ${sel("yolo-sandbox-note")}`).count(), 0);
    assert.doesNotMatch(await app.tid("approval-mode").locator('option[value="yolo"]').getAttribute("title"), /sandbox/);
    await app.close();
  });
});

const UNAVAILABLE =
  "bubblewrap (bwrap) is not installed, which the sandbox needs. Install it: `sudo apt install bubblewrap`, or turn Tool sandboxing off in Settings.";

test("when the sandbox cannot start, the chat says why and how to fix it until it can", async () => {
  for (const [colorScheme, width] of [
    ["light", 800],
    ["dark", 1440],
  ]) {
    const app = await env.open({ colorScheme, viewport: { width, height: 820 } });
    const banner = app.tid("sandbox-unavailable");
    assert.equal(await banner.count(), 0);
    await app.emit(E.turnContext("default", E.sandboxState({ enabled: true, unavailable: UNAVAILABLE, summary: `The sandbox cannot start here, so commands are refused: ${UNAVAILABLE}` })));
    await banner.waitFor();
    // Core's words, its commands as code.
    assert.equal(await app.tid("sandbox-unavailable-text").innerText(), UNAVAILABLE.replaceAll("`", ""));
    assert.deepEqual(await app.tid("sandbox-unavailable-text").locator("code").allInnerTexts(), ["sudo apt install bubblewrap"]);
    assert.match(await banner.innerText(), /^Commands cannot run: the sandbox is unavailable\./);
    // It stays through turns (it is the session's state, not a turn's notice).
    await app.sendPrompt("run the tests");
    await app.emitAll([E.turnStarted(), E.delta("I can't run commands."), E.turnComplete()]);
    await waitForText(app.page, sel("message-model"), "I can't run commands.");
    assert.equal(await banner.isVisible(), true);
    await app.tid("composer").screenshot({ path: screenshotPath(`sandbox-unavailable-${colorScheme}-${width}.png`) });
    // Its Settings… opens the settings screen.
    await app.tid("sandbox-unavailable-settings").click();
    await app.tid("settings-panel").waitFor();
    await app.page.keyboard.press("Escape");
    // Fixed (or turned off): gone.
    await app.emit(E.turnContext("default", E.sandboxState({ enabled: false, summary: YOLO_OFF })));
    await banner.waitFor({ state: "detached" });
    await app.close();
  }
});

test("the settings screen shows core's Tool sandboxing switch like any other, and saves it", async () => {
  const field = {
    key: "security.toolSandboxing",
    label: "Tool sandboxing",
    help: "Run shell commands in a sandbox: they write only in the workspace and reach no network unless you allow it.",
    kind: "toggle",
    choices: [],
    placeholder: null,
    applies: "The session reloads with it.",
    effect: "reload",
  };
  const settings = {
    fields: [field],
    layers: [
      { layer: "system_defaults", path: "/etc/gemini-cli/system-defaults.json", exists: false, loaded: true, error: null },
      { layer: "user", path: "/home/dev/.gemini/settings.json", exists: true, loaded: true, error: null },
      { layer: "workspace", path: `${WS}/.gemini/settings.json`, exists: false, loaded: true, error: null },
      { layer: "system", path: "/etc/gemini-cli/settings.json", exists: false, loaded: true, error: null },
    ],
    values: [{ key: "security.toolSandboxing", value: null, source: null, user: null, workspace: null }],
    mcp_servers: [],
    workspace_trusted: true,
  };
  const app = await env.open({ config: { settings } });
  await app.tid("settings-open").click();
  const row = app.page.locator(`${sel("setting")}[data-key="security.toolSandboxing"]`);
  await row.waitFor();
  assert.match(await row.innerText(), /^Tool sandboxing/);
  assert.equal(await row.getByTestId("setting-input").getAttribute("type"), "checkbox");
  assert.equal(await row.getByTestId("setting-effective").innerText(), "Off");
  await row.getByTestId("setting-input").check();
  await row.getByTestId("setting-save").click();
  const set = await app.waitForCall("settings_set");
  assert.deepEqual(set.args, { scope: "user", key: "security.toolSandboxing", value: true });
  await app.close();
});
