//! Finding, reading and merging the settings layers.
//!
//! Precedence, lowest first (Gemini CLI's order): system defaults, user,
//! workspace, system. The system file overrides everything so that
//! administrators can enforce values.

use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;
use tracing::debug;

use crate::env::expand_env;
use crate::jsonc::{strip_comments, strip_trailing_commas};
use crate::merge::merge_into;
use crate::model::Settings;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    SystemDefaults,
    User,
    Workspace,
    System,
}

impl LayerKind {
    /// The name used in messages and by the settings screen.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SystemDefaults => "system-defaults",
            Self::User => "user",
            Self::Workspace => "workspace",
            Self::System => "system",
        }
    }
}

/// One settings file that exists and parsed.
#[derive(Debug, Clone)]
pub struct Layer {
    pub kind: LayerKind,
    pub path: PathBuf,
    /// The file's content with environment variables expanded.
    pub value: Value,
    /// The file as read, to point at a key's line in later messages.
    pub text: String,
}

/// A settings file that cannot be used. The message names the file, and the
/// line, column and key when the problem is inside it.
#[derive(Debug, Error)]
pub enum SettingsError {
    #[error("cannot read {path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("{path}:{line}:{column}: invalid JSON: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}:{line}:{column}: invalid value for `{key}`: {message}")]
    Type {
        path: PathBuf,
        line: usize,
        column: usize,
        key: String,
        message: String,
    },
    #[error("{path}: the top level must be a JSON object")]
    NotAnObject { path: PathBuf },
}

impl SettingsError {
    pub fn path(&self) -> &Path {
        match self {
            Self::Io { path, .. }
            | Self::Syntax { path, .. }
            | Self::Type { path, .. }
            | Self::NotAnObject { path } => path,
        }
    }
}

/// Where to look.
pub struct LoadOptions<'a> {
    pub home: Option<PathBuf>,
    pub workspace: PathBuf,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Whether the workspace layer is read: only for a trusted folder (see
    /// [`crate::trust`]); an untrusted one keeps its settings to itself.
    pub workspace_trusted: bool,
}

/// The loaded layers and the typed, merged result.
#[derive(Debug, Clone)]
pub struct LoadedSettings {
    pub layers: Vec<Layer>,
    pub merged: Value,
    pub settings: Settings,
    /// The workspace settings file that exists but was not read because the
    /// folder is not trusted.
    pub skipped_workspace: Option<PathBuf>,
}

/// The system settings file: `GEMINI_CLI_SYSTEM_SETTINGS_PATH`, else
/// `/etc/gemini-cli/settings.json`.
pub fn system_settings_path(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    env("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .filter(|p| !p.trim().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"))
}

/// The system defaults file: `GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, else
/// `system-defaults.json` beside the system settings file (as Gemini CLI
/// places it, so moving one moves both).
pub fn system_defaults_path(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    env("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
        .filter(|p| !p.trim().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let system = system_settings_path(env);
            system
                .parent()
                .unwrap_or(Path::new("/"))
                .join("system-defaults.json")
        })
}

/// The user settings file, `~/.gemini/settings.json`.
pub fn user_settings_path(home: &Path) -> PathBuf {
    home.join(".gemini").join("settings.json")
}

/// The workspace settings file, `<workspace>/.gemini/settings.json`.
pub fn workspace_settings_path(workspace: &Path) -> PathBuf {
    workspace.join(".gemini").join("settings.json")
}

/// Paths of the layers, lowest precedence first. Missing files are skipped
/// when loading. The workspace layer is dropped when it is the user file
/// (a workspace at `$HOME`).
pub fn layer_paths(options: &LoadOptions<'_>) -> Vec<(LayerKind, PathBuf)> {
    let env = options.env;
    let mut paths = vec![(LayerKind::SystemDefaults, system_defaults_path(env))];
    let user = options.home.as_deref().map(user_settings_path);
    if let Some(user) = &user {
        paths.push((LayerKind::User, user.clone()));
    }
    let workspace = workspace_settings_path(&options.workspace);
    if user.as_ref() != Some(&workspace) {
        paths.push((LayerKind::Workspace, workspace));
    }
    paths.push((LayerKind::System, system_settings_path(env)));
    paths
}

