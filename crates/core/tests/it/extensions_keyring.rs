//! An extension's sensitive setting in the real keyring (Secret Service):
//! installed through the session's `Op::InstallExtension` with its values,
//! the secret is in the keyring under 0.61's names (service
//! `Gemini CLI Extensions <name> <id>`, account `__secret__<ENV_VAR>`) and
//! in no file under HOME or the workspace; the panel reports it set; an
//! uninstall removes it from the keyring. Ignored by a plain `cargo test`;
//! `scripts/test-keyring.sh` runs it with `--ignored` in a private D-Bus
//! session with a throwaway gnome-keyring.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use gd_protocol::{Event, Op};
use serde_json::json;

async fn next(h: &mut Harness) -> Event {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("an event in time")
            .expect("the session is running");
        if matches!(
            event,
            Event::Extensions { .. }
                | Event::ExtensionPreview { .. }
                | Event::ExtensionError { .. }
        ) {
            return event;
        }
    }
}

/// What libsecret's `secret-tool` finds: proof that the value is in the
/// real Secret Service, not in a mock or a file.
fn secret_tool_lookup(service: &str, account: &str) -> Option<String> {
    let output = std::process::Command::new("secret-tool")
        .args(["lookup", "service", service, "username", account])
        .output()
        .expect("secret-tool runs");
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            files_containing(&path, needle, found);
        } else if kind.is_file()
            && let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        {
            found.push(path.display().to_string());
        }
    }
}

#[tokio::test]
#[ignore = "the real keyring: scripts/test-keyring.sh"]
async fn a_sensitive_setting_goes_to_the_keyring_and_nowhere_else() {
    // Never the developer's own keyring (see scripts/test-keyring.sh).
    assert!(
        std::env::var_os("GD_KEYRING_TEST_SESSION").is_some(),
        "run by scripts/test-keyring.sh (a throwaway gnome-keyring in a private D-Bus session)"
    );
    let d = Dirs::new();
    let src = d.home.parent().unwrap().join("src-ext");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        json!({"name": "vault-demo", "version": "1.0.0", "settings": [
            {"name": "Token", "description": "The API token", "envVar": "DEMO_TOKEN", "sensitive": true},
            {"name": "Region", "description": "Where", "envVar": "DEMO_REGION"}
        ], "mcpServers": {"vault": {"command": "vault-server", "env": {"TOKEN": "${DEMO_TOKEN}", "REGION": "${DEMO_REGION}"}}}})
        .to_string(),
    )
    .unwrap();
    let mut h = d.extension_session();

    h.preview_extension(&src);
    let Event::ExtensionPreview { preview_id, .. } = next(&mut h).await else {
        panic!("no preview")
    };
    let secret = format!("kr-secret-{}-value", std::process::id());
    h.handle
        .submit(Op::InstallExtension {
            preview_id,
            settings: [
                ("DEMO_TOKEN".to_owned(), secret.clone()),
                ("DEMO_REGION".to_owned(), "eu-west".to_owned()),
            ]
            .into_iter()
            .collect(),
        })
        .unwrap();
    let Event::Extensions { extensions, .. } = next(&mut h).await else {
        panic!("no list")
    };
    let settings = &extensions[0].contributes.settings;
    assert!(
        settings.iter().all(|s| s.is_set),
        "both settings are reported set: {settings:?}"
    );

    let loaded = gd_extensions::load(&d.home, &d.ws, &Default::default());
    let id = loaded.get("vault-demo").unwrap().id();
    let service = format!("Gemini CLI Extensions vault-demo {id}");
    assert_eq!(
        secret_tool_lookup(&service, "__secret__DEMO_TOKEN").as_deref(),
        Some(secret.as_str()),
        "the value is in the Secret Service under 0.61's names"
    );
    // A launch gives the extension's server the values, the secret from
    // the keyring.
    let mut launched = gd_core::extensions::load(Some(&d.home), &d.ws);
    let warnings =
        gd_core::extensions::with_setting_values(&mut launched, Some(&d.home), &d.ws, true);
    assert!(warnings.is_empty(), "{warnings:?}");
    let server = &launched.get("vault-demo").unwrap().manifest.mcp_servers["vault"];
    assert_eq!(server["env"]["TOKEN"], secret.as_str());
    assert_eq!(server["env"]["REGION"], "eu-west");

    let mut found = Vec::new();
    files_containing(d.home.parent().unwrap(), &secret, &mut found);
    assert!(found.is_empty(), "the secret is in files: {found:?}");
    let env = std::fs::read_to_string(
        d.home
            .join(".gemini/extensions/vault-demo")
            .join(gd_extensions::settings::ENV_FILE),
    )
    .unwrap();
    assert_eq!(env, "DEMO_REGION=\"eu-west\"\n");

    h.handle
        .submit(Op::UninstallExtension {
            name: "vault-demo".into(),
        })
        .unwrap();
    let Event::Extensions { extensions, .. } = next(&mut h).await else {
        panic!("no list after uninstall")
    };
    assert!(extensions.is_empty());
    assert_eq!(
        secret_tool_lookup(&service, "__secret__DEMO_TOKEN"),
        None,
        "an uninstall removes the secret"
    );
}
