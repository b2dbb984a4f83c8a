// The Tauri backend, mocked for UI tests. Bundled (IIFE) by tests/support/harness.mjs and
// injected with Playwright's addInitScript before the app's own script runs.
//
// `mockIPC` from @tauri-apps/api/mocks installs `window.__TAURI_INTERNALS__` (invoke,
// transformCallback, runCallback). A `Channel` passed to `start_session` arrives as the Channel
// object itself; its `id` is a registered callback, and the real backend delivers messages to it
// as `{ index, message }` — so does `__gd.emit`.
import { mockIPC } from "@tauri-apps/api/mocks";

interface MockConfig {
  appInfo?: { version: string; workspace: string | null };
  appInfoError?: unknown;
  /** The update commands' answers (updates are off when unset). */
  updates?: {
    manifestUrl?: string;
    suggestedUrl?: string;
    check?: unknown;
    checkError?: string;
    done?: unknown;
    installError?: string;
  };
  session?: Record<string, unknown>;
  startError?: unknown;
  models?: { name: string; display_name: string }[];
  openWorkspace?: string | null;
  /** What `choose_folder` answers (the dialog cancelled when unset). */
  chooseFolder?: string | null;
  /** MCP server statuses `mcp_status` answers with (as events on the session channel). */
  mcpServers?: Record<string, unknown>[];
  /** The rejection of `mcp_authenticate` (resolves when unset). */
  mcpAuthError?: unknown;
  /** The rejection of `restore_checkpoint` (resolves when unset; the answer is an event). */
  restoreError?: unknown;
  /** What `trust_status` answers (a trusted folder when unset). */
  trust?: Record<string, unknown>;
  /** What `settings_get` answers (nothing set when unset); `settings_set` edits it. */
  settings?: SettingsViewMock;
  /** Rejections of `settings_set` by key (e.g. a broken file). */
  settingsSetErrors?: Record<string, unknown>;
}

interface SettingValueMock {
  key: string;
  value: unknown;
  source: string | null;
  /** Filled in like core's `in_force` when a test leaves them out. */
  effective?: unknown;
  origin?: string;
  env_var?: string | null;
  user: unknown;
  workspace: unknown;
}

interface SettingsViewMock {
  /** Core's fields; filled in with SETTING_FIELDS when a test leaves them out. */
  fields?: unknown[];
  layers: { layer: string; path: string; exists: boolean; loaded: boolean; error: string | null }[];
  values: SettingValueMock[];
  mcp_servers: { name: string; source: string; enabled: boolean }[];
  workspace_trusted: boolean;
}

/** Core's built-in slash commands (crates/core/src/commands/mod.rs), as `list_commands` lists them. */
const BUILT_IN_COMMANDS: [string, string[], string][] = [
  ["clear", ["new"], "Clear the screen and start a new conversation"],
  ["compress", ["summarize", "compact"], "Replace the conversation so far with a summary, to save context"],
  ["memory", [], "Show, refresh or add to the memory (GEMINI.md): /memory show|refresh|add <text>"],
  ["mcp", [], "MCP servers, their state and tools: /mcp [list|auth|enable|disable|refresh] [server]"],
  ["stats", ["usage"], "Session statistics: time, tokens per model, tool calls. /stats [session|model|tools]"],
  ["restore", [], "List the checkpoints taken before edits, or restore one: /restore [id]"],
  ["policies", [], "The policy rules of every tier: edit them, and test which rule decides a call"],
  ["agents", [], "The agents invoke_agent can run, and definition files with errors"],
  ["skills", [], "The agent skills: list them, enable or disable them"],
  ["hooks", [], "The configured hooks and their last runs: /hooks [list|enable|disable] [name]"],
  ["extensions", [], "Installed extensions: list, install, enable or disable, update, uninstall"],
];

