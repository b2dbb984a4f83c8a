// The /extensions panel and its install flow (issue 20): installed extensions with what each
// adds and both enable switches (everywhere = user, here = workspace), uninstall behind a
// confirm, update; install from a folder or a git URL through a consent screen that lists
// exactly what the preview says, with a field per setting; Cancel discards the staged copy;
// errors stay in place with what was typed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const contributes = (overrides = {}) => ({
  mcp_servers: [],
  commands: [],
  context_files: [],
  exclude_tools: [],
  policy_rules: [],
  skills: [],
  agents: [],
  hooks: [],
  settings: [],
  themes: [],
  ...overrides,
});

const demo = {
  name: "e2e-demo",
  version: "1.2.0",
  description: "A demo extension with a server, a command and a policy.",
  path: "/home/dev/.gemini/extensions/e2e-demo",
  install: { kind: "local", source: "/home/dev/src/e2e-demo", auto_update: false },
  enabled: true,
  enabled_for_user: true,
  contributes: contributes({
    mcp_servers: [{ name: "demo-server", launches: "python3 /home/dev/.gemini/extensions/e2e-demo/server.py --stdio" }],
    commands: ["/demo:hello"],
    context_files: ["GEMINI.md"],
    exclude_tools: ["run_shell_command(rm)"],
    policy_rules: ["ask_user run_shell_command priority 100", "allow read_file priority 50 (ignored: extensions cannot allow)"],
    hooks: ["BeforeTool write_file: ./check.sh"],
    settings: [
      { name: "API key", description: "The demo API key", env_var: "DEMO_API_KEY", sensitive: true, is_set: false, set_here: false },
      { name: "Region", env_var: "DEMO_REGION", sensitive: false, is_set: true, set_here: false },
    ],
    themes: ["shades-of-green (e2e-demo)"],
  }),
  notes: ["The command /deploy is also defined by gcp: this one is /e2e-demo.deploy"],
};

const linked = {
  name: "gcs",
  version: "0.3.0",
  path: "/home/dev/src/gcs",
  install: { kind: "git", source: "https://github.com/example/gcs.git", git_ref: "v0.3.0", auto_update: false },
  enabled: false,
  enabled_for_user: true,
  enabled_for_workspace: false,
  contributes: contributes({ commands: ["/gcs:sync"] }),
  notes: [],
};

const listEvent = (extensions, extra = {}) => ({ type: "extensions", extensions, errors: [], ...extra });

async function openPanel(app) {
  const from = app.calls.length;
  await app.tid("prompt-input").fill("/extensions");
  await app.tid("prompt-input").press("Enter");
  await app.waitForOp("list_extensions", () => true, { from });
  await app.tid("extensions-panel").waitFor();
}

