//! Reading a session's hooks: the `hooks` of the system, user and
//! workspace settings files (the workspace's only in a trusted folder: an
//! untrusted repository must not run programs on the user's machine; they
//! are listed as not run so the user sees why) and of enabled extensions.

use std::path::PathBuf;

use gd_hooks::config::{HookDef, HooksConfig, parse_hooks};
use gd_hooks::{HookEnv, HookRegistry, HookSource};
use gd_protocol::DefinitionError;
use gd_settings::layers::{Layer, LayerKind};
use serde_json::Value;

use crate::env_redaction::EnvRedaction;

/// Why an untrusted folder's hooks are listed but never run.
pub const UNTRUSTED_NOTE: &str = "not run: this folder is not trusted";

/// The hooks of the settings `layers` (and of the untrusted workspace file, listed as
/// not run) plus the extensions' (`(name, hooks.json, its object)`).
pub fn load(
    layers: &[Layer],
    merged: &Value,
    skipped_workspace: Option<&std::path::Path>,
    trusted: bool,
    extension_hooks: &[(String, PathBuf, Value)],
    env: HookEnv,
) -> (HookRegistry, Vec<DefinitionError>) {
    let mut hooks: Vec<HookDef> = Vec::new();
    let mut errors = Vec::new();
    // 0.61's precedence: project, user, system, then extensions.
    for kind in [LayerKind::Workspace, LayerKind::User, LayerKind::System] {
        for layer in layers.iter().filter(|l| l.kind == kind) {
            let Some(value) = layer.value.get("hooks") else {
                continue;
            };
            let source = match kind {
                LayerKind::Workspace => HookSource::Workspace,
                LayerKind::User => HookSource::User,
                _ => HookSource::System,
            };
            let (defs, errs) = parse_hooks(value, source, None, &layer.path);
            hooks.extend(defs);
            errors.extend(errs);
        }
    }
    for (name, path, value) in extension_hooks {
        let value = value.get("hooks").unwrap_or(value);
        let (defs, errs) = parse_hooks(value, HookSource::Extension, Some(name), path);
        hooks.extend(defs);
        errors.extend(errs);
    }
    let mut not_run = Vec::new();
    if !trusted && let Some(path) = skipped_workspace {
        // Read only to list them; nothing of this file is applied.
        if let Some(value) = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| {
                let text = gd_settings::jsonc::strip_trailing_commas(
                    &gd_settings::jsonc::strip_comments(&text),
                );
                serde_json::from_str::<Value>(&text).ok()
            })
            .and_then(|v| v.get("hooks").cloned())
        {
            not_run = parse_hooks(&value, HookSource::Workspace, None, path).0;
        }
    }
    let config = HooksConfig::from_settings(merged);
    // The sanitized environment costs regex compilations: only a session
    // with hooks pays for it.
    let mut env = env;
    if !hooks.is_empty() {
        env.base_env = base_env();
    }
    let registry = HookRegistry::new(hooks, config, env).with_not_run(not_run, UNTRUSTED_NOTE);
    (registry, errors)
}

/// The environment hooks inherit: the app's, without what looks like a
/// secret (0.61's sanitizing rules; an API key is never passed on).
pub fn base_env() -> Vec<(String, String)> {
    let redaction = EnvRedaction::default();
    std::env::vars()
        .filter(|(k, v)| !redaction.redacts(k, v))
        .filter(|(k, _)| !matches!(k.as_str(), "GEMINI_API_KEY" | "GOOGLE_API_KEY"))
        .collect()
}

/// What the session's hooks run with: its id, transcript, folder, plans
/// folder and the sanitized environment.
pub fn hook_env(config: &crate::config::SessionConfig) -> HookEnv {
    HookEnv {
        session_id: config.session_id.clone(),
        transcript_path: config
            .temp_dir
            .join("chats")
            .join(format!("session-{}.json", config.session_id)),
        cwd: config.workspace_dirs[0].clone(),
        plans_dir: config
            .plans_dir
            .clone()
            .unwrap_or_else(|| config.temp_dir.join(&config.session_id).join("plans")),
        // Filled by `load` when there are hooks to run.
        base_env: Vec::new(),
    }
}
