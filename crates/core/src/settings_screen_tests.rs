//! Unit tests of [`crate::settings_screen`] (a file of their own to keep
//! the screen's module short).

use super::*;
use serde_json::json;

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn checkpointing_unset_is_on_by_default() {
    assert_eq!(
        in_force("general.checkpointing.enabled", None, None, &no_env),
        (json!(true), SettingOrigin::Default, None)
    );
}

#[test]
fn a_layer_value_is_in_force_with_its_layer() {
    assert_eq!(
        in_force(
            "general.checkpointing.enabled",
            Some(&json!(false)),
            Some(SettingsLayer::Workspace),
            &no_env
        ),
        (json!(false), SettingOrigin::Workspace, None)
    );
}

#[test]
fn gemini_model_beats_the_files() {
    let env = |name: &str| (name == "GEMINI_MODEL").then(|| "env-model".to_owned());
    assert_eq!(
        in_force(
            "model.name",
            Some(&json!("user-model")),
            Some(SettingsLayer::User),
            &env
        ),
        (
            json!("env-model"),
            SettingOrigin::Env,
            Some("GEMINI_MODEL".to_owned())
        )
    );
    // The variable only concerns the model.
    assert_eq!(
        in_force("ui.theme", None, None, &env),
        (json!("system"), SettingOrigin::Default, None)
    );
}

#[test]
fn notification_modes_are_checked() {
    for mode in ["all", "approvals", "off"] {
        assert!(check_value("ui.desktopNotifications", &json!(mode)).is_ok());
    }
    let err = check_value("ui.desktopNotifications", &json!("loud")).unwrap_err();
    assert!(err.to_string().contains("`approvals`"), "{err}");
}

#[test]
fn keys_of_0_61_are_checked() {
    assert!(check_value("general.maxAttempts", &json!(3)).is_ok());
    for bad in [json!(0), json!(11), json!("3"), json!(2.5)] {
        assert!(check_value("general.maxAttempts", &bad).is_err(), "{bad}");
    }
    assert!(check_value("tools.truncateToolOutputThreshold", &json!(0)).is_ok());
    assert!(check_value("tools.shell.inactivityTimeout", &json!("x")).is_err());
    for good in ["24h", "30d", "2w", "6m"] {
        assert!(
            check_value("general.sessionRetention.maxAge", &json!(good)).is_ok(),
            "{good}"
        );
    }
    for bad in ["12h", "30", "d", "3y", ""] {
        assert!(
            check_value("general.sessionRetention.maxAge", &json!(bad)).is_err(),
            "{bad}"
        );
    }
    assert!(check_value("tools.allowed", &json!(["read_file", " "])).is_err());
    assert_eq!(default_value("general.maxAttempts"), json!(10));
    assert_eq!(
        default_value("tools.truncateToolOutputThreshold"),
        json!(40000)
    );
    let number_fields: Vec<String> = fields()
        .into_iter()
        .filter(|f| f.kind == SettingKind::Number)
        .map(|f| f.key)
        .collect();
    assert_eq!(
        number_fields,
        [
            "general.maxAttempts",
            "tools.truncateToolOutputThreshold",
            "tools.shell.inactivityTimeout"
        ]
    );
}

#[test]
fn the_update_manifest_url_is_checked_and_only_a_user_setting() {
    for good in [
        "https://example.org/latest.json",
        "http://127.0.0.1:8080/m.json",
    ] {
        assert!(
            check_value("update.manifestUrl", &json!(good)).is_ok(),
            "{good}"
        );
    }
    for bad in [
        "example.org/latest.json",
        "ftp://x/y",
        "https://",
        "https:///x",
        "https://a b",
    ] {
        assert!(
            check_value("update.manifestUrl", &json!(bad)).is_err(),
            "{bad}"
        );
    }
    assert_eq!(default_value("update.manifestUrl"), json!(""));
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("project");
    std::fs::create_dir_all(&workspace).unwrap();
    let url = json!("https://example.org/latest.json");
    let err = write(
        &workspace,
        Some(home.path()),
        SettingsScope::Workspace,
        "update.manifestUrl",
        Some(&url),
    )
    .unwrap_err();
    assert!(err.to_string().contains("user setting"), "{err}");
    assert!(!workspace.join(".gemini/settings.json").exists());
    write(
        &workspace,
        Some(home.path()),
        SettingsScope::User,
        "update.manifestUrl",
        Some(&url),
    )
    .unwrap();
    let text = std::fs::read_to_string(home.path().join(".gemini/settings.json")).unwrap();
    assert!(text.contains("https://example.org/latest.json"), "{text}");
}

#[test]
fn legacy_tools_are_checked() {
    assert!(check_value("tools.legacy", &json!(["save_memory", "read_many_files"])).is_ok());
    let err = check_value("tools.legacy", &json!(["save_memory", "shell"])).unwrap_err();
    assert!(err.to_string().contains("read_many_files"), "{err}");
    assert_eq!(default_value("tools.legacy"), json!([]));
}

#[test]
fn every_common_key_has_a_default() {
    for key in common_keys() {
        assert!(!default_value(key).is_null(), "{key}");
    }
}

#[test]
fn a_select_field_defaults_to_one_of_its_choices() {
    let fields = fields();
    for field in &fields {
        assert_eq!(
            fields.iter().filter(|f| f.key == field.key).count(),
            1,
            "{} is listed once",
            field.key
        );
        if field.kind == SettingKind::Select {
            let default = default_value(&field.key);
            assert!(
                field.choices.iter().any(|c| default == c.value.as_str()),
                "{}: {default}",
                field.key
            );
        } else {
            assert!(field.choices.is_empty(), "{}", field.key);
        }
    }
}
