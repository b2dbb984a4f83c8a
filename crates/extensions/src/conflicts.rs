//! What happens when two definitions want the same name, as 0.61 decides:
//!
//! - MCP servers: a server in settings.json wins over an extension's of the
//!   same name; between extensions, the first one (by folder name, the
//!   order 0.61 loads them in) wins. The loser is not started, and its
//!   extension carries a note saying so.
//! - Commands: see gd-core's command catalog (an extension command that
//!   clashes is renamed `<extension>:<command>`, as 0.61's resolver does).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::Extension;

/// Notes the servers an enabled extension defines that an earlier enabled
/// extension already defines.
pub fn between_extensions(extensions: &mut [Extension]) {
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    for ext in extensions.iter_mut().filter(|e| e.enabled) {
        for name in ext.contributions.mcp_servers.keys() {
            match owner.get(name) {
                Some(first) => ext.notes.push(format!(
                    "MCP server \"{name}\" is not started: extension \"{first}\" defines a server of the same name and is used"
                )),
                None => {
                    owner.insert(name.clone(), ext.manifest.name.clone());
                }
            }
        }
    }
}

/// The enabled extensions' MCP servers a session starts, after
/// `settings_servers` (the names in settings.json, which win), each with
/// the name of its extension; plus a note per server left out.
pub fn session_servers<'a>(
    enabled: impl Iterator<Item = &'a Extension>,
    settings_servers: &[String],
) -> (Vec<(String, String, Value)>, Vec<String>) {
    let mut taken: BTreeMap<String, String> = settings_servers
        .iter()
        .map(|n| (n.clone(), "settings.json".to_owned()))
        .collect();
    let mut servers = Vec::new();
    let mut notes = Vec::new();
    for ext in enabled {
        for (name, def) in &ext.contributions.mcp_servers {
            if let Some(by) = taken.get(name) {
                let by = if by == "settings.json" {
                    "settings.json".to_owned()
                } else {
                    format!("extension \"{by}\"")
                };
                notes.push(format!(
                    "Extension \"{}\": MCP server \"{name}\" is not started; the one in {by} is used",
                    ext.manifest.name
                ));
                continue;
            }
            taken.insert(name.clone(), ext.manifest.name.clone());
            servers.push((ext.manifest.name.clone(), name.clone(), def.clone()));
        }
    }
    (servers, notes)
}

/// The servers as one JSON object, keyed by name (for settings merging).
pub fn as_map(servers: &[(String, String, Value)]) -> Map<String, Value> {
    servers
        .iter()
        .map(|(_, name, def)| (name.clone(), def.clone()))
        .collect()
}
