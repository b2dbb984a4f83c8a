// The MCP panel: opened from the header, one row per server with its state (colour + text),
// transport, tools (expandable), last error and stderr tail; Restart / Disable-Enable /
// Authenticate send their commands; status events update it live, and an open row's stderr tail
// follows `mcp_server_log_changed`.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const servers = [
  E.mcpStatus("fixture", { trust: true, description: "Test tools" }),
  E.mcpStatus("remote", {
    state: "error",
    transport: "http",
    tools: 0,
    tool_list: [],
    latency_ms: null,
    error: "connection refused (http://127.0.0.1:9/mcp)",
  }),
  E.mcpStatus("oauth", { state: "needs_auth", transport: "http", tools: 0, tool_list: [], error: "HTTP 401: sign in" }),
];

const server = (app, name) => app.page.locator(`${sel("mcp-server")}[data-server="${name}"]`);

/** Opens the app with `mcpServers` and the panel. */
async function openPanel(mcpServers = servers, config = {}) {
  const app = await env.open({ config: { mcpServers, ...config } });
  await app.waitForOp("mcp_status", (a) => a.sessionId === "s1");
  await app.tid("mcp-open").click();
  await app.tid("mcp-panel").waitFor();
  // The statuses arrived (the backend sends `mcp_discovery` after them).
  await app.page.waitForSelector(`${sel("mcp-discovery")}[data-state="completed"]`);
  return app;
}

