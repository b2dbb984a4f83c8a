//! Settings layers on real files: system defaults < user < workspace <
//! system, the environment overrides of the system paths, untrusted
//! workspaces, and errors that name the file, line and key.

use std::fs;
use std::path::{Path, PathBuf};

use gd_settings::{LayerKind, LoadOptions, SettingsError, load_layers};

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

struct Tree {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    etc: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    Tree {
        home: root.join("home"),
        ws: root.join("ws"),
        etc: root.join("etc"),
        _dir: dir,
    }
}

fn load(
    t: &Tree,
    env: &dyn Fn(&str) -> Option<String>,
    trusted: bool,
) -> Result<gd_settings::LoadedSettings, SettingsError> {
    load_layers(&LoadOptions {
        home: Some(t.home.clone()),
        workspace: t.ws.clone(),
        env,
        workspace_trusted: trusted,
    })
}

#[test]
fn system_settings_override_everything_and_defaults_nothing() {
    let t = tree();
    write(
        &t.etc.join("system-defaults.json"),
        r#"{"model": {"name": "from-defaults", "maxSessionTurns": 3}, "ui": {"theme": "dark"}}"#,
    );
    write(
        &t.home.join(".gemini/settings.json"),
        r#"{"model": {"name": "from-user"}}"#,
    );
    write(
        &t.ws.join(".gemini/settings.json"),
        r#"{"model": {"name": "from-workspace", "maxSessionTurns": 9}}"#,
    );
    let system = t.etc.join("settings.json");
    write(&system, r#"{"model": {"maxSessionTurns": 42}}"#);
    let env = |k: &str| {
        (k == "GEMINI_CLI_SYSTEM_SETTINGS_PATH").then(|| system.to_string_lossy().into_owned())
    };
    let loaded = load(&t, &env, true).unwrap();
    let kinds: Vec<_> = loaded.layers.iter().map(|l| l.kind).collect();
    // system-defaults.json is found beside the moved system file.
    assert_eq!(
        kinds,
        [
            LayerKind::SystemDefaults,
            LayerKind::User,
            LayerKind::Workspace,
            LayerKind::System
        ]
    );
    assert_eq!(
        loaded.settings.model.name.as_deref(),
        Some("from-workspace")
    );
    assert_eq!(loaded.settings.model.max_session_turns, Some(42));
    assert_eq!(loaded.settings.ui.theme.as_deref(), Some("dark"));
}

#[test]
fn the_system_defaults_path_has_its_own_override() {
    let t = tree();
    let defaults = t.etc.join("elsewhere/defaults.json");
    write(&defaults, r#"{"model": {"name": "from-defaults"}}"#);
    let env = |k: &str| {
        (k == "GEMINI_CLI_SYSTEM_DEFAULTS_PATH").then(|| defaults.to_string_lossy().into_owned())
    };
    let loaded = load(&t, &env, true).unwrap();
    assert_eq!(loaded.settings.model.name.as_deref(), Some("from-defaults"));
    assert_eq!(loaded.layers[0].path, defaults);
}

#[test]
fn a_broken_system_file_names_itself() {
    let t = tree();
    let system = t.etc.join("settings.json");
    write(
        &system,
        "{\n  \"model\": {\"maxSessionTurns\": \"many\"}\n}",
    );
    let env = |k: &str| {
        (k == "GEMINI_CLI_SYSTEM_SETTINGS_PATH").then(|| system.to_string_lossy().into_owned())
    };
    let err = load(&t, &env, true).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}:2:", system.display())),
        "{text}"
    );
    assert!(text.contains("`model.maxSessionTurns`"), "{text}");
}

#[test]
fn an_untrusted_workspace_keeps_its_settings_to_itself() {
    let t = tree();
    write(
        &t.home.join(".gemini/settings.json"),
        r#"{"model": {"name": "from-user"}}"#,
    );
    let ws_file = t.ws.join(".gemini/settings.json");
    // Even a broken workspace file does not matter: it is not read.
    write(&ws_file, r#"{"model": {"name": "from-workspace"}, oops"#);
    let none = |_: &str| None;
    let loaded = load(&t, &none, false).unwrap();
    assert_eq!(loaded.settings.model.name.as_deref(), Some("from-user"));
    assert_eq!(loaded.skipped_workspace.as_deref(), Some(ws_file.as_path()));
    assert!(load(&t, &none, true).is_err());
}
