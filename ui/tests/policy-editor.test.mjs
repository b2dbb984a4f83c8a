// The policy editor: opened from the header or /policies, it lists the session's effective rules
// in priority order (tier badge, file:line, TOML; only user/workspace rules editable); the form
// adds a rule through policy_save_rule and every session reloads its policy; the loader's error
// is shown in the form; the dry run sends policy_dry_run and highlights the deciding rule; and
// "…and save" on a confirmation first previews the rule it writes.
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

const WS = "/home/dev/project";
const USER_FILE = "/home/dev/.gemini/policies/auto-saved.toml";
const MINE = "/home/dev/.gemini/policies/mine.toml";

const fields = (over = {}) => ({
  tool_names: [],
  mcp_name: null,
  args_pattern: null,
  command_prefixes: [],
  command_regex: null,
  decision: "allow",
  priority: 0,
  modes: [],
  allow_redirection: false,
  deny_message: null,
  ...over,
});

const rule = (tier, path, line, effective_priority, f, { editable = false, session = false, text = "[[rule]]\n" } = {}) => ({
  tier,
  session,
  path,
  line,
  effective_priority,
  editable,
  fields: fields(f),
  text,
});

const adminDeny = rule("admin", "/etc/gemini-cli/policies/a.toml", 1, 5000, { tool_names: ["web_fetch"], decision: "deny" });
const userPush = rule("user", MINE, 3, 4500, { command_prefixes: ["git push"], decision: "deny", priority: 500, deny_message: "no" }, {
  editable: true,
  text: '[[rule]]\ncommandPrefix = "git push"\ndecision = "deny"\npriority = 500\n',
});
const sessionLs = rule("workspace", "<session>", 1, 3950, { command_prefixes: ["ls"], priority: 950 }, { session: true });
const builtinShell = rule("default", "<built-in>/write.toml", 12, 1010, { tool_names: ["run_shell_command"], decision: "ask_user", priority: 10 });

const policies = (rules, over = {}) => ({ type: "policies", rules, user_file: USER_FILE, errors: [], ...over });

/**
 * The backend's policy commands for this page: `policy_save_rule` refuses the decision "maybe"
 * with the loader's message (naming the line) and writes anything else; `policy_delete_rule`
 * resolves.
 */
function policyBackend() {
  window.__gdExtraIPC = (cmd, args) => {
    if (cmd === "policy_save_rule") {
      if (args.rule.decision === "maybe") {
        throw { kind: "input", message: 'the rule would not load: /home/dev/.gemini/policies/auto-saved.toml:7:12: invalid decision `maybe`: expected "allow", "deny" or "ask_user"' };
      }
      return { path: args.path ?? "/home/dev/.gemini/policies/auto-saved.toml", line: 5, text: "[[rule]]\n" };
    }
    if (cmd === "policy_delete_rule") return null;
    if (cmd === "history_last_session") return null;
    return undefined;
  };
}

async function open() {
  return env.open({ config: { appInfo: { version: "0.1.0", workspace: WS } }, init: [policyBackend] });
}

async function openPanel(app, rules = [adminDeny, userPush, sessionLs, builtinShell]) {
  await app.tid("policies-open").click();
  await app.tid("policy-editor").waitFor();
  await app.waitForOp("list_policies");
  await app.emit(policies(rules));
  await app.page.waitForFunction((n) => document.querySelectorAll('[data-testid="policy-rule"]').length === n, rules.length);
}

const rows = (app) =>
  app.tid("policy-rule").evaluateAll((els) =>
    els.map((e) => [e.dataset.tier, e.querySelector('[data-testid="policy-rule-tier"]').textContent.trim(), e.dataset.source, e.dataset.editable]),
  );

