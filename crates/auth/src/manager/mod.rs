//! [`AuthManager`]: the one object frontends talk to. The desktop shell
//! keeps one in its state and maps its methods to commands; the CLI's
//! `auth` subcommands and the session launch use the same one.
//!
//! Which method a session uses:
//! 1. `security.auth.selectedType` in settings, if set;
//! 2. else credentials in the environment (`GOOGLE_GENAI_USE_VERTEXAI`,
//!    `GEMINI_API_KEY`): they win over anything stored;
//! 3. else the method last chosen in the app (or with `gemini-desktop-cli
//!    auth`), from `auth.json`.
//!
//! Within a method the environment also wins: `GEMINI_API_KEY` over a stored
//! key, Vertex variables over stored Vertex settings, `GOOGLE_CLOUD_PROJECT`
//! over the project Code Assist assigned.
//!
//! The manager's methods are split by concept: `methods` (API key, Vertex
//! AI, choosing the method), `google` (Google sign-in, Code Assist setup,
//! projects), `sign_out`, `backend` (the method and backend a session
//! uses) and `status_view` (the auth doctor's data).

mod backend;
mod google;
mod methods;
mod sign_out;
mod status_view;

pub use google::GoogleLogin;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use gd_gemini::Backend;
use gd_http::SecretString;
use serde::{Deserialize, Serialize};
use tracing::warn;

use crate::code_assist::{CodeAssistApi, CodeAssistSetup, PollOptions};
use crate::config::AuthConfig;
use crate::error::AuthError;
use crate::http::Http;
use crate::oauth::GoogleOAuth;
use crate::secret_store::{SecretKey, SelectedStore, StoreError, StoreInfo, select_store};
use crate::state::{AuthMethod, AuthState, StateFile, VertexAuth};
use crate::status::MethodOrigin;

/// Reads an environment variable (process environment, `.env` underneath).
pub type EnvFn = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// A backend ready for a session, and where its credentials come from.
#[derive(Clone)]
pub struct ResolvedBackend {
    pub backend: Backend,
    pub method: AuthMethod,
    pub chosen_by: MethodOrigin,
    /// Where the secret lives, for people.
    pub secret_location: String,
}

impl std::fmt::Debug for ResolvedBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedBackend")
            .field("backend", &self.backend)
            .field("method", &self.method)
            .field("chosen_by", &self.chosen_by)
            .field("secret_location", &self.secret_location)
            .finish()
    }
}

/// What Vertex AI settings the sign-in screen sends.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct VertexInput {
    pub project: Option<String>,
    pub location: Option<String>,
    pub auth: VertexAuth,
    /// For [`VertexAuth::ApiKey`]; `None` keeps a stored key.
    #[serde(default, skip_serializing)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub api_key: Option<String>,
}

/// The result of a Google sign-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct LoginOutcome {
    pub email: Option<String>,
    pub name: Option<String>,
    pub code_assist: CodeAssistSetup,
}

/// A Google Cloud project the signed-in user can see (for the picker).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct CloudProject {
    pub project_id: String,
    pub name: Option<String>,
    pub project_number: Option<String>,
}

/// What sign-out did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct SignOutReport {
    /// The Google refresh token was revoked at Google.
    pub revoked: bool,
    /// Why revoking failed (the local copy is deleted anyway).
    pub revoke_error: Option<String>,
    pub removed: Vec<SecretKey>,
}

/// Sign-in, secrets and backend selection. Cheap to clone.
#[derive(Clone)]
pub struct AuthManager {
    inner: Arc<Inner>,
}

struct Inner {
    config: AuthConfig,
    env: EnvFn,
    home: Option<PathBuf>,
    store: OnceLock<Result<SelectedStore, StoreError>>,
    state: Arc<StateFile>,
    http: Http,
    poll: PollOptions,
    /// A store forced by the embedder (tests).
    forced_store: Option<SelectedStore>,
}

impl std::fmt::Debug for AuthManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthManager")
            .field("dir", &self.inner.config.dir)
            .finish_non_exhaustive()
    }
}

impl AuthManager {
    pub fn new(config: AuthConfig, env: EnvFn, home: Option<PathBuf>) -> Result<Self, AuthError> {
        Self::build(config, env, home, None)
    }

