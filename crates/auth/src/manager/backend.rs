//! Which backend a session talks to: the active method (settings, then
//! the environment, then the app's choice) resolved to a Gemini backend
//! with its credentials.

use std::sync::Arc;

use gd_gemini::{Backend, CredentialSource};
use gd_http::SecretString;

use crate::api_key::{GEMINI_API_KEY_ENV, GeminiApiTarget};
use crate::code_assist::{CodeAssistError, check_project_id};
use crate::error::{AuthError, SIGN_IN_HINT};
use crate::oauth::StoredTokens;
use crate::secret_store::SecretKey;
use crate::state::{AuthMethod, VertexAuth};
use crate::status::MethodOrigin;

use super::{AuthManager, ResolvedBackend};

impl AuthManager {
    pub(super) fn env_method(&self) -> Option<(AuthMethod, &'static str)> {
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