describe("policy editor", () => {
  test("lists the rules in priority order with tier and source; only user/workspace file rules are editable", async () => {
    const app = await open();
    await openPanel(app);
    assert.deepEqual(await rows(app), [
      ["admin", "Admin", "/etc/gemini-cli/policies/a.toml:1", "false"],
      ["user", "User", `${MINE}:3`, "true"],
      ["workspace", "Session", "<session>:1", "false"],
      ["default", "Built-in", "<built-in>/write.toml:12", "false"],
    ]);
    assert.equal(await app.tid("policy-rule-edit").count(), 1);
    assert.equal(await app.tid("policy-rule-delete").count(), 1);
    await app.page.locator(`${sel("policy-rule")}[data-editable="true"] ${sel("policy-rule-toml")}`).click();
    assert.match(await app.page.locator(`${sel("policy-rule")}[data-editable="true"] ${sel("policy-rule-text")}`).innerText(), /commandPrefix = "git push"/);
    await app.tid("policy-editor").screenshot({ path: screenshotPath("policy-editor-light.png") });
    // Esc closes it.
    await app.page.keyboard.press("Escape");
    await app.tid("policy-editor").waitFor({ state: "detached" });
    await app.close();
  });

  // Issue 34, item 10h: the rows showed raw TOML and priorities such as 1.998 that nothing
  // explained. Each rule reads in words (decision, the calls it matches, tier, priority in its
  // tier, the order in the tooltip and the legend); the TOML is behind "Show TOML".
  test("each rule reads in words, its priority within its tier explained; the TOML behind Show TOML", async () => {
    const app = await open();
    const yoloAll = rule("default", "<built-in>/yolo.toml", 5, 1998, { decision: "allow", priority: 998, modes: ["yolo"] }, { text: '[[rule]]\ndecision = "allow"\npriority = 998\nmodes = ["yolo"]\n' });
    await openPanel(app, [adminDeny, userPush, sessionLs, yoloAll, builtinShell]);
    const row = (source) => app.page.locator(`${sel("policy-rule")}[data-source="${source}"]`);
    const words = (source) =>
      row(source).evaluate((el) =>
        ["decision", "summary", "tier", "priority"].map((k) => /** @type {HTMLElement} */ (el.querySelector(`[data-testid="policy-rule-${k}"]`)).innerText),
      );
    assert.deepEqual(await words(`${MINE}:3`), ["Deny", "Shell commands starting with “git push”", "User", "priority 500 in the user tier"]);
    assert.equal(await row(`${MINE}:3`).getByTestId("policy-rule-message").innerText(), "Says: “no”");
    assert.deepEqual(await words("<built-in>/yolo.toml:5"), ["Allow", "Any tool, only in YOLO mode", "Built-in", "priority 998 in the built-in tier"]);
    assert.deepEqual(await words("<built-in>/write.toml:12"), ["Ask first", "run_shell_command", "Built-in", "priority 10 in the built-in tier"]);
    assert.deepEqual(await words("<session>:1"), ["Allow", "Shell commands starting with “ls”", "Session", "priority 950 in the workspace tier"]);
    assert.deepEqual(await words("/etc/gemini-cli/policies/a.toml:1"), ["Deny", "web_fetch", "Admin", "priority 0 in the admin tier"]);
    // The tooltip says how it weighs; the legend says the order once.
    const title = await row("<built-in>/yolo.toml:5").getByTestId("policy-rule-priority").getAttribute("title");
    assert.match(title, /Built-in tier \(rank 1 of 5.*priority 998 within it: weighed as 1\.998 \(tier \+ priority\/1000\)/);
    assert.match(title, /Admin › User › Workspace › Extension › Built-in/);
    assert.match(await app.tid("policy-legend").innerText(), /Admin › User › Workspace › Extension › Built-in rules; within a tier, the higher priority \(0-999\)/);
    // No unexplained decimal weights, and no TOML, on screen until asked for.
    const shown = await app.tid("policy-rules").innerText();
    assert.doesNotMatch(shown, /\b\d\.\d{3}\b/, "no raw effective priorities");
    assert.doesNotMatch(shown, /\[\[rule\]\]/, "no TOML until Show TOML");
    assert.equal(await row(`${MINE}:3`).getByTestId("policy-rule-text").isVisible(), false);
    await row(`${MINE}:3`).getByTestId("policy-rule-toml").click();
    assert.equal(await row(`${MINE}:3`).getByTestId("policy-rule-text").isVisible(), true);
    assert.match(await row(`${MINE}:3`).getByTestId("policy-rule-text").innerText(), /commandPrefix = "git push"/);
    for (const [width, colorScheme] of [
      [800, "dark"],
      [1440, "light"],
    ]) {
      await app.page.emulateMedia({ colorScheme });
      await app.page.setViewportSize({ width, height: 800 });
      // Nothing in a row sticks out of the panel.
      const out = await app.tid("policy-rule").evaluateAll((els) => {
        const panel = document.querySelector('[data-testid="policy-editor"]').getBoundingClientRect();
        return els.flatMap((el) => [...el.querySelectorAll("[data-testid]")].filter((c) => c.getBoundingClientRect().right > panel.right + 0.5).map((c) => c.dataset.testid));
      });
      assert.deepEqual(out, [], `${width}px: nothing outside the panel`);
      await app.tid("policy-editor").screenshot({ path: screenshotPath(`policy-words-${width}-${colorScheme}.png`) });
    }
    await app.close();
  });

  test("/policies opens the editor", async () => {
    const app = await open();
    await app.tid("prompt-input").fill("/policies");
    await app.tid("prompt-input").press("Enter");
    await app.tid("policy-editor").waitFor();
    await app.waitForOp("list_policies");
    assert.equal(app.opsOf("user_turn").length, 0, "no prompt is sent");
    await app.close();
  });

  test("Add rule: the form writes through policy_save_rule and every session reloads", async () => {
    const app = await open();
    await openPanel(app);
    await app.tid("policy-add").click();
    await app.tid("policy-form").waitFor();
    await app.tid("policy-form-prefixes").fill("cargo test\ncargo build");
    await app.tid("policy-form-decision").selectOption("allow");
    await app.tid("policy-form-priority").fill("250");
    await app.page.locator(`${sel("policy-form-mode")}[value="default"]`).check();
    await app.page.locator(`${sel("policy-form-mode")}[value="autoEdit"]`).check();
    await app.tid("policy-form-redirection").check();
    const from = app.calls.length;
    await app.tid("policy-form-save").click();
    const call = await app.waitForCall("policy_save_rule", () => true, { from });
    assert.deepEqual(call.args, {
      workspace: WS,
      tier: "user",
      path: null,
      line: null,
      rule: fields({ command_prefixes: ["cargo test", "cargo build"], priority: 250, modes: ["default", "autoEdit"], allow_redirection: true }),
    });
    await app.waitForOp("reload_policies", () => true, { from });
    await app.tid("policy-form").waitFor({ state: "detached" });
    const added = rule("user", USER_FILE, 5, 4250, { command_prefixes: ["cargo test", "cargo build"], priority: 250 }, { editable: true });
    await app.emit(policies([adminDeny, userPush, added, sessionLs, builtinShell]));
    await app.page.waitForFunction(() => document.querySelectorAll('[data-testid="policy-rule"]').length === 5);
    assert.equal((await rows(app))[2][2], `${USER_FILE}:5`);
    await app.close();
  });

  test("Edit: a rule that would not load shows the loader's error, naming the line; Delete asks first", async () => {
    const app = await open();
    await openPanel(app);
    await app.tid("policy-rule-edit").click();
    assert.equal(await app.tid("policy-form-prefixes").inputValue(), "git push");
    assert.equal(await app.tid("policy-form-deny-message").inputValue(), "no");
    assert.ok(await app.tid("policy-form-tier").isDisabled(), "an existing rule stays in its file");
    // The decision is sent as typed; force an invalid one the way a broken value would arrive.
    await app.tid("policy-form-decision").evaluate((el) => {
      const option = document.createElement("option");
      option.value = "maybe";
      el.append(option);
    });
    await app.tid("policy-form-decision").selectOption("maybe");
    const from = app.calls.length;
    await app.tid("policy-form-save").click();
    const call = await app.waitForCall("policy_save_rule", () => true, { from });
    assert.equal(call.args.path, MINE);
    assert.equal(call.args.line, 3);
    await app.tid("policy-form-error").waitFor();
    assert.match(await app.tid("policy-form-error").innerText(), /auto-saved\.toml:7:12: invalid decision `maybe`/);
    assert.equal(app.opsOf("reload_policies").length, 0, "nothing was written");
    await app.tid("policy-form").screenshot({ path: screenshotPath("policy-form-error-light.png") });
    await app.tid("policy-form-cancel").click();

    await app.tid("policy-rule-delete").click();
    assert.equal(app.callsOf("policy_delete_rule").length, 0);
    await app.tid("policy-rule-delete-confirm").click();
    const deleted = await app.waitForCall("policy_delete_rule");
    assert.deepEqual(deleted.args, { workspace: WS, tier: "user", path: MINE, line: 3 });
    await app.waitForOp("reload_policies");
    await app.close();
  });

  test("dry run: a shell command or a tool call, the decision, the deciding rule highlighted and why", async () => {
    const app = await open();
    await openPanel(app);
    const dry = app.tid("policy-dry-run");
    await dry.getByTestId("policy-dry-run-command").fill("git push origin main");
    await dry.getByTestId("policy-dry-run-go").click();
    const op = await app.waitForOp("policy_dry_run");
    assert.equal(op.args.tool, "run_shell_command");
    assert.deepEqual(op.args.args, { command: "git push origin main" });
    await app.emit({
      type: "policy_dry_run",
      decision: "deny",
      message: "no",
      rule: userPush,
      reason: `The user rule at ${MINE}:3 (priority 500, effective 4.500) is the highest-priority rule that matches run_shell_command in default mode; it says deny.`,
      approval_mode: "default",
    });
    await app.tid("policy-dry-run-result").waitFor();
    assert.equal(await app.tid("policy-dry-run-result").getAttribute("data-decision"), "deny");
    assert.match(await app.tid("policy-dry-run-rule").innerText(), /mine\.toml:3/);
    assert.match(await app.tid("policy-dry-run-reason").innerText(), /effective 4\.500/);
    const lit = await app.page.locator(`${sel("policy-rule")}[data-highlighted="true"]`).getAttribute("data-source");
    assert.equal(lit, `${MINE}:3`);
    await app.tid("policy-editor").screenshot({ path: screenshotPath("policy-dry-run-light.png") });

    // A tool call, in a chosen mode; arguments that are not JSON are refused before sending.
    await dry.getByTestId("policy-dry-run-kind").selectOption("tool");
    await dry.getByTestId("policy-dry-run-tool").fill("write_file");
    await dry.getByTestId("policy-dry-run-args").fill("{not json");
    await dry.getByTestId("policy-dry-run-go").click();
    await app.tid("policy-dry-run-error").waitFor();
    assert.equal(app.opsOf("policy_dry_run").length, 1);
    await dry.getByTestId("policy-dry-run-args").fill('{"file_path": "a.txt", "content": "x"}');
    await dry.getByTestId("policy-dry-run-mode").selectOption("auto_edit");
    await dry.getByTestId("policy-dry-run-go").click();
    const second = await app.waitForOp("policy_dry_run", (a) => a.tool === "write_file");
    assert.deepEqual(second.args.args, { file_path: "a.txt", content: "x" });
    assert.equal(second.args.approval_mode, "auto_edit");
    await app.close();
  });

  test("dark theme", async () => {
    const app = await env.open({ config: { appInfo: { version: "0.1.0", workspace: WS } }, init: [policyBackend], colorScheme: "dark" });
    await openPanel(app);
    await app.tid("policy-editor").screenshot({ path: screenshotPath("policy-editor-dark.png") });
    await app.close();
  });
});

describe("always allow and save", () => {
  const command = "cargo build && wc -l x";
  const text = '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "cargo"\ndecision = "allow"\npriority = 100\n';

  async function pending(withPreview) {
    const app = await open();
    await app.sendPrompt("build it");
    await app.emitAll([
      E.turnStarted(),
      E.toolRequest("x1", "run_shell_command", { command }),
      ...(withPreview ? [{ type: "saved_rule_preview", call_id: "x1", path: USER_FILE, text }] : []),
      E.confirmation("x1", "run_shell_command", E.executeDetails(command, ["cargo", "wc"])),
    ]);
    await app.tid("confirmation").waitFor();
    return app;
  }

  test("…and save shows the rule and its file first; Save answers proceed_always_and_save, Cancel does not", async () => {
    const app = await pending(true);
    await app.tid("always-allow-save").click();
    await app.tid("save-rule-preview").waitFor();
    assert.equal(await app.tid("save-rule-path").innerText(), USER_FILE);
    assert.equal((await app.tid("save-rule-text").innerText()).trimEnd(), text.trimEnd());
    assert.equal(app.opsOf("confirm_tool").length, 0, "nothing is answered before Save");
    await app.tid("confirmation").screenshot({ path: screenshotPath("save-rule-preview-light.png") });
    await app.tid("save-rule-cancel").click();
    await app.tid("save-rule-preview").waitFor({ state: "detached" });
    assert.equal(app.opsOf("confirm_tool").length, 0);

    await app.tid("always-allow-save").click();
    await app.tid("save-rule-confirm").click();
    const call = await app.waitForOp("confirm_tool");
    assert.deepEqual(call.args, { sessionId: "s1", call_id: "x1", outcome: "proceed_always_and_save", content: null });
    await app.close();
  });

  test("without a preview from the session it answers at once, as before", async () => {
    const app = await pending(false);
    await app.tid("always-allow-save").click();
    const call = await app.waitForOp("confirm_tool");
    assert.equal(call.args.outcome, "proceed_always_and_save");
    assert.equal(await app.tid("save-rule-preview").count(), 0);
    await app.close();
  });
});
