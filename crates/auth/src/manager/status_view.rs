//! The auth doctor's data: what is configured and stored, which method
//! would be used, and what the user can do next. Uses no network.

use chrono::Utc;

use crate::adc::adc_path;
use crate::api_key::GEMINI_API_KEY_ENV;
use crate::config::ProjectSource;
use crate::oauth::StoredTokens;
use crate::secret_store::SecretKey;
use crate::state::AuthMethod;
use crate::status::{
    ApiKeyStatus, AuthAction, AuthStatus, GoogleStatus, MethodOrigin, VertexStatus, sign_in_options,
};

use super::AuthManager;

impl AuthManager {
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
