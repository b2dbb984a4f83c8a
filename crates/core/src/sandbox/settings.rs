//! `security.toolSandboxing` (Gemini CLI 0.61) and `security.sandbox` (ours: extra writable
//! folders, the network) as the session applies them.
//!
//! Two rules beyond a plain merge, because a project's settings come with the code being
//! worked on: a workspace's settings may turn the sandbox on but never off, and never widen it
//! (`writablePaths`, `network` are read from the system and user settings only). And a value of
//! the wrong type fails closed: `"toolSandboxing": "yes"` keeps the sandbox on, with a warning.

use std::path::{Path, PathBuf};

use gd_sandbox::Network;
use gd_settings::layers::{Layer, LayerKind};
use serde_json::Value;

/// The sandbox the settings ask for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Commands run in the sandbox.
    pub enabled: bool,
    /// `security.sandbox.writablePaths`: folders every command may write in besides the
    /// workspace (absolute, existing).
    pub writable: Vec<PathBuf>,
    /// `security.sandbox.network`: `"all"` gives every command the host's network.
    pub network: Network,
}

const TOOL_SANDBOXING: &[&str] = &["security", "toolSandboxing"];
const ENABLED: &[&str] = &["security", "sandbox", "enabled"];
const WRITABLE: &[&str] = &["security", "sandbox", "writablePaths"];
const NETWORK: &[&str] = &["security", "sandbox", "network"];

/// The sandbox settings of `layers` (a workspace layer counts only when `trusted`), and the
/// warnings for values that were not used as written.
pub fn read(
    layers: &[Layer],
    trusted: bool,
    home: Option<&Path>,
) -> (SandboxSettings, Vec<String>) {
    let mut warnings = Vec::new();
    let mut settings = SandboxSettings::default();
    let mut widen: Option<(&Layer, &Value)> = None;
    let mut network: Option<(&Layer, &Value)> = None;
    for layer in layers {
        let workspace = layer.kind == LayerKind::Workspace;
        if workspace && !trusted {
            continue;
        }
        for key in [TOOL_SANDBOXING, ENABLED] {
            let Some(value) = lookup(&layer.value, key) else {
                continue;
            };
            match value {
                Value::Bool(true) => settings.enabled = true,
                Value::Bool(false) if workspace => {
                    if settings.enabled {
                        warnings.push(format!(
                            "{} is false in the workspace settings ({}): ignored, a project \
                             cannot turn off the sandbox your own settings turned on",
                            key.join("."),
                            layer.path.display()
                        ));
                    }
                }
                // Layers come in precedence order (system defaults, user, workspace, system):
                // a later non-workspace `false` turns off what an earlier one turned on.
                Value::Bool(false) => settings.enabled = false,
                other => {
                    settings.enabled = true;
                    warnings.push(format!(
                        "{} must be true or false (found {other} in {}); the sandbox stays on",
                        key.join("."),
                        layer.path.display()
                    ));
                }
            }
        }
        for (key, slot) in [(WRITABLE, &mut widen), (NETWORK, &mut network)] {
            let Some(value) = lookup(&layer.value, key) else {
                continue;
            };
            if workspace {
                warnings.push(format!(
                    "{} in the workspace settings ({}) is ignored: a project cannot widen its \
                     own sandbox; set it in your user settings",
                    key.join("."),
                    layer.path.display()
                ));
            } else {
                *slot = Some((layer, value));
            }
        }
    }
    if let Some((layer, value)) = widen {
        settings.writable = writable_paths(layer, value, home, &mut warnings);
    }
    if let Some((layer, value)) = network {
        settings.network = network_of(layer, value, &mut warnings);
    }
    (settings, warnings)
}

fn lookup<'a>(value: &'a Value, key: &[&str]) -> Option<&'a Value> {
    key.iter()
        .try_fold(value, |v, k| v.get(k))
        .filter(|v| !v.is_null())
}

/// `writablePaths`: absolute or `~/…` folders that exist; anything else is skipped with a
/// warning (never widened to something else than what was written).
fn writable_paths(
    layer: &Layer,
    value: &Value,
    home: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    let where_ = layer.path.display();
    let Some(items) = value.as_array() else {
        warnings.push(format!(
            "security.sandbox.writablePaths must be a list of folders (found {value} in {where_}); ignored"
        ));
        return Vec::new();
    };
    let mut paths = Vec::new();
    for item in items {
        let Some(text) = item.as_str() else {
            warnings.push(format!(
                "security.sandbox.writablePaths: {item} is not a folder path (in {where_}); skipped"
            ));
            continue;
        };
        let path = match (text.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ if text == "~" => home.map(Path::to_path_buf).unwrap_or_default(),
            _ => PathBuf::from(text),
        };
        if !path.is_absolute() {
            warnings.push(format!(
                "security.sandbox.writablePaths: {text:?} is not an absolute path (in {where_}); skipped"
            ));
            continue;
        }
        match std::fs::canonicalize(&path) {
            Ok(real) if real.is_dir() => paths.push(real),
            Ok(_) => warnings.push(format!(
                "security.sandbox.writablePaths: {text:?} is not a folder (in {where_}); skipped"
            )),
            Err(error) => warnings.push(format!(
                "security.sandbox.writablePaths: {text:?} cannot be used ({error}; in {where_}); skipped"
            )),
        }
    }
    paths
}

