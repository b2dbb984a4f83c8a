//! The agents a session can run: built-in ones and those read from
//! definition files, after the settings' overrides, plus the files that
//! could not be read (reported to the user, never silently dropped).

use crate::frontmatter::FrontMatterError;

use super::AgentDefinition;

/// Every agent known to a session, by name. As in Gemini CLI 0.61, the
/// first definition of a name wins (built-in, then workspace, then user)
/// and a later one of the same name is skipped with a warning.
#[derive(Debug, Default, Clone)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
    errors: Vec<FrontMatterError>,
    /// Per agent name: what the listing must tell the user (e.g. that its
    /// own MCP servers start when it runs).
    notes: Vec<(String, String)>,
    /// Problems reported at launch (broken overrides, duplicate names).
    warnings: Vec<String>,
    /// How agents' own MCP servers start (see [`OwnMcp`]).
    own_mcp: OwnMcp,
}

/// Whether and how agents' own MCP servers (`mcp_servers`) may start.
/// Gemini CLI 0.61 starts them through its session MCP manager, so the
/// session's rules hold for them too: nothing starts in an untrusted folder
/// (a command could come from the repository), and `mcp.allowed` /
/// `mcp.excluded` and servers the user turned off apply.
#[derive(Debug, Clone, Default)]
pub enum OwnMcp {
    /// No settings (a catalog built by hand): plain options.
    #[default]
    Defaults,
    /// The session's options (filter, enablement file, OAuth); their
    /// `servers` are replaced by the agent's.
    Settings(Box<gd_mcp::McpOptions>),
    /// An untrusted folder: no agent's server starts.
    Untrusted,
}

impl AgentCatalog {
    pub fn new(agents: Vec<AgentDefinition>, errors: Vec<FrontMatterError>) -> Self {
        Self {
            agents,
            errors,
            notes: Vec::new(),
            warnings: Vec::new(),
            own_mcp: OwnMcp::Defaults,
        }
    }

    /// Sets how agents' own MCP servers start.
    pub fn with_own_mcp(mut self, own_mcp: OwnMcp) -> Self {
        self.own_mcp = own_mcp;
        self
    }

    /// How agents' own MCP servers start in this session.
    pub fn own_mcp(&self) -> &OwnMcp {
        &self.own_mcp
    }

    /// Adds the listing's notes (agent name, note) and the launch warnings.
    pub fn with_notes_and_warnings(
        mut self,
        notes: Vec<(String, String)>,
        warnings: Vec<String>,
    ) -> Self {
        self.notes = notes;
        self.warnings = warnings;
        self
    }

    /// What the listing says about `name` beyond its fields, if anything.
    pub fn note(&self, name: &str) -> Option<&str> {
        self.notes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, note)| note.as_str())
    }

    /// Problems to report when the session starts: each definition file
    /// that could not be read (`path:line: message`), broken
    /// `agents.overrides` entries, and duplicate names.
    pub fn launch_warnings(&self) -> Vec<String> {
        self.errors
            .iter()
            .map(|e| format!("Agent loading error: {e}"))
            .chain(self.warnings.iter().cloned())
            .collect()
    }

    /// Every agent, enabled or not, in listing order.
    pub fn all(&self) -> &[AgentDefinition] {
        &self.agents
    }

    /// The agents the model may call: enabled and local (remote agents are
    /// recognised, not run).
    pub fn runnable(&self) -> impl Iterator<Item = &AgentDefinition> {
        self.agents
            .iter()
            .filter(|a| a.enabled && a.kind == gd_protocol::AgentKind::Local)
    }

    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// Definition files that could not be read.
    pub fn errors(&self) -> &[FrontMatterError] {
        &self.errors
    }
}
