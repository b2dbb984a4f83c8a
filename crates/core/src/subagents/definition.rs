//! What an agent is: the fields of Gemini CLI 0.61's agent definitions
//! (built-in agents, and `.gemini/agents/*.md` files whose front matter
//! holds these fields and whose body is the system prompt), after
//! `agents.overrides` from the settings are applied.

use std::path::PathBuf;
use std::time::Duration;

use gd_protocol::{AgentKind, DefinitionSource};

/// 0.61's defaults for a definition that does not say.
pub const DEFAULT_MAX_TURNS: u32 = 30;
pub const DEFAULT_TIMEOUT_MINS: u32 = 10;

/// One agent, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    /// The slug the model passes as `agent_name` (lowercase letters,
    /// digits, `-` and `_`).
    pub name: String,
    pub display_name: Option<String>,
    /// Declared to the model so it knows when to call the agent.
    pub description: String,
    pub kind: AgentKind,
    pub source: DefinitionSource,
    /// The definition file (none for built-in agents).
    pub path: Option<PathBuf>,
    /// The agent's system prompt (a file's body).
    pub system_prompt: String,
    pub tools: AgentTools,
    pub model: ModelChoiceForAgent,
    /// Sampling temperature (0.61's default is 1).
    pub temperature: Option<f32>,
    /// Model requests the agent may make before it must return.
    pub max_turns: u32,
    pub timeout: Duration,
    /// `agents.overrides.<name>.enabled`; built-in agents are on by
    /// default, except those 0.61 ships off.
    pub enabled: bool,
    /// Its own MCP servers (`mcp_servers`), settings-style entries by
    /// name: started for each run, offered to this agent only
    /// ([`super::inline_mcp`]).
    pub mcp_servers: serde_json::Map<String, serde_json::Value>,
}

/// The tools an agent may call, as its definition names them. Subagents
/// never see `invoke_agent` (0.61's recursion protection), whatever they
/// ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentTools {
    /// No `tools` field: the parent session's tools.
    Inherit,
    /// Names and wildcards: `*` (every tool), `mcp_*` (every MCP tool),
    /// `mcp_<server>_*` (one server's tools), or a tool's name.
    Listed(Vec<String>),
}

/// The model an agent's requests go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoiceForAgent {
    /// `inherit` (or absent): the session's model at the time of the call.
    Inherit,
    /// A model name or alias.
    Named(String),
}
