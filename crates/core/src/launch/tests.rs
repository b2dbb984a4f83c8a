use super::*;
use gd_auth::oauth::StoredTokens;
use gd_auth::secret_store::{FileStore, SecretStore};
use gd_auth::state::{AuthMethod, GoogleState, StateFile};
use gd_auth::{ProjectSource, SecretKey};
use gd_gemini::SecretString;

/// An environment whose auth directory is `dir` (secrets in a file).
fn env(dir: &Path, extra: &[(&str, &str)]) -> Env {
    let mut dotenv: HashMap<String, String> = [
        ("GEMINI_DESKTOP_AUTH_DIR", dir.to_str().unwrap()),
        ("GEMINI_DESKTOP_SECRET_STORE", "file"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in extra {
        dotenv.insert(k.to_string(), v.to_string());
    }
    Env { dotenv, file: None }
}

fn settings(selected: Option<&str>) -> Settings {
    let mut settings = Settings::default();
    settings.security.auth.selected_type = selected.map(str::to_owned);
    settings
}

fn real_env_has_credentials() -> bool {
    [
        "GEMINI_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_CLOUD_PROJECT",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some())
}

#[test]
fn checkpointing_is_on_in_the_app_and_off_headless_unless_set() {
    let env = |name: &str| (name == gd_checkpoint::DIR_ENV).then(|| "/data/cp".to_owned());
    let mut s = Settings::default();
    assert_eq!(
        checkpointing(&s, true, &env, None).unwrap().root,
        PathBuf::from("/data/cp")
    );
    assert!(checkpointing(&s, false, &env, None).is_none());
    s.general.checkpointing.enabled = Some(false);
    assert!(checkpointing(&s, true, &env, None).is_none());
    s.general.checkpointing.enabled = Some(true);
    let none = |_: &str| None;
    assert_eq!(
        checkpointing(&s, false, &none, Some(Path::new("/home/u")))
            .unwrap()
            .root,
        PathBuf::from("/home/u/.gemini/gemini-desktop/checkpoints")
    );
}

#[test]
fn without_credentials_the_error_says_what_to_do() {
    if real_env_has_credentials() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let err = select_backend(&settings(None), &env(dir.path(), &[])).unwrap_err();
    let LaunchError::Auth(message) = err else {
        panic!("{err:?}")
    };
    assert!(message.contains("not configured"), "{message}");
    assert!(message.contains("GEMINI_API_KEY"), "{message}");
    assert!(
        message.contains("gemini-desktop-cli auth login"),
        "{message}"
    );
}

#[test]
fn a_stored_api_key_is_used_when_the_environment_has_none() {
    if real_env_has_credentials() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    FileStore::new(dir.path().join("secrets.json"))
        .set(SecretKey::GeminiApiKey, &SecretString::new("AIza-stored"))
        .unwrap();
    StateFile::new(dir.path().join("auth.json"))
        .update(|s| s.method = Some(AuthMethod::GeminiApiKey))
        .unwrap();
    let backend = select_backend(&settings(None), &env(dir.path(), &[])).unwrap();
    match backend {
        Backend::GeminiApi { api_key, .. } => assert_eq!(api_key.expose(), "AIza-stored"),
        other => panic!("{other:?}"),
    }
    // The environment's key wins.
    let backend = select_backend(
        &settings(Some("gemini-api-key")),
        &env(dir.path(), &[("GEMINI_API_KEY", "AIza-env")]),
    )
    .unwrap();
    match backend {
        Backend::GeminiApi { api_key, .. } => assert_eq!(api_key.expose(), "AIza-env"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn oauth_personal_uses_the_stored_google_sign_in_over_code_assist() {
    if real_env_has_credentials() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let client = [
        ("GEMINI_DESKTOP_OAUTH_CLIENT_ID", "cid"),
        ("CODE_ASSIST_ENDPOINT", "http://127.0.0.1:9"),
    ];
    // Not signed in yet.
    let err =
        select_backend(&settings(Some("oauth-personal")), &env(dir.path(), &client)).unwrap_err();
    assert!(err.to_string().contains("oauth-personal"), "{err}");
    assert!(err.to_string().contains("auth login"), "{err}");

    let tokens = StoredTokens {
        access_token: "ya29.x".into(),
        refresh_token: Some("1//y".into()),
        expires_at: Some(chrono::Utc::now().timestamp() + 3600),
        scopes: vec![],
        client_id: "cid".into(),
    };
    FileStore::new(dir.path().join("secrets.json"))
        .set(SecretKey::GoogleOauth, &tokens.to_secret())
        .unwrap();
    StateFile::new(dir.path().join("auth.json"))
        .update(|s| {
            s.method = Some(AuthMethod::GoogleLogin);
            s.google = Some(GoogleState {
                email: Some("dev@example.com".into()),
                project: Some("onboarded-project".into()),
                project_source: Some(ProjectSource::CodeAssist),
                ..GoogleState::default()
            });
        })
        .unwrap();
    let backend =
        select_backend(&settings(Some("oauth-personal")), &env(dir.path(), &client)).unwrap();
    match &backend {
        Backend::CodeAssist {
            endpoint, project, ..
        } => {
            assert_eq!(endpoint, "http://127.0.0.1:9");
            assert_eq!(project.as_deref(), Some("onboarded-project"));
        }
        other => panic!("{other:?}"),
    }
    // Chosen in the app, without settings: the same.
    assert_eq!(
        select_backend(&settings(None), &env(dir.path(), &client))
            .unwrap()
            .kind(),
        "code-assist"
    );
    // A numeric GOOGLE_CLOUD_PROJECT is refused with the fix.
    let mut numeric = client.to_vec();
    numeric.push(("GOOGLE_CLOUD_PROJECT", "123456789012"));
    let err = select_backend(&settings(None), &env(dir.path(), &numeric)).unwrap_err();
    assert!(err.to_string().contains("project number"), "{err}");
}
