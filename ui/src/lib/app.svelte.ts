// The app's state and the actions the UI takes: start/stop sessions, send prompts, answer
// confirmations, switch workspace, model and approval mode. Components read its `$state`
// fields and call its methods; all IPC goes through api.ts.
import * as api from "../api";
import type { ApprovalMode } from "../protocol/ApprovalMode";
import type { ConfirmationOutcome } from "../protocol/ConfirmationOutcome";
import type { Event } from "../protocol/Event";
import type { MemoryFileNode } from "../protocol/MemoryFileNode";
import type { ModelChoice } from "../protocol/ModelChoice";
import type { SessionInfo } from "../protocol/SessionInfo";
import type { SessionSummary } from "../protocol/SessionSummary";
import type { SlashCommandInfo } from "../protocol/SlashCommandInfo";
import { AuthStore } from "./auth.svelte";
import { ChatStore } from "./chat.svelte";
import type { Checkpoint, RestoreChoice } from "./checkpoints.svelte";
import { type Confirmation, ConfirmationQueue } from "./confirmations.svelte";
import { HistoryBrowser } from "./history.svelte";
import { McpStore } from "./mcp.svelte";
import { SettingsStore } from "./settings.svelte";
import { type BuiltIn, builtIn, findCommand, type Invocation, parseSlash, promptHelp } from "./slash";
import type { StatsView } from "./chat.svelte";
import { applyTheme } from "./theme";

/** Settings that a running session picks up by being reloaded (its conversation is kept). */
const RELOAD_KEYS = ["model.name", "context.fileName", "context.includeDirectories", "general.checkpointing.enabled"];

export type ConnectionState = "connecting" | "connected" | "busy" | "disconnected";

export class AppController {
  /** "loading" until app_info answered; then "true", or "error" (mirrored on <body data-ready>). */
  ready = $state<"loading" | "true" | "error">("loading");
  loadError = $state<string | null>(null);
  version = $state("");
  workspace = $state<string | null>(null);

  connecting = $state(true);
  /** Why there is no session (start_session failed), shown in the composer and on Send. */
  disconnectedReason = $state<string | null>(null);
  session = $state.raw<SessionInfo | null>(null);
  model = $state("");
  models = $state.raw<ModelChoice[]>([]);
  approvalMode = $state<ApprovalMode>("default");
  /** A turn is running (from Send until turn_complete). */
  busy = $state(false);

  readonly chat = new ChatStore();
  readonly confirmations = new ConfirmationQueue();
  readonly mcp = new McpStore();
  /** Sign-in screen and account view; a successful sign-in starts a new session. */
  readonly auth = new AuthStore({
    onSignedIn: async (message) => {
      await this.restart(this.model || undefined);
      if (message) this.chat.addNotice("info", message);
    },
    onSignedOut: () => this.signedOut(),
  });
  /** The history browser (Header's History button). */
  readonly history = new HistoryBrowser({
    workspace: () => this.workspace,
    resume: (session) => this.resumeStored(session),
    restore: (session, checkpoint, choice) => this.restoreFromHistory(session, checkpoint, choice),
  });
  /** The list of the folder's checkpoints is open. */
  checkpointsPanelOpen = $state(false);
  /** The MCP panel is open. */
  mcpPanelOpen = $state(false);
  /** The context files in the system instruction (from `memory_loaded`); null until known. */
  memory = $state.raw<{ files: MemoryFileNode[]; chars: number } | null>(null);
  /** The memory view is open (`/memory` or `/memory show`). */
  memoryPanelOpen = $state(false);
  /** Slash commands for the composer's autocomplete (built-in and custom). */
  commands = $state.raw<SlashCommandInfo[]>([]);
  /** The settings screen and the folder's trust (prompt, restricted mode). */
  readonly settings = new SettingsStore({
    settingChanged: (key, value) => this.settingChanged(key, value?.value ?? null),
    trustChanged: () => this.reload(),
    setMcpEnabled: async (name, enabled) => {
      if (!this.session) throw new Error("Start a session first: servers are switched through it.");
      await api.mcpSetServerEnabled(this.session.session_id, name, enabled);
    },
  });
  /** A reload waits for the running turn to end. */
  private reloadPending = false;
  /** Servers whose details (tools, stderr) are expanded in the panel. */
  private expandedServers = new Set<string>();
  /** The views of the `/stats` commands waiting for their `session_stats`, in order. */
  private statsViews: StatsView[] = [];
  /** The ids of `/restore <id>` commands waiting for the checkpoint list. */
  private restoreRequests: string[] = [];
  /** A `/compress` is running (busy until it is answered). */
  private compressing = false;

