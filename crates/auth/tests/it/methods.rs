//! API key and Vertex AI: validation, storage, precedence of the
//! environment and of `security.auth.selectedType`, ADC.

use crate::common;

use common::World;
use gd_auth::secret_store::{FileStore, SecretStore};
use gd_auth::{AuthError, AuthMethod, MethodOrigin, SecretKey, VertexAuth, VertexInput};
use gd_http::SecretString;
use serde_json::json;

fn key_world() -> World {
    World::new(json!({"api_keys": ["AIza-good-key"], "steps": [{"text": "hi"}]}))
}

#[tokio::test]
async fn an_api_key_is_validated_against_the_base_url_and_stored() {
    let world = key_world();
    let base = world.gemini.base_url();
    let manager = world.manager_with_env(None, &[("GOOGLE_GEMINI_BASE_URL", base.as_str())]);

    let err = manager
        .set_api_key(SecretString::new("AIza-wrong-key"))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::InvalidApiKey(_)), "{err:?}");
    assert!(err.to_string().contains("did not accept"), "{err}");
    assert!(!err.to_string().contains("AIza-wrong-key"));
    assert_eq!(manager.status().await.active, None, "nothing stored");

    let check = manager
        .set_api_key(SecretString::new(" AIza-good-key\n"))
        .await
        .unwrap();
    assert!(check.models > 0);
    assert_eq!(check.base_url, base);
    let stored = FileStore::new(world.auth_dir().join("secrets.json"))
        .get(SecretKey::GeminiApiKey)
        .unwrap()
        .unwrap();
    assert_eq!(stored.expose(), "AIza-good-key", "trimmed");
    let list_calls = world
        .gemini
        .requests()
        .into_iter()
        .filter(|r| r.kind == "list_models")
        .count();
    assert_eq!(list_calls, 2);

    let status = manager.status().await;
    assert_eq!(status.active, Some(AuthMethod::GeminiApiKey));
    assert_eq!(status.chosen_by, Some(MethodOrigin::App));
    assert!(status.ready);
    assert!(status.api_key.stored && !status.api_key.in_environment);
    let location = status.secret_location.unwrap();
    assert!(location.contains("secrets.json"), "{location}");
    let resolved = manager.resolve_backend().unwrap();
    assert_eq!(resolved.backend.kind(), "gemini-api-key");
    assert!(format!("{:?}", resolved.backend).contains(&base));

    // The status never carries the key.
    let json = serde_json::to_string(&manager.status().await).unwrap();
    assert!(!json.contains("AIza-good-key"), "{json}");
}

