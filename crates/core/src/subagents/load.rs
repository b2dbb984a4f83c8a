//! The catalog a launch builds: built-in agents, then the user's and (in a
//! trusted folder) the workspace's definition files, then the settings'
//! `agents.overrides`.

use std::path::Path;

use gd_settings::Settings;

use super::{AgentCatalog, builtin};

/// Reads every agent for a session launched in `workspace`.
pub fn load(
    _settings: &Settings,
    _home: Option<&Path>,
    _workspace: &Path,
    _trusted: bool,
) -> AgentCatalog {
    AgentCatalog::new(builtin::agents(), Vec::new())
}
