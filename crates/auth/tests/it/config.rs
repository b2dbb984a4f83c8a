//! Where the OAuth client and the Code Assist project come from: real
//! `settings.json` files read by gd-settings, an environment, and the
//! client baked in at build time. The order is the one the README
//! promises: environment > settings > built-in for the client;
//! `GOOGLE_CLOUD_PROJECT` > `GOOGLE_CLOUD_PROJECT_ID` >
//! `security.auth.googleCloudProject` for the project.

use std::collections::HashMap;
use std::path::Path;

use gd_auth::config::{OAuthClient, built_in_client_from};
use gd_auth::{AuthConfig, ClientSource, ProjectSource};
use gd_settings::{LoadOptions, Settings, load_layers};
use serde_json::json;

/// A home with `~/.gemini/settings.json` = `user` and a workspace.
struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new(user: serde_json::Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let gemini = dir.path().join("home/.gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::write(
            gemini.join("settings.json"),
            serde_json::to_string_pretty(&user).unwrap(),
        )
        .unwrap();
        Self { dir }
    }

    fn home(&self) -> std::path::PathBuf {
        self.dir.path().join("home")
    }

    fn settings(&self, env: &HashMap<&str, &str>) -> Settings {
        let get = |name: &str| env.get(name).map(|v| v.to_string());
        let absent = self.dir.path().join("absent.json");
        let system = |name: &str| match name {
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH" | "GEMINI_CLI_SYSTEM_SETTINGS_PATH" => {
                Some(absent.display().to_string())
            }
            other => get(other),
        };
        load_layers(&LoadOptions {
            home: Some(self.home()),
            workspace: self.dir.path().join("ws"),
            workspace_trusted: true,
            env: &system,
        })
        .unwrap()
        .settings
    }

    /// The config for `env`, with `built_in` as the build-time client.
    fn config(&self, env: &[(&str, &str)], built_in: Option<OAuthClient>) -> AuthConfig {
        let env: HashMap<&str, &str> = env.iter().copied().collect();
        let settings = self.settings(&env);
        let get = |name: &str| env.get(name).map(|v| v.to_string());
        AuthConfig::from_sources(&settings, &get, Some(&self.home()), built_in).unwrap()
    }
}

fn built_in() -> Option<OAuthClient> {
    built_in_client_from(
        Some("built-in-id.apps.googleusercontent.com"),
        Some("built-in-secret"),
    )
}

fn client(config: &AuthConfig) -> (String, Option<String>, ClientSource) {
    let c = config.client.as_ref().expect("a client");
    (
        c.client_id.clone(),
        c.client_secret.as_ref().map(|s| s.expose().to_owned()),
        c.source,
    )
}

fn with_client_in_settings() -> Files {
    Files::new(json!({
        "security": {"auth": {"oauthClient": {
            "clientId": "settings-id.apps.googleusercontent.com",
            "clientSecret": "$SETTINGS_SECRET",
            "callbackPort": 7777
        }}}
    }))
}

#[test]
fn the_client_in_settings_is_used_with_its_secret_and_port() {
    let files = with_client_in_settings();
    let config = files.config(&[("SETTINGS_SECRET", "from-settings")], built_in());
    assert_eq!(
        client(&config),
        (
            "settings-id.apps.googleusercontent.com".into(),
            Some("from-settings".into()),
            ClientSource::Settings
        ),
        "settings win over the built-in client; $VAR is expanded"
    );
    assert_eq!(config.callback_port, Some(7777));
    assert!(config.require_client().is_ok());
}

#[test]
fn the_environment_wins_over_settings_and_does_not_borrow_their_secret() {
    let files = with_client_in_settings();
    let config = files.config(
        &[
            ("GEMINI_DESKTOP_OAUTH_CLIENT_ID", "env-id"),
            ("GEMINI_DESKTOP_OAUTH_CLIENT_SECRET", "env-secret"),
            ("GEMINI_DESKTOP_OAUTH_CALLBACK_PORT", "8888"),
            ("SETTINGS_SECRET", "from-settings"),
        ],
        built_in(),
    );
    assert_eq!(
        client(&config),
        (
            "env-id".into(),
            Some("env-secret".into()),
            ClientSource::Environment
        )
    );
    assert_eq!(config.callback_port, Some(8888));

    // An id alone in the environment is a client without a secret: the
    // settings' secret belongs to another client.
    let config = files.config(
        &[
            ("GEMINI_DESKTOP_OAUTH_CLIENT_ID", "env-id"),
            ("SETTINGS_SECRET", "from-settings"),
        ],
        built_in(),
    );
    assert_eq!(
        client(&config),
        ("env-id".into(), None, ClientSource::Environment)
    );

    // A blank variable counts as unset.
    let config = files.config(
        &[
            ("GEMINI_DESKTOP_OAUTH_CLIENT_ID", "  "),
            ("SETTINGS_SECRET", "s"),
        ],
        built_in(),
    );
    assert_eq!(client(&config).2, ClientSource::Settings);

    // A port that is not one is an error naming the variable.
    let env: HashMap<&str, &str> = [("GEMINI_DESKTOP_OAUTH_CALLBACK_PORT", "http")].into();
    let settings = files.settings(&env);
    let err = AuthConfig::from_sources(
        &settings,
        &|n| env.get(n).map(|v| v.to_string()),
        Some(&files.home()),
        None,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("GEMINI_DESKTOP_OAUTH_CALLBACK_PORT must be a port number"),
        "{err}"
    );
}