#[tokio::test]
async fn gemini_api_key_in_the_environment_wins_and_says_so() {
    let world = key_world();
    let manager = world.manager(None);
    // A stored Google choice and a stored key...
    FileStore::new(world.auth_dir().join("secrets.json"))
        .set(SecretKey::GeminiApiKey, &SecretString::new("AIza-stored"))
        .unwrap();
    manager
        .select_method(AuthMethod::GoogleLogin)
        .await
        .unwrap();
    // ...lose against GEMINI_API_KEY.
    let manager = world.manager_with_env(None, &[("GEMINI_API_KEY", "AIza-env")]);
    let status = manager.status().await;
    assert_eq!(status.active, Some(AuthMethod::GeminiApiKey));
    assert_eq!(status.chosen_by, Some(MethodOrigin::Environment));
    assert_eq!(
        status.secret_location.as_deref(),
        Some("the GEMINI_API_KEY environment variable")
    );
    assert!(status.api_key.in_environment);
    assert!(
        status.notes.iter().any(|n| n.contains("take precedence")),
        "{:?}",
        status.notes
    );
    let resolved = manager.resolve_backend().unwrap();
    match resolved.backend {
        gd_gemini::Backend::GeminiApi { api_key, .. } => assert_eq!(api_key.expose(), "AIza-env"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn selected_type_in_settings_wins_over_the_environment() {
    let world = key_world();
    let mut config = world.config(None);
    config.selected_type = Some("oauth-personal".into());
    let env: gd_auth::EnvFn =
        std::sync::Arc::new(|n: &str| (n == "GEMINI_API_KEY").then(|| "AIza-env".to_string()));
    let manager = gd_auth::AuthManager::new(config, env, None).unwrap();
    let err = manager.resolve_backend().unwrap_err();
    assert!(err.needs_sign_in());
    let text = err.to_string();
    assert!(
        text.starts_with("Auth method 'oauth-personal' (from security.auth.selectedType)"),
        "{text}"
    );
    assert!(text.contains("not signed in with Google"), "{text}");

    let mut config = world.config(None);
    config.selected_type = Some("cloud-shell".into());
    let manager =
        gd_auth::AuthManager::new(config, std::sync::Arc::new(|_: &str| None), None).unwrap();
    let err = manager.resolve_backend().unwrap_err();
    assert!(matches!(err, AuthError::Config(_)));
    assert!(err.to_string().contains("cloud-shell"));
}

#[tokio::test]
async fn nothing_configured_says_what_to_do() {
    let world = key_world();
    let err = world.manager(None).resolve_backend().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("not configured"), "{text}");
    assert!(
        text.contains("GEMINI_API_KEY") && text.contains("auth login"),
        "{text}"
    );
    let status = world.manager(None).status().await;
    assert!(!status.ready);
    assert!(
        status
            .actions
            .contains(&gd_auth::AuthAction::SignInWithGoogle)
    );
    assert!(status.actions.contains(&gd_auth::AuthAction::SetApiKey));
}

#[tokio::test]
async fn vertex_with_a_stored_api_key() {
    let world = key_world();
    let manager = world.manager_with_env(None, &[("GOOGLE_VERTEX_BASE_URL", "http://127.0.0.1:9")]);
    let err = manager
        .set_vertex(VertexInput {
            auth: VertexAuth::ApiKey,
            ..VertexInput::default()
        })
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Input(_)));
    manager
        .set_vertex(VertexInput {
            auth: VertexAuth::ApiKey,
            api_key: Some("vertex-key".into()),
            ..VertexInput::default()
        })
        .await
        .unwrap();
    let status = manager.status().await;
    assert_eq!(status.active, Some(AuthMethod::VertexAi));
    assert!(status.vertex.stored_key);
    assert_eq!(status.vertex.auth, Some(VertexAuth::ApiKey));
    let resolved = manager.resolve_backend().unwrap();
    assert_eq!(
        resolved
            .backend
            .url("gemini-2.5-pro", gd_gemini::Method::Generate),
        "http://127.0.0.1:9/v1beta1/publishers/google/models/gemini-2.5-pro:generateContent"
    );
    let report = manager.sign_out(Some(AuthMethod::VertexAi)).await.unwrap();
    assert_eq!(report.removed, vec![SecretKey::VertexApiKey]);
    assert_eq!(manager.status().await.active, None);
}

