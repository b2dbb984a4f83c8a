// One conversation of the window: a live core session with its own folder, model, approval mode,
// MCP servers and history record, and the stores that show it (chat, confirmations, slash
// commands, panels). Several run at once (conversations.svelte.ts); each keeps running and
// keeps its transcript in memory while another one is shown, so switching never reloads it.
// Events of its session are dispatched to its own stores by the one router in events.ts.
import * as api from "../api";
import type { ApprovalMode } from "../protocol/ApprovalMode";
import type { Event } from "../protocol/Event";
import type { SessionInfo } from "../protocol/SessionInfo";
import { ChatStore } from "./chat.svelte";
import type { AttentionReason } from "./attention.svelte";
import { PlanStore } from "./plan.svelte";
import { TodoStore } from "./todos.svelte";
import { ConfirmationQueue, summarize } from "./confirmations.svelte";
import { type EventOwners, routeEvent } from "./events";
import { markdown } from "./markdown-loader.svelte";
import { McpStore } from "./mcp.svelte";
import { MemoryStore } from "./memory.svelte";
import { PolicyStore } from "./policies.svelte";
import { SessionStore } from "./session.svelte";
import { SlashCommands } from "./slash-commands.svelte";
import { TurnReviewStore } from "./review.svelte";
import { UsageStore } from "./usage.svelte";
import { FallbackStore } from "./fallback.svelte";
import { SubagentStore } from "./subagents.svelte";
import { AgentsStore, SkillsStore } from "./agents.svelte";
import { ExtensionsStore } from "./extensions.svelte";
import { HooksStore } from "./hooks.svelte";

/** What a conversation is doing, as its sidebar entry shows it (`data-status`). */
export type ConversationStatus = "idle" | "streaming" | "tool" | "approval" | "failed";

/** What a conversation needs from the window around it. */
export interface ConversationHost {
  /** A turn failed authentication: the window checks the sign-in (shared by all). */
  authFailed(message: string): void;
  /** Starting failed for want of usable credentials: the window shows the sign-in screen. */
  signInNeeded(reason: string): void;
  /** The session started (the window refreshes what belongs to the shown folder). */
  started(conversation: Conversation): void;
  /** It needs the user (an approval, a finished or failed turn): the window may call them. */
  needsUser(conversation: Conversation, reason: AttentionReason, detail: string): void;
}

let nextKey = 1;

export class Conversation {
  /** The sidebar's key for it (a session id changes on reload; this does not). */
  readonly key = nextKey++;
  /** The folder its session works on (canonical, as the backend names it). */
  workspace = $state<string | null>(null);
  /** The stored session's title, for a conversation reopened from the history. */
  storedTitle = $state<string | null>(null);
  /** The last turn failed (cleared by the next one). */
  lastTurnFailed = $state(false);

  readonly session = new SessionStore();
  readonly chat = new ChatStore();
  readonly confirmations = new ConfirmationQueue(this.session, (text) => this.chat.addNotice("error", text));
  readonly mcp = new McpStore(this.session, () => void this.slash.load());
  readonly review = new TurnReviewStore(this.session, (level, text) => this.chat.addNotice(level, text));
  readonly fallback = new FallbackStore(this.session, (text) => this.chat.addNotice("error", text));
  readonly memory = new MemoryStore(this.session, (level, text) => this.chat.addNotice(level, text));
  readonly policies = new PolicyStore(this.session, () => this.workspace);
  readonly plan = new PlanStore(this.session, this.confirmations, (text) => this.chat.addNotice("error", text));
  readonly todos = new TodoStore();
  /** Subagent runs nested under their `invoke_agent` calls; the /agents and /skills panels. */
  readonly subagents = new SubagentStore(() => this.workspace);
  readonly agents = new AgentsStore(this.session, (text) => this.chat.addNotice("error", text));
  readonly skills = new SkillsStore(this.session, (text) => this.chat.addNotice("error", text));
  /** The /hooks view and the /extensions panel (with its install flow). */
  readonly hooks = new HooksStore(this.session, (text) => this.chat.addNotice("error", text));
  readonly extensions = new ExtensionsStore(this.session, (text) => this.chat.addNotice("error", text));
  readonly slash: SlashCommands = new SlashCommands({
    session: this.session,
    chat: this.chat,
    mcp: this.mcp,
    memory: this.memory,
    conversationId: () => this.conversationId,
    policies: this.policies,
    agents: this.agents,
    skills: this.skills,
    hooks: this.hooks,
    extensions: this.extensions,
  });

  /** What the conversation used and the quota left (the header's meter, the usage panel). */
  readonly usage = new UsageStore(() => void this.slash.requestUsageStats());

