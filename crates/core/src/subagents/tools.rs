//! The tools a subagent gets: its definition's list resolved against the
//! session's tools as they are when it starts (0.61's rules: `*` every tool,
//! `mcp_*` every MCP tool, `mcp_<server>_*` one server's tools, else a
//! tool's name; no `tools` field: every tool of the session), never
//! `invoke_agent` (an agent cannot start another) nor `update_topic` (the
//! topic is the parent conversation's).

use super::{AgentDefinition, AgentTools};
use crate::tools::{Tool, ToolRegistry};

/// `agent`'s tools out of the session's `registry`: in the definition's
/// order when it lists them (0.61 declares them so: the investigator's
/// `list_directory, read_file, glob, grep_search`), each wildcard's tools
/// in the registry's order; all of them in the registry's order otherwise.
pub fn subagent_registry(agent: &AgentDefinition, registry: &ToolRegistry) -> ToolRegistry {
    let mut tools = registry.clone();
    tools.retain(|tool| {
        let name = tool.name();
        if name == super::invoke::NAME || name == crate::tools::topic::UpdateTopic::NAME {
            return false;
        }
        match &agent.tools {
            AgentTools::Inherit => true,
            AgentTools::Listed(wanted) => wanted.iter().any(|w| matches(w, tool)),
        }
    });
    let AgentTools::Listed(wanted) = &agent.tools else {
        return tools;
    };
    let mut ordered = ToolRegistry::new();
    for entry in wanted {
        for name in tools.names() {
            if ordered.get(&name).is_some() {
                continue;
            }
            if let Some(tool) = tools.get(&name).filter(|t| matches(entry, t.as_ref())) {
                ordered.register(tool.clone());
            }
        }
    }
    ordered
}

/// Whether the definition's entry `wanted` names `tool`.
fn matches(wanted: &str, tool: &dyn Tool) -> bool {
    let wanted = wanted.trim();
    if wanted == "*" {
        return true;
    }
    if wanted == "mcp_*" {
        return tool.mcp_server().is_some();
    }
    if let Some(server) = wanted
        .strip_prefix("mcp_")
        .and_then(|rest| rest.strip_suffix("_*"))
    {
        return tool.mcp_server() == Some(server);
    }
    ToolRegistry::canonical_name(wanted) == tool.name()
}
