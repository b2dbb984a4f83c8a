// The settings screen: opened from the header; each common key shows its value in effect and
// the layer it comes from; Save writes the chosen scope through settings_set and the change is
// applied (theme at once, approval mode on the session, reloading keys reload the session);
// invalid values and broken files are shown next to the field; MCP servers switch on and off.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { screenshotPath, sel, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const layers = [
  { layer: "system_defaults", path: "/etc/gemini-cli/system-defaults.json", exists: false, loaded: true, error: null },
  { layer: "user", path: "/home/dev/.gemini/settings.json", exists: true, loaded: true, error: null },
  { layer: "workspace", path: "/home/dev/project/.gemini/settings.json", exists: true, loaded: true, error: null },
  { layer: "system", path: "/etc/gemini-cli/settings.json", exists: false, loaded: true, error: null },
];

const value = (key, v = null, source = null, user = null, workspace = null) => ({ key, value: v, source, user, workspace });

const view = {
  layers,
  values: [
    value("model.name", "gemini-2.5-flash", "workspace", "gemini-2.5-pro", "gemini-2.5-flash"),
    value("general.defaultApprovalMode", "auto_edit", "user", "auto_edit"),
    value("ui.theme"),
    value("context.fileName", ["AGENTS.md", "GEMINI.md"], "user", ["AGENTS.md", "GEMINI.md"]),
    value("context.includeDirectories"),
    value("general.checkpointing.enabled", false, "user", false),
  ],
  mcp_servers: [
    { name: "github", source: "user", enabled: true },
    { name: "local", source: "workspace", enabled: false },
  ],
  workspace_trusted: true,
};

const row = (app, key) => app.page.locator(`${sel("setting")}[data-key="${key}"]`);

async function openSettings(config = {}) {
  const app = await env.open({ config: { settings: structuredClone(view), ...config } });
  await app.tid("settings-open").click();
  await app.tid("settings-panel").waitFor();
  await app.page.waitForSelector(`${sel("setting")}[data-key="model.name"]`);
  return app;
}

