//! API keys: validated with a cheap call (list models) against the
//! configured base URL before they are stored.

use gd_gemini::endpoint::{DEFAULT_GEMINI_API_VERSION, DEFAULT_GEMINI_BASE_URL};
use gd_gemini::{Backend, ClientOptions, GeminiClient, GeminiError};
use gd_http::SecretString;
use serde::Serialize;

use crate::error::AuthError;
use crate::redact::redact_with;

/// The environment variable that overrides a stored Gemini API key.
pub const GEMINI_API_KEY_ENV: &str = "GEMINI_API_KEY";

/// Where the Gemini API is, from `GOOGLE_GEMINI_BASE_URL` /
/// `GOOGLE_GENAI_API_VERSION` or the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GeminiApiTarget {
    pub base_url: String,
    pub api_version: String,
}

impl GeminiApiTarget {
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Self {
        let get = |n: &str| env(n).filter(|v| !v.trim().is_empty());
        Self {
            base_url: get("GOOGLE_GEMINI_BASE_URL")
                .unwrap_or_else(|| DEFAULT_GEMINI_BASE_URL.into())
                .trim()
                .trim_end_matches('/')
                .to_owned(),
            api_version: get("GOOGLE_GENAI_API_VERSION")
                .unwrap_or_else(|| DEFAULT_GEMINI_API_VERSION.into()),
        }
    }

    pub fn backend(&self, key: SecretString) -> Backend {
        Backend::GeminiApi {
            base_url: self.base_url.clone(),
            api_version: self.api_version.clone(),
            api_key: key,
        }
    }
}

/// A key that worked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct ApiKeyCheck {
    /// How many models the key can use.
    pub models: usize,
    pub base_url: String,
}

/// Checks `key` by listing models. The error says whether the key was
/// refused or the server could not be reached.
pub async fn validate_api_key(
    key: &SecretString,
    target: &GeminiApiTarget,
) -> Result<ApiKeyCheck, AuthError> {
    let key_text = key.expose().trim().to_owned();
    if key_text.is_empty() {
        return Err(AuthError::Input("The API key is empty.".into()));
    }
    if key_text.chars().any(char::is_whitespace) {
        return Err(AuthError::Input(
            "The API key contains spaces; paste only the key.".into(),
        ));
    }
    let client = GeminiClient::new(
        target.backend(SecretString::new(key_text.clone())),
        ClientOptions {
            surface: "desktop".into(),
            connect_timeout: std::time::Duration::from_secs(15),
            read_timeout: std::time::Duration::from_secs(30),
            ..ClientOptions::default()
        },
    )
    .map_err(|e| AuthError::Config(e.to_string()))?;
    match client.list_models().await {
        Ok(models) => Ok(ApiKeyCheck {
            models: models.len(),
            base_url: target.base_url.clone(),
        }),
        Err(e) => {
            let text = redact_with(&e.to_string(), &[&key_text]);
            Err(match e.root() {
                GeminiError::Network(_) => AuthError::Network(format!(
                    "Cannot reach {} to check the key: {text}",
                    target.base_url
                )),
                _ if e.is_auth() => AuthError::InvalidApiKey(format!(
                    "Google did not accept this API key ({text}). Check the key in Google AI Studio (https://aistudio.google.com/apikey) and paste it again."
                )),
                // Not the key's fault (a 5xx, an unreadable answer): say so
                // as a server problem, not as a refused key.
                _ => AuthError::Network(format!(
                    "{} could not check the key: {text}",
                    target.base_url
                )),
            })
        }
    }
}
