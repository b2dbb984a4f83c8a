//! What the auth code reads from settings and the environment: the OAuth
//! client, the Google endpoints (overridable for tests), the Code Assist
//! endpoint, the callback port and where non-secret state lives.

use std::path::PathBuf;

use gd_gemini::endpoint::{DEFAULT_CODE_ASSIST_API_VERSION, DEFAULT_CODE_ASSIST_ENDPOINT};
use gd_http::SecretString;
use gd_settings::Settings;
use serde::Serialize;

use crate::error::AuthError;
use crate::secret_store::StorePreference;

pub const GOOGLE_AUTH_URL: &str = "https://accounts.google.com/o/oauth2/v2/auth";
pub const GOOGLE_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
pub const GOOGLE_REVOKE_URL: &str = "https://oauth2.googleapis.com/revoke";
pub const GOOGLE_USERINFO_URL: &str = "https://www.googleapis.com/oauth2/v2/userinfo";
pub const GOOGLE_PROJECTS_URL: &str = "https://cloudresourcemanager.googleapis.com/v1/projects";

/// The scopes Google sign-in asks for (Code Assist needs `cloud-platform`).
pub const SCOPES: [&str; 3] = [
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/userinfo.email",
    "https://www.googleapis.com/auth/userinfo.profile",
];

/// Environment variables read here.
pub mod env {
    pub const CLIENT_ID: &str = "GEMINI_DESKTOP_OAUTH_CLIENT_ID";
    pub const CLIENT_SECRET: &str = "GEMINI_DESKTOP_OAUTH_CLIENT_SECRET";
    pub const AUTH_URL: &str = "GEMINI_DESKTOP_OAUTH_AUTH_URL";
    pub const TOKEN_URL: &str = "GEMINI_DESKTOP_OAUTH_TOKEN_URL";
    pub const USERINFO_URL: &str = "GEMINI_DESKTOP_OAUTH_USERINFO_URL";
    pub const REVOKE_URL: &str = "GEMINI_DESKTOP_OAUTH_REVOKE_URL";
    pub const PROJECTS_URL: &str = "GEMINI_DESKTOP_PROJECTS_URL";
    pub const CALLBACK_PORT: &str = "GEMINI_DESKTOP_OAUTH_CALLBACK_PORT";
    pub const CODE_ASSIST_ENDPOINT: &str = "CODE_ASSIST_ENDPOINT";
    pub const CODE_ASSIST_API_VERSION: &str = "CODE_ASSIST_API_VERSION";
    pub const SECRET_STORE: &str = "GEMINI_DESKTOP_SECRET_STORE";
    pub const AUTH_DIR: &str = "GEMINI_DESKTOP_AUTH_DIR";
    pub const GOOGLE_CLOUD_PROJECT: &str = "GOOGLE_CLOUD_PROJECT";
    pub const GOOGLE_CLOUD_PROJECT_ID: &str = "GOOGLE_CLOUD_PROJECT_ID";
}

/// Where the OAuth client came from (shown in the status view).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "snake_case")]
pub enum ClientSource {
    /// `GEMINI_DESKTOP_OAUTH_CLIENT_ID` at run time.
    Environment,
    /// `security.auth.oauthClient` in settings.json.
    Settings,
    /// Baked in when this binary was built.
    BuiltIn,
}

/// A Google OAuth client ("Desktop app" type) of the user's or the
/// distributor's Google Cloud project.
#[derive(Debug, Clone)]
pub struct OAuthClient {
    pub client_id: String,
    /// Desktop clients have a secret Google does not treat as confidential.
    pub client_secret: Option<SecretString>,
    pub source: ClientSource,
}

/// Every URL the auth code talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    pub auth_url: String,
    pub token_url: String,
    pub revoke_url: String,
    pub userinfo_url: String,
    pub projects_url: String,
    pub code_assist_endpoint: String,
    pub code_assist_api_version: String,
}

impl Default for Endpoints {
    fn default() -> Self {
        Self {
            auth_url: GOOGLE_AUTH_URL.into(),
            token_url: GOOGLE_TOKEN_URL.into(),
            revoke_url: GOOGLE_REVOKE_URL.into(),
            userinfo_url: GOOGLE_USERINFO_URL.into(),
            projects_url: GOOGLE_PROJECTS_URL.into(),
            code_assist_endpoint: DEFAULT_CODE_ASSIST_ENDPOINT.into(),
            code_assist_api_version: DEFAULT_CODE_ASSIST_API_VERSION.into(),
        }
    }
}

