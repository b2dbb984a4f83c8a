//! Choosing and storing a method: a Gemini API key (checked before it is
//! kept), Vertex AI settings, and the method the next session uses.

use gd_http::SecretString;
use tracing::info;

use crate::adc::{AdcCredentials, adc_path};
use crate::api_key::{ApiKeyCheck, GeminiApiTarget, validate_api_key};
use crate::code_assist::check_project_id;
use crate::config::ProjectSource;
use crate::error::AuthError;
use crate::secret_store::SecretKey;
use crate::state::{AuthMethod, VertexAuth, VertexState};
use crate::status::AuthStatus;

use super::{AuthManager, VertexInput};

impl AuthManager {
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

    pub(super) fn adc(&self) -> Result<AdcCredentials, AuthError> {
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
}