/// Reads every existing layer, validates it and merges them.
pub fn load_layers(options: &LoadOptions<'_>) -> Result<LoadedSettings, SettingsError> {
    let mut layers = Vec::new();
    let mut skipped_workspace = None;
    for (kind, path) in layer_paths(options) {
        if kind == LayerKind::Workspace && !options.workspace_trusted {
            if path.is_file() {
                debug!(path = %path.display(), "workspace not trusted; its settings are not loaded");
                skipped_workspace = Some(path);
            }
            continue;
        }
        let Some(text) = read_optional(&path)? else {
            continue;
        };
        debug!(path = %path.display(), ?kind, "loading settings layer");
        let mut value = parse_file(&path, &text)?;
        expand_env(&mut value, options.env);
        layers.push(Layer {
            kind,
            path,
            value,
            text,
        });
    }
    let (merged, settings) = merge_layers(&layers)?;
    Ok(LoadedSettings {
        layers,
        merged,
        settings,
        skipped_workspace,
    })
}

/// A settings file's text; `None` when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<String>, SettingsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SettingsError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        }),
    }
}

/// Merges the layers and types the result. Each file was checked on its
/// own; should the merged value still not fit (values of different layers
/// combined), the error names the key and the file and line of the layer
/// that set it last.
fn merge_layers(layers: &[Layer]) -> Result<(Value, Settings), SettingsError> {
    let mut merged = Value::Object(Default::default());
    for layer in layers {
        merge_into(&mut merged, &layer.value);
    }
    let settings = serde_path_to_error::deserialize::<_, Settings>(&merged).map_err(|e| {
        let key = e.path().to_string();
        let segments: Vec<&str> = key
            .split('.')
            .map(|s| s.split('[').next().unwrap_or(s))
            .filter(|s| !s.is_empty())
            .collect();
        let layer = layers
            .iter()
            .rev()
            .find(|l| lookup(&l.value, &segments).is_some())
            .or(layers.last());
        let (line, column) = layer
            .and_then(|l| crate::edit::locate(&l.text, &segments))
            .unwrap_or((0, 0));
        SettingsError::Type {
            path: layer.map(|l| l.path.clone()).unwrap_or_default(),
            line,
            column,
            key,
            message: e.into_inner().to_string(),
        }
    })?;
    Ok((merged, settings))
}

