//! Shared setup: an [`AuthManager`] wired to the fake OAuth server and the
//! fake Gemini (Code Assist) server, with secrets in a temporary 0600 file.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use gd_auth::code_assist::PollOptions;
use gd_auth::config::{ClientSource, Endpoints, OAuthClient};
use gd_auth::{AuthConfig, AuthManager, ProjectSource};
use gd_fake_gemini::oauth::{CLIENT_ID, CLIENT_SECRET};
use gd_fake_gemini::{FakeGemini, FakeOAuth};
use gd_http::SecretString;
use serde_json::Value;

pub struct World {
    pub dir: tempfile::TempDir,
    pub oauth: FakeOAuth,
    pub gemini: FakeGemini,
}

impl World {
    pub fn new(scenario: Value) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            oauth: FakeOAuth::start(),
            gemini: FakeGemini::start(scenario),
        }
    }

    pub fn auth_dir(&self) -> PathBuf {
        self.dir.path().join("auth")
    }

    pub fn config(&self, project: Option<&str>) -> AuthConfig {
        let mut config = AuthConfig::for_tests(self.auth_dir());
        config.client = Some(OAuthClient {
            client_id: CLIENT_ID.into(),
            client_secret: Some(SecretString::new(CLIENT_SECRET)),
            source: ClientSource::Environment,
        });
        config.endpoints = Endpoints {
            auth_url: self.oauth.auth_url(),
            token_url: self.oauth.token_url(),
            revoke_url: self.oauth.revoke_url(),
            userinfo_url: self.oauth.userinfo_url(),
            projects_url: self.oauth.projects_url(),
            code_assist_endpoint: self.gemini.base_url(),
            code_assist_api_version: "v1internal".into(),
        };
        config.configured_project =
            project.map(|p| (p.to_owned(), ProjectSource::EnvGoogleCloudProject));
        config
    }

    pub fn manager(&self, project: Option<&str>) -> AuthManager {
        self.manager_with_env(project, &[])
    }

    pub fn manager_with_env(&self, project: Option<&str>, env: &[(&str, &str)]) -> AuthManager {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env: gd_auth::EnvFn =
            Arc::new(move |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()));
        let mut manager = AuthManager::new(
            self.config(project),
            env,
            Some(self.dir.path().join("home")),
        )
        .unwrap();
        manager.set_poll_options(PollOptions {
            interval: Duration::from_millis(10),
            max_wait: Duration::from_secs(10),
        });
        manager
    }
}

/// Acts as the browser: opens `url` and follows redirects (to the loopback
/// callback); returns the final status and page.
pub async fn browse(url: String) -> (u16, String) {
    let client = gd_http::http_client_builder().build().unwrap();
    let response = client
        .get(url)
        .send()
        .await
        .expect("the browser gets an answer");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// Opens `url` without following the redirect; returns the Location (what
/// a browser on another machine would show in its address bar).
pub async fn authorize_location(url: &str) -> String {
    let client = gd_http::http_client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client.get(url).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 302);
    response
        .headers()
        .get("location")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

/// Runs the whole loopback sign-in with the test as the browser.
pub async fn sign_in(manager: &AuthManager) -> gd_auth::LoginOutcome {
    let login = manager
        .start_google_login(gd_auth::LoginOptions::default())
        .await
        .unwrap();
    let browser = tokio::spawn(browse(login.url().to_owned()));
    let outcome = login.finish().await.expect("signed in");
    browser.await.unwrap();
    outcome
}
