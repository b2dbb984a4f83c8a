// The MCP servers of the current session as the MCP panel shows them. The session reports every
// change as an event (`mcp_server_status`, `mcp_discovery`, `mcp_server_log`), so this store only
// applies events: the panel is live without polling.
import type { Event } from "../protocol/Event";
import type { McpDiscoveryState } from "../protocol/McpDiscoveryState";
import type { McpServerStatus } from "../protocol/McpServerStatus";

export class McpStore {
  /** Servers in the order they were first reported (settings order). */
  servers = $state.raw<McpServerStatus[]>([]);
  discovery = $state<McpDiscoveryState>("not_started");
  /** Latest stderr lines per server (fetched when a server is expanded, changes state or writes). */
  logs = $state.raw<Record<string, string[]>>({});
  /** The last failed action per server (e.g. Authenticate not possible), shown under it. */
  actionErrors = $state.raw<Record<string, string>>({});

  /** Forgets everything (a new session). */
  clear(): void {
    this.servers = [];
    this.discovery = "not_started";
    this.logs = {};
    this.actionErrors = {};
  }

  /** Applies an event; returns the name of a server whose state changed (its log may have too). */
  handle(event: Event): string | null {
    switch (event.type) {
      case "mcp_server_status": {
        const { type: _type, ...status } = event;
        const previous = this.servers.find((s) => s.name === status.name);
        this.servers = previous ? this.servers.map((s) => (s === previous ? status : s)) : [...this.servers, status];
        return previous?.state !== status.state ? status.name : null;
      }
      case "mcp_discovery":
        this.discovery = event.state;
        return null;
      case "mcp_server_log":
        this.logs = { ...this.logs, [event.name]: event.lines };
        return null;
      default:
        return null;
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