#[tokio::test]
async fn vertex_with_application_default_credentials() {
    let world = key_world();
    let adc = world.dir.path().join("adc.json");
    std::fs::write(
        &adc,
        json!({"type": "authorized_user", "client_id": gd_fake_gemini::oauth::CLIENT_ID,
               "client_secret": gd_fake_gemini::oauth::CLIENT_SECRET, "refresh_token": "1//unknown"})
        .to_string(),
    )
    .unwrap();
    let adc_path = adc.to_str().unwrap().to_owned();
    let token_url = world.oauth.token_url();
    let env = [
        ("GOOGLE_APPLICATION_CREDENTIALS", adc_path.as_str()),
        ("GEMINI_DESKTOP_OAUTH_TOKEN_URL", token_url.as_str()),
    ];
    let manager = world.manager_with_env(None, &env);
    let input = || VertexInput {
        project: Some("vertex-proj".into()),
        location: Some("us-central1".into()),
        auth: VertexAuth::Adc,
        api_key: None,
    };
    // The refresh token is unknown to Google: refused with instructions.
    let err = manager.set_vertex(input()).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("gcloud auth application-default login"),
        "{err}"
    );

    // A real one (issued by the fake through a sign-in) works.
    common::sign_in(&manager).await;
    let refresh = world.oauth.refresh_tokens().pop().unwrap();
    std::fs::write(
        &adc,
        json!({"type": "authorized_user", "client_id": gd_fake_gemini::oauth::CLIENT_ID,
               "client_secret": gd_fake_gemini::oauth::CLIENT_SECRET, "refresh_token": refresh})
        .to_string(),
    )
    .unwrap();
    manager.set_vertex(input()).await.unwrap();
    let resolved = manager.resolve_backend().unwrap();
    assert_eq!(resolved.method, AuthMethod::VertexAi);
    assert!(
        resolved.secret_location.contains("adc.json"),
        "{}",
        resolved.secret_location
    );
    assert_eq!(
        resolved.backend.url("m", gd_gemini::Method::Generate),
        "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/vertex-proj/locations/us-central1/publishers/google/models/m:generateContent"
    );
}

#[tokio::test]
async fn service_account_keys_are_signed_with_rs256() {
    let world = key_world();
    let dir = world.dir.path();
    let pem = dir.join("key.pem");
    let made = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ])
        .arg(&pem)
        .output();
    if !made.map(|o| o.status.success()).unwrap_or(false) {
        eprintln!("skipped: openssl is not available to make a test key");
        return;
    }
    let key = std::fs::read_to_string(&pem).unwrap();
    let file = dir.join("sa.json");
    std::fs::write(
        &file,
        json!({"type": "service_account", "client_email": "sa@p.iam.gserviceaccount.com",
               "private_key": key, "token_uri": world.oauth.token_url()})
        .to_string(),
    )
    .unwrap();
    let http = gd_auth::http::Http::new().unwrap();
    let adc = gd_auth::adc::AdcCredentials::load(&file, None, http.client().clone()).unwrap();
    let token = adc.token().await.unwrap();
    assert!(token.expose().starts_with("ya29.fake-access-"));
    assert_eq!(
        world
            .oauth
            .token_requests("urn:ietf:params:oauth:grant-type:jwt-bearer"),
        1
    );
    adc.token().await.unwrap();
    assert_eq!(
        world
            .oauth
            .token_requests("urn:ietf:params:oauth:grant-type:jwt-bearer"),
        1,
        "cached"
    );
}

/// Without a keyring service the secrets go to a 0600 file, and the status
/// says so (the keyring itself is tested in tests/it/keyring.rs).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn without_a_keyring_secrets_go_to_a_private_file() {
    use std::os::unix::fs::PermissionsExt;
    let world = key_world();
    let mut config = world.config(None);
    config.store = gd_auth::secret_store::StorePreference::Auto;
    let base = world.gemini.base_url();
    // No DBUS_SESSION_BUS_ADDRESS in this environment.
    let env: gd_auth::EnvFn =
        std::sync::Arc::new(move |n: &str| (n == "GOOGLE_GEMINI_BASE_URL").then(|| base.clone()));
    let manager = gd_auth::AuthManager::new(config.clone(), env, None).unwrap();
    manager
        .set_api_key(SecretString::new("AIza-good-key"))
        .await
        .unwrap();
    let file = config.secrets_file();
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(file.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);
    let status = manager.status().await;
    let store = status.store.unwrap();
    assert_eq!(store.kind, gd_auth::StoreKind::File { path: file.clone() });
    assert!(store.fallback_reason.unwrap().contains("D-Bus"));
    assert!(
        status
            .notes
            .iter()
            .any(|n| n.contains("No keyring service is reachable")),
        "{:?}",
        status.notes
    );
    let state = std::fs::read_to_string(config.state_file()).unwrap();
    assert!(
        !state.contains("AIza-good-key"),
        "the state file holds no secret"
    );
}