/// The value at a key path.
pub fn lookup<'v>(value: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// Parses one file (comments and trailing commas allowed) and checks the
/// types of the keys we know, reporting line, column and key on failure.
pub fn parse_file(path: &Path, text: &str) -> Result<Value, SettingsError> {
    let value = parse_json(path, text)?;
    if !value.is_object() {
        return Err(SettingsError::NotAnObject {
            path: path.to_owned(),
        });
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let cleaned = strip_trailing_commas(&strip_comments(text));
    if cleaned.trim().is_empty() {
        return Ok(value);
    }
    let mut deserializer = serde_json::Deserializer::from_str(&cleaned);
    if let Err(e) = serde_path_to_error::deserialize::<_, Settings>(&mut deserializer) {
        let key = e.path().to_string();
        let inner = e.into_inner();
        return Err(SettingsError::Type {
            path: path.to_owned(),
            line: inner.line(),
            column: inner.column(),
            key,
            message: strip_position(&inner.to_string()),
        });
    }
    Ok(value)
}

/// Parses JSON with comments and trailing commas (an empty file is `{}`),
/// naming the file, line and column of a syntax error.
pub fn parse_json(path: &Path, text: &str) -> Result<Value, SettingsError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let cleaned = strip_trailing_commas(&strip_comments(text));
    if cleaned.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_str(&cleaned).map_err(|e| SettingsError::Syntax {
        path: path.to_owned(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })
}

/// serde_json appends " at line X column Y", which our message already has.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(pos) => message[..pos].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn merges_user_and_workspace_with_comments_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = dir.path().join("ws");
        write(
            &home.join(".gemini/settings.json"),
            "{\n // user\n \"model\": {\"name\": \"gemini-2.5-pro\", \"maxSessionTurns\": 7},\n \"unknownKey\": {\"x\": 1},\n}",
        );
        write(
            &ws.join(".gemini/settings.json"),
            "{\"model\": {\"name\": \"${MODEL_FROM_ENV}\"}}",
        );
        let env = |k: &str| (k == "MODEL_FROM_ENV").then(|| "gemini-2.5-flash".to_string());
        let loaded = load_layers(&LoadOptions {
            home: Some(home),
            workspace: ws,
            env: &env,
            workspace_trusted: true,
        })
        .unwrap();
        assert_eq!(loaded.layers.len(), 2);
        assert_eq!(
            loaded.settings.model.name.as_deref(),
            Some("gemini-2.5-flash")
        );
        assert_eq!(loaded.settings.model.max_session_turns, Some(7));
        assert_eq!(loaded.merged["unknownKey"]["x"], 1);
    }

    #[test]
    fn malformed_json_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let file = ws.join(".gemini/settings.json");
        write(
            &file,
            "{\n  \"model\": {\n    \"name\": \"x\"\n  \n  \"oops\": 1\n}\n",
        );
        let err = load_layers(&LoadOptions {
            home: None,
            workspace: ws,
            env: &no_env,
            workspace_trusted: true,
        })
        .unwrap_err();
        assert!(
            matches!(err, SettingsError::Syntax { line: 5, .. }),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .starts_with(&format!("{}:5:", file.display())),
            "{err}"
        );
    }

    #[test]
    fn wrong_type_names_the_key_and_line() {
        let err = parse_file(
            Path::new("/s.json"),
            "{\n \"model\": {\n  \"maxSessionTurns\": \"ten\"\n }\n}",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("/s.json:3:") && text.contains("`model.maxSessionTurns`"),
            "{text}"
        );
    }

    #[test]
    fn legacy_flat_model_name_and_empty_file() {
        let v = parse_file(Path::new("/s.json"), "{\"model\": \"gemini-2.5-pro\"}").unwrap();
        let s: Settings = serde_json::from_value(v).unwrap();
        assert_eq!(s.model.name.as_deref(), Some("gemini-2.5-pro"));
        assert!(
            parse_file(Path::new("/e.json"), "  \n")
                .unwrap()
                .is_object()
        );
        assert!(matches!(
            parse_file(Path::new("/a.json"), "[1]"),
            Err(SettingsError::NotAnObject { .. })
        ));
    }

    #[test]
    fn a_type_error_after_merging_names_the_layer_file_key_and_line() {
        // Each file is checked on its own when read; a value that only
        // breaks once merged is blamed on the last layer that set it.
        let user_text = "{\n  \"model\": {\"name\": \"m\"}\n}";
        let ws_text = "{\n  \"x\": 1,\n  \"model\": {\n    \"maxSessionTurns\": \"ten\"\n  }\n}";
        let layer = |kind, path: &str, text: &str| Layer {
            kind,
            path: PathBuf::from(path),
            value: serde_json::from_str(text).unwrap(),
            text: text.to_owned(),
        };
        let err = merge_layers(&[
            layer(LayerKind::User, "/home/u/.gemini/settings.json", user_text),
            layer(LayerKind::Workspace, "/ws/.gemini/settings.json", ws_text),
            layer(LayerKind::System, "/etc/gemini-cli/settings.json", "{}"),
        ])
        .unwrap_err();
        assert!(
            matches!(&err, SettingsError::Type { line: 4, key, path, .. }
                if key == "model.maxSessionTurns" && path == Path::new("/ws/.gemini/settings.json")),
            "{err:?}"
        );
        assert!(
            err.to_string().starts_with(
                "/ws/.gemini/settings.json:4:5: invalid value for `model.maxSessionTurns`"
            ),
            "{err}"
        );
    }

    #[test]
    fn workspace_at_home_is_not_loaded_twice() {
        let home = PathBuf::from("/h");
        let opts = LoadOptions {
            home: Some(home.clone()),
            workspace: home,
            env: &no_env,
            workspace_trusted: true,
        };
        let kinds: Vec<_> = layer_paths(&opts).into_iter().map(|(k, _)| k).collect();
        assert!(!kinds.contains(&LayerKind::Workspace));
    }
}
