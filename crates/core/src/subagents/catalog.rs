//! The agents a session can run: built-in ones and those read from
//! definition files, after the settings' overrides, plus the files that
//! could not be read (reported to the user, never silently dropped).

use crate::frontmatter::FrontMatterError;

use super::AgentDefinition;

/// Every agent known to a session, by name (a later tier replaces an
/// earlier one of the same name: built-in, then user, then workspace).
#[derive(Debug, Default, Clone)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
    errors: Vec<FrontMatterError>,
}

impl AgentCatalog {
    pub fn new(agents: Vec<AgentDefinition>, errors: Vec<FrontMatterError>) -> Self {
        Self { agents, errors }
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
