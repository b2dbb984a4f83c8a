// The app controller: it owns the window's conversations (conversation.svelte.ts: each a live
// session with its own stores) and what is shared by all of them: sign-in, the history browser,
// the settings, the theme. The conversation shown is `active`; `session`, `chat`, … are its
// stores, so the components bind to whichever conversation is shown. Events are dispatched to a
// conversation's stores by the one router in events.ts; all IPC goes through api.ts.
import * as api from "../api";
import type { ApprovalMode } from "../protocol/ApprovalMode";
import type { SessionSummary } from "../protocol/SessionSummary";
import type { SettingField } from "../protocol/SettingField";
import { Attention } from "./attention.svelte";
import { AuthStore } from "./auth.svelte";
import type { Checkpoint, RestoreChoice } from "./checkpoints.svelte";
import { Conversation, type ConversationHost } from "./conversation.svelte";
import { HistoryBrowser } from "./history.svelte";
import { SettingsStore } from "./settings.svelte";
import { applyTheme, themeChoice } from "./theme";
import { UpdatesStore } from "./updates.svelte";

export class AppController {
  /** "loading" until app_info answered; then "true", or "error" (mirrored on <body data-ready>). */
  ready = $state<"loading" | "true" | "error">("loading");
  loadError = $state<string | null>(null);
  version = $state("");

  /** The window's conversations, in sidebar order; never empty. */
  conversations = $state.raw<Conversation[]>([]);
  /** The conversation shown. */
  active = $state.raw<Conversation>(null as unknown as Conversation);
  /**
   * The user collapsed (true) or opened (false) the sidebar; null until they choose, when it
   * follows the window's width (collapsed under 900 px, where the chat needs the room).
   */
  sidebarCollapsed = $state<boolean | null>(null);
  /** The approval inbox (every conversation's pending tool calls) is open. */
  inboxOpen = $state(false);
  /**
   * This window hosts one conversation moved out of the main window (`?attach=<session id>`):
   * no sidebar, a "Move back" button instead.
   */
  readonly detached: string | null =
    typeof location === "undefined" ? null : new URLSearchParams(location.search).get("attach");

  private readonly host: ConversationHost = {
    authFailed: (message) => void this.authFailed(message),
    signInNeeded: (reason) => void this.auth.showSignIn(reason, { firstRun: true }),
    started: (conversation) => {
      if (conversation === this.active) void this.settings.loadTrust();
    },
    needsUser: (conversation, reason, detail) => {
      this.attention.call(conversation, conversation === this.active, reason, detail);
    },
  };
  /** Calling the user back when a conversation needs them (notifications, urgency hint). */
  readonly attention = new Attention(() => this.pendingApprovals);

  /** Sign-in screen and account view; a successful sign-in starts the sessions again. */
  readonly auth = new AuthStore({
    onSignedIn: async (message) => {
      const others = this.conversations.filter((c) => c !== this.active && !c.session.info);
      await this.active.restart(this.session.model || undefined);
      for (const conversation of others) void conversation.start();
      if (message) this.chat.addNotice("info", message);
    },
    onSignedOut: () => {
      for (const conversation of this.conversations) conversation.signedOut();
    },
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
    // Trust is the folder's: the conversations on it read their settings again.
    trustChanged: () => this.reloadFolder(this.workspace),
    setMcpEnabled: async (name, enabled) => {
      if (!this.session.info) throw new Error("Start a session first: servers are switched through it.");
      await this.session.submit({ type: "mcp_set_server_enabled", name, enabled });
    },
  });

  /** The About view and the update notice (off until a manifest URL is set). */
  readonly updates = new UpdatesStore();

  constructor() {
    const first = new Conversation(this.host, null);
    this.conversations = [first];
    this.active = first;
  }

