// Accessibility: axe-core (from node_modules, injected into the page) checks the main views in
// the light and the dark theme: no colour pair below WCAG AA (`color-contrast`) and no other
// serious or critical violation. The views: a chat with messages, tool cards and a pending
// confirmation, the YOLO switch, settings, history, MCP, checkpoints, the shortcut list, the
// trust prompt (unfolded) and the sign-in screen.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { fixture, screenshotPath, setup } from "./support/harness.mjs";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** Backends the views need: an empty history, and (for the sign-in screen) an auth status. */
function backends(signIn) {
  window.__gdExtraIPC = (cmd) => {
    switch (cmd) {
      case "history_last_session":
        return null;
      case "history_list":
      case "history_gemini_cli_sessions":
        return [];
      case "auth_status":
        return {
          active: null,
          chosen_by: null,
          ready: !signIn,
          problem: signIn ? { kind: "sign_in_required", message: "Not configured.", url: null } : null,
          secret_location: null,
          store: { kind: { type: "keyring", backend: "Secret Service" }, fallback_reason: null },
          store_error: null,
          api_key: { in_environment: false, stored: false },
          google: {
            signed_in: false,
            email: null,
            tier_id: null,
            tier_name: null,
            project: null,
            project_source: null,
            name: null,
            token_expires_at: null,
            token_expires_in_secs: null,
            has_refresh_token: false,
            client_configured: true,
            client_source: "environment",
          },
          vertex: { in_environment: false, project: null, location: null, auth: null, stored_key: false, adc_file: null },
          last_error: null,
          notes: [],
          actions: ["switch_method", "sign_in_with_google", "set_api_key", "configure_vertex"],
          sign_in_options: ["google", "api_key", "vertex"],
        };
      default:
        return undefined;
    }
  };
}

/** Runs axe on the page; returns the violations that matter, as readable lines. */
async function audit(app, label) {
  await app.page.evaluate(AXE);
  const results = await app.page.evaluate(async () => {
    // @ts-ignore axe is the injected global
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.slice(0, 6).map((n) => `${n.target.join(" ")}: ${n.failureSummary?.split("\n").slice(1, 2).join(" ")}`),
    }));
  });
  const serious = results.filter((v) => v.id === "color-contrast" || v.impact === "serious" || v.impact === "critical");
  return serious.map((v) => `${label}: ${v.id} (${v.impact})\n    ${v.nodes.join("\n    ")}`);
}

const undecided = {
  workspace: "/home/dev/project",
  folder_name: "project",
  parent: "/home/dev",
  parent_name: "dev",
  enabled: true,
  trusted: null,
  source: null,
  rule_path: null,
  rule_level: null,
  file: "/home/dev/.gemini/trustedFolders.json",
  error: null,
  discovered: { commands: ["/deploy"], mcp_servers: ["github"], settings: ["model"], context_files: ["GEMINI.md"], env_file: false },
};

/** A chat with an answer (Markdown, code), a thought, finished tool cards and an edit to confirm. */
async function chat(app) {
  const diffs = fixture("diffs.json");
  const edit = diffs.two_hunks;
  await app.sendPrompt("Fix the bug and run the tests");
  await app.emitAll([
    E.turnStarted(),
    E.thought("Planning", "Looking at the code first."),
    E.delta("Here is the plan:\n\n- read `src/lib.rs`\n- fix it\n\n```rust\nfn main() { println!(\"hi\"); }\n```\n"),
    E.toolRequest("r1", "read_file", { file_path: "/home/dev/project/src/lib.rs" }),
    E.toolState("r1", "success"),
    E.toolResponse("r1", "read_file", "success", "Read 12 lines"),
    E.toolRequest("s1", "run_shell_command", { command: "cargo test" }),
    E.toolOutput("s1", "running 3 tests\ntest ok\n"),
    E.toolResponse("s1", "run_shell_command", "error", null, "exit code 101"),
    E.toolRequest("e1", "replace", { file_path: `/home/dev/project/src/${edit.file_name}` }),
    E.toolState("e1", "awaiting_approval"),
    E.confirmation("e1", "replace", E.editDetails(edit)),
  ]);
  await app.tid("confirmation").waitFor();
}

const VIEWS = [
  ["chat with tool cards and a confirmation", {}, chat],
  [
    "YOLO approval switch",
    {},
    async (app) => {
      await app.tid("approval-mode").selectOption("yolo");
      await app.until(() => document.querySelector('[data-testid="app"]')?.getAttribute("data-mode") === "yolo");
      // WebKitGTK paints a select with the native look as a light grey GTK button, under the
      // white YOLO text (what a user saw): the switch must draw its own.
      const look = await app.tid("approval-mode").evaluate((el) => [getComputedStyle(el).appearance, getComputedStyle(el).backgroundColor]);
      assert.deepEqual(look, ["none", "rgba(0, 0, 0, 0)"]);
    },
  ],
  ["settings", {}, (app) => app.tid("settings-open").click().then(() => app.tid("settings-panel").waitFor())],
  ["history", {}, (app) => app.tid("history-open").click().then(() => app.tid("history-panel").waitFor())],
  [
    "MCP",
    { config: { mcpServers: [E.mcpStatus("tiny"), E.mcpStatus("broken", { state: "error", tools: 0, tool_list: [], error: "connection refused" })] } },
    (app) => app.tid("mcp-open").click().then(() => app.tid("mcp-panel").waitFor()),
  ],
  [
    "checkpoints",
    {},
    async (app) => {
      await app.emit(E.checkpoints([E.checkpointInfo("cp-1", { call_id: "c1", session_id: "s1", files: ["a.txt"] })]));
      await app.tid("checkpoints-open").click();
      await app.tid("checkpoints-panel").waitFor();
    },
  ],
  ["shortcut list", {}, (app) => app.page.keyboard.press("Control+/").then(() => app.tid("shortcuts").waitFor())],
  [
    "trust prompt",
    { config: { trust: undecided } },
    (app) => app.tid("trust-details").click().then(() => app.tid("trust-restricted").waitFor()),
  ],
  [
    "sign-in",
    { signIn: true, session: false, config: { startError: { kind: "auth", message: "Not configured." } } },
    async (app) => {
      await app.tid("signin-screen").waitFor();
      await app.tid("signin-api-key").click();
    },
  ],
];

describe("accessibility (axe-core)", () => {
  for (const colorScheme of ["light", "dark"]) {
    test(`${colorScheme}: no contrast or other serious violations in the main views`, async () => {
      const problems = [];
      for (const [name, { signIn = false, ...options }, show] of VIEWS) {
        const app = await env.open({ ...options, colorScheme, init: [backends, signIn] });
        await show(app);
        problems.push(...(await audit(app, name)));
        if (name.startsWith("chat") || name.startsWith("YOLO")) {
          await app.page.screenshot({ path: screenshotPath(`a11y-${name.split(" ")[0]}-${colorScheme}.png`) });
        }
        await app.close();
      }
      assert.deepEqual(problems, [], problems.join("\n"));
    });
  }
});
