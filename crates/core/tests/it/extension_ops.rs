//! The extension ops through a real session on a temporary HOME: preview
//! (staged, nothing installed yet), install exactly the previewed copy,
//! disable in the workspace, uninstall; errors leave things unchanged.

use crate::common;

use std::time::Duration;

use common::*;
use gd_protocol::{Event, Op, SettingsScope};
use serde_json::json;

async fn next(h: &mut Harness, want: impl Fn(&Event) -> bool) -> Event {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), h.events.recv())
            .await
            .expect("an event in time")
            .expect("the session is running");
        if want(&event) {
            return event;
        }
    }
}

fn is_answer(e: &Event) -> bool {
    matches!(
        e,
        Event::Extensions { .. } | Event::ExtensionPreview { .. } | Event::ExtensionError { .. }
    )
}

#[tokio::test]
async fn preview_install_disable_and_uninstall_through_the_session() {
    let d = Dirs::new();
    let src = d.home.parent().unwrap().join("src-ext");
    std::fs::create_dir_all(src.join("commands")).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        json!({"name": "demo", "version": "1.0.0",
               "mcpServers": {"srv": {"command": "run-me", "args": ["${extensionPath}/x"]}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(src.join("commands/hello.toml"), "prompt = \"Say hello\"\n").unwrap();
    let mut h = d.extension_session();

    h.preview_extension(&src);
    let Event::ExtensionPreview {
        preview_id,
        extension,
    } = next(&mut h, is_answer).await
    else {
        panic!("no preview")
    };
    assert_eq!(extension.name, "demo");
    assert_eq!(extension.contributes.commands, ["/hello"]);
    assert_eq!(extension.contributes.mcp_servers[0].name, "srv");
    assert!(
        extension.contributes.mcp_servers[0]
            .launches
            .starts_with("run-me ")
    );
    assert!(
        !d.home.join(".gemini/extensions/demo").exists(),
        "a preview installs nothing"
    );

    // What was previewed is installed, even if the source changes meanwhile.
    std::fs::write(src.join("commands/later.toml"), "prompt = \"Later\"\n").unwrap();
    h.handle
        .submit(Op::InstallExtension {
            preview_id: preview_id.clone(),
            settings: Default::default(),
        })
        .unwrap();
    let Event::Extensions {
        extensions, notice, ..
    } = next(&mut h, is_answer).await
    else {
        panic!("no list")
    };
    assert_eq!(extensions.len(), 1);
    assert_eq!(extensions[0].contributes.commands, ["/hello"]);
    assert!(notice.unwrap().contains("next conversation"));
    assert!(
        d.home
            .join(".gemini/extensions/demo/commands/hello.toml")
            .exists()
    );
    assert!(
        !d.home
            .join(".gemini/extensions/demo/commands/later.toml")
            .exists()
    );

    // The preview was used up.
    h.handle
        .submit(Op::InstallExtension {
            preview_id,
            settings: Default::default(),
        })
        .unwrap();
    assert!(matches!(
        next(&mut h, is_answer).await,
        Event::ExtensionError { .. }
    ));

    h.handle
        .submit(Op::SetExtensionEnabled {
            name: "demo".into(),
            enabled: false,
            scope: SettingsScope::Workspace,
        })
        .unwrap();
    let Event::Extensions { extensions, .. } = next(&mut h, is_answer).await else {
        panic!("no list")
    };
    assert!(!extensions[0].enabled);
    assert!(extensions[0].enabled_for_user);

    h.handle
        .submit(Op::UninstallExtension {
            name: "demo".into(),
        })
        .unwrap();
    let Event::Extensions { extensions, .. } = next(&mut h, is_answer).await else {
        panic!("no list")
    };
    assert!(extensions.is_empty());
    h.handle
        .submit(Op::UninstallExtension {
            name: "demo".into(),
        })
        .unwrap();
    let Event::ExtensionError { message, .. } = next(&mut h, is_answer).await else {
        panic!("no error")
    };
    assert_eq!(message, "Extension not found.");
}

#[test]
fn skills_come_only_from_enabled_extensions() {
    let d = Dirs::new();
    let ext = d.home.join(".gemini/extensions/sk");
    std::fs::create_dir_all(ext.join("skills/ext-skill")).unwrap();
    std::fs::write(
        ext.join("gemini-extension.json"),
        r#"{"name": "sk", "version": "1.0.0"}"#,
    )
    .unwrap();
    std::fs::write(
        ext.join("skills/ext-skill/SKILL.md"),
        "---\nname: ext-skill\ndescription: From an extension.\n---\nBody\n",
    )
    .unwrap();
    let names = || -> Vec<String> {
        gd_core::skills::load(
            &gd_settings::Settings::default(),
            Some(&d.home),
            &d.ws,
            true,
        )
        .infos()
        .into_iter()
        .map(|s| s.name)
        .collect()
    };
    assert!(names().contains(&"ext-skill".to_owned()));
    gd_extensions::Enablement::load(&d.home)
        .disable("sk", &d.ws)
        .unwrap();
    assert!(!names().contains(&"ext-skill".to_owned()), "{:?}", names());
}

#[tokio::test]
async fn with_extension_config_off_the_preview_asks_nothing_and_nothing_is_kept() {
    let d = Dirs::new();
    std::fs::create_dir_all(d.home.join(".gemini")).unwrap();
    std::fs::write(
        d.home.join(".gemini/settings.json"),
        json!({"experimental": {"extensionConfig": false}}).to_string(),
    )
    .unwrap();
    let src = d.home.parent().unwrap().join("src-ext");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        json!({"name": "asks", "version": "1.0.0",
               "settings": [{"name": "Region", "description": "Where", "envVar": "REGION"}]})
        .to_string(),
    )
    .unwrap();
    let mut h = d.extension_session();
    h.preview_extension(&src);
    let Event::ExtensionPreview {
        preview_id,
        extension,
    } = next(&mut h, is_answer).await
    else {
        panic!("no preview")
    };
    assert!(extension.contributes.settings.is_empty(), "nothing to ask");
    h.handle
        .submit(Op::InstallExtension {
            preview_id,
            settings: [("REGION".to_owned(), "eu".to_owned())]
                .into_iter()
                .collect(),
        })
        .unwrap();
    assert!(matches!(
        next(&mut h, is_answer).await,
        Event::Extensions { .. }
    ));
    assert!(d.home.join(".gemini/extensions/asks").is_dir());
    assert!(
        !d.home.join(".gemini/extensions/asks/.env").exists(),
        "a value given anyway is not kept"
    );
}

#[tokio::test]
async fn the_panel_sets_and_removes_a_setting_in_either_scope() {
    let d = Dirs::new();
    let src = d.home.parent().unwrap().join("src-ext");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        json!({"name": "cfg", "version": "1.0.0", "settings": [
            {"name": "Region", "description": "Where", "envVar": "REGION"},
            {"name": "Token", "description": "Secret", "envVar": "TOKEN", "sensitive": true}
        ]})
        .to_string(),
    )
    .unwrap();
    let mut h = d.extension_session();
    h.preview_extension(&src);
    let Event::ExtensionPreview { preview_id, .. } = next(&mut h, is_answer).await else {
        panic!("no preview")
    };
    h.handle
        .submit(Op::InstallExtension {
            preview_id,
            settings: Default::default(),
        })
        .unwrap();
    next(&mut h, is_answer).await;

    let mut set = async |env_var: &str, value: &str, scope: SettingsScope| {
        h.handle
            .submit(Op::SetExtensionSetting {
                name: "cfg".into(),
                env_var: env_var.into(),
                value: value.into(),
                scope,
            })
            .unwrap();
        next(&mut h, is_answer).await
    };
    let flags = |e: &Event| match e {
        Event::Extensions { extensions, .. } => extensions[0]
            .contributes
            .settings
            .iter()
            .map(|s| (s.is_set, s.set_here))
            .collect::<Vec<_>>(),
        other => panic!("not a list: {other:?}"),
    };

    let user_env = d.home.join(".gemini/extensions/cfg/.env");
    let event = set("REGION", "eu-west", SettingsScope::User).await;
    assert_eq!(flags(&event), [(true, false), (false, false)]);
    assert_eq!(
        std::fs::read_to_string(&user_env).unwrap(),
        "REGION=\"eu-west\"\n"
    );

    let secret = "panel-secret-31f";
    let event = set("TOKEN", secret, SettingsScope::User).await;
    assert_eq!(flags(&event), [(true, false), (true, false)]);
    assert!(
        !format!("{event:?}").contains(secret),
        "the value is never sent back"
    );
    assert!(!std::fs::read_to_string(&user_env).unwrap().contains(secret));

    let event = set("REGION", "us-east", SettingsScope::Workspace).await;
    assert_eq!(flags(&event), [(true, true), (true, false)]);

    let event = set("REGION", "", SettingsScope::User).await;
    assert_eq!(flags(&event), [(false, true), (true, false)]);
    assert_eq!(std::fs::read_to_string(&user_env).unwrap(), "");

    // An unknown setting is an error and changes nothing.
    let event = set("NOPE", "x", SettingsScope::User).await;
    let Event::ExtensionError { message, .. } = event else {
        panic!("not an error: {event:?}")
    };
    assert_eq!(message, "Setting NOPE not found.");
}
