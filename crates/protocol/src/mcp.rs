//! MCP servers as a frontend sees them: per-server status, the overall
//! discovery state and the prompts servers offer.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where one configured MCP server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum McpServerState {
    /// Not running: not started yet, or stopped.
    Disconnected,
    /// Starting and discovering its tools.
    Connecting,
    /// Running; its tools are offered.
    Connected,
    /// The HTTP server answered 401: it needs the user to sign in (OAuth).
    NeedsAuth,
    /// An OAuth sign-in is under way: waiting for the user in the browser
    /// (`auth_url` is the page), then for the token exchange.
    Authenticating,
    /// Failed to start, crashed or misconfigured; `error` says why. Crashed
    /// servers are restarted with backoff.
    Error,
    /// Turned off by the user (persisted; see `Op::McpSetServerEnabled`).
    Disabled,
    /// Not allowed by settings (`mcp.allowed` / `mcp.excluded`).
    Blocked,
}

/// How the client talks to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum McpTransportKind {
    /// A child process speaking JSON-RPC over stdin/stdout.
    Stdio,
    /// Streamable HTTP (`httpUrl`, or `url` with `type: "http"` or no type).
    Http,
    /// The legacy HTTP+SSE transport (`url` with `type: "sse"`).
    Sse,
}

/// Whether the servers' first discovery is over. Until it is, the session
/// holds its first model request (as Gemini CLI does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum McpDiscoveryState {
    NotStarted,
    InProgress,
    Completed,
}

/// A snapshot of one configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct McpServerStatus {
    /// The key under `mcpServers` in settings.json.
    pub name: String,
    pub state: McpServerState,
    /// `None` when the settings entry is invalid.
    pub transport: Option<McpTransportKind>,
    /// `trust: true`: its tools run without asking.
    pub trust: bool,
    /// The entry's `description`.
    pub description: Option<String>,
    /// Tools offered to the model (after includeTools/excludeTools and schema checks).
    pub tools: u32,
    /// Those tools, for the MCP panel's expandable list (empty unless connected).
    pub tool_list: Vec<McpToolInfo>,
    pub prompts: u32,
    pub resources: u32,
    /// Why the server is in `error`, `needs_auth`, `blocked` or `disabled`;
    /// what it waits for in `authenticating`.
    pub error: Option<String>,
    /// Duration of the latest request to the server (initialize, list or call).
    #[ts(type = "number | null")]
    pub latency_ms: Option<u64>,
    /// Automatic restarts after crashes so far.
    pub restarts: u32,
    /// While `authenticating`: the authorization page the browser was sent
    /// to, for a "open it yourself" link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub auth_url: Option<String>,
}

/// One tool of a connected MCP server, as the MCP panel lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct McpToolInfo {
    /// The server's own name of the tool.
    pub name: String,
    /// The name the model sees (`mcp_<server>_<tool>`).
    pub declared_name: String,
    pub description: String,
}

/// A prompt an MCP server offers (Gemini CLI shows these as slash commands).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct McpPromptInfo {
    pub server: String,
    pub name: String,
    pub description: Option<String>,
    pub arguments: Vec<McpPromptArgument>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct McpPromptArgument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}