  /** Bumped per session, so events of a replaced session are ignored. */
  private generation = 0;

  /**
   * The conversation the session records now, as the history knows it: the session's id, or a
   * new one after `/clear` (the session keeps its id for every command).
   */
  get conversationId(): string | null {
    return this.chat.checkpoints.conversationId ?? this.session?.session_id ?? null;
  }

  get connection(): ConnectionState {
    if (this.session) return this.busy ? "busy" : "connected";
    return this.connecting ? "connecting" : "disconnected";
  }

  async boot(): Promise<void> {
    if (!api.inTauri()) {
      this.fail("Not running inside Gemini Desktop");
      return;
    }
    try {
      const info = api.bootInfo() ?? (await api.appInfo());
      performance.mark("app-info");
      this.version = info.version;
      this.workspace = info.workspace;
      this.chat.workspace = info.workspace;
      this.ready = "true";
    } catch (error) {
      this.fail(`Could not load app info: ${api.errorMessage(error)}`);
      return;
    }
    void this.auth.refresh();
    void this.loadTheme();
    try {
      await api.onWorkspaceChanged((path) => void this.workspaceChanged(path));
    } catch (error) {
      this.chat.addNotice("warning", `Folders opened from another launch will not show here: ${api.errorMessage(error)}`);
    }
    await this.startSession(undefined, await this.lastSession());
  }

  /** The session to reopen on this workspace (its newest with messages), if any. */
  private async lastSession(): Promise<string | undefined> {
    if (!this.workspace) return undefined;
    try {
      const last = await api.historyLastSession(this.workspace);
      return last && last.message_count > 0 ? last.id : undefined;
    } catch {
      // No history (e.g. it cannot be opened): start afresh; start_session says why if it matters.
      return undefined;
    }
  }

  /**
   * Continues a stored session from the history browser, in its own folder (opened first when
   * the window is on another one, so its tools work where its conversation happened).
   */
  async resumeStored(session: SessionSummary): Promise<void> {
    if (session.workspace !== this.workspace) {
      let path: string | null;
      try {
        path = await api.openWorkspace(session.workspace);
      } catch (error) {
        this.chat.addNotice("error", `Could not open ${session.workspace}: ${api.errorMessage(error)}`);
        return;
      }
      if (!path) return;
      this.workspace = path;
      this.chat.workspace = path;
    }
    await this.resume(session.id);
  }

  /**
   * Restores an edit's checkpoint from the history browser's transcript. The conversation part
   * applies to the edit's session, so that session is resumed first unless it is the current
   * one; the code alone goes through the current session when it works on the same folder.
   * The answer shows on `checkpoint` (and on the edit's card in the chat, when it is there).
   */
  async restoreFromHistory(session: SessionSummary, checkpoint: Checkpoint, choice: RestoreChoice): Promise<void> {
    checkpoint.begin(choice);
    const current = this.conversationId;
    const sameFolder = session.workspace === this.workspace && current !== null;
    if (current !== session.id && (choice.conversation || !sameFolder)) {
      await this.resumeStored(session);
      if (this.conversationId !== session.id) {
        checkpoint.fail(`Could not restore: the session could not be resumed${this.disconnectedReason ? ` (${this.disconnectedReason})` : ""}.`);
        return;
      }
    }
    const live = this.chat.checkpoints.track(checkpoint);
    if (live === checkpoint) {
      await this.chat.checkpoints.restore(checkpoint, choice);
      return;
    }
    // The chat already shows this checkpoint on its card: restore that one, mirror its answer.
    await this.chat.checkpoints.restore(live, choice);
    await live.settled();
    checkpoint.copyFrom(live);
  }

  /**
   * Continues a stored session (from the history browser): the current session stops, the chat
   * shows the stored one's last messages and the model sees its history.
   */
  async resume(sessionId: string): Promise<void> {
    await this.stopCurrent();
    await this.startSession(this.model || undefined, sessionId);
  }

  /**
   * Stops the current session (if any; its remaining events are ignored) and empties the chat.
   * Returns the stopped session.
   */
  private async stopCurrent(): Promise<SessionInfo | null> {
    const old = this.session;
    this.generation++;
    this.session = null;
    if (old) {
      try {
        await api.stopSession(old.session_id);
      } catch {
        // Already gone (e.g. open_workspace stopped it).
      }
    }
    this.chat.clear();
    this.confirmations.clear();
    return old;
  }