  /** A reload waits for the running turn to end. */
  private reloadPending = false;
  private readonly owners: EventOwners;

  constructor(
    private readonly host: ConversationHost,
    workspace: string | null,
  ) {
    this.setWorkspace(workspace);
    this.owners = {
      session: this.session,
      chat: this.chat,
      confirmations: this.confirmations,
      mcp: this.mcp,
      memory: this.memory,
      slash: this.slash,
      policies: this.policies,
      review: this.review,
      usage: this.usage,
      plan: this.plan,
      todos: this.todos,
      fallback: this.fallback,
      subagents: this.subagents,
      agents: this.agents,
      skills: this.skills,
      hooks: this.hooks,
      extensions: this.extensions,
      authFailed: (message) => this.host.authFailed(message),
      approvalRequested: (_name, details) => this.host.needsUser(this, "approval", summarize(details)),
      fallbackRequested: (detail) => this.host.needsUser(this, "approval", detail),
      conversationCleared: (id) => this.conversationCleared(id),
      turnEnded: (status) => {
        this.lastTurnFailed = status === "failed";
        // A turn the user stopped or declined needs nothing more from them.
        if (status === "failed") this.host.needsUser(this, "failed", "the turn failed");
        else if (status !== "cancelled" && status !== "declined") this.host.needsUser(this, "finished", "the answer is ready");
        if (this.reloadPending) queueMicrotask(() => void this.reload());
      },
    };
  }

  /**
   * The conversation the session records now, as the history knows it: the session's id, or a
   * new one after `/clear` (the session keeps its id for every command).
   */
  get conversationId(): string | null {
    return this.chat.checkpoints.conversationId ?? this.session.id;
  }

  /** Its sidebar title: the stored title, else its first prompt, else a placeholder. */
  get title(): string {
    for (const item of this.chat.items) if (item.kind === "user") return item.text;
    return this.storedTitle ?? "New conversation";
  }

  get status(): ConversationStatus {
    if (this.confirmations.items.length > 0 || this.fallback.request) return "approval";
    if (this.session.busy) return this.chat.toolRunning ? "tool" : "streaming";
    const down = !this.session.info && !this.session.connecting && this.session.disconnectedReason !== null;
    if (down || this.lastTurnFailed) return "failed";
    return "idle";
  }

  /** Nothing was said in it yet (a fresh conversation can be replaced rather than kept). */
  get empty(): boolean {
    return !this.session.busy && !this.chat.items.some((item) => item.kind === "user");
  }

  /** Shows `path` as its workspace (header, and tool paths relative to it). */
  setWorkspace(path: string | null): void {
    this.workspace = path;
    this.chat.workspace = path;
  }

  /**
   * Starts its session (optionally with a model), replacing any current one. With `resume` (a
   * stored session's id) it continues that session and shows its last messages; when that
   * fails, a new session starts and a notice says why.
   */
  async start(model?: string, resume?: string): Promise<void> {
    const generation = this.reset();
    let info: SessionInfo;
    try {
      info = await api.startSession(this.router(generation), model, resume, this.workspace ?? undefined);
    } catch (error) {
      if (!this.session.isCurrent(generation)) return;
      if (resume && !isAuthError(error)) {
        this.chat.addNotice("warning", `Could not reopen the last session: ${api.errorMessage(error)}`);
        return this.start(model);
      }
      const reason = api.errorMessage(error);
      this.session.disconnected(reason);
      if (isAuthError(error)) {
        // No usable credentials (first launch, signed out, sign-in revoked): the sign-in screen
        // says why. It never retries by itself, so a broken sign-in cannot loop.
        this.host.signInNeeded(reason);
      } else {
        this.chat.addNotice("error", reason, { prominent: true, title: "Gemini is not connected" });
      }
      return;
    }
    if (!this.session.isCurrent(generation)) {
      // Stopped or replaced while it was starting: nobody will ever stop this session (and its
      // MCP servers) but us.
      void api.commands.stopSession({ sessionId: info.session_id }).catch(() => {});
      return;
    }
    for (const warning of info.warnings) this.chat.addNotice("warning", warning);
    // The resumed session keeps its id (info.session_id is `resume`).
    await this.begin(info, generation, resume !== undefined);
  }

  /**
   * Takes over the running session `sessionId` (it moved here from another window): its
   * events come here from now on and its transcript is rebuilt from the history. False when it
   * is not running any more (the window then starts a new one).
   */
  async attach(sessionId: string): Promise<boolean> {
    const generation = this.reset();
    let info: SessionInfo;
    try {
      info = await api.attachSession(this.router(generation), sessionId);
    } catch (error) {
      if (this.session.isCurrent(generation)) {
        this.session.disconnected(api.errorMessage(error));
        this.chat.addNotice("error", `Could not take the conversation over: ${api.errorMessage(error)}`);
      }
      return false;
    }
    if (!this.session.isCurrent(generation)) return false;
    await this.begin(info, generation, true);
    return true;
  }