  // The shown conversation's stores: what the components bind to.
  get session() {
    return this.active.session;
  }
  get chat() {
    return this.active.chat;
  }
  get confirmations() {
    return this.active.confirmations;
  }
  get mcp() {
    return this.active.mcp;
  }
  get memory() {
    return this.active.memory;
  }
  get policies() {
    return this.active.policies;
  }
  /** After a policy file changed: every open conversation's session reads its policy again. */
  async reloadPolicies(): Promise<void> {
    await Promise.allSettled(this.conversations.map((c) => c.policies.reload()));
  }
  get slash() {
    return this.active.slash;
  }
  get review() {
    return this.active.review;
  }
  get usage() {
    return this.active.usage;
  }
  get plan() {
    return this.active.plan;
  }
  get todos() {
    return this.active.todos;
  }
  get subagents() {
    return this.active.subagents;
  }
  get agents() {
    return this.active.agents;
  }
  get skills() {
    return this.active.skills;
  }
  get hooks() {
    return this.active.hooks;
  }
  get extensions() {
    return this.active.extensions;
  }
  /** The shown conversation's folder (the header's path). */
  get workspace(): string | null {
    return this.active.workspace;
  }
  /** The conversation the shown session records now, as the history knows it. */
  get conversationId(): string | null {
    return this.active.conversationId;
  }