#[test]
fn the_built_in_client_is_the_last_resort() {
    let files = Files::new(json!({"security": {"auth": {"oauthClient": {"clientId": " "}}}}));
    let config = files.config(&[], built_in());
    assert_eq!(
        client(&config),
        (
            "built-in-id.apps.googleusercontent.com".into(),
            Some("built-in-secret".into()),
            ClientSource::BuiltIn
        ),
        "a blank clientId in settings does not count"
    );

    // Nothing anywhere: Google sign-in says how to configure a client.
    let config = files.config(&[], None);
    assert!(config.client.is_none());
    let err = config.require_client().unwrap_err().to_string();
    assert!(err.contains("GEMINI_DESKTOP_OAUTH_CLIENT_ID"), "{err}");
    assert!(err.contains("security.auth.oauthClient"), "{err}");
}

#[test]
fn build_time_values_are_trimmed_and_blank_ones_ignored() {
    assert!(built_in_client_from(None, Some("secret")).is_none());
    assert!(built_in_client_from(Some("  "), Some("secret")).is_none());
    let c = built_in_client_from(Some(" id \n"), Some("")).unwrap();
    assert_eq!(c.client_id, "id");
    assert!(c.client_secret.is_none(), "a blank secret is no secret");
    assert_eq!(c.source, ClientSource::BuiltIn);
    // What this binary was built with is read through the same rule.
    assert_eq!(
        gd_auth::config::built_in_client().map(|c| c.client_id),
        option_env!("GEMINI_DESKTOP_OAUTH_CLIENT_ID")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    );
}

fn project(files: &Files, env: &[(&str, &str)]) -> Option<(String, ProjectSource)> {
    files.config(env, None).configured_project
}

#[test]
fn the_project_comes_from_google_cloud_project_then_project_id_then_settings() {
    let files =
        Files::new(json!({"security": {"auth": {"googleCloudProject": " settings-project "}}}));
    assert_eq!(
        project(&files, &[]),
        Some(("settings-project".into(), ProjectSource::Settings))
    );
    assert_eq!(
        project(&files, &[("GOOGLE_CLOUD_PROJECT_ID", "id-project")]),
        Some(("id-project".into(), ProjectSource::EnvGoogleCloudProjectId)),
        "GOOGLE_CLOUD_PROJECT_ID wins over settings"
    );
    assert_eq!(
        project(
            &files,
            &[
                ("GOOGLE_CLOUD_PROJECT", "env-project"),
                ("GOOGLE_CLOUD_PROJECT_ID", "id-project")
            ]
        ),
        Some(("env-project".into(), ProjectSource::EnvGoogleCloudProject)),
        "GOOGLE_CLOUD_PROJECT wins over GOOGLE_CLOUD_PROJECT_ID"
    );
    assert_eq!(
        project(
            &files,
            &[
                ("GOOGLE_CLOUD_PROJECT", ""),
                ("GOOGLE_CLOUD_PROJECT_ID", "id-project")
            ]
        ),
        Some(("id-project".into(), ProjectSource::EnvGoogleCloudProjectId)),
        "an empty variable counts as unset"
    );

    let none = Files::new(json!({}));
    assert_eq!(project(&none, &[]), None);
    assert_eq!(
        project(&none, &[("GOOGLE_CLOUD_PROJECT_ID", "id-project")]),
        Some(("id-project".into(), ProjectSource::EnvGoogleCloudProjectId))
    );
}

#[test]
fn state_lives_in_the_auth_dir_under_home_unless_moved() {
    let files = Files::new(json!({}));
    let config = files.config(&[], None);
    assert_eq!(config.dir, files.home().join(".gemini/gemini-desktop"));
    let moved = files.dir.path().join("elsewhere");
    let config = files.config(
        &[("GEMINI_DESKTOP_AUTH_DIR", moved.to_str().unwrap())],
        None,
    );
    assert_eq!(config.dir, moved);
    assert!(Path::new(&config.state_file()).ends_with("elsewhere/auth.json"));
}