describe("MCP panel", () => {
  test("lists every server with state, transport and error; header sums it up", async () => {
    const app = await openPanel();
    assert.equal(await app.tid("mcp-server").count(), 3);
    assert.deepEqual(
      await app.tid("mcp-server").evaluateAll((els) => els.map((e) => [e.dataset.server, e.dataset.state])),
      [
        ["fixture", "connected"],
        ["remote", "error"],
        ["oauth", "needs_auth"],
      ],
    );
    assert.equal(await server(app, "fixture").getByTestId("mcp-state").innerText(), "Connected");
    assert.equal(await server(app, "remote").getByTestId("mcp-state").innerText(), "Error");
    assert.equal(await server(app, "fixture").getByTestId("mcp-meta").innerText(), "stdio · 2 tools · 12 ms · trusted");
    assert.match(await server(app, "remote").getByTestId("mcp-meta").innerText(), /^Streamable HTTP/);
    assert.equal(
      await server(app, "remote").getByTestId("mcp-error").innerText(),
      "connection refused (http://127.0.0.1:9/mcp)",
    );
    // The state is coloured: green for connected, red for error.
    const dot = (name) =>
      server(app, name)
        .locator(".dot")
        .evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.notEqual(await dot("fixture"), await dot("remote"));
    assert.equal(await app.tid("mcp-open").getAttribute("data-summary"), "error");
    assert.match(await app.tid("mcp-open").innerText(), /1\/3/);
    // Authenticate only where the server asks for a sign-in.
    assert.equal(await server(app, "oauth").getByTestId("mcp-authenticate").count(), 1);
    assert.equal(await server(app, "fixture").getByTestId("mcp-authenticate").count(), 0);
    await app.tid("mcp-panel").screenshot({ path: screenshotPath("mcp-panel-light.png") });
    await app.close();
  });

  test("expanding a server shows its tools with descriptions and asks for its stderr", async () => {
    const app = await openPanel();
    const fixture = server(app, "fixture");
    assert.equal(await fixture.getByTestId("mcp-tool").count(), 0, "collapsed at first");
    await fixture.getByTestId("mcp-expand").click();
    await app.waitForOp("mcp_server_log", (a) => a.sessionId === "s1" && a.name === "fixture");
    const tools = fixture.getByTestId("mcp-tool");
    assert.equal(await tools.count(), 2);
    assert.deepEqual(await tools.evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, " ").trim())), [
      "add Add two integers.",
      "echo Return the text unchanged.",
    ]);
    assert.equal(await fixture.getByTestId("mcp-log-empty").count(), 1);
    await app.emit(E.mcpLog("fixture", ["starting", "listening on stdio"]));
    await fixture.getByTestId("mcp-log").waitFor();
    assert.equal(await fixture.getByTestId("mcp-log").innerText(), "starting\nlistening on stdio");
    await fixture.getByTestId("mcp-expand").click();
    assert.equal(await fixture.getByTestId("mcp-tool").count(), 0);
    await app.close();
  });

  test("an open row's stderr tail follows the server's writes; collapsed rows and a closed panel fetch nothing", async () => {
    const app = await openPanel();
    const fixture = server(app, "fixture");
    const logCalls = () => app.opsOf("mcp_server_log").filter((c) => c.args.name === "fixture").length;
    const changed = { type: "mcp_server_log_changed", name: "fixture" };

    // Collapsed: a write is not fetched.
    await app.emit(changed);
    await app.emit(E.mcpServerStatus(E.mcpStatus("remote", { state: "error", transport: "http", tools: 0, tool_list: [], error: "x" })));
    assert.equal(logCalls(), 0);

    await fixture.getByTestId("mcp-expand").click();
    await app.waitForOp("mcp_server_log", (a) => a.name === "fixture");
    await app.emit(E.mcpLog("fixture", ["starting"]));
    await fixture.getByTestId("mcp-log").waitFor();

    // The server writes: the core says so, the panel re-reads the tail and shows the new line.
    let from = app.calls.length;
    await app.emit(changed);
    await app.waitForOp("mcp_server_log", (a) => a.sessionId === "s1" && a.name === "fixture", { from });
    await app.emit(E.mcpLog("fixture", ["starting", "request 1 done"]));
    await app.page.waitForFunction(
      (s) => document.querySelector(`${s} [data-testid="mcp-log"]`)?.textContent?.includes("request 1 done"),
      `[data-testid="mcp-server"][data-server="fixture"]`,
    );
    // Other servers' writes do not fetch this one.
    await app.emit({ type: "mcp_server_log_changed", name: "remote" });
    assert.equal(app.opsOf("mcp_server_log").filter((c) => c.args.name === "remote").length, 0);

    // Collapsed: writes are not fetched.
    await fixture.getByTestId("mcp-expand").click();
    let count = logCalls();
    await app.emit(changed);
    await app.page.waitForTimeout(100);
    assert.equal(logCalls(), count);

    // Expanded, then the panel closed: nothing is fetched, and it reopens collapsed.
    from = app.calls.length;
    await fixture.getByTestId("mcp-expand").click();
    await app.waitForOp("mcp_server_log", (a) => a.name === "fixture", { from });
    await app.tid("mcp-close").click();
    count = logCalls();
    await app.emit(changed);
    await app.page.waitForTimeout(100);
    assert.equal(logCalls(), count, "no fetch while the panel is closed");
    await app.tid("mcp-open").click();
    assert.equal(await fixture.getByTestId("mcp-expand").getAttribute("aria-expanded"), "false");
    await app.emit(changed);
    await app.page.waitForTimeout(100);
    assert.equal(logCalls(), count, "no fetch for a row that reopened collapsed");
    await app.close();
  });

  test("Restart, Disable and Enable send their commands; state events update the row live", async () => {
    const app = await openPanel();
    const fixture = server(app, "fixture");
    await fixture.getByTestId("mcp-restart").click();
    const restart = await app.waitForOp("mcp_restart_server");
    assert.deepEqual(restart.args, { sessionId: "s1", name: "fixture" });

    // The backend reports the restart as it happens.
    await app.emit(E.mcpServerStatus(E.mcpStatus("fixture", { state: "connecting", tools: 0, tool_list: [], latency_ms: null })));
    await app.page.waitForSelector(`${sel("mcp-server")}[data-server="fixture"][data-state="connecting"]`);
    assert.equal(await fixture.getByTestId("mcp-state").innerText(), "Connecting…");
    await app.emit(E.mcpServerStatus(E.mcpStatus("fixture", { restarts: 1 })));
    await app.page.waitForSelector(`${sel("mcp-server")}[data-server="fixture"][data-state="connected"]`);
    assert.match(await fixture.getByTestId("mcp-meta").innerText(), /restarted 1×/);

    assert.equal(await fixture.getByTestId("mcp-toggle").innerText(), "Disable");
    await fixture.getByTestId("mcp-toggle").click();
    const disable = await app.waitForOp("mcp_set_server_enabled");
    assert.deepEqual(disable.args, { sessionId: "s1", name: "fixture", enabled: false });
    await app.emit(
      E.mcpServerStatus(E.mcpStatus("fixture", { state: "disabled", tools: 0, tool_list: [], error: "Disabled by the user" })),
    );
    await app.page.waitForSelector(`${sel("mcp-server")}[data-server="fixture"][data-state="disabled"]`);
    assert.equal(await fixture.getByTestId("mcp-toggle").innerText(), "Enable");
    assert.ok(await fixture.getByTestId("mcp-restart").isDisabled(), "a disabled server cannot be restarted");
    const from = app.calls.length;
    await fixture.getByTestId("mcp-toggle").click();
    const enable = await app.waitForOp("mcp_set_server_enabled", () => true, { from });
    assert.deepEqual(enable.args, { sessionId: "s1", name: "fixture", enabled: true });
    await app.close();
  });

  test("Authenticate starts the sign-in: waiting for the browser, a link to the page, then connected", async () => {
    const app = await openPanel();
    const oauth = server(app, "oauth");
    assert.match(await oauth.getByTestId("mcp-error").innerText(), /HTTP 401/);
    await oauth.getByTestId("mcp-authenticate").click();
    const call = await app.waitForOp("mcp_authenticate");
    assert.deepEqual(call.args, { sessionId: "s1", name: "oauth" });

    // The backend reports the browser step, with the authorization page.
    const page = "http://127.0.0.1:9/authorize?client_id=c&state=s";
    await app.emit(
      E.mcpServerStatus(
        E.mcpStatus("oauth", {
          state: "authenticating",
          transport: "http",
          tools: 0,
          tool_list: [],
          error: "Waiting for you to sign in in the browser…",
          auth_url: page,
        }),
      ),
    );
    await app.page.waitForSelector(`${sel("mcp-server")}[data-server="oauth"][data-state="authenticating"]`);
    assert.equal(await oauth.getByTestId("mcp-state").innerText(), "Signing in…");
    assert.equal(await oauth.getByTestId("mcp-authenticate").innerText(), "Waiting for browser…");
    assert.ok(await oauth.getByTestId("mcp-authenticate").isDisabled(), "one sign-in at a time");
    assert.match(await oauth.getByTestId("mcp-error").innerText(), /browser/);
    // "The browser did not open?": the link opens the page in the system browser.
    const from = app.calls.length;
    await oauth.getByTestId("mcp-auth-link").click();
    const opened = await app.waitForCall("plugin:opener|open_url", () => true, { from });
    assert.equal(opened.args.url, page);
    assert.equal(await app.tid("mcp-open").getAttribute("data-summary"), "error", "remote is still in error");

    // Signed in: connected with its tools, no more link or button.
    await app.emit(E.mcpServerStatus(E.mcpStatus("oauth", { transport: "http" })));
    await app.page.waitForSelector(`${sel("mcp-server")}[data-server="oauth"][data-state="connected"]`);
    assert.equal(await oauth.getByTestId("mcp-authenticate").count(), 0);
    assert.equal(await oauth.getByTestId("mcp-auth-link").count(), 0);
    assert.equal(await oauth.getByTestId("mcp-error").count(), 0);
    await app.close();
  });

  test("Authenticate shows why the sign-in could not start", async () => {
    const app = await openPanel(servers, {
      mcpAuthError: { kind: "input", message: "OAuth sign-in is turned off for MCP server 'oauth'" },
    });
    const oauth = server(app, "oauth");
    await oauth.getByTestId("mcp-authenticate").click();
    const call = await app.waitForOp("mcp_authenticate");
    assert.deepEqual(call.args, { sessionId: "s1", name: "oauth" });
    await oauth.getByTestId("mcp-action-error").waitFor();
    assert.match(await oauth.getByTestId("mcp-action-error").innerText(), /turned off/);
    await app.close();
  });

  test("a server that appears later is added; Esc and the close button close the panel", async () => {
    const app = await openPanel([]);
    assert.equal(await app.tid("mcp-empty").count(), 1);
    await app.emit(E.mcpServerStatus(E.mcpStatus("late", { state: "connecting", tools: 0, tool_list: [] })));
    await app.page.waitForSelector(`${sel("mcp-server")}[data-server="late"][data-state="connecting"]`);
    assert.equal(await app.tid("mcp-empty").count(), 0);
    await app.tid("mcp-panel").press("Escape");
    await app.page.waitForSelector(sel("mcp-panel"), { state: "detached" });
    await app.tid("mcp-open").click();
    await app.tid("mcp-close").click();
    await app.page.waitForSelector(sel("mcp-panel"), { state: "detached" });
    await app.close();
  });
});

