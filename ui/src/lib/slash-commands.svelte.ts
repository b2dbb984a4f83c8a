// The slash commands of the session and the built-in ones the UI carries out itself.
//
// Core describes every command (`Event::Commands`: built-in ones with their other names, MCP
// prompts, custom commands), so names and descriptions are never listed here. What is here is
// what only the UI can do: for each built-in command, the op it sends and what the chat or a
// panel shows while the answer is on its way. Custom commands and MCP prompts are sent as typed
// (core expands them); anything else that starts with `/` goes to the model as text.
import * as api from "../api";
import type { Event } from "../protocol/Event";
import type { Op } from "../protocol/Op";
import type { SlashCommandInfo } from "../protocol/SlashCommandInfo";
import type { ChatStore, StatsView } from "./chat.svelte";
import type { McpStore } from "./mcp.svelte";
import type { MemoryStore } from "./memory.svelte";
import type { PolicyStore } from "./policies.svelte";
import type { AgentsStore, SkillsStore } from "./agents.svelte";
import type { ExtensionsStore } from "./extensions.svelte";
import type { HooksStore } from "./hooks.svelte";
import type { SessionStore } from "./session.svelte";
import { findCommand, parseSlash, promptHelp } from "./slash";

/** What a built-in command needs from the rest of the app. */
export interface SlashContext {
  session: SessionStore;
  chat: ChatStore;
  mcp: McpStore;
  memory: MemoryStore;
  /** The conversation the session records now (a `/restore <id>` rewinds only that one). */
  conversationId: () => string | null;
  /** `/policies` opens the policy editor. */
  policies: PolicyStore;
  /** `/agents` and `/skills` open their panels. */
  agents: AgentsStore;
  skills: SkillsStore;
  /** `/hooks` and `/extensions` open theirs. */
  hooks: HooksStore;
  extensions: ExtensionsStore;
}

type Handler = (args: string) => Promise<boolean>;

export class SlashCommands {
  /** The session's commands for the composer's autocomplete (from `Event::Commands`). */
  commands = $state.raw<SlashCommandInfo[]>([]);

  /** The views of the `/stats` commands waiting for their `session_stats`, in order. */
  private statsViews: StatsView[] = [];
  /**
   * The usage panel's requests for `session_stats` not answered yet. Every answer is the same
   * kind of snapshot, so a waiting `/stats` takes the first one that comes and these count the
   * rest (no card for them).
   */
  private usageRequests = 0;
  /** The ids of `/restore <id>` commands waiting for the checkpoint list. */
  private restoreRequests: string[] = [];
  /** A `/compress` is running (the session is busy until it is answered). */
  private compressing = false;
  /** Resolves once the session listed its commands (or could not): typed commands wait for it. */
  private listed: Promise<void> = Promise.resolve();
  private markListed: () => void = () => {};

  /** The built-in commands the UI carries out, by core's canonical name. */
  private readonly builtIns: Record<string, Handler> = {
    clear: () => this.sendOp({ type: "clear" }, "clear the conversation"),
    compress: () => this.compress(),
    stats: (args) => this.stats(args),
    mcp: (args) => this.mcpCommand(args),
    memory: (args) => this.memoryCommand(args),
    restore: (args) => this.restore(args),
    policies: async () => {
      this.ctx.policies.show();
      return true;
    },
    agents: async () => {
      this.ctx.agents.show();
      return true;
    },
    skills: async () => {
      this.ctx.skills.show();
      return true;
    },
    hooks: async () => {
      this.ctx.hooks.show();
      return true;
    },
    extensions: async () => {
      this.ctx.extensions.show();
      return true;
    },
  };

  constructor(private readonly ctx: SlashContext) {}

  /** A new session: nothing is pending, its commands are not known yet. */
  reset(): void {
    this.commands = [];
    this.statsViews = [];
    this.usageRequests = 0;
    this.restoreRequests = [];
    this.compressing = false;
    this.markListed();
    this.listed = new Promise((resolve) => (this.markListed = resolve));
  }

  /** Asks for the slash commands (answered by a `commands` event); again when `/` is typed. */
  async load(): Promise<void> {
    if (!this.ctx.session.info) return;
    try {
      await this.ctx.session.submit({ type: "list_commands" });
    } catch {
      // No autocomplete and no built-in commands: typed commands go to the model as text.
      this.markListed();
    }
  }

  /** `Event::Commands`: the session's commands. */
  handleCommands(event: Extract<Event, { type: "commands" }>): void {
    this.commands = event.commands;
    this.markListed();
  }

  /**
   * Carries out `prompt` when it is a command the UI handles (a built-in one, or `/prompt help`
   * of an MCP prompt): resolves to whether it was carried out, or null when it is to be sent
   * to the session as typed.
   */
  async run(prompt: string): Promise<boolean | null> {
    const slash = parseSlash(prompt);
    if (!slash) return null;
    await this.listed;
    const command = findCommand(this.commands, slash.name);
    if (!command) return null;
    const handler = command.source === "built_in" ? this.builtIns[command.name] : undefined;
    if (handler) return handler(slash.args);
    if (command.source === "mcp_prompt" && slash.args === "help") {
      this.ctx.chat.addNotice("info", promptHelp(command));
      return true;
    }
    return null;
  }

  /** Sends a command's op; a failure is a notice saying what could not be done. */
  private async sendOp(op: Op, what: string): Promise<boolean> {
    try {
      await this.ctx.session.submit(op);
      return true;
    } catch (error) {
      this.ctx.chat.addNotice("error", `Could not ${what}: ${api.errorMessage(error)}`);
      return false;
    }
  }

