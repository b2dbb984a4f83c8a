//! An extension's setting values as environment variables of the programs
//! it brings. 0.61 does not only substitute `${MY_API_KEY}` where the
//! manifest names it: every stdio server of the extension and every
//! command hook gets the values of the extension's declared settings in
//! its environment, so a server that reads `MY_API_KEY` itself works
//! without the manifest repeating it. Only declared settings are given
//! (the values come from the extension's `.env` and the secret store, both
//! keyed by the declared names), never the rest of the user's environment.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::contributions::Contributions;

/// Adds `values` to the `env` of each stdio server and command hook in
/// `c`. A server's own `env` entry wins over a setting of the same name
/// (0.61 lays the settings down first, then the entry's `env`); in a hook
/// the setting wins (0.61 spreads the settings last). Variables that could
/// inject code into a server (`LD_PRELOAD`...) are still refused where the
/// server's environment is built, as for any `env` entry.
pub fn give(c: &mut Contributions, values: &HashMap<String, String>) {
    if values.is_empty() {
        return;
    }
    // Sorted, so a definition's `env` reads the same on every launch.
    let values: BTreeMap<&String, &String> = values.iter().collect();
    for def in c.mcp_servers.values_mut() {
        let Some(server) = def.as_object_mut() else {
            continue;
        };
        if !server.contains_key("command") {
            // A URL server runs elsewhere; it has no environment of ours.
            continue;
        }
        let env = server
            .entry("env")
            .or_insert_with(|| Value::Object(Default::default()));
        let Some(env) = env.as_object_mut() else {
            continue;
        };
        for (k, v) in &values {
            env.entry(k.as_str())
                .or_insert_with(|| Value::String((*v).clone()));
        }
    }
    if let Some((_, hooks)) = &mut c.hooks {
        for hook in command_hooks(hooks) {
            let env = hook
                .entry("env")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(env) = env.as_object_mut() {
                for (k, v) in &values {
                    env.insert((*k).clone(), Value::String((*v).clone()));
                }
            }
        }
    }
}

/// The command hooks of a `hooks` object (`{event: [{matcher, hooks: [..]}]}`);
/// a hook without `type` is a command hook, as gd-hooks reads it.
fn command_hooks(hooks: &mut Value) -> Vec<&mut serde_json::Map<String, Value>> {
    let Some(events) = hooks.as_object_mut() else {
        return Vec::new();
    };
    events
        .values_mut()
        .filter_map(Value::as_array_mut)
        .flatten()
        .filter_map(|definition| definition.get_mut("hooks")?.as_array_mut())
        .flatten()
        .filter_map(Value::as_object_mut)
        .filter(|hook| hook.get("type").is_none_or(|t| t == "command"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contributions() -> Contributions {
        let mut c = Contributions::default();
        c.mcp_servers.insert(
            "local".into(),
            json!({"command": "srv", "env": {"REGION": "from-entry"}}),
        );
        c.mcp_servers
            .insert("remote".into(), json!({"httpUrl": "https://x"}));
        c.hooks = Some((
            "hooks.json".into(),
            json!({"BeforeTool": [{"matcher": "x", "hooks": [
                {"type": "command", "command": "a", "env": {"REGION": "from-hook"}},
                {"command": "b"},
                {"type": "runtime", "name": "c"}
            ]}]}),
        ));
        c
    }

    fn values() -> HashMap<String, String> {
        [("REGION", "eu"), ("API_KEY", "k")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn stdio_servers_get_the_values_under_their_own_entries() {
        let mut c = contributions();
        give(&mut c, &values());
        assert_eq!(
            c.mcp_servers["local"]["env"],
            json!({"REGION": "from-entry", "API_KEY": "k"})
        );
        assert!(c.mcp_servers["remote"].get("env").is_none());
    }

    #[test]
    fn command_hooks_get_the_values_over_their_own() {
        let mut c = contributions();
        give(&mut c, &values());
        let hooks = &c.hooks.unwrap().1["BeforeTool"][0]["hooks"];
        assert_eq!(hooks[0]["env"], json!({"REGION": "eu", "API_KEY": "k"}));
        assert_eq!(hooks[1]["env"], json!({"REGION": "eu", "API_KEY": "k"}));
        assert!(hooks[2].get("env").is_none(), "not a command hook");
    }

    #[test]
    fn no_values_change_nothing() {
        let mut c = contributions();
        give(&mut c, &HashMap::new());
        assert_eq!(c, contributions());
    }
}