/** Core's settings screen fields (crates/core/src/settings_screen.rs), as `settings_get` sends them. */
const SETTING_FIELDS = [
  field("model.name", "Model", "The model sessions use (unless GEMINI_MODEL is set).", "text", [], "gemini-2.5-pro", "The session reloads with it; the conversation continues.", "reload"),
  field(
    "general.defaultApprovalMode",
    "Default approval mode",
    "Whether edits ask first. YOLO can only be chosen for a session, in the header.",
    "select",
    [
      ["default", "Ask first (default)"],
      ["auto_edit", "Auto-edit"],
      ["plan", "Plan (research and plan before any change)"],
    ],
    null,
    "Applies to this session now.",
    "session",
  ),
  field("ui.theme", "Theme", "Light, dark, or follow the system.", "select", [["system", "System"], ["light", "Light"], ["dark", "Dark"]], null, "Applies at once.", "window"),
  field(
    "ui.desktopNotifications",
    "Notifications",
    "When a conversation needs you while you look elsewhere: a desktop notification (click it to open the conversation). Gemini Desktop only.",
    "select",
    [
      ["all", "Approvals, finished and failed turns"],
      ["approvals", "Approvals only"],
      ["off", "Off"],
    ],
    null,
    "Applies at once.",
    "window",
  ),
  field("context.fileName", "Context file names", "The instruction files read into the system prompt, comma-separated.", "names", [], "GEMINI.md, AGENTS.md", "The session reloads and reads them.", "reload"),
  field(
    "context.includeDirectories",
    "Include directories",
    "More folders the agent may work in, one per line (relative to the workspace or absolute).",
    "lines",
    [],
    "../shared-lib",
    "The session reloads with them.",
    "reload",
  ),
  field("general.checkpointing.enabled", "Checkpoints before edits", "Snapshot the files before each edit, so it can be restored.", "toggle", [], null, "The session reloads with it.", "reload"),
  field(
    "general.maxAttempts",
    "Retry attempts",
    "Attempts per model request when the service fails or is busy, the first included (1 to 10).",
    "number",
    [],
    "10",
    "The session reloads with it.",
    "reload",
  ),
  field(
    "tools.truncateToolOutputThreshold",
    "Tool output sent to the model",
    "Characters of a tool's output the model gets; the whole output is saved to a file it can read. 0 sends everything.",
    "number",
    [],
    "40000",
    "The session reloads with it.",
    "reload",
  ),
  field(
    "tools.shell.inactivityTimeout",
    "Stop silent commands after (seconds)",
    "A shell command with no output for this long is stopped. 0 waits forever.",
    "number",
    [],
    "300",
    "The session reloads with it.",
    "reload",
  ),
  field(
    "tools.allowed",
    "Tools that run without asking",
    "One tool name per line; run_shell_command(git status) allows that command only (other shell commands are then refused).",
    "lines",
    [],
    "run_shell_command(git status)",
    "The session reloads with it.",
    "reload",
  ),
  field("security.toolSandboxing", "Tool sandboxing", "Commands the agent runs are confined (bubblewrap): they write only in the workspace and a private /tmp, cannot read your keys and credentials, and have no network unless you allow it. A project's settings can turn it on, never off.", "toggle", [], null, "The session reloads with it.", "reload"),
  field("security.disableYoloMode", "Disable YOLO mode", "YOLO (approve everything) cannot be chosen, for this app and Gemini CLI.", "toggle", [], null, "The session reloads with it.", "reload"),
  field("general.sessionRetention.enabled", "Delete old conversations", "Delete conversations older than the age below (the open one is kept).", "toggle", [], null, "Applies when a conversation opens.", "reload"),
  field(
    "general.sessionRetention.maxAge",
    "Delete conversations older than",
    "A number and a unit: h (hours), d (days), w (weeks), m (months of 30 days); at least 1d.",
    "text",
    [],
    "30d",
    "Applies when a conversation opens.",
    "reload",
  ),
];

function field(key: string, label: string, help: string, kind: string, choices: [string, string][], placeholder: string | null, applies: string, effect: string) {
  return { key, label, help, kind, choices: choices.map(([value, label]) => ({ value, label })), placeholder, applies, effect };
}

const SETTING_KEYS = SETTING_FIELDS.map((f) => f.key);

/** Core's `settings_screen::default_value` for the desktop app. */
const SETTING_DEFAULTS: Record<string, unknown> = {
  "model.name": "gemini-2.5-pro",
  "general.defaultApprovalMode": "default",
  "ui.theme": "system",
  "ui.desktopNotifications": "all",
  "context.fileName": ["GEMINI.md"],
  "context.includeDirectories": [],
  "general.checkpointing.enabled": true,
  "general.maxAttempts": 10,
  "tools.truncateToolOutputThreshold": 40000,
  "tools.shell.inactivityTimeout": 300,
  "tools.allowed": [],
  "security.toolSandboxing": false,
  "security.disableYoloMode": false,
  "general.sessionRetention.enabled": false,
  "general.sessionRetention.maxAge": "30d",
};