  private fail(message: string): void {
    this.loadError = message;
    this.ready = "error";
    this.connecting = false;
    this.disconnectedReason = message;
  }

  /**
   * Starts a session (optionally with a model), replacing any current one. With `resume` (a
   * stored session's id) it continues that session and shows its last messages; when that
   * fails, a new session starts and a notice says why.
   */
  async startSession(model?: string, resume?: string): Promise<void> {
    const generation = ++this.generation;
    this.session = null;
    this.busy = false;
    this.connecting = true;
    this.disconnectedReason = null;
    this.models = [];
    this.confirmations.clear();
    this.mcp.clear();
    this.memory = null;
    this.commands = [];
    this.statsViews = [];
    this.restoreRequests = [];
    this.compressing = false;
    let info: SessionInfo;
    try {
      info = await api.startSession(
        (event) => {
          if (generation === this.generation) this.onEvent(event);
        },
        model,
        resume,
      );
    } catch (error) {
      if (generation !== this.generation) return;
      if (resume && !isAuthError(error)) {
        this.chat.addNotice("warning", `Could not reopen the last session: ${api.errorMessage(error)}`);
        return this.startSession(model);
      }
      const reason = api.errorMessage(error);
      this.connecting = false;
      this.disconnectedReason = reason;
      if (isAuthError(error)) {
        // No usable credentials (first launch, signed out, sign-in revoked): the sign-in screen
        // says why. It never retries by itself, so a broken sign-in cannot loop.
        void this.auth.showSignIn(reason, { firstRun: true });
      } else {
        this.chat.addNotice("error", reason, { prominent: true, title: "Gemini is not connected" });
      }
      return;
    }
    if (generation !== this.generation) return;
    this.session = info;
    this.chat.checkpoints.sessionId = info.session_id;
    this.chat.checkpoints.conversationId = info.session_id;
    this.connecting = false;
    this.model = info.model;
    this.approvalMode = info.approval_mode;
    if (info.workspace) {
      this.workspace = info.workspace;
      this.chat.workspace = info.workspace;
    }
    for (const warning of info.warnings) this.chat.addNotice("warning", warning);
    // The resumed session keeps its id (info.session_id is `resume`).
    if (resume) await this.loadTranscript(resume, generation);
    // The folder's checkpoints: the list panel, and the cards of a resumed transcript.
    if (generation === this.generation) void this.chat.checkpoints.refresh();
    void this.loadModels(info.session_id, generation);
    void this.loadMcpStatus(info.session_id);
    void this.loadCommands(info.session_id);
    void this.settings.loadTrust();
  }

  /** Applies `ui.theme` from the settings (the system's theme until then, or without it). */
  private async loadTheme(): Promise<void> {
    try {
      const view = await api.settingsGet();
      applyTheme(view.values.find((v) => v.key === "ui.theme")?.value ?? null);
    } catch {
      applyTheme(null);
    }
  }

  /** A setting was written on the settings screen: make it count now where that makes sense. */
  private async settingChanged(key: string, value: unknown): Promise<void> {
    if (key === "ui.theme") {
      applyTheme(value);
    } else if (key === "general.defaultApprovalMode") {
      const mode = value === "auto_edit" ? "auto_edit" : value === "default" || value === null ? "default" : null;
      if (mode && !this.settings.restricted) await this.setApprovalMode(mode);
    } else if (RELOAD_KEYS.includes(key)) {
      await this.reload();
    }
  }

  /**
   * Restarts the session so it reads the settings, commands, MCP servers and context files again
   * (after a trust decision or a settings change), continuing the same conversation. The model
   * comes from the settings again. While a turn runs, the reload waits for its end.
   */
  async reload(): Promise<void> {
    if (this.busy) {
      this.reloadPending = true;
      return;
    }
    this.reloadPending = false;
    const keep = this.chat.items.some((item) => item.kind === "user");
    const old = await this.stopCurrent();
    this.model = "";
    await this.startSession(undefined, keep && old ? old.session_id : undefined);
    void this.loadTheme();
  }

