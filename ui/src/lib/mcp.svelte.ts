// The MCP servers of the current session as the MCP panel shows them, and the panel's actions.
// The session reports every change as an event (`mcp_server_status`, `mcp_discovery`,
// `mcp_server_log`, `mcp_server_log_changed`), so this store applies events and sends ops: the
// panel is live without polling, and an action's effect shows when its events arrive.
import * as api from "../api";
import type { Event } from "../protocol/Event";
import type { McpDiscoveryState } from "../protocol/McpDiscoveryState";
import type { McpServerStatus } from "../protocol/McpServerStatus";
import type { SessionStore } from "./session.svelte";

/** The events this store applies. */
export type McpEvent = Extract<Event, { type: "mcp_server_status" | "mcp_discovery" | "mcp_server_log" | "mcp_server_log_changed" }>;

export class McpStore {
  /** The MCP panel is open. */
  open = $state(false);
  /** Servers in the order they were first reported (settings order). */
  servers = $state.raw<McpServerStatus[]>([]);
  discovery = $state<McpDiscoveryState>("not_started");
  /** Latest stderr lines per server (fetched when a server is expanded, changes state or writes). */
  logs = $state.raw<Record<string, string[]>>({});
  /** The last failed action per server (e.g. Authenticate not possible), shown under it. */
  actionErrors = $state.raw<Record<string, string>>({});

  /** Servers whose details (tools, stderr) are expanded in the panel. */
  private readonly expanded = new Set<string>();

  constructor(
    private readonly session: SessionStore,
    /** A server's prompts changed (they are slash commands: list them again). */
    private readonly promptsChanged: () => void,
  ) {}

  /** Forgets everything (a new session). */
  clear(): void {
    this.servers = [];
    this.discovery = "not_started";
    this.logs = {};
    this.actionErrors = {};
  }

  /** Applies an event of the session's MCP servers. */
  handle(event: McpEvent): void {
    switch (event.type) {
      case "mcp_server_status": {
        const { type: _type, ...status } = event;
        const previous = this.servers.find((s) => s.name === status.name);
        this.servers = previous ? this.servers.map((s) => (s === previous ? status : s)) : [...this.servers, status];
        if (status.prompts !== (previous?.prompts ?? 0)) this.promptsChanged();
        // A server that changed state may have written to stderr (why it failed): refresh the
        // tail of an expanded one.
        if (previous?.state !== status.state) this.refreshLog(status.name);
        return;
      }
      case "mcp_discovery":
        this.discovery = event.state;
        if (event.state === "completed") this.promptsChanged();
        return;
      case "mcp_server_log":
        this.logs = { ...this.logs, [event.name]: event.lines };
        return;
      case "mcp_server_log_changed":
        // The server wrote to stderr (the core sends this at most a few times a second): the
        // tail of an open row follows it live; closed rows fetch nothing.
        this.refreshLog(event.name);
        return;
    }
  }

  /** The panel closed: its rows are collapsed (they open collapsed next time). */
  collapseAll(): void {
    this.expanded.clear();
  }

  /** Remembers whether a server's details are shown; fetches its stderr tail when expanded. */
  expand(name: string, expanded: boolean): void {
    if (expanded) {
      this.expanded.add(name);
      void this.fetchLog(name);
    } else {
      this.expanded.delete(name);
    }
  }

  /** Fetches a server's stderr tail again when it is on screen (panel open, row expanded). */
  private refreshLog(name: string): void {
    if (this.open && this.expanded.has(name)) void this.fetchLog(name);
  }

  private async fetchLog(name: string): Promise<void> {
    if (!this.session.info) return;
    try {
      await this.session.submit({ type: "mcp_server_log", name });
    } catch {
      // No log to show; the server's status still is.
    }
  }

  /** Runs a panel action, showing its failure under the server. */
  private async act(name: string, op: Parameters<SessionStore["submit"]>[0]): Promise<void> {
    if (!this.session.info) return;
    this.setActionError(name, null);
    try {
      await this.session.submit(op);
    } catch (error) {
      this.setActionError(name, api.errorMessage(error));
    }
  }

  restart(name: string): Promise<void> {
    return this.act(name, { type: "mcp_restart_server", name });
  }

  setEnabled(name: string, enabled: boolean): Promise<void> {
    return this.act(name, { type: "mcp_set_server_enabled", name, enabled });
  }

  authenticate(name: string): Promise<void> {
    return this.act(name, { type: "mcp_authenticate", name });
  }

  /** Asks for every server's status once per session: the answers and all later changes come as events. */
  async loadStatus(): Promise<void> {
    try {
      await this.session.submit({ type: "mcp_status" });
    } catch {
      // The session ended meanwhile; the next one asks again.
    }
  }

  setActionError(name: string, message: string | null): void {
    const next = { ...this.actionErrors };
    if (message === null) delete next[name];
    else next[name] = message;
    this.actionErrors = next;
  }

  /** The header button's summary: worst state first. */
  get summary(): "none" | "error" | "connecting" | "connected" | "off" {
    if (this.servers.length === 0) return "none";
    const states = this.servers.map((s) => s.state);
    if (states.some((s) => s === "error" || s === "needs_auth")) return "error";
    if (states.some((s) => s === "connecting" || s === "authenticating") || this.discovery === "in_progress")
      return "connecting";
    if (states.some((s) => s === "connected")) return "connected";
    return "off";
  }

  get connectedCount(): number {
    return this.servers.filter((s) => s.state === "connected").length;
  }
}
