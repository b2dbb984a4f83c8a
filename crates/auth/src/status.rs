//! The data of the "auth doctor" view: which method is active and why,
//! where its secret lives, the Google account, tier, project and token
//! expiry, Vertex AI settings, the last error and notes. Serializable as is
//! for the desktop shell.

use serde::Serialize;

use crate::config::{ClientSource, ProjectSource};
use crate::error::AuthErrorReport;
use crate::secret_store::StoreInfo;
use crate::state::{AuthMethod, LastError, VertexAuth};

/// What decided the active method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "snake_case")]
pub enum MethodOrigin {
    /// `security.auth.selectedType` in settings.json.
    Settings,
    /// Credentials in the environment (`GEMINI_API_KEY`,
    /// `GOOGLE_GENAI_USE_VERTEXAI`), which win over stored ones.
    Environment,
    /// Chosen on the sign-in screen or with `gemini-desktop-cli auth`.
    App,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct AuthStatus {
    /// The method a new session uses (even if it cannot start, see `ready`).
    pub active: Option<AuthMethod>,
    pub chosen_by: Option<MethodOrigin>,
    /// Whether a session can start with it now (no network was used to tell).
    pub ready: bool,
    /// Why not, in the words a launch would use.
    pub problem: Option<AuthErrorReport>,
    /// Where the active method's secret lives, for people.
    pub secret_location: Option<String>,
    /// The secret store in use (or why none could be opened).
    pub store: Option<StoreInfo>,
    pub store_error: Option<String>,
    pub api_key: ApiKeyStatus,
    pub google: GoogleStatus,
    pub vertex: VertexStatus,
    pub last_error: Option<LastError>,
    /// Things worth knowing (an environment variable overriding a sign-in...).
    pub notes: Vec<String>,
    /// What the view can offer.
    pub actions: Vec<AuthAction>,
    /// The sign-in screen's choices, in the order to offer them: the first
    /// is the primary one, and it is always a method this build can use.
    pub sign_in_options: Vec<SignInOption>,
}

/// A choice on the sign-in screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "snake_case")]
pub enum SignInOption {
    Google,
    ApiKey,
    Vertex,
}

/// The sign-in choices, most useful first. Google sign-in needs an OAuth
/// client built in or configured; without one it cannot work, so the API
/// key (which works for everyone) leads and Google comes last.
pub fn sign_in_options(oauth_client_configured: bool) -> Vec<SignInOption> {
    if oauth_client_configured {
        vec![
            SignInOption::Google,
            SignInOption::ApiKey,
            SignInOption::Vertex,
        ]
    } else {
        vec![
            SignInOption::ApiKey,
            SignInOption::Vertex,
            SignInOption::Google,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_an_oauth_client_the_api_key_comes_first() {
        assert_eq!(sign_in_options(false)[0], SignInOption::ApiKey);
        assert_eq!(sign_in_options(false).last(), Some(&SignInOption::Google));
        assert_eq!(sign_in_options(true)[0], SignInOption::Google);
        assert_eq!(sign_in_options(true).len(), 3);
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct ApiKeyStatus {
    /// `GEMINI_API_KEY` is set (and wins over a stored key).
    pub in_environment: bool,
    pub stored: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct GoogleStatus {
    /// Tokens are stored.
    pub signed_in: bool,
    pub email: Option<String>,
    pub name: Option<String>,
    pub tier_id: Option<String>,
    pub tier_name: Option<String>,
    /// The project a session would use, and where it comes from.
    pub project: Option<String>,
    pub project_source: Option<ProjectSource>,
    /// RFC 3339 expiry of the current access token (it is refreshed ahead).
    pub token_expires_at: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub token_expires_in_secs: Option<i64>,
    pub has_refresh_token: bool,
    /// Whether an OAuth client is configured, and where.
    pub client_configured: bool,
    pub client_source: Option<ClientSource>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct VertexStatus {
    /// `GOOGLE_GENAI_USE_VERTEXAI` / Vertex variables in the environment.
    pub in_environment: bool,
    pub project: Option<String>,
    pub location: Option<String>,
    pub auth: Option<VertexAuth>,
    pub stored_key: bool,
    /// The Application Default Credentials file, if one exists.
    pub adc_file: Option<String>,
}

/// Buttons of the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "snake_case")]
pub enum AuthAction {
    SignInWithGoogle,
    ReAuthenticate,
    SetApiKey,
    ConfigureVertex,
    SwitchMethod,
    RetryCodeAssistSetup,
    PickProject,
    SignOut,
}