    /// With a given store instead of the keyring/file selection.
    pub fn with_store(
        config: AuthConfig,
        env: EnvFn,
        home: Option<PathBuf>,
        store: Arc<dyn crate::secret_store::SecretStore>,
    ) -> Result<Self, AuthError> {
        let info = StoreInfo {
            kind: store.kind(),
            fallback_reason: None,
        };
        Self::build(config, env, home, Some(SelectedStore { store, info }))
    }

    fn build(
        config: AuthConfig,
        env: EnvFn,
        home: Option<PathBuf>,
        forced_store: Option<SelectedStore>,
    ) -> Result<Self, AuthError> {
        let poll_ms =
            env("GEMINI_DESKTOP_ONBOARD_POLL_MS").and_then(|v| v.trim().parse::<u64>().ok());
        let mut poll = PollOptions::default();
        if let Some(ms) = poll_ms {
            poll.interval = std::time::Duration::from_millis(ms);
        }
        Ok(Self {
            inner: Arc::new(Inner {
                state: Arc::new(StateFile::new(config.state_file())),
                config,
                env,
                home,
                store: OnceLock::new(),
                http: Http::new()?,
                poll,
                forced_store,
            }),
        })
    }

    pub fn config(&self) -> &AuthConfig {
        &self.inner.config
    }

    /// Overrides how onboarding polls (tests).
    pub fn set_poll_options(&mut self, poll: PollOptions) {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.poll = poll;
        }
    }

    fn env(&self, name: &str) -> Option<String> {
        (self.inner.env)(name).filter(|v| !v.trim().is_empty())
    }

    /// The secret store (chosen on first use: the keyring probe may block).
    pub fn store(&self) -> Result<&SelectedStore, AuthError> {
        if let Some(store) = &self.inner.forced_store {
            return Ok(store);
        }
        let config = &self.inner.config;
        self.inner
            .store
            .get_or_init(|| {
                if config.store == crate::secret_store::StorePreference::Auto
                    && let Some(reason) = no_session_bus(&*self.inner.env)
                {
                    warn!(%reason, "no keyring service reachable; using the secrets file");
                    return select_store(
                        &config.service,
                        config.secrets_file(),
                        crate::secret_store::StorePreference::File,
                    )
                    .map(|mut s| {
                        s.info.fallback_reason = Some(reason);
                        s
                    });
                }
                select_store(&config.service, config.secrets_file(), config.store)
            })
            .as_ref()
            .map_err(|e| AuthError::Storage(e.to_string()))
    }

    pub fn state(&self) -> AuthState {
        self.inner.state.load()
    }

    /// Runs blocking store work off the async runtime.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&AuthManager) -> T + Send + 'static,
    ) -> Result<T, AuthError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || f(&this))
            .await
            .map_err(|e| AuthError::Storage(format!("background task failed: {e}")))
    }

    fn get_secret(&self, key: SecretKey) -> Result<Option<SecretString>, AuthError> {
        Ok(self.store()?.store.get(key)?)
    }

    fn oauth(&self) -> Result<GoogleOAuth, AuthError> {
        let client = self.inner.config.require_client()?.clone();
        Ok(GoogleOAuth::new(
            client,
            self.inner.config.endpoints.clone(),
            self.inner.http.clone(),
        ))
    }

    fn code_assist_api(&self) -> CodeAssistApi {
        let e = &self.inner.config.endpoints;
        CodeAssistApi::new(
            self.inner.http.client().clone(),
            &e.code_assist_endpoint,
            &e.code_assist_api_version,
        )
    }
}

/// On Linux, a Secret Service needs a D-Bus session bus. Without one,
/// libdbus would try to autolaunch a bus (X11); say "no keyring" instead.
/// `env` is the manager's environment (the process environment in the app
/// and the CLI).
fn no_session_bus(env: &(dyn Fn(&str) -> Option<String> + Send + Sync)) -> Option<String> {
    if !cfg!(all(unix, not(target_os = "macos"))) {
        return None;
    }
    let set = |n: &str| env(n).filter(|v| !v.is_empty());
    if set("DBUS_SESSION_BUS_ADDRESS").is_some() {
        return None;
    }
    if let Some(runtime) = set("XDG_RUNTIME_DIR")
        && std::path::Path::new(&runtime).join("bus").exists()
    {
        return None;
    }
    Some("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)".into())
}