describe("MCP panel: Add server", () => {
  /**
   * The backend's `settings_add_mcp_server` (gd-core's mcp_settings), simulated: a name with a
   * space is refused with core's message; otherwise the server is "written" and the next
   * session's `mcp_status` reports it connected.
   */
  function addBackend(status) {
    window.__gdExtraIPC = (cmd, args) => {
      if (cmd !== "settings_add_mcp_server") return undefined;
      if (/\s/.test(args.server.name)) {
        throw { kind: "input", message: `\`${args.server.name}\` cannot be a server name: use letters, digits, - and _ (its tools are called mcp_<name>_<tool>).` };
      }
      window.__gd.config.mcpServers = [...(window.__gd.config.mcpServers ?? []), { ...status, name: args.server.name }];
      return {
        layers: [{ layer: "user", path: "/home/dev/.gemini/settings.json", exists: true, loaded: true, error: null }],
        fields: [],
        values: [],
        mcp_servers: [{ name: args.server.name, source: args.scope, enabled: true }],
        workspace_trusted: true,
      };
    };
  }

  test("the form writes the server through the backend, keeps input on an error, and the server connects", async () => {
    const app = await env.open({ config: { mcpServers: [] }, init: [addBackend, E.mcpStatus("x")] });
    await app.waitForOp("mcp_status", (a) => a.sessionId === "s1");
    await app.tid("mcp-open").click();
    await app.tid("mcp-panel").waitFor();
    await app.tid("mcp-add-open").click();
    assert.equal(await app.page.evaluate(() => document.activeElement?.dataset.testid), "mcp-add-name", "focus goes to the name");
    await app.tid("mcp-add-name").fill("my fixture");
    await app.tid("mcp-add-command").fill("python3 'tests/fixtures/mcp server.py' --quiet");
    await app.tid("mcp-add-submit").click();
    await app.tid("mcp-add-error").waitFor();
    assert.match(await app.tid("mcp-add-error").innerText(), /cannot be a server name/);
    // Nothing typed is lost.
    assert.equal(await app.tid("mcp-add-name").inputValue(), "my fixture");
    assert.equal(await app.tid("mcp-add-command").inputValue(), "python3 'tests/fixtures/mcp server.py' --quiet");
    for (const [scheme, width] of [["light", 800], ["dark", 1440]]) {
      await app.page.emulateMedia({ colorScheme: scheme });
      await app.page.setViewportSize({ width, height: 900 });
      await app.tid("mcp-panel").screenshot({ path: screenshotPath(`mcp-add-error-${scheme}-${width}.png`) });
    }

    await app.tid("mcp-add-name").fill("fixture");
    await app.tid("mcp-add-scope").selectOption("workspace");
    await app.tid("mcp-add-submit").click();
    const call = await app.waitForCall("settings_add_mcp_server", (a) => a.server.name === "fixture");
    assert.deepEqual(call.args, {
      scope: "workspace",
      server: { name: "fixture", command_line: "python3 'tests/fixtures/mcp server.py' --quiet", url: null },
    });
    // The session reloads and the new server shows up connected.
    await app.waitForCall("start_session", () => true, { from: app.calls.indexOf(call) });
    await app.page.waitForSelector(`${sel("mcp-server")}[data-server="fixture"][data-state="connected"]`);
    assert.match(await app.tid("mcp-add-status").innerText(), /^Added fixture to /);
    assert.equal(await app.tid("mcp-add-form").count(), 0);
    await app.tid("mcp-panel").screenshot({ path: screenshotPath("mcp-added.png") });
    await app.close();
  });

  test("a URL server sends the URL and no command", async () => {
    const app = await env.open({ config: { mcpServers: [] }, init: [addBackend, E.mcpStatus("x", { transport: "http" })] });
    await app.tid("mcp-open").click();
    await app.tid("mcp-add-open").click();
    await app.tid("mcp-add-name").fill("remote");
    await app.tid("mcp-add-kind").selectOption("url");
    await app.tid("mcp-add-url").fill("http://localhost:8080/mcp");
    await app.tid("mcp-add-submit").click();
    const call = await app.waitForCall("settings_add_mcp_server");
    assert.deepEqual(call.args, { scope: "user", server: { name: "remote", command_line: null, url: "http://localhost:8080/mcp" } });
    await app.close();
  });
});