/// Everything the auth code needs to know about its surroundings.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// `None` when no client is configured anywhere (Google sign-in is then
    /// unavailable and says how to configure one).
    pub client: Option<OAuthClient>,
    pub endpoints: Endpoints,
    /// A fixed loopback port (else a free one).
    pub callback_port: Option<u16>,
    /// Directory of `auth.json` (state) and `secrets.json` (fallback store).
    pub dir: PathBuf,
    pub store: StorePreference,
    /// The keyring service name (tests use their own).
    pub service: String,
    /// A project the user configured for Code Assist, and where.
    pub configured_project: Option<(String, ProjectSource)>,
    /// `security.auth.selectedType` (validated).
    pub selected_type: Option<String>,
}

/// Where a Google Cloud project came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "snake_case")]
pub enum ProjectSource {
    /// `GOOGLE_CLOUD_PROJECT`.
    EnvGoogleCloudProject,
    /// `GOOGLE_CLOUD_PROJECT_ID`.
    EnvGoogleCloudProjectId,
    /// `security.auth.googleCloudProject` in settings.json.
    Settings,
    /// Chosen in the app's project picker.
    Picked,
    /// Assigned by Code Assist during onboarding.
    CodeAssist,
}

impl ProjectSource {
    pub fn describe(self) -> &'static str {
        match self {
            Self::EnvGoogleCloudProject => "the GOOGLE_CLOUD_PROJECT environment variable",
            Self::EnvGoogleCloudProjectId => "the GOOGLE_CLOUD_PROJECT_ID environment variable",
            Self::Settings => "security.auth.googleCloudProject in settings.json",
            Self::Picked => "the project you picked in Gemini Desktop",
            Self::CodeAssist => "assigned by Gemini Code Assist at sign-in",
        }
    }
}

/// The OAuth client baked in at build time, if the builder set
/// `GEMINI_DESKTOP_OAUTH_CLIENT_ID` (and `..._SECRET`).
pub fn built_in_client() -> Option<OAuthClient> {
    built_in_client_from(
        option_env!("GEMINI_DESKTOP_OAUTH_CLIENT_ID"),
        option_env!("GEMINI_DESKTOP_OAUTH_CLIENT_SECRET"),
    )
}

/// The built-in client from the values `option_env!` found at build time
/// (blank values count as unset). Separate from [`built_in_client`] so
/// that the rule can be tested without rebuilding.
pub fn built_in_client_from(id: Option<&str>, secret: Option<&str>) -> Option<OAuthClient> {
    let id = id.map(str::trim).filter(|s| !s.is_empty())?;
    Some(OAuthClient {
        client_id: id.to_owned(),
        client_secret: secret
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(SecretString::new),
        source: ClientSource::BuiltIn,
    })
}

impl AuthConfig {
    /// Reads settings and environment. `home` is the user's home directory.
    ///
    /// The OAuth client is the first of: `GEMINI_DESKTOP_OAUTH_CLIENT_ID` /
    /// `..._SECRET` in the environment, `security.auth.oauthClient` in
    /// settings, the one baked in at build time. The Code Assist project is
    /// the first of `GOOGLE_CLOUD_PROJECT`, `GOOGLE_CLOUD_PROJECT_ID`,
    /// `security.auth.googleCloudProject` (a project picked in the app
    /// comes after these; see `AuthManager`).
    pub fn from_settings(
        settings: &Settings,
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&std::path::Path>,
    ) -> Result<Self, AuthError> {
        Self::from_sources(settings, env, home, built_in_client())
    }

