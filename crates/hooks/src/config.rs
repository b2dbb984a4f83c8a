//! The `hooks` object of a settings layer (or of an extension's
//! `hooks/hooks.json`), and `hooksConfig`.
//!
//! ```json
//! { "BeforeTool": [ { "matcher": "write_file|replace", "sequential": false,
//!     "hooks": [ { "type": "command", "command": "...", "name": "...", "timeout": 5000 } ] } ] }
//! ```
//!
//! Reading is lenient where 0.61 is (unknown keys are ignored) and strict
//! where a mistake would silently drop a guard: an unknown event name, a
//! group without `hooks`, a hook without `command` are reported with the
//! file and the place, and the other hooks still load.

use std::path::Path;

use gd_protocol::{DefinitionError, HookEventName, HookSource};
use serde_json::Value;

use crate::{event_name, parse_event};

/// 0.61's default time-out: 60 s.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;

/// One configured hook.
#[derive(Debug, Clone, PartialEq)]
pub struct HookDef {
    /// Stable in a session: `<source>:<event>:<group>:<index>` (the
    /// extension's name for extension hooks).
    pub id: String,
    pub event: HookEventName,
    pub matcher: Option<String>,
    pub sequential: bool,
    pub name: Option<String>,
    pub command: String,
    pub description: Option<String>,
    pub timeout_ms: u64,
    /// Extra environment variables (`env`, an object of strings).
    pub env: Vec<(String, String)>,
    pub source: HookSource,
    pub extension: Option<String>,
    /// The group's index within its event (hooks of one group run together).
    pub group: usize,
}

impl HookDef {
    /// What names the hook in messages: its name, else its command.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.command)
    }
}

/// `hooksConfig`: hooks on or off, and the ones turned off by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HooksConfig {
    /// `hooksConfig.enabled` (default true).
    pub enabled: bool,
    /// `hooksConfig.disabled`: names (or commands) of hooks not to run.
    pub disabled: Vec<String>,
}

impl Default for HooksConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            disabled: Vec::new(),
        }
    }
}

impl HooksConfig {
    /// Reads `hooksConfig` of the merged settings.
    pub fn from_settings(merged: &Value) -> Self {
        let section = merged.get("hooksConfig");
        Self {
            enabled: section
                .and_then(|s| s.get("enabled"))
                .and_then(Value::as_bool)
                .unwrap_or(true),
            disabled: section
                .and_then(|s| s.get("disabled"))
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// The hooks of one `hooks` object. `path` names the file in errors.
pub fn parse_hooks(
    hooks: &Value,
    source: HookSource,
    extension: Option<&str>,
    path: &Path,
) -> (Vec<HookDef>, Vec<DefinitionError>) {
    let mut defs = Vec::new();
    let mut errors = Vec::new();
    let error = |message: String| DefinitionError {
        path: path.display().to_string(),
        line: None,
        message,
    };
    let Some(events) = hooks.as_object() else {
        if !hooks.is_null() {
            errors.push(error("`hooks` must be an object of events".into()));
        }
        return (defs, errors);
    };
    let prefix = match (source, extension) {
        (HookSource::Extension, Some(name)) => format!("extension:{name}"),
        _ => format!("{source:?}").to_lowercase(),
    };
    for (key, groups) in events {
        let Some(event) = parse_event(key) else {
            errors.push(error(format!(
                "hooks.{key}: unknown hook event (known: {})",
                crate::EVENTS.map(event_name).join(", ")
            )));
            continue;
        };
        let Some(groups) = groups.as_array() else {
            errors.push(error(format!("hooks.{key}: must be a list of hook groups")));
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let place = format!("hooks.{key}[{g}]");
            let Some(list) = group.get("hooks").and_then(Value::as_array) else {
                errors.push(error(format!("{place}: a hook group needs a `hooks` list")));
                continue;
            };
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let sequential = group.get("sequential").and_then(Value::as_bool) == Some(true);
            for (i, hook) in list.iter().enumerate() {
                let place = format!("{place}.hooks[{i}]");
                let kind = hook
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("command");
                if kind != "command" {
                    errors.push(error(format!(
                        "{place}: hook type `{kind}` is not supported (only `command`)"
                    )));
                    continue;
                }
                let Some(command) = hook
                    .get("command")
                    .and_then(Value::as_str)
                    .filter(|c| !c.trim().is_empty())
                else {
                    errors.push(error(format!("{place}: a command hook needs a `command`")));
                    continue;
                };
                let timeout_ms = match hook.get("timeout") {
                    None | Some(Value::Null) => DEFAULT_TIMEOUT_MS,
                    Some(t) => match t.as_u64().filter(|t| *t > 0) {
                        Some(t) => t,
                        None => {
                            errors.push(error(format!(
                                "{place}.timeout: must be a positive number of milliseconds; using {DEFAULT_TIMEOUT_MS}"
                            )));
                            DEFAULT_TIMEOUT_MS
                        }
                    },
                };
                let env = hook
                    .get("env")
                    .and_then(Value::as_object)
                    .map(|vars| {
                        vars.iter()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                            .collect()
                    })
                    .unwrap_or_default();
                defs.push(HookDef {
                    id: format!("{prefix}:{key}:{g}:{i}"),
                    event,
                    matcher: matcher.clone(),
                    sequential,
                    name: hook
                        .get("name")
                        .and_then(Value::as_str)
                        .filter(|n| !n.trim().is_empty())
                        .map(str::to_owned),
                    command: command.to_owned(),
                    description: hook
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    timeout_ms,
                    env,
                    source,
                    extension: extension.map(str::to_owned),
                    group: g,
                });
            }
        }
    }
    (defs, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_groups_and_reports_mistakes_with_their_place() {
        let hooks = json!({
            "BeforeTool": [
                {"matcher": "write_file|replace", "hooks": [
                    {"type": "command", "command": "./check.sh", "name": "check", "timeout": 5000},
                    {"type": "command"}
                ]},
                {"hooks": [{"command": "echo {}"}], "sequential": true}
            ],
            "BeforeEverything": [],
            "AfterTool": [{"matcher": "x"}]
        });
        let (defs, errors) = parse_hooks(
            &hooks,
            HookSource::User,
            None,
            Path::new("/h/settings.json"),
        );
        assert_eq!(defs.len(), 2);
        assert_eq!(defs[0].id, "user:BeforeTool:0:0");
        assert_eq!(defs[0].matcher.as_deref(), Some("write_file|replace"));
        assert_eq!(defs[0].timeout_ms, 5000);
        assert_eq!(defs[0].label(), "check");
        assert!(defs[1].sequential);
        assert_eq!(defs[1].timeout_ms, DEFAULT_TIMEOUT_MS);
        assert_eq!(defs[1].label(), "echo {}");
        let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("hooks.BeforeTool[0].hooks[1]: a command hook needs"))
        );
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("hooks.BeforeEverything: unknown hook event"))
        );
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("hooks.AfterTool[0]: a hook group needs"))
        );
        assert!(errors.iter().all(|e| e.path == "/h/settings.json"));
    }

    #[test]
    fn hooks_config_defaults_to_on() {
        assert_eq!(
            HooksConfig::from_settings(&json!({})),
            HooksConfig::default()
        );
        let c = HooksConfig::from_settings(
            &json!({"hooksConfig": {"enabled": false, "disabled": ["a"]}}),
        );
        assert!(!c.enabled);
        assert_eq!(c.disabled, vec!["a".to_owned()]);
    }
}