  /** Tool calls waiting for the user, in every conversation (the approval inbox). */
  get pendingApprovals(): number {
    let count = 0;
    for (const conversation of this.conversations) count += conversation.confirmations.items.length;
    return count;
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
      this.active.setWorkspace(info.workspace);
      this.ready = "true";
    } catch (error) {
      this.fail(`Could not load app info: ${api.errorMessage(error)}`);
      return;
    }
    void this.auth.refresh();
    void this.loadTheme();
    // Only the main window asks about updates (once per start, and only when the user set where).
    if (!this.detached) void this.updates.start();
    if (this.detached) {
      // A conversation window: take the moved session over (a new one if it is gone). Its
      // notifications call this window back (attention.rs answers the window that asks).
      if (!(await this.active.attach(this.detached))) await this.active.start();
      return;
    }
    try {
      await api.onWorkspaceChanged((path) => void this.workspaceChanged(path));
      await api.onConversationReturned((sessionId) => void this.conversationReturned(sessionId));
      await api.onAttentionOpen((key) => {
        const conversation = this.conversations.find((c) => c.key === key);
        if (conversation) void this.activate(conversation);
      });
    } catch (error) {
      this.chat.addNotice("warning", `Folders opened from another launch will not show here: ${api.errorMessage(error)}`);
    }
    await this.active.start(undefined, await this.lastSession(this.workspace));
  }

  /** The session to reopen on `workspace` (its newest with messages), if any. */
  private async lastSession(workspace: string | null): Promise<string | undefined> {
    if (!workspace) return undefined;
    try {
      const last = await api.commands.historyLastSession({ workspace });
      return last && last.message_count > 0 ? last.id : undefined;
    } catch {
      // No history (e.g. it cannot be opened): start afresh; start_session says why if it matters.
      return undefined;
    }
  }

  /**
   * Shows `conversation`. The backend's folder (file picker, settings, trust, history) follows
   * the conversation shown; the sessions of the others keep running.
   */
  async activate(conversation: Conversation): Promise<void> {
    if (!this.conversations.includes(conversation)) return;
    const previous = this.active;
    this.active = conversation;
    if (conversation.workspace && conversation.workspace !== previous.workspace) {
      try {
        await api.commands.openWorkspace({ path: conversation.workspace });
      } catch (error) {
        conversation.chat.addNotice("error", `Could not open ${conversation.workspace}: ${api.errorMessage(error)}`);
      }
      if (this.active === conversation) void this.settings.loadTrust();
    }
  }

  /** Shows the conversation `delta` places after the shown one in the sidebar (wrapping). */
  cycle(delta: number): void {
    const count = this.conversations.length;
    const at = this.conversations.indexOf(this.active);
    const next = this.conversations[(((at + delta) % count) + count) % count];
    if (next) void this.activate(next);
  }

  /**
   * Opens a new conversation on `workspace` (the shown one's folder by default) and shows it;
   * with `resume` it continues that stored session.
   */
  async newConversation(workspace?: string | null, resume?: SessionSummary): Promise<Conversation> {
    const conversation = new Conversation(this.host, workspace ?? this.workspace);
    if (resume) conversation.storedTitle = resume.title || null;
    this.conversations = [...this.conversations, conversation];
    await this.activate(conversation);
    await conversation.start(this.session.model || undefined, resume?.id);
    return conversation;
  }

  /**
   * Closes `conversation`: its session stops (its MCP servers with it) and it leaves the
   * sidebar; it stays in the history, from where it can be reopened. The window keeps at least
   * one conversation: closing the last one opens a fresh one on its folder.
   */
  async close(conversation: Conversation): Promise<void> {
    const at = this.conversations.indexOf(conversation);
    if (at < 0) return;
    const rest = this.conversations.filter((c) => c !== conversation);
    if (rest.length === 0) {
      const fresh = new Conversation(this.host, conversation.workspace);
      this.conversations = [fresh];
      this.active = fresh;
      await conversation.stop();
      await fresh.start(conversation.session.model || undefined);
      return;
    }
    this.conversations = rest;
    const next = rest[Math.min(at, rest.length - 1)];
    if (this.active === conversation && next) await this.activate(next);
    await conversation.stop();
  }

  /**
   * Moves `conversation` to a window of its own (its session keeps running there). Only an idle
   * conversation moves: what is in flight (an answer streaming, a call waiting for approval)
   * would be lost on the way, so the user is told to wait.
   */
  async moveToWindow(conversation: Conversation): Promise<void> {
    if (conversation.session.busy || conversation.confirmations.items.length > 0 || !conversation.session.info) {
      conversation.chat.addNotice("warning", "A conversation moves to its own window once its turn has ended.");
      return;
    }
    try {
      await api.commands.conversationWindow({ sessionId: conversation.session.info.session_id, title: conversation.title });
    } catch (error) {
      conversation.chat.addNotice("error", `Could not open a window: ${api.errorMessage(error)}`);
      return;
    }
    const at = this.conversations.indexOf(conversation);
    const rest = this.conversations.filter((c) => c !== conversation);
    const model = conversation.session.model || undefined;
    conversation.release();
    if (rest.length === 0) {
      // The main window keeps a conversation: a fresh one on the same folder.
      const fresh = new Conversation(this.host, conversation.workspace);
      this.conversations = [fresh];
      this.active = fresh;
      await fresh.start(model);
      return;
    }
    this.conversations = rest;
    const next = rest[Math.min(at, rest.length - 1)];
    if (this.active === conversation && next) await this.activate(next);
  }

  /** A conversation window's "Move back": the window closes and its conversation returns. */
  async moveBack(): Promise<void> {
    try {
      await api.commands.closeConversationWindow();
    } catch (error) {
      this.chat.addNotice("error", `Could not move the conversation back: ${api.errorMessage(error)}`);
    }
  }

  /** A conversation window closed: its session comes back here as a conversation. */
  private async conversationReturned(sessionId: string): Promise<void> {
    const open = this.conversations.find((c) => c.session.id === sessionId);
    if (open) return;
    const conversation = new Conversation(this.host, null);
    this.conversations = [...this.conversations, conversation];
    if (await conversation.attach(sessionId)) {
      await this.activate(conversation);
      return;
    }
    this.conversations = this.conversations.filter((c) => c !== conversation);
  }

  /**
   * Continues a stored session from the history browser, in its own folder: the conversation
   * that already has it open is shown; else an empty shown conversation takes it, else a new
   * conversation opens for it.
   */
  async resumeStored(session: SessionSummary): Promise<void> {
    const open = this.conversations.find((c) => c.conversationId === session.id);
    if (open) {
      await this.activate(open);
      return;
    }
    if (!this.active.empty) {
      await this.newConversation(session.workspace, session);
      return;
    }
    if (session.workspace !== this.workspace) {
      try {
        await api.commands.openWorkspace({ path: session.workspace });
      } catch (error) {
        this.chat.addNotice("error", `Could not open ${session.workspace}: ${api.errorMessage(error)}`);
        return;
      }
      this.active.setWorkspace(session.workspace);
      void this.settings.loadTrust();
    }
    await this.active.resume(session.id, session.title || undefined);
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

  /** Continues a stored session (by id) in the shown conversation. */
  async resume(sessionId: string): Promise<void> {
    await this.active.resume(sessionId);
  }

  private fail(message: string): void {
    this.loadError = message;
    this.ready = "error";
    this.session.disconnected(message);
  }

  /** Applies `ui.theme` (the system's theme until then, or without it) and the notification mode. */
  private async loadTheme(): Promise<void> {
    try {
      const view = await api.commands.settingsGet();
      this.setTheme(view.values.find((v) => v.key === "ui.theme")?.value ?? null);
      this.attention.setMode(view.values.find((v) => v.key === "ui.desktopNotifications")?.value ?? null);
    } catch {
      this.setTheme(null);
    }
  }

  /**
   * `ui.theme` for the page and for what GTK draws itself (a drop-down's list), which no
   * stylesheet reaches; "system" lets GTK follow the system again.
   */
  private setTheme(setting: unknown): void {
    applyTheme(setting);
    const choice = themeChoice(setting);
    void api.commands.setWindowTheme({ theme: choice === "system" ? null : choice }).catch(() => {
      // An older backend, or a window without a native theme: the page's colours still apply.
    });
  }

  /**
   * A setting was written on the settings screen: make it count now, as core's description of
   * the field says (`effect`): the window's theme at once, the shown session's approval mode at
   * once, or a reload of every conversation (each keeps its conversation).
   */
  private async settingChanged(field: SettingField, value: unknown): Promise<void> {
    switch (field.effect) {
      case "window":
        if (field.key === "ui.theme") this.setTheme(value);
        if (field.key === "ui.desktopNotifications") this.attention.setMode(value);
        if (field.key === "update.manifestUrl") void this.updates.checkNow();
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
   * Restarts the sessions so they read the settings, commands, MCP servers and context files
   * again (after a settings change), each continuing its conversation; a running turn is
   * waited for.
   */
  /**
   * The hooks panel's Refresh: a session reads its hooks when it starts, so the shown
   * conversation's session starts again (continuing the conversation, as a settings change does)
   * and lists the hooks it read.
   */
  async rereadHooks(): Promise<void> {
    const conversation = this.active;
    if (conversation.session.busy) return;
    await conversation.reload();
    await conversation.hooks.refresh();
  }

  async reload(): Promise<void> {
    await Promise.all(this.conversations.map((c) => c.reload()));
    void this.loadTheme();
  }

  /** Reloads the conversations working on `folder` (its trust changed). */
  private async reloadFolder(folder: string | null): Promise<void> {
    await Promise.all(this.conversations.filter((c) => c.workspace === folder).map((c) => c.reload()));
  }

  /** Stops the shown conversation's session and starts a fresh one with an empty chat. */
  async restart(model?: string): Promise<void> {
    await this.active.restart(model);
  }

  /** Retries after a failed start, keeping nothing of the failed attempt. */
  async retry(): Promise<void> {
    await this.active.retry();
  }

  /** Sends a prompt in the shown conversation; false when it cannot be sent now. */
  send(text: string): Promise<boolean> {
    return this.active.send(text);
  }

  interrupt(): Promise<void> {
    return this.active.interrupt();
  }

  /** Changes the shown session's approval mode at once (from its next tool call, even mid-turn). */
  setApprovalMode(mode: ApprovalMode): Promise<void> {
    return this.active.setApprovalMode(mode);
  }

  switchModel(name: string): Promise<void> {
    return this.active.switchModel(name);
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

  /**
   * "Open folder…": the native picker; the chosen folder opens in a new conversation (the shown
   * one takes it instead when nothing was said in it yet).
   */
  async openFolder(): Promise<void> {
    let path: string | null;
    try {
      path = await api.commands.openWorkspace({ path: null });
    } catch (error) {
      this.chat.addNotice("error", `Could not open the folder: ${api.errorMessage(error)}`);
      return;
    }
    if (path) await this.openIn(path);
  }

  /**
   * A second launch of the app named `path` (the backend already made it the window's folder):
   * it opens as a new conversation, next to the running ones.
   */
  async workspaceChanged(path: string): Promise<void> {
    void this.loadTheme();
    await this.newConversation(path);
  }

  /** Opens `path` in the shown conversation if it is fresh and idle, else in a new one. */
  private async openIn(path: string): Promise<void> {
    const shown = this.active;
    if (!shown.empty || shown.session.connecting) {
      await this.newConversation(path);
      return;
    }
    await shown.stop();
    shown.setWorkspace(path);
    void this.loadTheme();
    void this.settings.loadTrust();
    await shown.start(shown.session.model || undefined, await this.lastSession(path));
  }
}
