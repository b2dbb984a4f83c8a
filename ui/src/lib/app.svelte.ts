// The app controller: it owns the stores (one per concept: session, conversation, confirmations,
// slash commands, panels) and does what spans several of them: start, stop and replace the
// session, send a prompt, follow the workspace, apply settings. Events are dispatched to the
// stores by the one router in events.ts; all IPC goes through api.ts.
import * as api from "../api";
import type { ApprovalMode } from "../protocol/ApprovalMode";
import type { SessionInfo } from "../protocol/SessionInfo";
import type { SessionSummary } from "../protocol/SessionSummary";
import type { SettingField } from "../protocol/SettingField";
import { AuthStore } from "./auth.svelte";
import { ChatStore } from "./chat.svelte";
import type { Checkpoint, RestoreChoice } from "./checkpoints.svelte";
import { ConfirmationQueue } from "./confirmations.svelte";
import { type EventOwners, routeEvent } from "./events";
import { HistoryBrowser } from "./history.svelte";
import { markdown } from "./markdown-loader.svelte";
import { McpStore } from "./mcp.svelte";
import { MemoryStore } from "./memory.svelte";
import { SessionStore } from "./session.svelte";
import { SettingsStore } from "./settings.svelte";
import { SlashCommands } from "./slash-commands.svelte";
import { applyTheme } from "./theme";

export class AppController {
  /** "loading" until app_info answered; then "true", or "error" (mirrored on <body data-ready>). */
  ready = $state<"loading" | "true" | "error">("loading");
  loadError = $state<string | null>(null);
  version = $state("");
  workspace = $state<string | null>(null);

