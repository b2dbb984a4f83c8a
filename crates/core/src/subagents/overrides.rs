//! `agents.overrides.<name>` from the settings (Gemini CLI 0.61's
//! `AgentOverride`): `enabled`, `modelConfig.model`,
//! `modelConfig.generateContentConfig.temperature`, `runConfig.maxTurns`,
//! `runConfig.maxTimeMinutes`, and `tools` (0.61 applies it although its
//! settings schema does not list it). Each entry is read on its own: a
//! broken one becomes a launch warning and the other entries still apply.

use std::time::Duration;

use serde::Deserialize;

use super::{AgentDefinition, AgentTools, ModelChoiceForAgent};

/// One agent's override, as the settings hold it.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentOverride {
    pub enabled: Option<bool>,
    pub model_config: Option<ModelConfig>,
    pub run_config: Option<RunConfig>,
    pub tools: Option<Vec<String>>,
    /// More MCP servers of the agent's own, merged over its file's by
    /// name (0.61), started when it runs.
    pub mcp_servers: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `modelConfig`: 0.61 merges it into the agent's model config; this app
/// reads the model and the temperature from it and ignores the rest.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelConfig {
    pub model: Option<String>,
    pub generate_content_config: Option<GenerateContentConfig>,
}

#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentConfig {
    pub temperature: Option<f32>,
}

#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunConfig {
    pub max_turns: Option<u32>,
    pub max_time_minutes: Option<u32>,
}

/// The entries of `agents.overrides`, read one by one; the broken ones are
/// returned as warnings naming the entry.
pub fn read(
    overrides: Option<&serde_json::Map<String, serde_json::Value>>,
) -> (Vec<(String, AgentOverride)>, Vec<String>) {
    let mut good = Vec::new();
    let mut warnings = Vec::new();
    for (name, value) in overrides.into_iter().flatten() {
        match serde_json::from_value::<AgentOverride>(value.clone()) {
            Ok(o) => match check(&o) {
                Ok(()) => good.push((name.clone(), o)),
                Err(message) => warnings.push(ignored(name, &message)),
            },
            Err(e) => warnings.push(ignored(name, &e.to_string())),
        }
    }
    (good, warnings)
}

fn ignored(name: &str, message: &str) -> String {
    format!("Settings: agents.overrides.{name} ignored: {message}")
}

fn check(o: &AgentOverride) -> Result<(), String> {
    if let Some(run) = &o.run_config {
        if run.max_turns == Some(0) {
            return Err("runConfig.maxTurns must be at least 1".into());
        }
        if run.max_time_minutes == Some(0) {
            return Err("runConfig.maxTimeMinutes must be at least 1".into());
        }
    }
    Ok(())
}

/// Applies `o` to `agent` (0.61's `applyOverrides` for local agents;
/// `enabled` applies to remote ones too).
pub fn apply(agent: &mut AgentDefinition, o: &AgentOverride) {
    if let Some(enabled) = o.enabled {
        agent.enabled = enabled;
    }
    if agent.kind != gd_protocol::AgentKind::Local {
        return;
    }
    if let Some(model) = &o.model_config {
        match model.model.as_deref().map(str::trim) {
            Some("inherit") => agent.model = ModelChoiceForAgent::Inherit,
            Some(name) if !name.is_empty() => {
                agent.model = ModelChoiceForAgent::Named(name.to_owned());
            }
            _ => {}
        }
        if let Some(t) = model
            .generate_content_config
            .as_ref()
            .and_then(|g| g.temperature)
        {
            agent.temperature = Some(t);
        }
    }
    if let Some(run) = &o.run_config {
        if let Some(turns) = run.max_turns {
            agent.max_turns = turns;
        }
        if let Some(minutes) = run.max_time_minutes {
            agent.timeout = Duration::from_secs(u64::from(minutes) * 60);
        }
    }
    if let Some(servers) = &o.mcp_servers {
        // 0.61 merges them over the file's, by server name.
        for (name, entry) in servers {
            agent.mcp_servers.insert(name.clone(), entry.clone());
        }
    }
    if let Some(tools) = &o.tools {
        agent.tools = AgentTools::Listed(tools.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_broken_entry_is_a_warning_and_the_rest_apply() {
        let map = json!({
            "good": {"enabled": false, "runConfig": {"maxTurns": 5}},
            "typo": {"runConfig": {"maxTurn": 5}},
            "zero": {"runConfig": {"maxTimeMinutes": 0}},
            "wrong": {"enabled": "yes"}
        });
        let (good, warnings) = read(map.as_object());
        assert_eq!(good.len(), 1);
        assert_eq!(good[0].0, "good");
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("agents.overrides.typo")));
    }
}
