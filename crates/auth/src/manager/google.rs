//! "Sign in with Google": the loopback login, then the Code Assist setup
//! (onboarding, the project) and the Cloud projects to pick from.

use chrono::Utc;
use gd_gemini::CredentialSource;
use gd_http::SecretString;
use serde::Deserialize;
use tracing::info;

use crate::code_assist::{CodeAssistSetup, check_project_id, setup_user};
use crate::config::ProjectSource;
use crate::error::{AuthError, SIGN_IN_HINT};
use crate::login::{self, LoginControl, LoginOptions, LoginStage, PendingLogin};
use crate::oauth::{GoogleOAuth, StoredTokens, UserInfo};
use crate::secret_store::SecretKey;
use crate::state::{AuthMethod, GoogleState};
use crate::token_source::GoogleCredentials;

use super::{AuthManager, CloudProject, LoginOutcome};

impl AuthManager {
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
    pub(super) fn configured_project(&self) -> Option<(String, ProjectSource)> {
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