describe("/extensions", () => {
  test("lists each extension with version, source, state, what it adds, notes; folders that could not be read first", async () => {
    const app = await env.open({ viewport: { width: 1440, height: 900 } });
    await openPanel(app);
    await app.emit(
      listEvent([demo, linked], { errors: [{ path: "/home/dev/.gemini/extensions/bad/gemini-extension.json", line: 4, message: "expected a string for `version`" }] }),
    );
    await app.page.waitForSelector(sel("ext-item"));
    assert.equal(await app.tid("ext-item").count(), 2);
    assert.equal(
      (await app.tid("extensions-load-error").innerText()).replace(/\s+/g, " ").trim(),
      "/home/dev/.gemini/extensions/bad/gemini-extension.json:4: expected a string for `version`",
    );
    const row = app.page.locator(`${sel("ext-item")}[data-name="e2e-demo"]`);
    const text = await row.innerText();
    for (const part of ["e2e-demo", "1.2.0", "A demo extension", "Installed copy of /home/dev/src/e2e-demo", "Active here", "Everywhere: on", "Here: as everywhere (on)", "this one is /e2e-demo.deploy"]) {
      assert.ok(text.includes(part), `${part} in ${text}`);
    }
    const gcs = app.page.locator(`${sel("ext-item")}[data-name="gcs"]`);
    assert.equal(await gcs.getAttribute("data-enabled"), "false");
    assert.match(await gcs.innerText(), /git https:\/\/github.com\/example\/gcs.git @ v0.3.0[\s\S]*Off here[\s\S]*|Off here[\s\S]*git https/);
    assert.match(await gcs.innerText(), /Here: off/);
    assert.equal(await gcs.getByTestId("ext-toggle-workspace").isChecked(), false);
    assert.equal(await gcs.getByTestId("ext-toggle-user").isChecked(), true);

    // Its settings, each with where it is set.
    const settings = await row.getByTestId("ext-settings").innerText();
    for (const part of ["API key", "DEMO_API_KEY", "not set", "in the keyring", "The demo API key", "Region", "set everywhere"]) {
      assert.ok(settings.includes(part), `${part} in ${settings}`);
    }
    assert.equal(await row.locator(`${sel("ext-setting")}[data-env="DEMO_REGION"]`).getAttribute("data-set"), "true");

    // What it adds, on demand: servers with their command line, commands, policies, themes not applied.
    await row.getByTestId("ext-details-toggle").click();
    await waitForText(app.page, `${sel("ext-item")}[data-name="e2e-demo"] ${sel("ext-server-launches")}`, "python3 /home/dev/.gemini/extensions/e2e-demo/server.py --stdio");
    const adds = await row.getByTestId("ext-contributes").innerText();
    for (const part of ["demo-server", "/demo:hello", "ask_user run_shell_command priority 100", "BeforeTool write_file: ./check.sh", "GEMINI.md", "run_shell_command(rm)", "shades-of-green (e2e-demo): not applied"]) {
      assert.ok(adds.includes(part), `${part} in ${adds}`);
    }
    await app.page.screenshot({ path: screenshotPath("extensions-panel-light-1440.png") });
    await app.close();
  });

  test("a setting is set from the panel for either scope, removed, and its value never shown", async () => {
    const app = await env.open({ viewport: { width: 800, height: 820 } });
    await openPanel(app);
    await app.emit(listEvent([demo]));
    const row = app.page.locator(`${sel("ext-item")}[data-name="e2e-demo"]`);
    const key = row.locator(`${sel("ext-setting")}[data-env="DEMO_API_KEY"]`);
    await key.getByTestId("ext-setting-edit").click();
    const field = key.getByTestId("ext-setting-value");
    assert.equal(await field.getAttribute("type"), "password", "a sensitive value is typed unseen");
    assert.ok(await key.getByTestId("ext-setting-save").isDisabled(), "nothing to save yet");
    assert.equal(await key.getByTestId("ext-setting-remove").count(), 0, "nothing set to remove");
    await field.fill("s3cret-key");
    await key.getByTestId("ext-setting-scope").selectOption("workspace");
    await field.press("Enter");
    let op = await app.waitForOp("set_extension_setting");
    assert.deepEqual(op.args, { sessionId: "s1", name: "e2e-demo", env_var: "DEMO_API_KEY", value: "s3cret-key", scope: "workspace" });
    assert.equal(await key.getByTestId("ext-setting-editor").count(), 0, "the editor closes");
    assert.ok(await key.getByTestId("ext-setting-edit").isDisabled(), "busy until core answers");

    const setHere = { ...demo, contributes: { ...demo.contributes, settings: [{ ...demo.contributes.settings[0], set_here: true }, demo.contributes.settings[1]] } };
    await app.emit(listEvent([setHere], { notice: "Set API key of e2e-demo for this workspace. Its MCP servers and hooks get it from the next conversation." }));
    await waitForText(app.page, `${sel("ext-item")}[data-name="e2e-demo"] ${sel("ext-setting")}[data-env="DEMO_API_KEY"] ${sel("ext-setting-state")}`, "set here");
    assert.ok(!(await app.page.content()).includes("s3cret-key"), "the value is nowhere on the page");

    // Remove, from the scope it is set in (the editor opens on it).
    await key.getByTestId("ext-setting-edit").click();
    assert.equal(await key.getByTestId("ext-setting-scope").inputValue(), "workspace");
    await app.page.screenshot({ path: screenshotPath("extensions-setting-editor-light-800.png") });
    await key.getByTestId("ext-setting-remove").click();
    op = await app.waitForOp("set_extension_setting", (a) => a.value === "");
    assert.deepEqual(op.args, { sessionId: "s1", name: "e2e-demo", env_var: "DEMO_API_KEY", value: "", scope: "workspace" });

    // A refusal shows on the row.
    await app.emit({ type: "extension_error", name: "e2e-demo", message: "Extension configuration is currently disabled." });
    await waitForText(app.page, `${sel("ext-item")}[data-name="e2e-demo"] ${sel("ext-error")}`, "Extension configuration is currently disabled.");
    await app.close();
  });

  test("enable and disable everywhere (user) or here (workspace); Update; Uninstall asks first", async () => {
    const app = await env.open({ colorScheme: "dark", viewport: { width: 800, height: 820 } });
    await openPanel(app);
    await app.emit(listEvent([demo, linked]));
    const row = app.page.locator(`${sel("ext-item")}[data-name="e2e-demo"]`);
    await row.waitFor();

    await row.getByTestId("ext-toggle-workspace").click();
    let op = await app.waitForOp("set_extension_enabled");
    assert.deepEqual(op.args, { sessionId: "s1", name: "e2e-demo", enabled: false, scope: "workspace" });
    assert.ok(await row.getByTestId("ext-toggle-user").isDisabled(), "busy until core answers");
    await app.emit(listEvent([{ ...demo, enabled: false, enabled_for_workspace: false }, linked], { notice: "Disabled e2e-demo in this workspace." }));
    await waitForText(app.page, sel("extensions-notice"), "Disabled e2e-demo in this workspace.");
    await app.until(() => document.querySelector('[data-testid="ext-item"][data-name="e2e-demo"]')?.getAttribute("data-enabled") === "false");
    assert.match(await row.innerText(), /Everywhere: on[\s\S]*Here: off/);
    await app.page.screenshot({ path: screenshotPath("extensions-panel-dark-800.png") });

    let from = app.calls.length;
    await row.getByTestId("ext-toggle-user").click();
    op = await app.waitForOp("set_extension_enabled", () => true, { from });
    assert.deepEqual(op.args, { sessionId: "s1", name: "e2e-demo", enabled: false, scope: "user" });
    await app.emit(listEvent([{ ...demo, enabled: false, enabled_for_user: false, enabled_for_workspace: false }, linked]));

    from = app.calls.length;
    await row.getByTestId("ext-update").click();
    op = await app.waitForOp("update_extension", () => true, { from });
    assert.deepEqual(op.args, { sessionId: "s1", name: "e2e-demo" });
    await app.emit({ type: "extension_error", name: "e2e-demo", message: "e2e-demo was installed from a local folder that no longer exists: /home/dev/src/e2e-demo" });
    await waitForText(app.page, `${sel("ext-item")}[data-name="e2e-demo"] ${sel("ext-error")}`, /no longer exists/);

    await row.getByTestId("ext-uninstall").click();
    await row.getByTestId("ext-uninstall-confirm").waitFor();
    await row.getByTestId("ext-uninstall-cancel").click();
    await row.getByTestId("ext-uninstall-confirm").waitFor({ state: "detached" });
    assert.equal(app.calls.filter((c) => c.cmd === "submit" && c.args.op.type === "uninstall_extension").length, 0);
    await row.getByTestId("ext-uninstall").click();
    from = app.calls.length;
    await row.getByTestId("ext-uninstall-confirm-yes").click();
    op = await app.waitForOp("uninstall_extension", () => true, { from });
    assert.deepEqual(op.args, { sessionId: "s1", name: "e2e-demo" });
    await app.emit(listEvent([linked], { notice: "Uninstalled e2e-demo." }));
    await app.until(() => document.querySelectorAll('[data-testid="ext-item"]').length === 1);
    await app.close();
  });
});