  /** Forgets what showed the previous session; returns the new session's generation. */
  private reset(): number {
    const generation = this.session.starting();
    this.lastTurnFailed = false;
    this.confirmations.clear();
    this.mcp.clear();
    this.memory.clear();
    this.policies.clear();
    this.agents.clear();
    this.skills.clear();
    this.hooks.clear();
    this.extensions.clear();
    this.slash.reset();
    this.review.clear();
    this.usage.reset();
    this.plan.clear();
    this.todos.clear();
    return generation;
  }

  /** The channel handler of session `generation`: its events, while it is this one's. */
  private router(generation: number): (event: Event) => void {
    return (event) => {
      if (this.session.isCurrent(generation)) routeEvent(this.owners, event);
    };
  }

  /** The session of `generation` runs: show it (its stored transcript when `transcript`). */
  private async begin(info: SessionInfo, generation: number, transcript: boolean): Promise<void> {
    this.session.started(info);
    this.chat.checkpoints.sessionId = info.session_id;
    this.chat.checkpoints.conversationId = info.session_id;
    if (info.workspace) this.setWorkspace(info.workspace);
    if (transcript) await this.loadTranscript(info.session_id, generation);
    // The meter and the usage panel count from what the conversation used before (core rebuilds
    // a reopened conversation's usage from its records).
    if (this.session.isCurrent(generation)) this.usage.load();
    // The folder's checkpoints: the list panel, and the cards of a resumed transcript.
    if (this.session.isCurrent(generation)) void this.chat.checkpoints.refresh();
    void this.loadModels();
    void this.mcp.loadStatus();
    void this.slash.load();
    this.host.started(this);
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

  /** Empties what shows the old session's conversation (chat and pending confirmations). */
  clearConversation(): void {
    this.chat.clear();
    this.confirmations.clear();
    this.subagents.clear();
  }

  /**
   * Stops its session (if any; its remaining events are ignored) and empties the chat. Returns
   * the stopped session.
   */
  async stop(): Promise<SessionInfo | null> {
    const old = this.session.drop();
    this.session.busy = false;
    if (old) {
      try {
        await api.commands.stopSession({ sessionId: old.session_id });
      } catch {
        // Already gone (e.g. signed out).
      }
    }
    this.clearConversation();
    return old;
  }

  /**
   * Hands the session to another window: this conversation forgets it (its later events are
   * ignored here) without stopping it. Returns its id.
   */
  release(): string | null {
    const info = this.session.drop();
    this.session.busy = false;
    this.clearConversation();
    return info?.session_id ?? null;
  }

  /** Continues a stored session in this conversation (the current session stops). */
  async resume(sessionId: string, title?: string): Promise<void> {
    await this.stop();
    this.storedTitle = title ?? null;
    await this.start(this.session.model || undefined, sessionId);
  }

  /** Stops the current session (if any) and starts a fresh one with an empty chat. */
  async restart(model?: string): Promise<void> {
    await this.stop();
    this.storedTitle = null;
    await this.start(model);
  }

  /** Retries after a failed start, keeping nothing of the failed attempt. */
  async retry(): Promise<void> {
    this.chat.clear();
    await this.start(this.session.model || undefined);
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
    const old = await this.stop();
    this.session.model = "";
    await this.start(undefined, keep && old ? old.session_id : undefined);
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
    this.lastTurnFailed = false;
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
    this.storedTitle = null;
    // The same session goes on (restores are still sent to it); its edits from now on belong to
    // the new conversation, and the folder's checkpoints stay listed.
    this.chat.checkpoints.sessionId = this.session.id;
    this.chat.checkpoints.conversationId = conversationId;
    void this.chat.checkpoints.refresh();
    this.usage.cleared();
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

  /** After sign-out: the backend stopped the sessions; forget this one's. */
  signedOut(): void {
    this.session.drop();
    this.session.busy = false;
    this.session.disconnected("Signed out: sign in to continue.");
    this.clearConversation();
    this.mcp.clear();
  }

  async switchModel(name: string): Promise<void> {
    if (!name || name === this.session.model) return;
    this.session.model = name;
    await this.restart(name);
  }
}

/** A start_session rejection for missing or unusable credentials (CommandError kind `auth`). */
export function isAuthError(error: unknown): boolean {
  return !!error && typeof error === "object" && (error as { kind?: unknown }).kind === "auth";
}
