//! The settings screen's and trust prompt's backend on real files: values
//! with the layer they come from, the workspace layer only in a trusted
//! folder, writes that keep the file's comments, validation, and what an
//! untrusted folder would load.

use std::fs;
use std::path::{Path, PathBuf};

use gd_core::settings_screen::{SettingsScreenError, set_trust, settings_view, trust_info, write};
use gd_protocol::{SettingsLayer, SettingsScope, TrustLevel};
use serde_json::json;

struct Tree {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let t = Tree {
        home: root.join("home"),
        ws: root.join("ws"),
        _dir: dir,
    };
    put(
        &t.home.join(".gemini/settings.json"),
        "{\n  // mine\n  \"model\": {\"name\": \"user-model\"}\n}\n",
    );
    put(
        &t.ws.join(".gemini/settings.json"),
        r#"{"model": {"name": "ws-model"}, "mcpServers": {"wsserver": {"command": "x"}}, "tools": {}}"#,
    );
    put(
        &t.ws.join(".gemini/commands/ns/deploy.toml"),
        "prompt = \"deploy\"\n",
    );
    put(&t.ws.join(".gemini/.env"), "X=1\n");
    put(&t.ws.join("GEMINI.md"), "rules");
    t
}

fn put(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

#[test]
fn the_workspace_layer_counts_once_the_folder_is_trusted() {
    let t = tree();
    let view = settings_view(&t.ws, Some(&t.home));
    assert!(!view.workspace_trusted);
    let model = &view.values[0];
    assert_eq!(model.key, "model.name");
    assert_eq!(
        (model.value.clone(), model.source),
        (Some(json!("user-model")), Some(SettingsLayer::User))
    );
    assert_eq!(model.workspace, Some(json!("ws-model")));
    let ws_layer = view
        .layers
        .iter()
        .find(|l| l.layer == SettingsLayer::Workspace)
        .unwrap();
    assert!(ws_layer.exists && !ws_layer.loaded);
    assert!(
        view.mcp_servers.is_empty(),
        "an untrusted folder's servers are not listed"
    );

    // Writing the workspace file is refused until then.
    let err = write(
        &t.ws,
        Some(&t.home),
        SettingsScope::Workspace,
        "ui.theme",
        Some(&json!("dark")),
    )
    .unwrap_err();
    assert!(matches!(err, SettingsScreenError::File(m) if m.contains("not trusted")));

    let trust = set_trust(&t.ws, Some(&t.home), TrustLevel::TrustFolder).unwrap();
    assert_eq!(trust.trusted, Some(true));
    let view = settings_view(&t.ws, Some(&t.home));
    assert!(view.workspace_trusted);
    assert_eq!(view.values[0].source, Some(SettingsLayer::Workspace));
    assert_eq!(view.values[0].value, Some(json!("ws-model")));
    assert_eq!(view.mcp_servers.len(), 1);
    assert_eq!(view.mcp_servers[0].name, "wsserver");
    assert!(view.mcp_servers[0].enabled);
}

#[test]
fn writes_keep_the_file_and_bad_values_are_refused() {
    let t = tree();
    let view = write(
        &t.ws,
        Some(&t.home),
        SettingsScope::User,
        "ui.theme",
        Some(&json!("dark")),
    )
    .unwrap();
    assert_eq!(view.values[2].value, Some(json!("dark")));
    let text = fs::read_to_string(t.home.join(".gemini/settings.json")).unwrap();
    assert_eq!(
        text,
        "{\n  // mine\n  \"model\": {\"name\": \"user-model\"},\n  \"ui\": {\n    \"theme\": \"dark\"\n  }\n}\n"
    );
    for (key, value) in [
        ("general.defaultApprovalMode", json!("yolo")),
        ("model.name", json!("two words")),
        ("context.fileName", json!(["ok.md", "dir/x.md"])),
        ("context.includeDirectories", json!(["", "/x"])),
        ("general.checkpointing.enabled", json!("yes")),
    ] {
        let err = write(&t.ws, Some(&t.home), SettingsScope::User, key, Some(&value)).unwrap_err();
        assert!(
            matches!(err, SettingsScreenError::Invalid(_)),
            "{key}: {err:?}"
        );
    }
    assert_eq!(
        fs::read_to_string(t.home.join(".gemini/settings.json")).unwrap(),
        text
    );
    // Removing a key.
    write(&t.ws, Some(&t.home), SettingsScope::User, "ui.theme", None).unwrap();
    assert!(
        !fs::read_to_string(t.home.join(".gemini/settings.json"))
            .unwrap()
            .contains("theme")
    );
}

#[test]
fn the_trust_prompt_lists_what_the_folder_would_load() {
    let t = tree();
    let info = trust_info(&t.ws, Some(&t.home));
    assert_eq!(info.trusted, None);
    assert!(info.enabled);
    assert_eq!(info.folder_name, "ws");
    assert_eq!(info.discovered.commands, ["/ns:deploy"]);
    assert_eq!(info.discovered.mcp_servers, ["wsserver"]);
    assert_eq!(info.discovered.settings, ["model", "tools"]);
    assert_eq!(info.discovered.context_files, ["GEMINI.md"]);
    assert!(info.discovered.env_file);

    // A broken trusted folders file: untrusted, with the reason.
    put(&t.home.join(".gemini/trustedFolders.json"), "{ oops");
    let info = trust_info(&t.ws, Some(&t.home));
    assert_eq!(info.trusted, Some(false));
    assert!(info.error.unwrap().contains("trustedFolders.json:1:"));
}

#[test]
fn the_screen_shows_the_value_in_force_and_its_origin() {
    let t = tree();
    let view = settings_view(&t.ws, Some(&t.home));
    let checkpoints = view
        .values
        .iter()
        .find(|v| v.key == "general.checkpointing.enabled")
        .unwrap();
    // Unset everywhere: on, as the app's default (every edit is checkpointed).
    assert_eq!(checkpoints.value, None);
    assert_eq!(checkpoints.effective, json!(true));
    assert_eq!(checkpoints.origin, gd_protocol::SettingOrigin::Default);

    write(
        &t.ws,
        Some(&t.home),
        SettingsScope::User,
        "general.checkpointing.enabled",
        Some(&json!(false)),
    )
    .unwrap();
    let view = settings_view(&t.ws, Some(&t.home));
    let checkpoints = view
        .values
        .iter()
        .find(|v| v.key == "general.checkpointing.enabled")
        .unwrap();
    assert_eq!(checkpoints.effective, json!(false));
    assert_eq!(checkpoints.origin, gd_protocol::SettingOrigin::User);
}

#[test]
fn an_added_mcp_server_is_written_in_place_and_listed() {
    use gd_core::mcp_settings::add_server;
    use gd_protocol::NewMcpServer;
    let t = tree();
    let server = |name: &str, command: &str| NewMcpServer {
        name: name.into(),
        command_line: Some(command.into()),
        url: None,
    };
    let view = add_server(
        &t.ws,
        Some(&t.home),
        SettingsScope::User,
        &server("fixture", "python3 'my server.py' --quiet"),
    )
    .unwrap();
    assert!(view.mcp_servers.iter().any(|s| s.name == "fixture"));
    let text = fs::read_to_string(t.home.join(".gemini/settings.json")).unwrap();
    // The comment and the other keys stay; the entry is what the session reads.
    assert!(
        text.starts_with("{\n  // mine\n  \"model\": {\"name\": \"user-model\"}"),
        "{text}"
    );
    let parsed = gd_settings::parse_file(Path::new("settings.json"), &text).unwrap();
    assert_eq!(
        parsed["mcpServers"]["fixture"],
        json!({"command": "python3", "args": ["my server.py", "--quiet"]})
    );

    // The same name again, a bad entry, or the untrusted workspace: refused, nothing written.
    let again = add_server(
        &t.ws,
        Some(&t.home),
        SettingsScope::User,
        &server("fixture", "x"),
    );
    assert!(
        matches!(again, Err(SettingsScreenError::Invalid(m)) if m.contains("already has a server named fixture"))
    );
    let bad = add_server(
        &t.ws,
        Some(&t.home),
        SettingsScope::User,
        &server("two words", "x"),
    );
    assert!(matches!(bad, Err(SettingsScreenError::Invalid(_))));
    let untrusted = add_server(
        &t.ws,
        Some(&t.home),
        SettingsScope::Workspace,
        &server("other", "x"),
    );
    assert!(matches!(untrusted, Err(SettingsScreenError::File(m)) if m.contains("not trusted")));
    assert_eq!(
        fs::read_to_string(t.home.join(".gemini/settings.json")).unwrap(),
        text
    );
}