describe("install with consent", () => {
  test("the consent screen lists exactly what the preview adds, servers first; Cancel discards; nothing installed before Install", async () => {
    const app = await env.open({ viewport: { width: 800, height: 820 }, config: { chooseFolder: "/home/dev/src/e2e-demo" } });
    await openPanel(app);
    await app.emit(listEvent([]));
    await app.tid("extensions-install-open").click();
    // The native folder dialog fills the field.
    await app.tid("ext-install-browse").click();
    await app.waitForCall("choose_folder");
    await app.until(() => document.querySelector('[data-testid="ext-install-source"]')?.value === "/home/dev/src/e2e-demo");
    await app.tid("ext-install-link").check();
    await app.tid("ext-install-preview").click();
    let op = await app.waitForOp("preview_extension");
    assert.deepEqual(op.args, { sessionId: "s1", spec: { source: "/home/dev/src/e2e-demo", link: true, auto_update: false } });
    await app.emit({ type: "extension_preview", preview_id: "p1", extension: { ...demo, install: undefined, enabled: false, enabled_for_user: false } });

    const consent = app.tid("ext-consent");
    await consent.waitFor();
    const text = (await consent.innerText()).replace(/\s+/g, " ");
    for (const part of [
      "Install e2e-demo 1.2.0?",
      "Nothing is installed yet",
      "From /home/dev/src/e2e-demo (linked in place)",
      "MCP servers it starts",
      "demo-server",
      "python3 /home/dev/.gemini/extensions/e2e-demo/server.py --stdio",
      "/demo:hello",
      "ask_user run_shell_command priority 100",
      "BeforeTool write_file: ./check.sh",
      "this one is /e2e-demo.deploy",
    ]) {
      assert.ok(text.includes(part), `${part} in ${text}`);
    }
    // Servers first: they run programs.
    assert.ok(text.indexOf("MCP servers it starts") < text.indexOf("/demo:hello"), text);
    // A field per setting; the sensitive one hidden.
    assert.equal(await app.tid("ext-consent-setting").count(), 2);
    assert.equal(await app.page.locator(`${sel("ext-consent-setting")}[data-env="DEMO_API_KEY"]`).getAttribute("type"), "password");
    assert.equal(await app.page.locator(`${sel("ext-consent-setting")}[data-env="DEMO_REGION"]`).getAttribute("type"), "text");
    // Where the sensitive one goes, said where it is typed.
    assert.equal(await app.tid("ext-consent-sensitive").count(), 1);
    assert.match(await app.tid("ext-consent-sensitive").innerText(), /kept in your system keyring/);
    assert.equal(app.calls.filter((c) => c.cmd === "submit" && c.args.op.type === "install_extension").length, 0, "nothing installed yet");
    await app.page.screenshot({ path: screenshotPath("extensions-consent-light-800.png") });

    const from = app.calls.length;
    await app.tid("ext-consent-cancel").click();
    op = await app.waitForOp("discard_extension_preview", () => true, { from });
    assert.deepEqual(op.args, { sessionId: "s1", preview_id: "p1" });
    await consent.waitFor({ state: "detached" });
    // Back at the form, the source kept.
    assert.equal(await app.tid("ext-install-source").inputValue(), "/home/dev/src/e2e-demo");
    await app.close();
  });

  test("Install sends the staged preview with the settings; the panel lists the new extension", async () => {
    const app = await env.open({ colorScheme: "dark", viewport: { width: 1440, height: 900 } });
    await openPanel(app);
    await app.emit(listEvent([]));
    await app.tid("extensions-install-open").click();
    await app.tid("ext-install-source").fill("https://github.com/example/e2e-demo.git");
    await app.tid("ext-install-ref").fill("v1.2.0");
    await app.tid("ext-install-source").press("Enter");
    let op = await app.waitForOp("preview_extension");
    assert.deepEqual(op.args, { sessionId: "s1", spec: { source: "https://github.com/example/e2e-demo.git", git_ref: "v1.2.0", link: false, auto_update: false } });
    await app.emit({ type: "extension_preview", preview_id: "p2", extension: demo });
    await app.tid("ext-consent").waitFor();
    await app.page.locator(`${sel("ext-consent-setting")}[data-env="DEMO_API_KEY"]`).fill("s3cret");
    await app.page.screenshot({ path: screenshotPath("extensions-consent-dark-1440.png") });
    await app.tid("ext-consent-install").click();
    op = await app.waitForOp("install_extension");
    assert.deepEqual(op.args, { sessionId: "s1", preview_id: "p2", settings: { DEMO_API_KEY: "s3cret" } });
    // A refusal stays in the consent screen; Install again works.
    await app.emit({ type: "extension_error", name: "e2e-demo", message: "An extension named e2e-demo is already installed." });
    await waitForText(app.page, `${sel("ext-consent")} ${sel("ext-install-error")}`, /already installed/);
    const from = app.calls.length;
    await app.tid("ext-consent-install").click();
    await app.waitForOp("install_extension", () => true, { from });
    await app.emit(listEvent([demo], { notice: "Installed e2e-demo 1.2.0; its server starts now." }));
    await app.tid("ext-consent").waitFor({ state: "detached" });
    await waitForText(app.page, sel("extensions-notice"), /Installed e2e-demo 1\.2\.0/);
    assert.equal(await app.tid("ext-item").count(), 1);
    // The commands it added are asked for again (the `/` completion).
    await app.waitForOp("list_commands", () => true, { from });
    await app.close();
  });

  test("a preview refused keeps the typed source and says why, in place", async () => {
    const app = await env.open();
    await openPanel(app);
    await app.emit(listEvent([]));
    await app.tid("extensions-install-open").click();
    await app.tid("ext-install-preview").click();
    await waitForText(app.page, sel("ext-install-error"), /Type the path of an extension folder/);
    await app.tid("ext-install-source").fill("/home/dev/nothing-here");
    await app.tid("ext-install-preview").click();
    await app.waitForOp("preview_extension");
    await app.emit({ type: "extension_error", message: "/home/dev/nothing-here/gemini-extension.json: no such file" });
    await waitForText(app.page, sel("ext-install-error"), "/home/dev/nothing-here/gemini-extension.json: no such file");
    assert.equal(await app.tid("ext-install-source").inputValue(), "/home/dev/nothing-here");
    assert.equal(await app.tid("ext-install-source").isDisabled(), false);
    await app.close();
  });
});
