//! The real keyring: Secret Service (gnome-keyring) on Linux. Ignored by a
//! plain `cargo test` (it would use the developer's own keyring);
//! `scripts/test-keyring.sh` runs it with `--ignored` in a private D-Bus
//! session with a throwaway, unlocked gnome-keyring:
//!
//! ```sh
//! scripts/test-keyring.sh     # = dbus-run-session + gnome-keyring-daemon --unlock + this test, one thread
//! ```
//!
//! Every test uses its own keyring service name, so nothing of the app's
//! real entries is touched even if run elsewhere.

use std::sync::Arc;

use gd_auth::secret_store::{
    KeyringStore, SecretStore, StoreKind, StorePreference, keyring_backend_name, probe_keyring,
    select_store,
};
use gd_auth::{AuthConfig, AuthManager, SecretKey};
use gd_http::SecretString;

fn service(name: &str) -> String {
    format!("gemini-desktop-test-{name}-{}", std::process::id())
}

/// Only inside scripts/test-keyring.sh's throwaway session (it sets
/// `GD_KEYRING_TEST_SESSION`): `cargo test -- --ignored` elsewhere fails
/// here instead of writing to the developer's keyring.
fn require_session() {
    assert!(
        std::env::var_os("GD_KEYRING_TEST_SESSION").is_some(),
        "run by scripts/test-keyring.sh (a throwaway gnome-keyring in a private D-Bus session)"
    );
}

/// What `secret-tool` (libsecret) sees, proving the secret is in the real
/// Secret Service and not in keyring's in-memory mock.
fn secret_tool_lookup(service: &str, account: &str) -> Option<String> {
    let output = std::process::Command::new("secret-tool")
        .args(["lookup", "service", service, "username", account])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
#[ignore = "the real keyring: scripts/test-keyring.sh"]
fn the_keyring_answers() {
    require_session();
    probe_keyring(&service("probe")).expect("a reachable keyring");
}

#[test]
#[ignore = "the real keyring: scripts/test-keyring.sh"]
fn secrets_round_trip_through_the_keyring() {
    require_session();
    let svc = service("roundtrip");
    let store = KeyringStore::new(&svc);
    assert_eq!(store.get(SecretKey::GeminiApiKey).unwrap(), None);
    store
        .set(
            SecretKey::GeminiApiKey,
            &SecretString::new("AIza-keyring-1"),
        )
        .unwrap();
    store
        .set(
            SecretKey::GeminiApiKey,
            &SecretString::new("AIza-keyring-2"),
        )
        .unwrap();
    assert_eq!(
        store
            .get(SecretKey::GeminiApiKey)
            .unwrap()
            .unwrap()
            .expose(),
        "AIza-keyring-2",
        "set replaces"
    );
    if cfg!(target_os = "linux") {
        assert_eq!(
            secret_tool_lookup(&svc, "gemini-api-key").as_deref(),
            Some("AIza-keyring-2"),
            "visible to libsecret: the real Secret Service"
        );
    }
    store.delete(SecretKey::GeminiApiKey).unwrap();
    store.delete(SecretKey::GeminiApiKey).unwrap();
    assert_eq!(store.get(SecretKey::GeminiApiKey).unwrap(), None);
}

#[test]
#[ignore = "the real keyring: scripts/test-keyring.sh"]
fn auto_selection_prefers_the_keyring() {
    require_session();
    let dir = tempfile::tempdir().unwrap();
    let selected = select_store(
        &service("auto"),
        dir.path().join("secrets.json"),
        StorePreference::Auto,
    )
    .unwrap();
    assert_eq!(
        selected.info.kind,
        StoreKind::Keyring {
            backend: keyring_backend_name().into()
        }
    );
    assert_eq!(selected.info.fallback_reason, None);
}

#[test]
#[ignore = "the real keyring: scripts/test-keyring.sh"]
fn a_secret_left_in_the_fallback_file_is_still_read_and_cleaned_up() {
    require_session();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("secrets.json");
    gd_auth::secret_store::FileStore::new(file.clone())
        .set(SecretKey::VertexApiKey, &SecretString::new("from-file"))
        .unwrap();
    let store = KeyringStore::new(service("legacy")).with_legacy_file(file.clone());
    assert_eq!(
        store
            .get(SecretKey::VertexApiKey)
            .unwrap()
            .unwrap()
            .expose(),
        "from-file"
    );
    store
        .set(SecretKey::VertexApiKey, &SecretString::new("in-keyring"))
        .unwrap();
    assert!(
        !file.exists(),
        "the file copy is removed once the keyring has it"
    );
    assert_eq!(
        store
            .get(SecretKey::VertexApiKey)
            .unwrap()
            .unwrap()
            .expose(),
        "in-keyring"
    );
    store.delete(SecretKey::VertexApiKey).unwrap();
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "the real keyring: scripts/test-keyring.sh"]
async fn the_manager_keeps_google_tokens_in_the_keyring() {
    require_session();
    let dir = tempfile::tempdir().unwrap();
    let mut config = AuthConfig::for_tests(dir.path().join("auth"));
    config.store = StorePreference::Auto;
    config.service = service("manager");
    let env: gd_auth::EnvFn = Arc::new(|n: &str| std::env::var(n).ok());
    let manager = AuthManager::new(config.clone(), env, None).unwrap();
    let info = manager.store().unwrap().info.clone();
    assert!(matches!(info.kind, StoreKind::Keyring { .. }), "{info:?}");
    let tokens = gd_auth::oauth::StoredTokens {
        access_token: "ya29.in-keyring".into(),
        refresh_token: Some("1//in-keyring".into()),
        expires_at: Some(chrono_now() + 3600),
        scopes: vec![],
        client_id: "c".into(),
    };
    // Async callers reach the (blocking) keyring from a runtime thread.
    let store = manager.store().unwrap().store.clone();
    let secret = tokens.to_secret();
    tokio::task::spawn_blocking(move || store.set(SecretKey::GoogleOauth, &secret))
        .await
        .unwrap()
        .unwrap();
    let status = manager.status().await;
    assert!(status.google.signed_in, "{status:?}");
    assert!(status.google.token_expires_in_secs.unwrap() > 3000);
    assert!(
        !config.secrets_file().exists(),
        "nothing is written to the fallback file"
    );
    manager.sign_out(None).await.unwrap();
    assert!(!manager.status().await.google.signed_in);
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}