  /** Asks for the slash commands (answered by a `commands` event); again when `/` is typed. */
  async loadCommands(sessionId = this.session?.session_id): Promise<void> {
    if (!sessionId) return;
    try {
      await api.listCommands(sessionId);
    } catch {
      // No autocomplete; typed commands still work.
    }
  }

  /** Shows the last page of a resumed session's transcript in the chat. */
  private async loadTranscript(sessionId: string, generation: number): Promise<void> {
    try {
      const page = await api.historyPage(sessionId, { from: "end" }, 50);
      if (generation === this.generation) this.chat.loadTranscript(page.messages, page.has_before);
    } catch (error) {
      if (generation === this.generation) {
        this.chat.addNotice("warning", `Could not show the resumed conversation: ${api.errorMessage(error)}`);
      }
    }
  }

  /**
   * Asks for the MCP servers' status once per session: the answers come as events, and so do all
   * later changes (the servers started with the session and may still be connecting).
   */
  private async loadMcpStatus(sessionId: string): Promise<void> {
    try {
      await api.mcpStatus(sessionId);
    } catch {
      // The session ended meanwhile; the next one asks again.
    }
  }

  private async loadModels(sessionId: string, generation: number): Promise<void> {
    try {
      const models = await api.listModels(sessionId);
      if (generation === this.generation) this.models = models;
    } catch {
      // The picker is optional: without a model list the header just shows the model.
    }
  }

  /** Stops the current session (if any) and starts a fresh one with an empty chat. */
  async restart(model?: string): Promise<void> {
    await this.stopCurrent();
    await this.startSession(model);
  }

  /** Retries after a failed start, keeping nothing of the failed attempt. */
  async retry(): Promise<void> {
    this.chat.clear();
    await this.startSession(this.model || undefined);
  }

  private onEvent(event: Event): void {
    switch (event.type) {
      case "error":
        if (event.kind === "auth") void this.authFailed(event.message);
        break;
      case "session_configured":
        this.model = event.model;
        break;
      case "turn_started":
        this.busy = true;
        break;
      case "tool_confirmation_request":
        this.confirmations.add(event.call_id, event.name, event.details);
        break;
      case "tool_call_response":
        this.confirmations.remove(event.call_id);
        break;
      case "usage":
        break;
      case "turn_complete":
        this.confirmations.clear();
        if (this.reloadPending) queueMicrotask(() => void this.reload());
        break;
      case "memory_loaded":
        this.memory = { files: event.files, chars: event.chars };
        return;
      case "commands":
        this.commands = event.commands;
        return;
      case "conversation_cleared":
        this.conversationCleared(event.session_id);
        return;
      case "session_stats":
        this.chat.addStats(event.stats, this.statsViews.shift() ?? "session");
        return;
      case "checkpoints": {
        // The chat keeps the list (the checkpoint panel shows it); a `/restore <id>` waits for it.
        this.chat.handle(event);
        const request = this.restoreRequests.shift();
        if (request) this.restoreListed(request);
        return;
      }
      case "chat_compressed":
      case "compression_skipped":
        if (this.compressing) {
          this.compressing = false;
          this.busy = false;
        }
        break;
      case "mcp_server_status":
      case "mcp_discovery":
      case "mcp_server_log": {
        // MCP prompts are slash commands: list them again when a server's prompts change.
        const prompts = event.type === "mcp_server_status" ? this.mcp.servers.find((s) => s.name === event.name)?.prompts : undefined;
        if (event.type === "mcp_server_status" && event.prompts !== (prompts ?? 0)) void this.loadCommands();
        if (event.type === "mcp_discovery" && event.state === "completed") void this.loadCommands();
        const changed = this.mcp.handle(event);
        // A server that changed state may have written to stderr (why it failed): refresh the
        // tail of an expanded one.
        if (changed && this.mcpLogShown(changed)) void this.mcpFetchLog(changed);
        return;
      }
      case "mcp_server_log_changed":
        // The server wrote to stderr (the core sends this at most a few times a second): the
        // tail of an open row follows it live; closed rows fetch nothing.
        if (this.mcpLogShown(event.name)) void this.mcpFetchLog(event.name);
        return;
    }
    const done = this.chat.handle(event);
    if (done) this.busy = false;
  }

  get canSend(): boolean {
    return this.session !== null && !this.busy;
  }

  /** Why Send is disabled (its tooltip), or "" when it is enabled. */
  get sendBlockedReason(): string {
    if (this.session) return this.busy ? "Wait for the current turn to finish, or stop it (Esc)" : "";
    if (this.connecting) return "Agent not connected yet: starting…";
    return `Agent not connected: ${this.disconnectedReason ?? "unknown reason"}`;
  }

