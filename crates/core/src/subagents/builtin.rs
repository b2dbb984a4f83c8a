//! The agents the app ships (Gemini CLI 0.61's built-in agents that make
//! sense here).

use super::AgentDefinition;

/// Every built-in agent, with 0.61's defaults (before `agents.overrides`).
pub fn agents() -> Vec<AgentDefinition> {
    Vec::new()
}