/// `network`: `"all"`/`true` or `"none"`/`false`. A list of hosts is refused for now (the
/// network stays off): letting some hosts through needs a filtering proxy, and allowing all
/// of them instead would be more than the rule says.
fn network_of(layer: &Layer, value: &Value, warnings: &mut Vec<String>) -> Network {
    let where_ = layer.path.display();
    match value {
        Value::Bool(true) => Network::All,
        Value::Bool(false) => Network::None,
        Value::String(s) if s == "all" => Network::All,
        Value::String(s) if s == "none" => Network::None,
        Value::Array(_) => {
            warnings.push(format!(
                "security.sandbox.network: a list of allowed hosts is not supported yet (in \
                 {where_}); commands get no network. Use \"all\" to allow every host."
            ));
            Network::None
        }
        other => {
            warnings.push(format!(
                "security.sandbox.network must be \"all\" or \"none\" (found {other} in {where_}); commands get no network"
            ));
            Network::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layer(kind: LayerKind, value: Value) -> Layer {
        Layer {
            kind,
            path: PathBuf::from(format!("/{}.json", kind.as_str())),
            value,
            text: String::new(),
        }
    }

    #[test]
    fn off_by_default_and_on_as_0_61_spells_it() {
        assert_eq!(read(&[], true, None).0, SandboxSettings::default());
        let (on, warnings) = read(
            &[layer(
                LayerKind::User,
                json!({"security": {"toolSandboxing": true}}),
            )],
            true,
            None,
        );
        assert!(on.enabled && warnings.is_empty());
        let (on, _) = read(
            &[layer(
                LayerKind::User,
                json!({"security": {"sandbox": {"enabled": true}}}),
            )],
            true,
            None,
        );
        assert!(on.enabled);
    }

    #[test]
    fn a_wrong_type_keeps_it_on() {
        let (on, warnings) = read(
            &[layer(
                LayerKind::User,
                json!({"security": {"toolSandboxing": "yes"}}),
            )],
            true,
            None,
        );
        assert!(on.enabled);
        assert!(warnings[0].contains("stays on"), "{warnings:?}");
    }

    #[test]
    fn a_workspace_turns_it_on_but_not_off_and_never_widens_it() {
        let user = layer(
            LayerKind::User,
            json!({"security": {"toolSandboxing": true}}),
        );
        let project = layer(
            LayerKind::Workspace,
            json!({"security": {"toolSandboxing": false, "sandbox": {"network": "all", "writablePaths": ["/"]}}}),
        );
        let (settings, warnings) = read(&[user, project.clone()], true, None);
        assert!(settings.enabled);
        assert_eq!(settings.network, Network::None);
        assert!(settings.writable.is_empty());
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        let on = layer(
            LayerKind::Workspace,
            json!({"security": {"toolSandboxing": true}}),
        );
        assert!(read(std::slice::from_ref(&on), true, None).0.enabled);
        assert!(
            !read(&[on], false, None).0.enabled,
            "an untrusted folder's settings are not read"
        );
    }

    #[test]
    fn writable_paths_and_network_from_the_user() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("cache")).unwrap();
        let user = layer(
            LayerKind::User,
            json!({"security": {"sandbox": {"enabled": true, "network": "all",
                "writablePaths": ["~/cache", "relative", "/does/not/exist", 3]}}}),
        );
        let (settings, warnings) = read(&[user], true, Some(home.path()));
        assert_eq!(settings.network, Network::All);
        assert_eq!(
            settings.writable,
            [std::fs::canonicalize(home.path().join("cache")).unwrap()]
        );
        assert_eq!(warnings.len(), 3, "{warnings:?}");
    }

    #[test]
    fn a_host_list_gets_no_network() {
        let user = layer(
            LayerKind::User,
            json!({"security": {"sandbox": {"network": ["example.com"]}}}),
        );
        let (settings, warnings) = read(&[user], true, None);
        assert_eq!(settings.network, Network::None);
        assert!(warnings[0].contains("not supported yet"), "{warnings:?}");
    }
}