  /**
   * Sends a prompt; false when it cannot be sent now. A built-in slash command is carried out
   * here instead (`/clear`, `/compress`, `/stats`, `/mcp`, `/memory`, `/restore`); `/prompt help`
   * of an MCP prompt lists its arguments. Custom commands, MCP prompts and any other text go to
   * the session as typed.
   */
  async send(text: string): Promise<boolean> {
    const session = this.session;
    const prompt = text.trim();
    if (!session || this.busy || !prompt) return false;
    const slash = parseSlash(prompt);
    if (slash) {
      const command = builtIn(slash.name);
      if (command) return this.builtInCommand(command, slash);
      const listed = findCommand(this.commands, slash.name);
      if (listed?.source === "mcp_prompt" && slash.args === "help") {
        this.chat.addNotice("info", promptHelp(listed));
        return true;
      }
    }
    this.chat.addUser(prompt);
    this.busy = true;
    try {
      await api.sendPrompt(session.session_id, prompt);
    } catch (error) {
      this.chat.addNotice("error", api.errorMessage(error));
      this.busy = false;
    }
    return true;
  }

  /** Carries out a built-in command typed in the composer. */
  private async builtInCommand(command: BuiltIn, { args }: Invocation): Promise<boolean> {
    const session = this.session;
    if (!session) return false;
    const [action = "", ...rest] = args.split(/\s+/).filter(Boolean);
    const target = rest.join(" ");
    const run = async (call: () => Promise<void>, what: string): Promise<boolean> => {
      try {
        await call();
        return true;
      } catch (error) {
        this.chat.addNotice("error", `Could not ${what}: ${api.errorMessage(error)}`);
        return false;
      }
    };
    switch (command) {
      case "memory": {
        const memory = /^(\S+)?\s*([\s\S]*)$/.exec(args);
        return this.memoryCommand(memory?.[1] ?? "show", (memory?.[2] ?? "").trim());
      }
      case "clear":
        return run(() => api.clearConversation(session.session_id), "clear the conversation");
      case "compress": {
        const item = this.chat.startCompression();
        this.compressing = true;
        this.busy = true;
        const sent = await run(() => api.compressConversation(session.session_id), "compress the conversation");
        if (!sent) {
          this.compressing = false;
          this.busy = false;
          item.state = "failed";
          item.text = "Failed to compress chat history.";
        }
        return sent;
      }
      case "stats": {
        const view: StatsView = action === "model" || action === "tools" ? action : "session";
        if (action && !["session", "model", "tools"].includes(action)) {
          this.chat.addNotice("warning", `Unknown /stats view "${action}": use session, model or tools.`);
          return false;
        }
        this.statsViews.push(view);
        return run(() => api.sessionStats(session.session_id), "get the statistics");
      }
      case "mcp":
        return this.mcpCommand(action, target);
      case "restore":
        // The checkpoint list (Header's Checkpoints button), fresh; with an id, that one restored.
        if (!args) this.checkpointsPanelOpen = true;
        else this.restoreRequests.push(args);
        return run(() => api.listCheckpoints(session.session_id), "list the checkpoints");
    }
  }

  /**
   * `/mcp [list|desc|schema]` opens the MCP panel; `/mcp auth|enable|disable <server>` act on a
   * server (and open the panel to show it); `/mcp refresh` restarts every server.
   */
  private async mcpCommand(action: string, server: string): Promise<boolean> {
    this.mcpPanelOpen = true;
    const needsServer = (verb: string) => {
      this.chat.addNotice("warning", `Usage: /mcp ${verb} <server name>`);
      return false;
    };
    switch (action) {
      case "":
      case "list":
      case "ls":
      case "desc":
      case "schema":
        return true;
      case "auth":
        if (!server) return needsServer("auth");
        await this.mcpAuthenticate(server);
        return true;
      case "enable":
      case "disable":
        if (!server) return needsServer(action);
        await this.mcpSetEnabled(server, action === "enable");
        return true;
      case "refresh":
      case "reload":
        for (const s of this.mcp.servers) {
          if (s.state !== "disabled" && s.state !== "blocked") await this.mcpRestart(s.name);
        }
        return true;
      default:
        this.chat.addNotice("warning", `Unknown /mcp action "${action}": use list, auth, enable, disable or refresh.`);
        return false;
    }
  }