    /// [`AuthConfig::from_settings`] with the build-time client given.
    pub fn from_sources(
        settings: &Settings,
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&std::path::Path>,
        built_in: Option<OAuthClient>,
    ) -> Result<Self, AuthError> {
        let get = |name: &str| {
            env(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let auth = &settings.security.auth;
        let client = if let Some(id) = get(env::CLIENT_ID) {
            Some(OAuthClient {
                client_id: id,
                client_secret: get(env::CLIENT_SECRET).map(SecretString::new),
                source: ClientSource::Environment,
            })
        } else if let Some(id) = auth
            .oauth_client
            .client_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            Some(OAuthClient {
                client_id: id.to_owned(),
                client_secret: auth
                    .oauth_client
                    .client_secret
                    .as_deref()
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(SecretString::new),
                source: ClientSource::Settings,
            })
        } else {
            built_in
        };
        let defaults = Endpoints::default();
        let trim = |url: String| url.trim_end_matches('/').to_owned();
        let endpoints = Endpoints {
            auth_url: get(env::AUTH_URL).unwrap_or(defaults.auth_url),
            token_url: get(env::TOKEN_URL).unwrap_or(defaults.token_url),
            revoke_url: get(env::REVOKE_URL).unwrap_or(defaults.revoke_url),
            userinfo_url: get(env::USERINFO_URL).unwrap_or(defaults.userinfo_url),
            projects_url: get(env::PROJECTS_URL).unwrap_or(defaults.projects_url),
            code_assist_endpoint: trim(
                get(env::CODE_ASSIST_ENDPOINT).unwrap_or(defaults.code_assist_endpoint),
            ),
            code_assist_api_version: get(env::CODE_ASSIST_API_VERSION)
                .unwrap_or(defaults.code_assist_api_version),
        };
        let callback_port = match get(env::CALLBACK_PORT) {
            Some(port) => Some(port.parse::<u16>().map_err(|_| {
                AuthError::Config(format!(
                    "{} must be a port number, not '{port}'",
                    env::CALLBACK_PORT
                ))
            })?),
            None => auth.oauth_client.callback_port,
        };
        let dir = match get(env::AUTH_DIR) {
            Some(dir) => PathBuf::from(dir),
            None => default_auth_dir(home).ok_or_else(|| {
                AuthError::Config(
                    "cannot find the home directory (HOME is not set) to keep sign-in data".into(),
                )
            })?,
        };
        let store =
            StorePreference::parse(get(env::SECRET_STORE).as_deref()).map_err(AuthError::Config)?;
        let configured_project = get(env::GOOGLE_CLOUD_PROJECT)
            .map(|p| (p, ProjectSource::EnvGoogleCloudProject))
            .or_else(|| {
                get(env::GOOGLE_CLOUD_PROJECT_ID)
                    .map(|p| (p, ProjectSource::EnvGoogleCloudProjectId))
            })
            .or_else(|| {
                auth.google_cloud_project
                    .as_deref()
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(|p| (p.to_owned(), ProjectSource::Settings))
            });
        Ok(Self {
            client,
            endpoints,
            callback_port,
            dir,
            store,
            service: crate::secret_store::SERVICE.into(),
            configured_project,
            selected_type: auth.selected_type.clone(),
        })
    }

    /// A configuration for tests: everything in `dir`, the file store.
    pub fn for_tests(dir: PathBuf) -> Self {
        Self {
            client: None,
            endpoints: Endpoints::default(),
            callback_port: None,
            dir,
            store: StorePreference::File,
            service: "gemini-desktop-test".into(),
            configured_project: None,
            selected_type: None,
        }
    }

    /// The client, or the error that explains how to configure one.
    pub fn require_client(&self) -> Result<&OAuthClient, AuthError> {
        self.client.as_ref().ok_or_else(|| {
            AuthError::OAuthClientMissing(
                "Google sign-in needs an OAuth client (a \"Desktop app\" client from your Google Cloud project). \
                 Set GEMINI_DESKTOP_OAUTH_CLIENT_ID and GEMINI_DESKTOP_OAUTH_CLIENT_SECRET, or \
                 security.auth.oauthClient.clientId / clientSecret in ~/.gemini/settings.json \
                 (see \"Sign-in\" in the README). Or use an API key instead."
                    .into(),
            )
        })
    }

    pub fn secrets_file(&self) -> PathBuf {
        self.dir.join(crate::secret_store::SECRETS_FILE)
    }

    pub fn state_file(&self) -> PathBuf {
        self.dir.join(crate::state::STATE_FILE)
    }
}

/// `~/.gemini/gemini-desktop`.
pub fn default_auth_dir(home: Option<&std::path::Path>) -> Option<PathBuf> {
    home.map(|h| h.join(".gemini").join("gemini-desktop"))
}
