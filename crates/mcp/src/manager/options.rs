//! What a manager is built from: the servers, the filter, the enablement
//! file, OAuth, and how crashed servers are restarted.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::{ServerEntry, ServerFilter};
use crate::enablement::{Enablement, enablement_file};
use crate::oauth::McpOAuth;

/// Restarts after a crash: `initial`, doubling up to `max`, at most
/// `max_attempts` in a row (a server that stayed up for `stable` starts
/// counting again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    pub initial: Duration,
    pub max: Duration,
    pub max_attempts: u32,
    pub stable: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(30),
            max_attempts: 5,
            stable: Duration::from_secs(60),
        }
    }
}

impl RestartPolicy {
    /// The wait before restart number `attempt` (1-based).
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(16));
        self.initial.saturating_mul(factor).min(self.max)
    }
}

/// What the manager is built from.
#[derive(Clone)]
pub struct McpOptions {
    pub servers: Vec<ServerEntry>,
    pub filter: ServerFilter,
    /// The session's workspace directories: offered as roots; the first is
    /// the default working directory of stdio servers.
    pub workspace_dirs: Vec<PathBuf>,
    pub enablement: Enablement,
    /// OAuth sign-in for HTTP servers; `None` = off (a 401 only says the
    /// server needs credentials).
    pub oauth: Option<McpOAuth>,
    pub client_name: String,
    pub client_version: String,
    pub restart: RestartPolicy,
    /// The environment stdio servers start from (before sanitising);
    /// `None` = this process's.
    pub process_env: Option<Vec<(String, String)>>,
    /// What a server with `sandbox: true` may do (the session's sandbox policy: its workspace
    /// folders writable, the settings' network). Defaults to the workspace folders and no
    /// network.
    pub sandbox: gd_sandbox::Policy,
}

impl std::fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpOptions")
            .field("servers", &self.servers)
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

impl McpOptions {
    /// Options for `servers` (the `mcpServers` object) with defaults: no
    /// filter, no persistence, no OAuth.
    pub fn new(servers: &Map<String, Value>, workspace_dirs: Vec<PathBuf>) -> Self {
        let sandbox = gd_sandbox::Policy {
            writable: workspace_dirs.clone(),
            ..gd_sandbox::Policy::default()
        };
        Self {
            servers: crate::config::parse_servers(servers),
            filter: ServerFilter::default(),
            workspace_dirs,
            enablement: Enablement::new(None),
            oauth: None,
            client_name: "gemini-desktop-mcp-client".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            restart: RestartPolicy::default(),
            process_env: None,
            sandbox,
        }
    }

    /// Options from merged settings: `mcpServers`, `mcp.allowed`,
    /// `mcp.excluded`, and the enablement file under `home`.
    pub fn from_settings(
        settings: &gd_settings::Settings,
        workspace_dirs: Vec<PathBuf>,
        home: Option<&Path>,
    ) -> Self {
        let mut options = Self::new(&settings.mcp_servers, workspace_dirs);
        options.filter = ServerFilter {
            allowed: settings.mcp.allowed.clone(),
            excluded: settings.mcp.excluded.clone(),
        };
        options.enablement = Enablement::new(home.map(enablement_file));
        options.oauth = Some(McpOAuth::shared(settings, home));
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RestartPolicy::default();
        let delays: Vec<u64> = (1..=7).map(|a| p.delay(a).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30]);
    }
}