  /** `/clear` was carried out: an empty screen for the new conversation `conversationId`. */
  private conversationCleared(conversationId: string): void {
    this.chat.clear();
    this.confirmations.clear();
    // The same session goes on (restores are still sent to it); its edits from now on belong to
    // the new conversation, and the folder's checkpoints stay listed.
    this.chat.checkpoints.sessionId = this.session?.session_id ?? null;
    this.chat.checkpoints.conversationId = conversationId;
    void this.chat.checkpoints.refresh();
  }

  /**
   * `/restore <id>` once the checkpoints are listed: the checkpoint with that id (or the only
   * one starting with it) is restored — its files, and its conversation when it is this one's,
   * as Gemini CLI's `/restore <id>` does — in the checkpoint list, which opens to show it.
   */
  private restoreListed(request: string): void {
    const list = this.chat.checkpoints.list;
    const exact = list.find((c) => c.id === request);
    const matches = list.filter((c) => c.id.startsWith(request));
    const chosen = exact ?? (matches.length === 1 ? matches[0] : undefined);
    if (!chosen) {
      this.chat.addNotice(
        "error",
        matches.length > 1 ? `Checkpoint "${request}" is ambiguous: ${matches.length} checkpoints start with it.` : `No checkpoint "${request}": /restore lists them.`,
      );
      return;
    }
    this.checkpointsPanelOpen = true;
    void chosen.restore({ code: true, conversation: chosen.conversationBlocked(this.conversationId) === null });
  }

  /** `/memory show|refresh|add <text>` from the composer. */
  private async memoryCommand(action: string, text: string): Promise<boolean> {
    switch (action) {
      case "show":
        this.memoryPanelOpen = true;
        return true;
      case "refresh":
        this.memoryPanelOpen = true;
        return this.refreshMemory();
      case "add":
        if (!text) {
          this.chat.addNotice("warning", "Usage: /memory add <text to remember>");
          return false;
        }
        return this.addMemory(text);
      default:
        this.chat.addNotice("warning", `Unknown /memory action "${action}": use show, refresh or add <text>.`);
        return false;
    }
  }

  /** Reads the context files again (the view updates on `memory_loaded`). */
  async refreshMemory(): Promise<boolean> {
    const session = this.session;
    if (!session) return false;
    try {
      await api.refreshMemory(session.session_id);
      return true;
    } catch (error) {
      this.chat.addNotice("error", `Could not refresh the memory: ${api.errorMessage(error)}`);
      return false;
    }
  }

  /** Saves a fact to ~/.gemini/GEMINI.md; the memory is refreshed after it. */
  async addMemory(text: string): Promise<boolean> {
    const session = this.session;
    if (!session) return false;
    try {
      await api.addMemory(session.session_id, text);
      this.chat.addNotice("info", `Remembered: ${text}`);
      return true;
    } catch (error) {
      this.chat.addNotice("error", `Could not add the memory: ${api.errorMessage(error)}`);
      return false;
    }
  }

  async interrupt(): Promise<void> {
    const session = this.session;
    if (!session || !this.busy) return;
    try {
      await api.interruptTurn(session.session_id);
    } catch (error) {
      this.chat.addNotice("error", `Could not stop the turn: ${api.errorMessage(error)}`);
    }
  }

  /** Answers a confirmation (the current one unless given). */
  async answer(outcome: ConfirmationOutcome, confirmation = this.confirmations.current): Promise<void> {
    const session = this.session;
    if (!session || !confirmation || confirmation.answering) return;
    let content: string | undefined;
    if (outcome === "proceed_once" && confirmation.editing) outcome = "modify_with_editor";
    if (outcome === "modify_with_editor") content = confirmation.edited;
    confirmation.answering = true;
    try {
      await api.confirmTool(session.session_id, confirmation.callId, outcome, content);
      this.confirmations.remove(confirmation.callId);
    } catch (error) {
      confirmation.answering = false;
      this.chat.addNotice("error", `Could not answer the confirmation: ${api.errorMessage(error)}`);
    }
  }

  approve(c?: Confirmation): Promise<void> {
    return this.answer("proceed_once", c ?? this.confirmations.current);
  }

  reject(c?: Confirmation): Promise<void> {
    return this.answer("cancel", c ?? this.confirmations.current);
  }