  readonly session = new SessionStore();
  readonly chat = new ChatStore();
  readonly confirmations = new ConfirmationQueue(this.session, (text) => this.chat.addNotice("error", text));
  readonly mcp = new McpStore(this.session, () => void this.slash.load());
  readonly memory = new MemoryStore(this.session, (level, text) => this.chat.addNotice(level, text));
  readonly slash: SlashCommands = new SlashCommands({
    session: this.session,
    chat: this.chat,
    mcp: this.mcp,
    memory: this.memory,
    conversationId: () => this.conversationId,
  });
  /** Sign-in screen and account view; a successful sign-in starts a new session. */
  readonly auth = new AuthStore({
    onSignedIn: async (message) => {
      await this.restart(this.session.model || undefined);
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
  /** The settings screen and the folder's trust (prompt, restricted mode). */
  readonly settings = new SettingsStore({
    settingChanged: (field, value) => this.settingChanged(field, value?.value ?? null),
    trustChanged: () => this.reload(),
    setMcpEnabled: async (name, enabled) => {
      if (!this.session.info) throw new Error("Start a session first: servers are switched through it.");
      await this.session.submit({ type: "mcp_set_server_enabled", name, enabled });
    },
  });
  /** A reload waits for the running turn to end. */
  private reloadPending = false;
  /** Who gets which event of the current session (the one router, events.ts). */
  private readonly owners: EventOwners = {
    session: this.session,
    chat: this.chat,
    confirmations: this.confirmations,
    mcp: this.mcp,
    memory: this.memory,
    slash: this.slash,
    authFailed: (message) => void this.authFailed(message),
    conversationCleared: (id) => this.conversationCleared(id),
    turnEnded: () => {
      if (this.reloadPending) queueMicrotask(() => void this.reload());
    },
  };

  /**
   * The conversation the session records now, as the history knows it: the session's id, or a
   * new one after `/clear` (the session keeps its id for every command).
   */
  get conversationId(): string | null {
    return this.chat.checkpoints.conversationId ?? this.session.id;
  }

  /** Shows `path` as the workspace (header, and tool paths relative to it). */
  private setWorkspace(path: string): void {
    this.workspace = path;
    this.chat.workspace = path;
  }

  async boot(): Promise<void> {
    if (!api.inTauri()) {
      this.fail("Not running inside Gemini Desktop");
      return;
    }
    try {
      const info = api.bootInfo() ?? (await api.commands.appInfo());
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
      const last = await api.commands.historyLastSession({ workspace: this.workspace });
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
        path = await api.commands.openWorkspace({ path: session.workspace });
      } catch (error) {
        this.chat.addNotice("error", `Could not open ${session.workspace}: ${api.errorMessage(error)}`);
        return;
      }
      if (!path) return;
      this.setWorkspace(path);
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
        const reason = this.session.disconnectedReason;
        checkpoint.fail(`Could not restore: the session could not be resumed${reason ? ` (${reason})` : ""}.`);
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
    await this.startSession(this.session.model || undefined, sessionId);
  }

  /** Empties what shows the old session's conversation (chat and pending confirmations). */
  private clearConversation(): void {
    this.chat.clear();
    this.confirmations.clear();
  }

  /**
   * Stops the current session (if any; its remaining events are ignored) and empties the chat.
   * Returns the stopped session.
   */
  private async stopCurrent(): Promise<SessionInfo | null> {
    const old = this.session.drop();
    if (old) {
      try {
        await api.commands.stopSession({ sessionId: old.session_id });
      } catch {
        // Already gone (e.g. open_workspace stopped it).
      }
    }
    this.clearConversation();
    return old;
  }

  private fail(message: string): void {
    this.loadError = message;
    this.ready = "error";
    this.session.disconnected(message);
  }

  /**
   * Starts a session (optionally with a model), replacing any current one. With `resume` (a
   * stored session's id) it continues that session and shows its last messages; when that
   * fails, a new session starts and a notice says why.
   */
  async startSession(model?: string, resume?: string): Promise<void> {
    const generation = this.session.starting();
    this.confirmations.clear();
    this.mcp.clear();
    this.memory.clear();
    this.slash.reset();
    let info: SessionInfo;
    try {
      info = await api.startSession(
        (event) => {
          if (this.session.isCurrent(generation)) routeEvent(this.owners, event);
        },
        model,
        resume,
      );
    } catch (error) {
      if (!this.session.isCurrent(generation)) return;
      if (resume && !isAuthError(error)) {
        this.chat.addNotice("warning", `Could not reopen the last session: ${api.errorMessage(error)}`);
        return this.startSession(model);
      }
      const reason = api.errorMessage(error);
      this.session.disconnected(reason);
      if (isAuthError(error)) {
        // No usable credentials (first launch, signed out, sign-in revoked): the sign-in screen
        // says why. It never retries by itself, so a broken sign-in cannot loop.
        void this.auth.showSignIn(reason, { firstRun: true });
      } else {
        this.chat.addNotice("error", reason, { prominent: true, title: "Gemini is not connected" });
      }
      return;
    }
    if (!this.session.isCurrent(generation)) return;
    this.session.started(info);
    this.chat.checkpoints.sessionId = info.session_id;
    this.chat.checkpoints.conversationId = info.session_id;
    if (info.workspace) this.setWorkspace(info.workspace);
    for (const warning of info.warnings) this.chat.addNotice("warning", warning);
    // The resumed session keeps its id (info.session_id is `resume`).
    if (resume) await this.loadTranscript(resume, generation);
    // The folder's checkpoints: the list panel, and the cards of a resumed transcript.
    if (this.session.isCurrent(generation)) void this.chat.checkpoints.refresh();
    void this.loadModels();
    void this.mcp.loadStatus();
    void this.slash.load();
    void this.settings.loadTrust();
  }

  /** Applies `ui.theme` from the settings (the system's theme until then, or without it). */
  private async loadTheme(): Promise<void> {
    try {
      const view = await api.commands.settingsGet();
      applyTheme(view.values.find((v) => v.key === "ui.theme")?.value ?? null);
    } catch {
      applyTheme(null);
    }
  }

  /**
   * A setting was written on the settings screen: make it count now, as core's description of
   * the field says (`effect`): the window's theme at once, the session's approval mode at once,
   * or a reload of the session (its conversation is kept).
   */
  private async settingChanged(field: SettingField, value: unknown): Promise<void> {
    switch (field.effect) {
      case "window":
        if (field.key === "ui.theme") applyTheme(value);
        return;
      case "session": {
        if (field.key !== "general.defaultApprovalMode") return;
        const mode = value === "auto_edit" ? "auto_edit" : value === "default" || value === null ? "default" : null;
        if (mode && !this.settings.restricted) await this.setApprovalMode(mode);
        return;
      }
      case "reload":
        await this.reload();
        return;
    }
  }

  /**
   * Restarts the session so it reads the settings, commands, MCP servers and context files again
   * (after a trust decision or a settings change), continuing the same conversation. The model
   * comes from the settings again. While a turn runs, the reload waits for its end.
   */
  async reload(): Promise<void> {
    if (this.session.busy) {
      this.reloadPending = true;
      return;
    }
    this.reloadPending = false;
    const keep = this.chat.items.some((item) => item.kind === "user");
    const old = await this.stopCurrent();
    this.session.model = "";
    await this.startSession(undefined, keep && old ? old.session_id : undefined);
    void this.loadTheme();
  }

  /** Shows the last page of a resumed session's transcript in the chat. */
  private async loadTranscript(sessionId: string, generation: number): Promise<void> {
    try {
      // The Markdown renderer and the code languages the transcript uses load meanwhile, so the
      // conversation shows formatted at once (markdown-loader.svelte.ts).
      const [page, renderer] = await Promise.all([
        api.commands.historyPage({ sessionId, from: { from: "end" }, limit: 50, maxBytes: null }),
        markdown.load().catch(() => null),
      ]);
      await renderer?.loadLanguagesOf(page.messages.map((m) => m.text));
      if (this.session.isCurrent(generation)) this.chat.loadTranscript(page.messages, page.has_before);
    } catch (error) {
      if (this.session.isCurrent(generation)) {
        this.chat.addNotice("warning", `Could not show the resumed conversation: ${api.errorMessage(error)}`);
      }
    }
  }

  /** Asks for the model picker's list (answered by a `models` event). */
  private async loadModels(): Promise<void> {
    try {
      await this.session.submit({ type: "list_models" });
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
    await this.startSession(this.session.model || undefined);
  }

  /**
   * Sends a prompt; false when it cannot be sent now. A slash command the UI carries out
   * (slash-commands.svelte.ts) is run instead. Custom commands, MCP prompts and any other text
   * go to the session as typed.
   */
  async send(text: string): Promise<boolean> {
    const prompt = text.trim();
    if (!this.session.canSend || !prompt) return false;
    const handled = await this.slash.run(prompt);
    if (handled !== null) return handled;
    this.chat.addUser(prompt);
    // The answer will need the Markdown renderer: load it while the request is on its way.
    void markdown.load();
    this.session.busy = true;
    try {
      await this.session.submit({ type: "user_turn", items: [{ type: "text", text: prompt }] });
    } catch (error) {
      this.chat.addNotice("error", api.errorMessage(error));
      this.session.busy = false;
    }
    return true;
  }

  /** `/clear` was carried out: an empty screen for the new conversation `conversationId`. */
  private conversationCleared(conversationId: string): void {
    this.clearConversation();
    // The same session goes on (restores are still sent to it); its edits from now on belong to
    // the new conversation, and the folder's checkpoints stay listed.
    this.chat.checkpoints.sessionId = this.session.id;
    this.chat.checkpoints.conversationId = conversationId;
    void this.chat.checkpoints.refresh();
  }

  async interrupt(): Promise<void> {
    if (!this.session.info || !this.session.busy) return;
    try {
      await this.session.submit({ type: "interrupt" });
    } catch (error) {
      this.chat.addNotice("error", `Could not stop the turn: ${api.errorMessage(error)}`);
    }
  }

  /** Changes the session's approval mode at once (from its next tool call, even mid-turn). */
  async setApprovalMode(mode: ApprovalMode): Promise<void> {
    const previous = this.session.approvalMode;
    this.session.approvalMode = mode;
    if (!this.session.info) return;
    try {
      await this.session.submit({ type: "override_turn_context", approval_mode: mode });
    } catch (error) {
      this.session.approvalMode = previous;
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
    this.session.drop();
    this.session.busy = false;
    this.session.disconnected("Signed out: sign in to continue.");
    this.clearConversation();
    this.mcp.clear();
  }

  /** "Open folder…": the native picker; a new folder gets a new session and an empty chat. */
  async openFolder(): Promise<void> {
    let path: string | null;
    try {
      path = await api.commands.openWorkspace({ path: null });
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
    this.setWorkspace(path);
    this.session.drop();
    this.clearConversation();
    void this.loadTheme();
    await this.startSession(this.session.model || undefined, await this.lastSession());
  }

  async switchModel(name: string): Promise<void> {
    if (!name || name === this.session.model) return;
    this.session.model = name;
    await this.restart(name);
  }
}

/** A start_session rejection for missing or unusable credentials (CommandError kind `auth`). */
function isAuthError(error: unknown): boolean {
  return !!error && typeof error === "object" && (error as { kind?: unknown }).kind === "auth";
}