  /** `/compress`: a pending line, busy until `chat_compressed` or `compression_skipped`. */
  private async compress(): Promise<boolean> {
    const item = this.ctx.chat.startCompression();
    this.compressing = true;
    this.ctx.session.busy = true;
    const sent = await this.sendOp({ type: "compress" }, "compress the conversation");
    if (!sent) {
      this.compressing = false;
      this.ctx.session.busy = false;
      item.state = "failed";
      item.text = "Failed to compress chat history.";
    }
    return sent;
  }

  /** The answer to a `/compress` (or core compressed by itself): the session is free again. */
  handleCompression(): void {
    if (!this.compressing) return;
    this.compressing = false;
    this.ctx.session.busy = false;
  }

  /** `/stats [session|model|tools]`: the card comes with `session_stats`. */
  private stats(args: string): Promise<boolean> {
    const [action = ""] = args.split(/\s+/).filter(Boolean);
    if (action && !["session", "model", "tools"].includes(action)) {
      this.ctx.chat.addNotice("warning", `Unknown /stats view "${action}": use session, model or tools.`);
      return Promise.resolve(false);
    }
    this.statsViews.push(action === "model" || action === "tools" ? action : "session");
    return this.sendOp({ type: "stats" }, "get the statistics");
  }

  handleStats(event: Extract<Event, { type: "session_stats" }>): void {
    const view = this.statsViews.shift();
    if (view) this.ctx.chat.addStats(event.stats, view);
    else if (this.usageRequests > 0) this.usageRequests -= 1;
    else this.ctx.chat.addStats(event.stats, "session");
  }

  /** The usage meter wants fresh figures (after a turn, when its panel opens); no card. */
  async requestUsageStats(): Promise<void> {
    if (!this.ctx.session.info) return;
    this.usageRequests += 1;
    try {
      await this.ctx.session.submit({ type: "stats" });
    } catch {
      // The session went away: the meter keeps what it had.
      this.usageRequests -= 1;
    }
  }

  /** `/restore`: the checkpoint list (Header's Checkpoints button), fresh; with an id, that one restored. */
  private restore(args: string): Promise<boolean> {
    if (!args) this.ctx.chat.checkpoints.panelOpen = true;
    else this.restoreRequests.push(args);
    return this.sendOp({ type: "list_checkpoints" }, "list the checkpoints");
  }

  /**
   * The checkpoints were listed: a waiting `/restore <id>` restores the checkpoint with that id
   * (or the only one starting with it) — its files, and its conversation when it is this one's,
   * as Gemini CLI's `/restore <id>` does — in the checkpoint list, which opens to show it.
   */
  handleCheckpoints(): void {
    const request = this.restoreRequests.shift();
    if (!request) return;
    const { chat } = this.ctx;
    const list = chat.checkpoints.list;
    const exact = list.find((c) => c.id === request);
    const matches = list.filter((c) => c.id.startsWith(request));
    const chosen = exact ?? (matches.length === 1 ? matches[0] : undefined);
    if (!chosen) {
      chat.addNotice(
        "error",
        matches.length > 1 ? `Checkpoint "${request}" is ambiguous: ${matches.length} checkpoints start with it.` : `No checkpoint "${request}": /restore lists them.`,
      );
      return;
    }
    chat.checkpoints.panelOpen = true;
    void chosen.restore({ code: true, conversation: chosen.conversationBlocked(this.ctx.conversationId()) === null });
  }

  /**
   * `/mcp [list|desc|schema]` opens the MCP panel; `/mcp auth|enable|disable <server>` act on a
   * server (and open the panel to show it); `/mcp refresh` restarts every server.
   */
  private async mcpCommand(args: string): Promise<boolean> {
    const { mcp, chat } = this.ctx;
    const [action = "", ...rest] = args.split(/\s+/).filter(Boolean);
    const server = rest.join(" ");
    mcp.open = true;
    const needsServer = (verb: string) => {
      chat.addNotice("warning", `Usage: /mcp ${verb} <server name>`);
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
        await mcp.authenticate(server);
        return true;
      case "enable":
      case "disable":
        if (!server) return needsServer(action);
        await mcp.setEnabled(server, action === "enable");
        return true;
      case "refresh":
      case "reload":
        for (const s of mcp.servers) {
          if (s.state !== "disabled" && s.state !== "blocked") await mcp.restart(s.name);
        }
        return true;
      default:
        chat.addNotice("warning", `Unknown /mcp action "${action}": use list, auth, enable, disable or refresh.`);
        return false;
    }
  }

  /** `/memory show|refresh|add <text>`. */
  private async memoryCommand(args: string): Promise<boolean> {
    const { memory, chat } = this.ctx;
    const parsed = /^(\S+)?\s*([\s\S]*)$/.exec(args);
    const action = parsed?.[1] ?? "show";
    const text = (parsed?.[2] ?? "").trim();
    switch (action) {
      case "show":
        memory.open = true;
        return true;
      case "refresh":
        memory.open = true;
        return memory.refresh();
      case "add":
        if (!text) {
          chat.addNotice("warning", "Usage: /memory add <text to remember>");
          return false;
        }
        return memory.add(text);
      default:
        chat.addNotice("warning", `Unknown /memory action "${action}": use show, refresh or add <text>.`);
        return false;
    }
  }
}
