//! The catalog a launch builds: built-in agents, then (in a trusted folder)
//! the workspace's definition files, then the user's, then the settings'
//! `agents.overrides`, following Gemini CLI 0.61's `AgentRegistry`:
//!
//! - `experimental.enableAgents: false` gives an empty catalog (0.61's
//!   default is on);
//! - the first definition of a name wins and a later one is skipped with a
//!   warning ("Duplicate agent name"), so a file cannot replace a built-in
//!   agent, and a workspace agent hides a user agent of the same name;
//!   a definition that is disabled does not hold its name;
//! - an untrusted folder's `.gemini/agents` is not read at all, and no
//!   agent's own MCP servers start there ([`OwnMcp::Untrusted`]).
//!
//! Each folder costs one `read_dir` (a missing one costs nothing), and no
//! file is read unless it is a `.md` definition.

use std::path::Path;

use gd_protocol::DefinitionSource;
use gd_settings::Settings;
use tracing::debug;

use super::catalog::OwnMcp;
use super::files::{self, FileAgent};
use super::overrides::{self, AgentOverride};
use super::{AgentCatalog, AgentDefinition, builtin};

/// `<base>/.gemini/agents`, the folder 0.61 reads (under the home for the
/// user tier, under the workspace for the project tier).
pub fn agents_dir(base: &Path) -> std::path::PathBuf {
    base.join(".gemini").join("agents")
}

/// Reads every agent for a session launched in `workspace`.
pub fn load(
    settings: &Settings,
    home: Option<&Path>,
    workspace: &Path,
    trusted: bool,
) -> AgentCatalog {
    if settings.experimental.enable_agents == Some(false) {
        debug!("experimental.enableAgents is false: no agents");
        return AgentCatalog::default();
    }
    let (overrides, mut warnings) = overrides::read(settings.agents.overrides.as_ref());
    let mut agents: Vec<AgentDefinition> = Vec::new();
    let mut notes: Vec<(String, String)> = Vec::new();
    let mut errors = Vec::new();

    for agent in builtin::agents() {
        add(&mut agents, &mut warnings, &overrides, agent);
    }
    let mut tiers = Vec::new();
    if trusted {
        tiers.push((agents_dir(workspace), DefinitionSource::Workspace));
    } else {
        debug!("untrusted folder: workspace agents are not read");
    }
    if let Some(home) = home {
        let user = agents_dir(home);
        // A workspace that is the home folder has one folder, read once.
        if !tiers.iter().any(|(dir, _)| *dir == user) {
            tiers.push((user, DefinitionSource::User));
        }
    }
    // Enabled extensions' `agents/` last: a user's or workspace's agent of
    // the same name wins, as 0.61 ranks the tiers.
    if let Some(home) = home {
        for dir in crate::extensions::agent_dirs(home, workspace) {
            tiers.push((dir, DefinitionSource::Extension));
        }
    }
    for (dir, source) in tiers {
        let found = files::read_folder(&dir, source);
        errors.extend(found.errors);
        for FileAgent { definition } in found.agents {
            add(&mut agents, &mut warnings, &overrides, definition);
        }
    }
    for agent in agents.iter().filter(|a| !a.mcp_servers.is_empty()) {
        notes.push((agent.name.clone(), mcp_note(agent, trusted)));
    }
    let own_mcp = own_mcp(&agents, settings, home, trusted);
    debug!(
        agents = agents.len(),
        errors = errors.len(),
        "agents loaded"
    );
    AgentCatalog::new(agents, errors)
        .with_notes_and_warnings(notes, warnings)
        .with_own_mcp(own_mcp)
}

/// How agents' own servers start: with the session's MCP rules (built only
/// when an agent has servers, so a launch without any pays nothing), and
/// never in an untrusted folder (0.61's MCP manager starts nothing there).
fn own_mcp(
    agents: &[AgentDefinition],
    settings: &Settings,
    home: Option<&Path>,
    trusted: bool,
) -> OwnMcp {
    if !trusted {
        return OwnMcp::Untrusted;
    }
    if agents.iter().all(|a| a.mcp_servers.is_empty()) {
        return OwnMcp::Defaults;
    }
    let mut options = gd_mcp::McpOptions::from_settings(settings, Vec::new(), home);
    options.servers.clear();
    OwnMcp::Settings(Box::new(options))
}

/// Adds `agent` unless an enabled agent already holds its name (a disabled
/// one is replaced); returns whether it was added.
fn add(
    agents: &mut Vec<AgentDefinition>,
    warnings: &mut Vec<String>,
    overrides: &[(String, AgentOverride)],
    mut agent: AgentDefinition,
) -> bool {
    if let Some((_, o)) = overrides.iter().find(|(name, _)| *name == agent.name) {
        overrides::apply(&mut agent, o);
    }
    match agents.iter().position(|a| a.name == agent.name) {
        Some(i) if !agents[i].enabled => {
            agents[i] = agent;
            true
        }
        Some(_) => {
            let from = agent
                .path
                .as_ref()
                .map(|p| format!(" ({})", p.display()))
                .unwrap_or_default();
            warnings.push(format!(
                "Duplicate agent name '{}'{from}: the later definition is ignored. Rename one of the agents.",
                agent.name
            ));
            false
        }
        None => {
            agents.push(agent);
            true
        }
    }
}

/// The listing's word on an agent's own MCP servers.
fn mcp_note(agent: &AgentDefinition, trusted: bool) -> String {
    let names: Vec<&str> = agent.mcp_servers.keys().map(String::as_str).collect();
    if trusted {
        format!(
            "its own MCP servers ({}) start when it runs",
            names.join(", ")
        )
    } else {
        format!(
            "its own MCP servers ({}) do not start: this folder is not trusted",
            names.join(", ")
        )
    }
}