/** The value in force and its origin, as core computes them (no environment here). */
function inForce(entry: SettingValueMock): SettingValueMock {
  if (entry.origin === "env") return entry;
  const set = entry.value !== null && entry.source !== null;
  return {
    ...entry,
    effective: set ? entry.value : (SETTING_DEFAULTS[entry.key] ?? null),
    origin: set ? (entry.source as string) : "default",
    env_var: null,
  };
}

function defaultSettings(): SettingsViewMock {
  return {
    layers: [
      { layer: "system_defaults", path: "/etc/gemini-cli/system-defaults.json", exists: false, loaded: true, error: null },
      { layer: "user", path: "/home/dev/.gemini/settings.json", exists: true, loaded: true, error: null },
      { layer: "workspace", path: "/home/dev/project/.gemini/settings.json", exists: false, loaded: true, error: null },
      { layer: "system", path: "/etc/gemini-cli/settings.json", exists: false, loaded: true, error: null },
    ],
    values: SETTING_KEYS.map((key) => ({ key, value: null, source: null, user: null, workspace: null })),
    mcp_servers: [],
    workspace_trusted: true,
  };
}

/** Like the backend: the workspace value wins over the user's while the workspace is trusted. */
function setMockSetting(view: SettingsViewMock, scope: "user" | "workspace", key: string, value: unknown): void {
  let entry = view.values.find((v) => v.key === key);
  if (!entry) {
    entry = { key, value: null, source: null, user: null, workspace: null };
    view.values.push(entry);
  }
  entry[scope] = value;
  const ws = view.workspace_trusted ? entry.workspace : null;
  entry.value = ws ?? entry.user ?? null;
  entry.source = ws !== null ? "workspace" : entry.user !== null ? "user" : null;
  Object.assign(entry, inForce({ ...entry, origin: undefined }));
}

interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

declare global {
  interface Window {
    __GD_MOCK_CONFIG__?: MockConfig;
    __gdReport?: (cmd: string, args: unknown) => Promise<void>;
    /**
     * A test's own commands (installed with the harness's `init` option): consulted first; a
     * result other than `undefined` (or a throw) answers the invoke, `undefined` falls through.
     */
    __gdExtraIPC?: (cmd: string, args: Record<string, unknown>) => Promise<unknown> | unknown;
    __gd: {
      emitAppEvent: (event: string, payload: unknown) => void;
      config: MockConfig;
      calls: Call[];
      emit: (event: unknown) => void;
      emitAll: (events: unknown[]) => void;
      channels: number[];
      /** Delivers a message to any Channel (e.g. one a test's extra handler received). */
      emitTo: (channel: number, message: unknown) => void;
      cspViolations: string[];
      sessions: number;
    };
    isTauri?: boolean;
    __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void };
  }
}

const config: MockConfig = window.__GD_MOCK_CONFIG__ ?? {};
const channels: number[] = [];
const nextIndex = new Map<number, number>();
const calls: Call[] = [];
const cspViolations: string[] = [];

document.addEventListener("securitypolicyviolation", (e) => {
  cspViolations.push(`${e.violatedDirective}: ${e.blockedURI} ${e.sample} at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`);
});

/** Arguments as plain JSON (a Channel becomes "__CHANNEL__:<id>"). */
function plain(args: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (args && typeof args === "object") {
    for (const [k, v] of Object.entries(args as Record<string, unknown>)) {
      out[k] = v && typeof v === "object" && "id" in v && typeof (v as { id: unknown }).id === "number" && k === "onEvent"
        ? `__CHANNEL__:${(v as { id: number }).id}`
        : v;
    }
  }
  return JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
}

/** The commands of the last `commands` event a test sent (what `list_commands` lists then). */
let listedCommands: unknown[] | null = null;

