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

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use chrono::Utc;
use gd_gemini::{Backend, CredentialSource};
use gd_http::SecretString;
use serde::{Deserialize, Serialize};
use tracing::{info, warn};

use crate::adc::{AdcCredentials, adc_path};
use crate::api_key::{ApiKeyCheck, GEMINI_API_KEY_ENV, GeminiApiTarget, validate_api_key};
use crate::code_assist::{
    CodeAssistApi, CodeAssistError, CodeAssistSetup, PollOptions, check_project_id, setup_user,
};
use crate::config::{AuthConfig, ProjectSource};
use crate::error::{AuthError, SIGN_IN_HINT};
use crate::http::Http;
use crate::login::{self, LoginControl, LoginOptions, LoginStage, PendingLogin};
use crate::oauth::{GoogleOAuth, StoredTokens, UserInfo};
use crate::secret_store::{SecretKey, SelectedStore, StoreError, StoreInfo, select_store};
use crate::state::{AuthMethod, AuthState, GoogleState, StateFile, VertexAuth, VertexState};
use crate::status::{
    ApiKeyStatus, AuthAction, AuthStatus, GoogleStatus, MethodOrigin, VertexStatus, sign_in_options,
};
use crate::token_source::GoogleCredentials;

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

    // -----------------------------------------------------------------
    // API key

    /// Checks a key with a cheap call (list models) against the configured
    /// base URL (`GOOGLE_GEMINI_BASE_URL` or Google's).
    pub async fn validate_api_key(&self, key: &SecretString) -> Result<ApiKeyCheck, AuthError> {
        let target = GeminiApiTarget::from_env(&|n| (self.inner.env)(n));
        validate_api_key(key, &target).await
    }

    /// Validates, stores the key and makes the API key the chosen method.
    pub async fn set_api_key(&self, key: SecretString) -> Result<ApiKeyCheck, AuthError> {
        let key = SecretString::new(key.expose().trim().to_owned());
        let check = self.validate_api_key(&key).await?;
        self.blocking(move |m| -> Result<(), AuthError> {
            m.store()?.store.set(SecretKey::GeminiApiKey, &key)?;
            m.inner
                .state
                .update(|s| {
                    s.method = Some(AuthMethod::GeminiApiKey);
                    s.last_error = None;
                })
                .map_err(|e| AuthError::Storage(e.to_string()))?;
            Ok(())
        })
        .await??;
        info!("Gemini API key stored");
        Ok(check)
    }

    // -----------------------------------------------------------------
    // Vertex AI

    /// Stores Vertex AI settings (and its API key) and makes Vertex AI the
    /// chosen method. ADC is checked by fetching a token.
    pub async fn set_vertex(&self, input: VertexInput) -> Result<(), AuthError> {
        let clean = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        let project = clean(input.project);
        let location = clean(input.location);
        let key = clean(input.api_key).map(SecretString::new);
        match input.auth {
            VertexAuth::ApiKey => {
                let has_stored = self
                    .blocking(|m| m.get_secret(SecretKey::VertexApiKey))
                    .await??
                    .is_some();
                if key.is_none() && !has_stored {
                    return Err(AuthError::Input(
                        "Vertex AI with an API key needs the key (from the Google Cloud console's Vertex AI page)."
                            .into(),
                    ));
                }
            }
            VertexAuth::Adc => {
                if project.is_none() || location.is_none() {
                    return Err(AuthError::Input(
                        "Vertex AI with Application Default Credentials needs a project and a location (e.g. us-central1)."
                            .into(),
                    ));
                }
                let adc = self.adc()?;
                adc.token().await?;
            }
        }
        if let Some(project) = &project {
            check_project_id(project, ProjectSource::Picked)?;
        }
        self.blocking(move |m| -> Result<(), AuthError> {
            if let Some(key) = key {
                m.store()?.store.set(SecretKey::VertexApiKey, &key)?;
            }
            m.inner
                .state
                .update(|s| {
                    s.method = Some(AuthMethod::VertexAi);
                    s.vertex = Some(VertexState {
                        project,
                        location,
                        auth: input.auth,
                    });
                    s.last_error = None;
                })
                .map_err(|e| AuthError::Storage(e.to_string()))?;
            Ok(())
        })
        .await?
    }

    fn adc(&self) -> Result<AdcCredentials, AuthError> {
        let path = adc_path(&|n| (self.inner.env)(n), self.inner.home.as_deref()).ok_or_else(|| {
            AuthError::Config(
                "No Application Default Credentials: run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS."
                    .into(),
            )
        })?;
        let token_url = self.env(crate::config::env::TOKEN_URL);
        AdcCredentials::load(
            &path,
            token_url.as_deref(),
            self.inner.http.client().clone(),
        )
    }

    // -----------------------------------------------------------------
    // Method

    /// Makes `method` the one chosen in the app (the sign-in screen's
    /// "switch method"). Settings and environment still win (see the status).
    pub async fn select_method(&self, method: AuthMethod) -> Result<AuthStatus, AuthError> {
        self.inner
            .state
            .update(|s| s.method = Some(method))
            .map_err(|e| AuthError::Storage(e.to_string()))?;
        Ok(self.status().await)
    }

    // -----------------------------------------------------------------
    // Google sign-in

    /// Starts "Sign in with Google": binds the loopback port and returns the
    /// URL to open. Nothing is stored until [`GoogleLogin::finish`].
    pub async fn start_google_login(
        &self,
        options: LoginOptions,
    ) -> Result<GoogleLogin, AuthError> {
        let oauth = self.oauth()?;
        let options = LoginOptions {
            port: options.port.or(self.inner.config.callback_port),
            ..options
        };
        let pending = login::start(oauth.clone(), options).await?;
        Ok(GoogleLogin {
            manager: self.clone(),
            oauth,
            control: pending.control(),
            pending,
        })
    }

    /// Stores a successful exchange, reads the account and sets up Code
    /// Assist. Tokens stay stored when onboarding fails, so the user can fix
    /// the project and [`AuthManager::setup_code_assist`] again.
    async fn complete_login(
        &self,
        oauth: &GoogleOAuth,
        tokens: StoredTokens,
        progress: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<LoginOutcome, AuthError> {
        let access = SecretString::new(tokens.access_token.clone());
        progress("Reading your Google account");
        let user: UserInfo = oauth.userinfo(&access).await?;
        let to_store = tokens.clone();
        let (email, name) = (user.email.clone(), user.name.clone());
        self.blocking(move |m| -> Result<(), AuthError> {
            m.store()?
                .store
                .set(SecretKey::GoogleOauth, &to_store.to_secret())?;
            m.inner
                .state
                .update(|s| {
                    s.method = Some(AuthMethod::GoogleLogin);
                    s.google = Some(GoogleState {
                        email,
                        name,
                        signed_in_at: Some(Utc::now().to_rfc3339()),
                        ..GoogleState::default()
                    });
                    s.last_error = None;
                })
                .map_err(|e| AuthError::Storage(e.to_string()))?;
            Ok(())
        })
        .await??;
        info!(email = ?user.email, "signed in with Google");
        let setup = self.run_setup(&access, progress).await?;
        Ok(LoginOutcome {
            email: user.email,
            name: user.name,
            code_assist: setup,
        })
    }

    /// The project Code Assist should use: environment, settings, or picked.
    fn configured_project(&self) -> Option<(String, ProjectSource)> {
        self.inner.config.configured_project.clone().or_else(|| {
            self.inner
                .state
                .load()
                .picked_project
                .map(|p| (p, ProjectSource::Picked))
        })
    }

    async fn run_setup(
        &self,
        access: &SecretString,
        progress: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<CodeAssistSetup, AuthError> {
        let result = setup_user(
            &self.code_assist_api(),
            access,
            self.configured_project(),
            self.inner.poll,
            progress,
        )
        .await;
        match result {
            Ok(setup) => {
                let s = setup.clone();
                self.inner
                    .state
                    .update(|state| {
                        let google = state.google.get_or_insert_with(GoogleState::default);
                        google.tier_id = Some(s.tier_id);
                        google.tier_name = s.tier_name;
                        google.project = Some(s.project);
                        google.project_source = Some(s.project_source);
                        state.last_error = None;
                    })
                    .map_err(|e| AuthError::Storage(e.to_string()))?;
                Ok(setup)
            }
            Err(e) => {
                let needs = e.needs_sign_in();
                self.inner
                    .state
                    .update(|state| {
                        if let Some(google) = state.google.as_mut() {
                            google.project = None;
                            google.project_source = None;
                            google.tier_id = None;
                            google.tier_name = None;
                        }
                    })
                    .map_err(|e| AuthError::Storage(e.to_string()))?;
                // The account view shows it: the same words as the sign-in screen (a network
                // failure as one sentence, not the HTTP stack's chain).
                let error = AuthError::CodeAssist(e);
                self.inner.state.record_error(
                    Some(AuthMethod::GoogleLogin),
                    &error.report().message,
                    needs,
                );
                Err(error)
            }
        }
    }

    /// Credentials of the stored Google sign-in.
    pub fn google_credentials(&self) -> Result<GoogleCredentials, AuthError> {
        let oauth = self.oauth()?;
        let store = self.store()?.store.clone();
        Ok(GoogleCredentials::new(
            oauth,
            store,
            self.inner.state.clone(),
        ))
    }

    /// Runs Code Assist onboarding again with the stored sign-in (after the
    /// user set a project or verified the account).
    pub async fn setup_code_assist(&self) -> Result<CodeAssistSetup, AuthError> {
        let credentials = self.blocking(|m| m.google_credentials()).await??;
        let token = credentials.token().await?;
        self.run_setup(&token, &|_| {}).await
    }

    /// The project picker's choice (`None` clears it); onboarding runs again.
    pub async fn pick_project(
        &self,
        project: Option<String>,
    ) -> Result<CodeAssistSetup, AuthError> {
        let project = project
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty());
        if let Some(p) = &project {
            if let Some((fixed, source)) = &self.inner.config.configured_project {
                return Err(AuthError::Input(format!(
                    "The Code Assist project is set by {} ({fixed}), which wins over a project picked \
                     in Gemini Desktop. Change or remove it there to use {p}.",
                    source.describe()
                )));
            }
            check_project_id(p, ProjectSource::Picked)?;
        }
        self.inner
            .state
            .update(|s| s.picked_project = project)
            .map_err(|e| AuthError::Storage(e.to_string()))?;
        self.setup_code_assist().await
    }

    /// Projects the signed-in user can see, for the picker.
    pub async fn list_projects(&self) -> Result<Vec<CloudProject>, AuthError> {
        let credentials = self.blocking(|m| m.google_credentials()).await??;
        let token = credentials.token().await?;
        let mut projects = Vec::new();
        let mut page_token: Option<String> = None;
        for _ in 0..20 {
            let mut url = oauth2::url::Url::parse(&self.inner.config.endpoints.projects_url)
                .map_err(|e| AuthError::Config(format!("bad projects URL: {e}")))?;
            url.query_pairs_mut()
                .append_pair("filter", "lifecycleState:ACTIVE")
                .append_pair("pageSize", "200");
            if let Some(t) = &page_token {
                url.query_pairs_mut().append_pair("pageToken", t);
            }
            let response = self
                .inner
                .http
                .client()
                .get(url.as_str())
                .bearer_auth(token.expose())
                .send()
                .await
                .map_err(|e| AuthError::network(&e))?;
            let status = response.status();
            let body = response.text().await.map_err(|e| AuthError::network(&e))?;
            if status.as_u16() == 401 {
                credentials.invalidate();
                return Err(AuthError::SignInRequired(format!(
                    "Google did not accept the sign-in when listing projects. {SIGN_IN_HINT}"
                )));
            }
            if !status.is_success() {
                return Err(AuthError::Protocol(format!(
                    "Could not list your Google Cloud projects (HTTP {status}): {}",
                    crate::redact::redact_with(
                        &body.chars().take(300).collect::<String>(),
                        &[token.expose()]
                    )
                )));
            }
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct Page {
                #[serde(default)]
                projects: Vec<RawProject>,
                next_page_token: Option<String>,
            }
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct RawProject {
                project_id: String,
                name: Option<String>,
                project_number: Option<String>,
            }
            let page: Page = serde_json::from_str(&body)
                .map_err(|e| AuthError::Protocol(format!("Unreadable project list: {e}")))?;
            projects.extend(page.projects.into_iter().map(|p| CloudProject {
                project_id: p.project_id,
                name: p.name,
                project_number: p.project_number,
            }));
            match page.next_page_token.filter(|t| !t.is_empty()) {
                Some(t) => page_token = Some(t),
                None => break,
            }
        }
        projects.sort_by(|a, b| a.project_id.cmp(&b.project_id));
        Ok(projects)
    }

    // -----------------------------------------------------------------
    // Sign out

    /// Signs out of `method` (`None`: everything): revokes the Google
    /// refresh token at Google, then deletes the local secrets and state.
    pub async fn sign_out(&self, method: Option<AuthMethod>) -> Result<SignOutReport, AuthError> {
        let mut report = SignOutReport::default();
        let google = matches!(method, None | Some(AuthMethod::GoogleLogin));
        if google {
            let stored = self
                .blocking(|m| m.get_secret(SecretKey::GoogleOauth))
                .await??;
            if let Some(secret) = stored {
                match (StoredTokens::from_secret(&secret), self.oauth()) {
                    (Ok(tokens), Ok(oauth)) => match oauth.revoke(&tokens).await {
                        Ok(()) => report.revoked = true,
                        Err(e) => report.revoke_error = Some(e.to_string()),
                    },
                    (Err(e), _) | (_, Err(e)) => report.revoke_error = Some(e.to_string()),
                }
            }
        }
        let keys: Vec<SecretKey> = match method {
            None => SecretKey::ALL.to_vec(),
            Some(AuthMethod::GoogleLogin) => vec![SecretKey::GoogleOauth],
            Some(AuthMethod::GeminiApiKey) => vec![SecretKey::GeminiApiKey],
            Some(AuthMethod::VertexAi) => vec![SecretKey::VertexApiKey],
        };
        report.removed = self
            .blocking(move |m| -> Result<Vec<SecretKey>, AuthError> {
                let store = &m.store()?.store;
                let mut removed = Vec::new();
                for key in keys {
                    if store.get(key).ok().flatten().is_some() {
                        removed.push(key);
                    }
                    store.delete(key)?;
                }
                m.inner
                    .state
                    .update(|s| {
                        match method {
                            None => *s = AuthState::default(),
                            Some(AuthMethod::GoogleLogin) => s.google = None,
                            Some(AuthMethod::VertexAi) => s.vertex = None,
                            Some(AuthMethod::GeminiApiKey) => {}
                        }
                        if method.is_none() || s.method == method {
                            s.method = None;
                        }
                        s.last_error = None;
                    })
                    .map_err(|e| AuthError::Storage(e.to_string()))?;
                Ok(removed)
            })
            .await??;
        Ok(report)
    }

    // -----------------------------------------------------------------
    // Backend

    fn env_method(&self) -> Option<(AuthMethod, &'static str)> {
        if self
            .env("GOOGLE_GENAI_USE_VERTEXAI")
            .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
        {
            return Some((AuthMethod::VertexAi, "GOOGLE_GENAI_USE_VERTEXAI"));
        }
        self.env(GEMINI_API_KEY_ENV)
            .map(|_| (AuthMethod::GeminiApiKey, GEMINI_API_KEY_ENV))
    }

    /// The method a session would use and what chose it.
    pub fn active_method(&self) -> Result<Option<(AuthMethod, MethodOrigin)>, AuthError> {
        if let Some(selected) = self.inner.config.selected_type.as_deref() {
            let method = AuthMethod::from_selected_type(selected).ok_or_else(|| {
                AuthError::Config(format!(
                    "Auth method '{selected}' (security.auth.selectedType) is not supported by Gemini Desktop. \
                     Use 'oauth-personal' (Sign in with Google), 'gemini-api-key' or 'vertex-ai'."
                ))
            })?;
            return Ok(Some((method, MethodOrigin::Settings)));
        }
        if let Some((method, _)) = self.env_method() {
            return Ok(Some((method, MethodOrigin::Environment)));
        }
        Ok(self
            .inner
            .state
            .load()
            .method
            .map(|m| (m, MethodOrigin::App)))
    }

    /// Builds the backend for a new session without any network call. The
    /// error explains what to do (set a key, sign in, set a project...).
    pub fn resolve_backend(&self) -> Result<ResolvedBackend, AuthError> {
        let Some((method, chosen_by)) = self.active_method()? else {
            return Err(AuthError::SignInRequired(
                "Authentication is not configured: set GEMINI_API_KEY (or Vertex AI variables) in the environment \
                 or a .env file (e.g. .gemini/.env), run `gemini-desktop-cli auth login` or `gemini-desktop-cli auth \
                 set-api-key`, or open Sign in in Gemini Desktop."
                    .into(),
            ));
        };
        let result = match method {
            AuthMethod::GeminiApiKey => self.resolve_api_key(),
            AuthMethod::VertexAi => self.resolve_vertex(),
            AuthMethod::GoogleLogin => self.resolve_google(),
        };
        result
            .map(|(backend, secret_location)| ResolvedBackend {
                backend,
                method,
                chosen_by,
                secret_location,
            })
            .map_err(
                |e| match (chosen_by, self.inner.config.selected_type.as_deref()) {
                    (MethodOrigin::Settings, Some(selected)) => prefix_error(
                        e,
                        &format!("Auth method '{selected}' (from security.auth.selectedType): "),
                    ),
                    _ => e,
                },
            )
    }

    fn resolve_api_key(&self) -> Result<(Backend, String), AuthError> {
        let target = GeminiApiTarget::from_env(&|n| (self.inner.env)(n));
        if let Some(key) = self.env(GEMINI_API_KEY_ENV) {
            return Ok((
                target.backend(SecretString::new(key.trim())),
                "the GEMINI_API_KEY environment variable".into(),
            ));
        }
        match self.get_secret(SecretKey::GeminiApiKey)? {
            Some(key) => Ok((target.backend(key), self.store()?.info.kind.describe())),
            None => Err(AuthError::SignInRequired(
                "Authentication is not configured: no Gemini API key. Set GEMINI_API_KEY, run \
                 `gemini-desktop-cli auth set-api-key`, or enter a key on Gemini Desktop's sign-in screen."
                    .into(),
            )),
        }
    }

    fn resolve_vertex(&self) -> Result<(Backend, String), AuthError> {
        let env_has_vertex = self.env("GOOGLE_API_KEY").is_some()
            || (self.env("GOOGLE_CLOUD_PROJECT").is_some()
                && self.env("GOOGLE_CLOUD_LOCATION").is_some());
        let state = self.inner.state.load();
        if env_has_vertex || state.vertex.is_none() {
            let adc = if self.env("GOOGLE_API_KEY").is_none() {
                self.adc().ok()
            } else {
                None
            };
            let location = match (&adc, self.env("GOOGLE_API_KEY")) {
                (_, Some(_)) => "the GOOGLE_API_KEY environment variable".to_owned(),
                (Some(adc), None) => {
                    format!("Application Default Credentials ({})", adc.path().display())
                }
                (None, None) => String::new(),
            };
            let bearer = adc.map(|a| Arc::new(a) as Arc<dyn CredentialSource>);
            let backend = Backend::from_env(
                |name| match name {
                    "GOOGLE_GENAI_USE_VERTEXAI" => Some("true".into()),
                    other => (self.inner.env)(other),
                },
                bearer,
            )
            .map_err(|e| {
                AuthError::SignInRequired(format!(
                    "Authentication is not configured: {}. Put the Vertex AI settings in the environment or a .env \
                     file, or configure Vertex AI on Gemini Desktop's sign-in screen.",
                    gemini_error_text(&e)
                ))
            })?;
            return Ok((backend, location));
        }
        let vertex = state.vertex.unwrap_or_default();
        let base = |target: &gd_gemini::VertexTarget| {
            self.env("GOOGLE_VERTEX_BASE_URL")
                .map(|u| u.trim().trim_end_matches('/').to_owned())
                .unwrap_or_else(|| match target {
                    gd_gemini::VertexTarget::Project { location, .. } if location != "global" => {
                        format!("https://{location}-aiplatform.googleapis.com")
                    }
                    _ => "https://aiplatform.googleapis.com".into(),
                })
        };
        let api_version = self
            .env("GOOGLE_GENAI_API_VERSION")
            .unwrap_or_else(|| gd_gemini::endpoint::DEFAULT_VERTEX_API_VERSION.into());
        match vertex.auth {
            VertexAuth::ApiKey => {
                let key = self.get_secret(SecretKey::VertexApiKey)?.ok_or_else(|| {
                    AuthError::SignInRequired(
                        "Vertex AI is chosen with an API key, but no key is stored. Enter it on Gemini Desktop's \
                         sign-in screen, or set GOOGLE_API_KEY."
                            .into(),
                    )
                })?;
                let target = gd_gemini::VertexTarget::Express;
                Ok((
                    Backend::VertexAi {
                        base_url: base(&target),
                        api_version,
                        target,
                        auth: gd_gemini::Auth::ApiKey(key),
                    },
                    self.store()?.info.kind.describe(),
                ))
            }
            VertexAuth::Adc => {
                let (Some(project), Some(location)) = (vertex.project, vertex.location) else {
                    return Err(AuthError::Config(
                        "Vertex AI with Application Default Credentials needs a project and a location.".into(),
                    ));
                };
                let adc = self.adc()?;
                let location_text =
                    format!("Application Default Credentials ({})", adc.path().display());
                let target = gd_gemini::VertexTarget::Project { project, location };
                Ok((
                    Backend::VertexAi {
                        base_url: base(&target),
                        api_version,
                        target,
                        auth: gd_gemini::Auth::Bearer(Arc::new(adc)),
                    },
                    location_text,
                ))
            }
        }
    }

    fn resolve_google(&self) -> Result<(Backend, String), AuthError> {
        let state = self.inner.state.load();
        let last_reason = state
            .last_error
            .as_ref()
            .filter(|e| e.method == Some(AuthMethod::GoogleLogin) && e.sign_in_required)
            .map(|e| e.message.clone());
        let stored = self.get_secret(SecretKey::GoogleOauth)?;
        let Some(secret) = stored else {
            return Err(AuthError::SignInRequired(last_reason.unwrap_or_else(
                || format!("You are not signed in with Google. {SIGN_IN_HINT}"),
            )));
        };
        let tokens = StoredTokens::from_secret(&secret)?;
        let project = match self.configured_project() {
            Some((project, source)) => {
                check_project_id(&project, source)?;
                project
            }
            None => state
                .google
                .as_ref()
                .and_then(|g| g.project.clone())
                .ok_or_else(|| {
                    let detail = state
                        .last_error
                        .as_ref()
                        .filter(|e| e.method == Some(AuthMethod::GoogleLogin))
                        .map(|e| e.message.clone());
                    match detail {
                        Some(message) => AuthError::Config(message),
                        None => AuthError::CodeAssist(CodeAssistError::ProjectRequired),
                    }
                })?,
        };
        let credentials = self.google_credentials()?.with_tokens(tokens);
        let e = &self.inner.config.endpoints;
        let backend = Backend::CodeAssist {
            endpoint: e.code_assist_endpoint.clone(),
            api_version: e.code_assist_api_version.clone(),
            project: Some(project),
            credentials: Arc::new(credentials),
        };
        let email = state.google.and_then(|g| g.email);
        Ok((
            backend,
            format!(
                "Google sign-in{} in {}",
                email.map(|e| format!(" ({e})")).unwrap_or_default(),
                self.store()?.info.kind.describe()
            ),
        ))
    }

    // -----------------------------------------------------------------
    // Status

    /// The auth doctor's data. Uses no network.
    pub async fn status(&self) -> AuthStatus {
        match self.blocking(|m| m.status_blocking()).await {
            Ok(status) => status,
            Err(e) => AuthStatus {
                active: None,
                chosen_by: None,
                ready: false,
                problem: Some(e.report()),
                secret_location: None,
                store: None,
                store_error: Some(e.to_string()),
                api_key: ApiKeyStatus::default(),
                google: GoogleStatus::default(),
                vertex: VertexStatus::default(),
                last_error: None,
                notes: Vec::new(),
                actions: vec![AuthAction::SwitchMethod],
                sign_in_options: sign_in_options(self.inner.config.client.is_some()),
            },
        }
    }

    /// [`AuthManager::status`] for synchronous callers (the CLI).
    pub fn status_blocking(&self) -> AuthStatus {
        let state = self.inner.state.load();
        let (store, store_error) = match self.store() {
            Ok(s) => (Some(s.info.clone()), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let has = |key| self.get_secret(key).ok().flatten();
        let google_tokens =
            has(SecretKey::GoogleOauth).and_then(|s| StoredTokens::from_secret(&s).ok());
        let active = self.active_method();
        let resolved = self.resolve_backend();
        let (active, chosen_by) = match &active {
            Ok(Some((m, o))) => (Some(*m), Some(*o)),
            _ => (None, None),
        };
        let mut notes = Vec::new();
        if let Some(info) = &store
            && let Some(reason) = &info.fallback_reason
        {
            notes.push(format!(
                "No keyring service is reachable ({reason}), so secrets are kept in {}.",
                info.kind.describe()
            ));
        }
        let env_key = self.env(GEMINI_API_KEY_ENV).is_some();
        if chosen_by == Some(MethodOrigin::Environment)
            && state.method.is_some_and(|m| Some(m) != active)
        {
            notes.push(format!(
                "Credentials in the environment ({}) take precedence over the method chosen in Gemini Desktop ({}).",
                self.env_method().map(|(_, v)| v).unwrap_or("environment"),
                state.method.map(AuthMethod::label).unwrap_or_default()
            ));
        }
        if active == Some(AuthMethod::GeminiApiKey)
            && env_key
            && has(SecretKey::GeminiApiKey).is_some()
        {
            notes.push(
                "GEMINI_API_KEY in the environment is used instead of the stored API key.".into(),
            );
        }
        let configured = self.configured_project();
        let google_state = state.google.clone().unwrap_or_default();
        let (project, project_source) = match &configured {
            Some((p, s)) => (Some(p.clone()), Some(*s)),
            None => (google_state.project.clone(), google_state.project_source),
        };
        if let Some(p) = &project
            && p.bytes().all(|b| b.is_ascii_digit())
            && project_source == Some(ProjectSource::CodeAssist)
        {
            notes.push(format!(
                "Code Assist assigned the project number {p}. If requests fail with INVALID_ARGUMENT, set \
                 GOOGLE_CLOUD_PROJECT to the project's ID."
            ));
        }
        if active == Some(AuthMethod::GoogleLogin)
            && google_tokens.is_some()
            && let Some((fixed, source)) = &self.inner.config.configured_project
        {
            notes.push(format!(
                "The Code Assist project {fixed} comes from {}; change it there to use another project.",
                source.describe()
            ));
        }
        let now = Utc::now();
        let google = GoogleStatus {
            signed_in: google_tokens.is_some(),
            email: google_state.email.clone(),
            name: google_state.name.clone(),
            tier_id: google_state.tier_id.clone(),
            tier_name: google_state.tier_name.clone(),
            project,
            project_source,
            token_expires_at: google_tokens
                .as_ref()
                .and_then(|t| t.expires_at())
                .map(|t| t.to_rfc3339()),
            token_expires_in_secs: google_tokens
                .as_ref()
                .and_then(|t| t.expires_at())
                .map(|t| (t - now).num_seconds()),
            has_refresh_token: google_tokens
                .as_ref()
                .is_some_and(|t| t.refresh_token.is_some()),
            client_configured: self.inner.config.client.is_some(),
            client_source: self.inner.config.client.as_ref().map(|c| c.source),
        };
        let vertex_state = state.vertex.clone().unwrap_or_default();
        let vertex = VertexStatus {
            in_environment: self.env("GOOGLE_GENAI_USE_VERTEXAI").is_some(),
            project: self
                .env("GOOGLE_CLOUD_PROJECT")
                .filter(|_| state.vertex.is_none())
                .or(vertex_state.project.clone()),
            location: self
                .env("GOOGLE_CLOUD_LOCATION")
                .filter(|_| state.vertex.is_none())
                .or(vertex_state.location.clone()),
            auth: state.vertex.as_ref().map(|v| v.auth),
            stored_key: has(SecretKey::VertexApiKey).is_some(),
            adc_file: adc_path(&|n| (self.inner.env)(n), self.inner.home.as_deref())
                .filter(|p| p.is_file())
                .map(|p| p.display().to_string()),
        };
        let (ready, problem, secret_location) = match &resolved {
            Ok(r) => (true, None, Some(r.secret_location.clone())),
            Err(e) => (false, Some(e.report()), None),
        };
        let mut actions = vec![AuthAction::SwitchMethod];
        match active {
            Some(AuthMethod::GoogleLogin) => {
                actions.push(if google.signed_in {
                    AuthAction::ReAuthenticate
                } else {
                    AuthAction::SignInWithGoogle
                });
                if google.signed_in {
                    // A project from the environment or settings wins over a
                    // picked one: offering the picker would be a lie.
                    if self.inner.config.configured_project.is_none() {
                        actions.push(AuthAction::PickProject);
                    }
                    if !ready {
                        actions.push(AuthAction::RetryCodeAssistSetup);
                    }
                }
            }
            Some(AuthMethod::GeminiApiKey) => actions.push(AuthAction::SetApiKey),
            Some(AuthMethod::VertexAi) => actions.push(AuthAction::ConfigureVertex),
            None => actions.extend([
                AuthAction::SignInWithGoogle,
                AuthAction::SetApiKey,
                AuthAction::ConfigureVertex,
            ]),
        }
        let anything_stored = google.signed_in
            || has(SecretKey::GeminiApiKey).is_some()
            || vertex.stored_key
            || state.method.is_some();
        if anything_stored {
            actions.push(AuthAction::SignOut);
        }
        AuthStatus {
            active,
            chosen_by,
            ready,
            problem,
            secret_location,
            store,
            store_error,
            api_key: ApiKeyStatus {
                in_environment: env_key,
                stored: has(SecretKey::GeminiApiKey).is_some(),
            },
            google,
            vertex,
            last_error: state.last_error,
            notes,
            actions,
            sign_in_options: sign_in_options(self.inner.config.client.is_some()),
        }
    }
}

fn prefix_error(error: AuthError, prefix: &str) -> AuthError {
    match error {
        AuthError::SignInRequired(m) => AuthError::SignInRequired(format!("{prefix}{m}")),
        AuthError::Config(m) => AuthError::Config(format!("{prefix}{m}")),
        AuthError::OAuthClientMissing(m) => AuthError::OAuthClientMissing(format!("{prefix}{m}")),
        other => other,
    }
}

fn gemini_error_text(error: &gd_gemini::GeminiError) -> String {
    match error {
        gd_gemini::GeminiError::Credentials(m) | gd_gemini::GeminiError::Config(m) => m.clone(),
        other => other.to_string(),
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

/// A Google sign-in in progress (see [`AuthManager::start_google_login`]).
pub struct GoogleLogin {
    manager: AuthManager,
    oauth: GoogleOAuth,
    control: LoginControl,
    pending: PendingLogin,
}

impl std::fmt::Debug for GoogleLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleLogin")
            .field("redirect_uri", &self.pending.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl GoogleLogin {
    /// The authorization URL to open in the system browser.
    pub fn url(&self) -> &str {
        &self.pending.url
    }

    pub fn redirect_uri(&self) -> &str {
        &self.pending.redirect_uri
    }

    /// Cancel / paste-code / progress, usable while [`GoogleLogin::finish`]
    /// is awaited elsewhere.
    pub fn control(&self) -> LoginControl {
        self.control.clone()
    }

    /// Waits for the browser (or a pasted code), then stores the sign-in,
    /// reads the account and sets up Code Assist.
    pub async fn finish(self) -> Result<LoginOutcome, AuthError> {
        let GoogleLogin {
            manager,
            oauth,
            control,
            pending,
        } = self;
        let tokens = pending.finish().await?;
        let progress_control = control.clone();
        let progress = move |detail: &str| {
            progress_control.set_stage(LoginStage::FinishingSetup {
                detail: detail.to_owned(),
            })
        };
        let result = manager.complete_login(&oauth, tokens, &progress).await;
        control.set_stage(match &result {
            Ok(_) => LoginStage::Done,
            Err(e) => LoginStage::Failed {
                message: e.to_string(),
            },
        });
        result
    }
}
