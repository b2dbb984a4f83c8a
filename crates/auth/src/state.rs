//! Non-secret sign-in state, kept next to the fallback secrets file in
//! `~/.gemini/gemini-desktop/auth.json`: the method chosen in the app, the
//! Google account, tier and project, Vertex AI settings and the last error.
//! Secrets are never written here.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::Utc;
use serde::{Deserialize, Serialize};
use tracing::warn;

use crate::config::ProjectSource;
use crate::secret_store::create_private_dir;

pub const STATE_FILE: &str = "auth.json";

/// The sign-in methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "kebab-case")]
pub enum AuthMethod {
    /// A Gemini API key (Google AI Studio).
    GeminiApiKey,
    /// Vertex AI (API key / express mode, or project + location with ADC).
    VertexAi,
    /// Sign in with Google → Gemini Code Assist (Standard / Enterprise /
    /// Workspace with a Google Cloud project).
    GoogleLogin,
}

impl AuthMethod {
    /// Parses `security.auth.selectedType` (Gemini CLI's names).
    pub fn from_selected_type(value: &str) -> Option<Self> {
        match value.trim() {
            "gemini-api-key" | "USE_GEMINI" => Some(Self::GeminiApiKey),
            "vertex-ai" | "USE_VERTEX_AI" => Some(Self::VertexAi),
            "oauth-personal" | "LOGIN_WITH_GOOGLE" | "google-login" => Some(Self::GoogleLogin),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::GeminiApiKey => "Gemini API key",
            Self::VertexAi => "Vertex AI",
            Self::GoogleLogin => "Sign in with Google (Gemini Code Assist)",
        }
    }
}

/// Google sign-in details.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoogleState {
    pub email: Option<String>,
    pub name: Option<String>,
    pub tier_id: Option<String>,
    pub tier_name: Option<String>,
    /// The project Code Assist uses (configured or assigned).
    pub project: Option<String>,
    pub project_source: Option<ProjectSource>,
    /// RFC 3339.
    pub signed_in_at: Option<String>,
}

/// How Vertex AI authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "kebab-case")]
pub enum VertexAuth {
    /// A Vertex AI API key (express mode), kept in the secret store.
    #[default]
    ApiKey,
    /// Application Default Credentials (`gcloud auth application-default
    /// login` or a service-account key file).
    Adc,
}

/// Vertex AI settings chosen in the app.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VertexState {
    pub project: Option<String>,
    pub location: Option<String>,
    pub auth: VertexAuth,
}

/// The last authentication failure, shown until the next success.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct LastError {
    pub method: Option<AuthMethod>,
    pub message: String,
    /// RFC 3339.
    pub at: String,
    /// Whether the user must sign in again.
    #[serde(default)]
    pub sign_in_required: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthState {
    /// The method picked in the app or with `gemini-desktop-cli auth`.
    pub method: Option<AuthMethod>,
    #[serde(default)]
    pub google: Option<GoogleState>,
    #[serde(default)]
    pub vertex: Option<VertexState>,
    /// A project picked in the app for Code Assist.
    #[serde(default)]
    pub picked_project: Option<String>,
    #[serde(default)]
    pub last_error: Option<LastError>,
}

/// The state file, with read-modify-write under a process-wide lock.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
}

/// Serializes state updates of all managers in this process.
static STATE_LOCK: Mutex<()> = Mutex::new(());

impl StateFile {
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The state; a missing or broken file reads as empty (with a warning).
    pub fn load(&self) -> AuthState {
        let _guard = STATE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        read(&self.path)
    }

    /// Applies `change` and writes the result.
    pub fn update(&self, change: impl FnOnce(&mut AuthState)) -> std::io::Result<AuthState> {
        let _guard = STATE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut state = read(&self.path);
        change(&mut state);
        write(&self.path, &state)?;
        Ok(state)
    }

    /// Records a failure for the status view (best effort).
    pub fn record_error(&self, method: Option<AuthMethod>, message: &str, sign_in_required: bool) {
        let result = self.update(|s| {
            s.last_error = Some(LastError {
                method,
                message: message.to_owned(),
                at: Utc::now().to_rfc3339(),
                sign_in_required,
            })
        });
        if let Err(e) = result {
            warn!(error = %e, "cannot record the auth error");
        }
    }

    pub fn clear_error(&self) {
        if self.load().last_error.is_some() {
            let _ = self.update(|s| s.last_error = None);
        }
    }
}

fn read(path: &Path) -> AuthState {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
            warn!(path = %path.display(), error = %e, "unreadable auth state; ignoring it");
            AuthState::default()
        }),
        Err(_) => AuthState::default(),
    }
}

fn write(path: &Path, state: &AuthState) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let text = serde_json::to_string_pretty(state).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!(".{STATE_FILE}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_and_reload() {
        let dir = tempfile::tempdir().unwrap();
        let file = StateFile::new(dir.path().join("x/auth.json"));
        assert_eq!(file.load(), AuthState::default());
        file.update(|s| s.method = Some(AuthMethod::GoogleLogin))
            .unwrap();
        file.record_error(Some(AuthMethod::GoogleLogin), "revoked", true);
        let state = file.load();
        assert_eq!(state.method, Some(AuthMethod::GoogleLogin));
        assert!(state.last_error.unwrap().sign_in_required);
        file.clear_error();
        assert_eq!(file.load().last_error, None);
    }

    #[test]
    fn selected_type_names() {
        assert_eq!(
            AuthMethod::from_selected_type("oauth-personal"),
            Some(AuthMethod::GoogleLogin)
        );
        assert_eq!(
            AuthMethod::from_selected_type("gemini-api-key"),
            Some(AuthMethod::GeminiApiKey)
        );
        assert_eq!(
            AuthMethod::from_selected_type("vertex-ai"),
            Some(AuthMethod::VertexAi)
        );
        assert_eq!(AuthMethod::from_selected_type("cloud-shell"), None);
    }
}