function emitTo(channel: number, event: unknown): void {
  if (event && typeof event === "object" && (event as { type?: unknown }).type === "commands") {
    listedCommands = (event as { commands: unknown[] }).commands;
  }
  // The sandbox's state a test sent is what the mock's own `turn_context`s say from then on.
  if (event && typeof event === "object" && (event as { type?: unknown }).type === "turn_context" && "sandbox" in event) {
    turnContext.sandbox = (event as { sandbox: unknown }).sandbox;
  }
  const index = nextIndex.get(channel) ?? 0;
  nextIndex.set(channel, index + 1);
  window.__TAURI_INTERNALS__.runCallback(channel, { index, message: event });
}

let sessions = 0;
let settingsView: SettingsViewMock = config.settings ?? defaultSettings();
let trust: Record<string, unknown> = config.trust ?? {
  workspace: "/home/dev/project",
  folder_name: "project",
  parent: "/home/dev",
  parent_name: "dev",
  enabled: true,
  trusted: true,
  source: "file",
  rule_path: "/home/dev/project",
  rule_level: "TRUST_FOLDER",
  file: "/home/dev/.gemini/trustedFolders.json",
  error: null,
  discovered: { commands: [], mcp_servers: [], settings: [], context_files: [], env_file: false },
};
let workspace: string | null = config.appInfo ? config.appInfo.workspace : "/home/dev/project";

/** The latest session's approval mode and model (what `override_turn_context` changes). */
const turnContext: { approval_mode: string; model: string; review_mode: boolean; sandbox?: unknown } = {
  approval_mode: "default",
  model: "gemini-2.5-pro",
  review_mode: false,
};

/** Core's `list_commands` answer: its built-in commands, or the list a test sent last. */
function listedOrBuiltIn(): unknown[] {
  return (
    listedCommands ??
    BUILT_IN_COMMANDS.map(([name, alt_names, description]) => ({ name, alt_names, description, source: "built_in", server: null, arguments: [] }))
  );
}

/**
 * A session op (`submit`), answered as the backend does: the invoke resolves, and an op that has
 * an answer sends it as events on the session's channel.
 */
function submit(op: { type: string } & Record<string, unknown>): null {
  switch (op.type) {
    case "mcp_status": {
      // One `mcp_server_status` per server, then `mcp_discovery` (after the invoke answered).
      const servers = config.mcpServers ?? [];
      setTimeout(() => {
        for (const status of servers) window.__gd.emit({ type: "mcp_server_status", ...status });
        window.__gd.emit({ type: "mcp_discovery", state: "completed" });
      }, 0);
      return null;
    }
    case "list_commands":
      // A test may send its own list after this one (its MCP prompts and custom commands).
      window.__gd.emit({ type: "commands", commands: listedOrBuiltIn() });
      return null;
    case "mcp_authenticate":
      if (config.mcpAuthError) throw config.mcpAuthError;
      return null;
    case "restore_checkpoint":
      if (config.restoreError) throw config.restoreError;
      return null;
    case "list_models":
      window.__gd.emit({ type: "models", models: config.models ?? [] });
      return null;
    case "override_turn_context":
      // Takes effect at once; `turn_context` says what is in force now.
      if (typeof op.approval_mode === "string") turnContext.approval_mode = op.approval_mode;
      if (typeof op.model === "string") turnContext.model = op.model;
      if (typeof op.review_mode === "boolean") turnContext.review_mode = op.review_mode;
      window.__gd.emit({ type: "turn_context", ...turnContext });
      return null;
    default:
      // The other ops' answers (if any) are sent by the test.
      return null;
  }
}

