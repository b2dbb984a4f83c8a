//! An agent's own MCP servers (`mcp_servers` in its front matter, 0.61's
//! field): read with the same rules as settings.json's `mcpServers`, started
//! when the agent runs, offered to that agent only (the parent never sees
//! their tools), stopped when the run ends however it ends.

use std::path::PathBuf;

use gd_mcp::{McpManager, McpOptions};
use gd_protocol::McpServerState;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::tools::ToolRegistry;
use crate::tools::mcp::McpTools;

/// 0.61's front-matter spellings and the settings.json names gd-mcp reads.
const RENAMES: &[(&str, &str)] = &[
    ("http_url", "httpUrl"),
    ("include_tools", "includeTools"),
    ("exclude_tools", "excludeTools"),
    ("client_id", "clientId"),
    ("client_secret", "clientSecret"),
    ("authorization_url", "authorizationUrl"),
    ("token_url", "tokenUrl"),
    ("redirect_uri", "redirectUri"),
    ("token_param_name", "tokenParamName"),
    ("registration_url", "registrationUrl"),
];

/// The front matter's `mcp_servers` as settings-style entries, each one
/// checked as a settings entry is. The error names the server and what is
/// wrong with it, and gives the server's name apart (so the file's error
/// can point at the entry's own line).
pub fn parse(
    mapping: serde_yaml_ng::Mapping,
) -> Result<Map<String, Value>, (Option<String>, String)> {
    let mut servers = Map::new();
    for (key, value) in mapping {
        let Some(name) = key.as_str().map(str::to_owned) else {
            return Err((None, "mcp_servers: a server's name must be a string".into()));
        };
        let entry = entry(&name, value).map_err(|message| (Some(name.clone()), message))?;
        servers.insert(name, entry);
    }
    Ok(servers)
}

/// One server's entry, in settings.json's shape and checked by gd-mcp.
fn entry(name: &str, value: serde_yaml_ng::Value) -> Result<Value, String> {
    let mut entry = serde_json::to_value(&value).map_err(|e| format!("mcp_servers.{name}: {e}"))?;
    let Value::Object(map) = &mut entry else {
        return Err(format!("mcp_servers.{name}: the entry must be a mapping"));
    };
    rename(map);
    // 0.61's `auth: {type: oauth, …}` is settings.json's `oauth` object.
    if let Some(Value::Object(mut auth)) = map.remove("auth") {
        match auth.remove("type").as_ref().and_then(Value::as_str) {
            Some("oauth") => {
                rename(&mut auth);
                auth.insert("enabled".into(), Value::Bool(true));
                map.insert("oauth".into(), Value::Object(auth));
            }
            other => {
                return Err(format!(
                    "mcp_servers.{name}.auth: type {} is not supported here (only `oauth`)",
                    other.unwrap_or("(none)")
                ));
            }
        }
    }
    gd_mcp::config::parse_server(&entry).map_err(|e| format!("mcp_servers.{name}: {e}"))?;
    Ok(entry)
}

fn rename(map: &mut Map<String, Value>) {
    for (from, to) in RENAMES {
        if let Some(value) = map.remove(*from) {
            map.insert((*to).to_owned(), value);
        }
    }
}

/// What an agent's run says when its servers may not start because the
/// folder is not trusted (it runs without their tools).
pub(crate) fn untrusted_message(agent: &super::AgentDefinition) -> String {
    let names: Vec<&str> = agent.mcp_servers.keys().map(String::as_str).collect();
    format!(
        "Agent '{}': its MCP servers ({}) are not started because this folder is not trusted.",
        agent.name,
        names.join(", ")
    )
}

/// The servers of one run. Dropping it stops them (SIGTERM to a stdio
/// server's process group), so a run that is cancelled, times out or
/// fails leaves no process behind.
pub(crate) struct AgentServers {
    manager: McpManager,
}

impl AgentServers {
    /// Starts `servers` and waits for their first discovery (or for
    /// `cancel`). Returns the servers and, in words, the ones that did not
    /// come up: the agent runs without their tools.
    ///
    /// `base` holds the session's MCP rules (`mcp.allowed` / `mcp.excluded`,
    /// servers turned off, OAuth); a server they block is reported like one
    /// that failed.
    pub(crate) async fn start(
        agent: &str,
        servers: &Map<String, Value>,
        base: Option<&McpOptions>,
        workspace_dirs: Vec<PathBuf>,
        cancel: &CancellationToken,
    ) -> (Self, Vec<String>) {
        let options = match base {
            Some(base) => {
                let mut options = base.clone();
                options.servers = gd_mcp::config::parse_servers(servers);
                options.workspace_dirs = workspace_dirs;
                options
            }
            None => McpOptions::new(servers, workspace_dirs),
        };
        let manager = McpManager::new(options);
        manager.start();
        tokio::select! {
            _ = manager.wait_discovery() => {}
            _ = cancel.cancelled() => {}
        }
        let problems = manager
            .statuses()
            .into_iter()
            .filter(|s| s.state != McpServerState::Connected)
            .map(|s| {
                format!(
                    "Agent '{agent}': MCP server '{}' is not available: {}",
                    s.name,
                    s.error.as_deref().unwrap_or("it did not start")
                )
            })
            .collect();
        tracing::info!(agent, servers = servers.len(), "agent MCP servers started");
        (Self { manager }, problems)
    }

    /// `registry` plus these servers' tools (0.61 gives an agent every tool
    /// of its own servers, whatever its `tools` list says).
    pub(crate) fn offer(&self, registry: &ToolRegistry) -> ToolRegistry {
        McpTools::new(self.manager.clone()).compose(registry)
    }

    /// The servers marked `trust: true`: their calls run without asking.
    pub(crate) fn trusted(&self) -> Vec<String> {
        self.manager
            .statuses()
            .into_iter()
            .filter(|s| s.trust)
            .map(|s| s.name)
            .collect()
    }
}

impl Drop for AgentServers {
    fn drop(&mut self) {
        self.manager.terminate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> serde_yaml_ng::Mapping {
        serde_yaml_ng::from_str(text).unwrap()
    }

    #[test]
    fn front_matter_names_become_settings_names() {
        let servers = parse(yaml(
            "tiny:\n  command: python3\n  args: [server.py]\n  include_tools: [add]\n  trust: true\n",
        ))
        .unwrap();
        assert_eq!(servers["tiny"]["includeTools"], serde_json::json!(["add"]));
        assert_eq!(servers["tiny"]["trust"], Value::Bool(true));
    }

    #[test]
    fn a_bad_entry_names_the_server() {
        let (server, error) = parse(yaml("broken:\n  args: 3\n")).unwrap_err();
        assert_eq!(server.as_deref(), Some("broken"));
        assert!(error.starts_with("mcp_servers.broken: "), "{error}");
        let error = parse(yaml(
            "g:\n  command: x\n  auth:\n    type: google-credentials\n",
        ))
        .unwrap_err()
        .1;
        assert!(error.contains("not supported"), "{error}");
    }
}