describe("settings screen", () => {
  test("shows each value with the layer it comes from and the files", async () => {
    const app = await openSettings();
    assert.deepEqual(
      await app.tid("setting").evaluateAll((els) => els.map((e) => [e.dataset.key, e.dataset.source])),
      [
        ["model.name", "workspace"],
        ["general.defaultApprovalMode", "user"],
        ["ui.theme", "default"],
        ["ui.desktopNotifications", "default"],
        ["context.fileName", "user"],
        ["context.includeDirectories", "default"],
        ["general.checkpointing.enabled", "user"],
        ["general.maxAttempts", "default"],
        ["tools.truncateToolOutputThreshold", "default"],
        ["tools.shell.inactivityTimeout", "default"],
        ["tools.allowed", "default"],
        ["security.toolSandboxing", "default"],
        ["security.disableYoloMode", "default"],
        ["general.sessionRetention.enabled", "default"],
        ["general.sessionRetention.maxAge", "default"],
      ],
    );
    const model = row(app, "model.name");
    assert.equal(await model.getByTestId("setting-source").innerText(), "From Workspace settings");
    assert.equal(await model.getByTestId("setting-input").inputValue(), "gemini-2.5-flash");
    assert.equal(await model.getByTestId("setting-user").innerText(), "gemini-2.5-pro");
    assert.equal(await model.getByTestId("setting-workspace").innerText(), "gemini-2.5-flash");
    // The scope follows where the value comes from.
    assert.equal(await model.getByTestId("setting-scope").inputValue(), "workspace");
    assert.equal(await row(app, "ui.theme").getByTestId("setting-scope").inputValue(), "user");
    assert.equal(await row(app, "ui.theme").getByTestId("setting-source").innerText(), "Default");
    assert.equal(await row(app, "context.fileName").getByTestId("setting-input").inputValue(), "AGENTS.md, GEMINI.md");
    assert.equal(await row(app, "general.checkpointing.enabled").getByTestId("setting-input").isChecked(), false);
    assert.deepEqual(
      await app.tid("settings-layer").evaluateAll((els) => els.map((e) => [e.dataset.layer, e.dataset.exists])),
      [
        ["system_defaults", "false"],
        ["user", "true"],
        ["workspace", "true"],
        ["system", "false"],
      ],
    );
    assert.deepEqual(
      await app.tid("settings-mcp-server").evaluateAll((els) => els.map((e) => [e.dataset.server, e.dataset.enabled])),
      [
        ["github", "true"],
        ["local", "false"],
      ],
    );
    await app.tid("settings-panel").screenshot({ path: screenshotPath("settings-light.png") });
    await app.close();
  });

  test("shows the value in force and its origin: defaults, files and the environment", async () => {
    const settings = structuredClone(view);
    // Nothing sets checkpoints: the app's default (on) is in force, not "Off".
    settings.values[5] = value("general.checkpointing.enabled");
    // GEMINI_MODEL beats the files (core says so).
    settings.values[0] = {
      ...value("model.name", "gemini-2.5-flash", "workspace", null, "gemini-2.5-flash"),
      effective: "gemini-env-model",
      origin: "env",
      env_var: "GEMINI_MODEL",
    };
    const app = await openSettings({ settings });
    const checkpoints = row(app, "general.checkpointing.enabled");
    assert.equal(await checkpoints.getAttribute("data-source"), "default");
    assert.equal(await checkpoints.getByTestId("setting-input").isChecked(), true);
    assert.equal(await checkpoints.getByTestId("setting-effective").innerText(), "On");
    assert.equal(await checkpoints.getByTestId("setting-source").innerText(), "Default");
    assert.equal(await checkpoints.getByTestId("setting-user").innerText(), "not set");
    assert.equal(await checkpoints.getByTestId("setting-workspace").innerText(), "not set");
    const model = row(app, "model.name");
    assert.equal(await model.getAttribute("data-source"), "env");
    assert.equal(await model.getByTestId("setting-source").innerText(), "From the environment (GEMINI_MODEL)");
    assert.equal(await model.getByTestId("setting-effective").innerText(), "gemini-env-model");
    assert.equal(await model.getByTestId("setting-user").innerText(), "not set");
    assert.equal(await model.getByTestId("setting-workspace").innerText(), "gemini-2.5-flash");
    const theme = row(app, "ui.theme");
    assert.equal(await theme.getByTestId("setting-effective").innerText(), "System");
    assert.equal(await row(app, "context.includeDirectories").getByTestId("setting-effective").innerText(), "none");
    for (const [scheme, width] of [["light", 800], ["dark", 1440]]) {
      await app.page.emulateMedia({ colorScheme: scheme });
      await app.page.setViewportSize({ width, height: 900 });
      await app.tid("settings-panel").screenshot({ path: screenshotPath(`settings-in-force-${scheme}-${width}.png`) });
      await checkpoints.screenshot({ path: screenshotPath(`settings-checkpoints-${scheme}-${width}.png`) });
    }
    await app.close();
  });

  test("saving writes the chosen scope and reloads the session for the model", async () => {
    const app = await openSettings();
    const model = row(app, "model.name");
    await model.getByTestId("setting-input").fill("gemini-2.5-pro");
    await model.getByTestId("setting-scope").selectOption("user");
    await model.getByTestId("setting-save").click();
    const call = await app.waitForCall("settings_set");
    assert.deepEqual(call.args, { scope: "user", key: "model.name", value: "gemini-2.5-pro" });
    await app.tid("settings-status").waitFor();
    assert.equal(await app.tid("settings-status").innerText(), "Saved model.name to /home/dev/.gemini/settings.json");
    // The workspace value still wins: the row says so.
    assert.equal(await model.getByTestId("setting-source").innerText(), "From Workspace settings");
    assert.equal(await model.getByTestId("setting-user").innerText(), "gemini-2.5-pro");
    // The running session reloads so the setting counts (no explicit model: settings decide).
    const stop = await app.waitForCall("stop_session");
    const start = await app.waitForCall("start_session", () => true, { from: app.calls.indexOf(stop) });
    assert.equal(start.args.model ?? null, null);
    // Reset removes it from the file.
    await model.getByTestId("setting-reset").click();
    const reset = await app.waitForCall("settings_set", (a) => a.value === null);
    assert.deepEqual(reset.args, { scope: "user", key: "model.name", value: null });
    await app.close();
  });

  test("lists and flags are written as JSON arrays and booleans", async () => {
    const app = await openSettings();
    const names = row(app, "context.fileName");
    await names.getByTestId("setting-input").fill("AGENTS.md,  CONTEXT.md ");
    await names.getByTestId("setting-save").click();
    assert.deepEqual((await app.waitForCall("settings_set", (a) => a.key === "context.fileName")).args.value, ["AGENTS.md", "CONTEXT.md"]);
    const dirs = row(app, "context.includeDirectories");
    await dirs.getByTestId("setting-input").fill("../lib\n\n/opt/shared\n");
    await dirs.getByTestId("setting-save").click();
    assert.deepEqual((await app.waitForCall("settings_set", (a) => a.key === "context.includeDirectories")).args.value, ["../lib", "/opt/shared"]);
    const checkpoints = row(app, "general.checkpointing.enabled");
    await checkpoints.getByTestId("setting-input").check();
    await checkpoints.getByTestId("setting-save").click();
    assert.equal((await app.waitForCall("settings_set", (a) => a.key === "general.checkpointing.enabled")).args.value, true);
    await app.close();
  });

  test("Gemini CLI 0.61 keys: numbers are written as numbers, a bad one is refused", async () => {
    const settings = structuredClone(view);
    // Core sends a value for every field; unset ones fall back to core's default.
    settings.values.push(
      value("general.maxAttempts", 3, "user", 3),
      value("tools.truncateToolOutputThreshold"),
      value("tools.shell.inactivityTimeout"),
      value("tools.allowed"),
      value("security.toolSandboxing"),
      value("security.disableYoloMode"),
      value("general.sessionRetention.enabled"),
      value("general.sessionRetention.maxAge"),
    );
    const app = await openSettings({ settings });
    const attempts = row(app, "general.maxAttempts");
    assert.equal(await attempts.getByTestId("setting-input").inputValue(), "3");
    assert.equal(await attempts.getByTestId("setting-effective").innerText(), "3");
    assert.equal(await attempts.getByTestId("setting-source").innerText(), "From User settings");
    const limit = row(app, "tools.truncateToolOutputThreshold");
    assert.equal(await limit.getByTestId("setting-effective").innerText(), "40000");
    assert.equal(await limit.getByTestId("setting-source").innerText(), "Default");
    // A number is saved as a JSON number.
    await attempts.getByTestId("setting-input").fill(" 5 ");
    await attempts.getByTestId("setting-save").click();
    assert.deepEqual((await app.waitForCall("settings_set", (a) => a.key === "general.maxAttempts")).args, {
      scope: "user",
      key: "general.maxAttempts",
      value: 5,
    });
    // Text that is not a whole number is refused next to the field, nothing written.
    await limit.getByTestId("setting-input").fill("lots");
    await limit.getByTestId("setting-save").click();
    await limit.getByText("Enter a whole number.").waitFor();
    assert.equal(app.calls.filter((c) => c.cmd === "settings_set" && c.args.key === "tools.truncateToolOutputThreshold").length, 0);
    // Allowed tools are lines; disabling YOLO is a switch.
    const allowed = row(app, "tools.allowed");
    await allowed.getByTestId("setting-input").fill("read_file\nrun_shell_command(git status)\n");
    await allowed.getByTestId("setting-save").click();
    assert.deepEqual((await app.waitForCall("settings_set", (a) => a.key === "tools.allowed")).args.value, [
      "read_file",
      "run_shell_command(git status)",
    ]);
    const yolo = row(app, "security.disableYoloMode");
    assert.equal(await yolo.getByTestId("setting-effective").innerText(), "Off");
    await yolo.getByTestId("setting-input").check();
    await yolo.getByTestId("setting-save").click();
    assert.equal((await app.waitForCall("settings_set", (a) => a.key === "security.disableYoloMode")).args.value, true);
    assert.equal(await row(app, "general.sessionRetention.maxAge").getByTestId("setting-effective").innerText(), "30d");
    await attempts.screenshot({ path: screenshotPath("settings-max-attempts.png") });
    await app.close();
  });

  test("the theme applies at once and the approval mode to the session", async () => {
    const app = await openSettings();
    assert.equal(await app.page.evaluate(() => document.documentElement.dataset.theme), "light");
    const theme = row(app, "ui.theme");
    await theme.getByTestId("setting-input").selectOption("dark");
    await theme.getByTestId("setting-save").click();
    await app.waitForCall("settings_set", (a) => a.key === "ui.theme" && a.value === "dark");
    await app.until(() => document.documentElement.dataset.theme === "dark");
    const bg = await app.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, "rgb(16, 18, 24)", "the dark palette applies");
    await app.tid("settings-panel").screenshot({ path: screenshotPath("settings-dark.png") });
    await theme.getByTestId("setting-input").selectOption("system");
    await theme.getByTestId("setting-save").click();
    await app.until(() => document.documentElement.dataset.theme === "light");

    const mode = row(app, "general.defaultApprovalMode");
    await mode.getByTestId("setting-input").selectOption("default");
    await mode.getByTestId("setting-save").click();
    await app.waitForCall("settings_set", (a) => a.key === "general.defaultApprovalMode");
    const set = await app.waitForOp("override_turn_context");
    assert.equal(set.args.approval_mode, "default");
    await app.close();
  });

  test("a saved dark theme is applied at start", async () => {
    const settings = structuredClone(view);
    settings.values[2] = value("ui.theme", "dark", "user", "dark");
    const app = await env.open({ config: { settings } });
    await app.until(() => document.documentElement.dataset.theme === "dark");
    await app.close();
  });

  test("invalid values are shown inline and nothing is written", async () => {
    const app = await openSettings({
      settingsSetErrors: {
        "general.checkpointing.enabled": {
          kind: "config",
          message: "/home/dev/.gemini/settings.json:4:3: expected `,` or `}`; fix the file first, it was not changed",
        },
      },
    });
    const model = row(app, "model.name");
    await model.getByTestId("setting-input").fill("gemini 2.5");
    await model.getByTestId("setting-save").click();
    await model.getByTestId("setting-error").waitFor();
    assert.match(await model.getByTestId("setting-error").innerText(), /no spaces/);
    const names = row(app, "context.fileName");
    await names.getByTestId("setting-input").fill("docs/AGENTS.md");
    await names.getByTestId("setting-save").click();
    await names.getByTestId("setting-error").waitFor();
    assert.match(await names.getByTestId("setting-error").innerText(), /not a file name/);
    assert.equal(app.callsOf("settings_set").length, 0);
    // The backend's refusal (a broken file) is shown where it was asked for.
    const checkpoints = row(app, "general.checkpointing.enabled");
    await checkpoints.getByTestId("setting-input").check();
    await checkpoints.getByTestId("setting-save").click();
    await checkpoints.getByTestId("setting-error").waitFor();
    assert.match(await checkpoints.getByTestId("setting-error").innerText(), /settings\.json:4:3/);
    // Fixing the value clears the error.
    await model.getByTestId("setting-input").fill("gemini-2.5-pro");
    await model.getByTestId("setting-save").click();
    await app.waitForCall("settings_set", (a) => a.key === "model.name");
    await app.page.waitForFunction(
      (s) => !document.querySelector(s),
      `${sel("setting")}[data-key="model.name"] ${sel("setting-error")}`,
    );
    await app.close();
  });

  test("an untrusted folder's workspace scope is off", async () => {
    const settings = structuredClone(view);
    settings.workspace_trusted = false;
    settings.layers[2].loaded = false;
    settings.values[0] = value("model.name", "gemini-2.5-pro", "user", "gemini-2.5-pro", "gemini-2.5-flash");
    const app = await openSettings({
      settings,
      trust: {
        workspace: "/home/dev/project",
        folder_name: "project",
        parent: "/home/dev",
        parent_name: "dev",
        enabled: true,
        trusted: false,
        source: "file",
        rule_path: "/home/dev/project",
        rule_level: "DO_NOT_TRUST",
        file: "/home/dev/.gemini/trustedFolders.json",
        error: null,
        discovered: { commands: [], mcp_servers: [], settings: ["model"], context_files: [], env_file: false },
      },
    });
    await app.tid("settings-untrusted").waitFor();
    const model = row(app, "model.name");
    assert.equal(await model.getByTestId("setting-scope").inputValue(), "user");
    assert.equal(await model.locator(`${sel("setting-scope")} option[value="workspace"]`).isDisabled(), true);
    assert.equal(await app.page.locator(`${sel("settings-layer")}[data-layer="workspace"]`).getAttribute("data-loaded"), "false");
    await app.close();
  });

  test("MCP servers switch on and off through the session", async () => {
    const app = await openSettings();
    const local = app.page.locator(`${sel("settings-mcp-server")}[data-server="local"]`);
    await local.getByTestId("settings-mcp-toggle").check();
    const call = await app.waitForOp("mcp_set_server_enabled");
    assert.deepEqual(call.args, { sessionId: "s1", name: "local", enabled: true });
    await app.close();
  });

  test("Esc and the close button close it", async () => {
    const app = await openSettings();
    await app.tid("settings-panel").press("Escape");
    await app.tid("settings-panel").waitFor({ state: "detached" });
    await app.tid("settings-open").click();
    await app.tid("settings-close").click();
    await app.tid("settings-panel").waitFor({ state: "detached" });
    await app.close();
  });
});