mockIPC(async (cmd, args) => {
  const call = { cmd, args: plain(args) };
  calls.push(call);
  // Tell the test (page.exposeFunction); it sees every invoke in order.
  await window.__gdReport?.(cmd, call.args);
  const extra = await window.__gdExtraIPC?.(cmd, (args ?? {}) as Record<string, unknown>);
  if (extra !== undefined) return extra;
  switch (cmd) {
    case "app_info":
      if (config.appInfoError) throw config.appInfoError;
      return { version: config.appInfo?.version ?? "0.1.0", commit: "0123456789ab", workspace };
    // Updates: off unless a test sets `config.updates` (what update_status/check/install answer).
    case "update_status":
      return {
        version: config.appInfo?.version ?? "0.1.0",
        commit: "0123456789ab",
        manifestUrl: config.updates?.manifestUrl ?? null,
        suggestedUrl: config.updates?.suggestedUrl ?? null,
        canVerify: true,
        install: { kind: "download" },
        problem: null,
      };
    case "update_check":
      if (config.updates?.checkError) throw { kind: "update", message: config.updates.checkError };
      return config.updates?.check ?? { kind: "off" };
    case "update_install":
      if (config.updates?.installError) throw { kind: "update", message: config.updates.installError };
      return config.updates?.done;
    case "start_session": {
      const channel = (args as { onEvent: { id: number } }).onEvent.id;
      channels.push(channel);
      if (config.startError) throw config.startError;
      sessions += 1;
      window.__gd.sessions = sessions;
      const model = ((args as { model?: string | null }).model ?? null) || "gemini-2.5-pro";
      // Like the backend, a resumed session keeps its stored id.
      const resume = (args as { resume?: string | null }).resume ?? null;
      const info = {
        session_id: resume ?? `s${sessions}`,
        model,
        auth: "gemini-api-key",
        approval_mode: "default",
        // A conversation on another folder names it; else the window's.
        workspace: (args as { workspace?: string | null }).workspace ?? workspace,
        warnings: [],
        ...config.session,
        ...(sessions > 1 ? { model } : {}),
      };
      Object.assign(turnContext, { approval_mode: info.approval_mode, model: info.model });
      return info;
    }
    case "choose_folder":
      return config.chooseFolder ?? null;
    case "open_workspace": {
      const picked = (args as { path?: string | null }).path ?? config.openWorkspace ?? null;
      if (picked) workspace = picked;
      return picked;
    }
    case "trust_status":
      return trust;
    case "trust_folder": {
      const level = (args as { level: string }).level;
      trust = { ...trust, trusted: level !== "DO_NOT_TRUST", source: "file", rule_path: trust.workspace, rule_level: level };
      settingsView = {
        ...settingsView,
        workspace_trusted: level !== "DO_NOT_TRUST",
        layers: settingsView.layers.map((l) => (l.layer === "workspace" ? { ...l, loaded: level !== "DO_NOT_TRUST" } : l)),
      };
      return trust;
    }
    case "settings_get":
      settingsView = { ...settingsView, fields: settingsView.fields ?? SETTING_FIELDS, values: settingsView.values.map(inForce) };
      return settingsView;
    case "settings_set": {
      const { scope, key, value } = args as { scope: "user" | "workspace"; key: string; value: unknown };
      const error = config.settingsSetErrors?.[key];
      if (error) throw error;
      setMockSetting(settingsView, scope, key, value ?? null);
      settingsView = { ...settingsView, fields: settingsView.fields ?? SETTING_FIELDS, values: [...settingsView.values] };
      return settingsView;
    }
    case "submit":
      return submit((args as { op: { type: string } & Record<string, unknown> }).op);
    case "stop_session":
    case "plugin:opener|open_url":
      return null;
    case "plugin:event|listen": {
      // The UI listens for `workspace-changed` and `attention-open`; tests fire them with
      // `__gd.emitAppEvent`.
      const { event, handler } = args as { event: string; handler: number };
      appListeners.push({ event, handler });
      return appListeners.length;
    }
    case "attention_notify":
    case "attention_clear":
      return null;
    case "plugin:event|unlisten":
      return null;
    case "ui_ready":
      return null;
    default:
      throw { kind: "input", message: `unknown command ${cmd}` };
  }
});
window.isTauri = true;

/** The UI's listeners of backend events (`plugin:event|listen`). */
const appListeners: { event: string; handler: number }[] = [];

window.__gd = {
  /** Fires a backend event (e.g. `attention-open`) at the UI's listeners of it. */
  emitAppEvent(event: string, payload: unknown) {
    for (const l of appListeners) {
      if (l.event === event) window.__TAURI_INTERNALS__.runCallback(l.handler, { event, id: 0, payload });
    }
  },
  config,
  calls,
  channels,
  emitTo,
  cspViolations,
  sessions: 0,
  /** Delivers an event to the latest session's channel. */
  emit(event) {
    const channel = channels[channels.length - 1];
    if (channel === undefined) throw new Error("no session channel yet");
    emitTo(channel, event);
  },
  emitAll(events) {
    for (const event of events) window.__gd.emit(event);
  },
};

export {};