  async setApprovalMode(mode: ApprovalMode): Promise<void> {
    const session = this.session;
    const previous = this.approvalMode;
    this.approvalMode = mode;
    if (!session) return;
    try {
      await api.setApprovalMode(session.session_id, mode);
    } catch (error) {
      this.approvalMode = previous;
      this.chat.addNotice("error", `Could not change the approval mode: ${api.errorMessage(error)}`);
    }
  }

  /**
   * A turn failed authentication (e.g. the Google sign-in was revoked): when the credentials
   * are unusable now, show the sign-in screen with the reason.
   */
  private async authFailed(message: string): Promise<void> {
    const status = await this.auth.refresh();
    if (!status || !status.ready || status.last_error?.sign_in_required) {
      // gd-auth's own words (e.g. "Your Google sign-in has expired or was revoked… Sign in
      // again…") rather than the transport's wrapping of them.
      const reason = status?.last_error?.sign_in_required ? status.last_error.message : message;
      await this.auth.showSignIn(reason);
    }
  }

  /** After sign-out: the backend stopped the sessions; forget ours. */
  private signedOut(): void {
    this.generation++;
    this.session = null;
    this.busy = false;
    this.connecting = false;
    this.disconnectedReason = "Signed out: sign in to continue.";
    this.chat.clear();
    this.confirmations.clear();
    this.mcp.clear();
  }

  /** "Open folder…": the native picker; a new folder gets a new session and an empty chat. */
  async openFolder(): Promise<void> {
    let path: string | null;
    try {
      path = await api.openWorkspace();
    } catch (error) {
      this.chat.addNotice("error", `Could not open the folder: ${api.errorMessage(error)}`);
      return;
    }
    if (path) await this.workspaceChanged(path);
  }

  /**
   * The backend's workspace is now `path` (our own `open_workspace`, or a second launch of the
   * app naming a folder): the backend already stopped the old folder's sessions, so show the
   * new folder: its last session reopened, or an empty chat and a new session.
   */
  async workspaceChanged(path: string): Promise<void> {
    if (path === this.workspace) return;
    this.workspace = path;
    this.chat.workspace = path;
    this.generation++;
    this.session = null;
    this.chat.clear();
    this.confirmations.clear();
    void this.loadTheme();
    await this.startSession(this.model || undefined, await this.lastSession());
  }

  /** The MCP panel closed: its rows are collapsed (they open collapsed next time). */
  mcpCollapseAll(): void {
    this.expandedServers.clear();
  }

  /** Whether a server's stderr tail is on screen: the panel is open and its row expanded. */
  private mcpLogShown(name: string): boolean {
    return this.mcpPanelOpen && this.expandedServers.has(name);
  }

  /** Remembers whether a server's details are shown; fetches its stderr tail when expanded. */
  mcpExpand(name: string, expanded: boolean): void {
    if (expanded) {
      this.expandedServers.add(name);
      void this.mcpFetchLog(name);
    } else {
      this.expandedServers.delete(name);
    }
  }

  private async mcpFetchLog(name: string): Promise<void> {
    const session = this.session;
    if (!session) return;
    try {
      await api.mcpServerLog(session.session_id, name);
    } catch {
      // No log to show; the server's status still is.
    }
  }

  /** Runs an MCP panel action, showing its failure under the server. */
  private async mcpAction(name: string, action: (sessionId: string) => Promise<void>): Promise<void> {
    const session = this.session;
    if (!session) return;
    this.mcp.setActionError(name, null);
    try {
      await action(session.session_id);
    } catch (error) {
      this.mcp.setActionError(name, api.errorMessage(error));
    }
  }

  mcpRestart(name: string): Promise<void> {
    return this.mcpAction(name, (id) => api.mcpRestartServer(id, name));
  }

  mcpSetEnabled(name: string, enabled: boolean): Promise<void> {
    return this.mcpAction(name, (id) => api.mcpSetServerEnabled(id, name, enabled));
  }

  mcpAuthenticate(name: string): Promise<void> {
    return this.mcpAction(name, (id) => api.mcpAuthenticate(id, name));
  }

  async switchModel(name: string): Promise<void> {
    if (!name || name === this.model) return;
    this.model = name;
    await this.restart(name);
  }
}

/** A start_session rejection for missing or unusable credentials (CommandError kind `auth`). */
function isAuthError(error: unknown): boolean {
  return !!error && typeof error === "object" && (error as { kind?: unknown }).kind === "auth";
}
