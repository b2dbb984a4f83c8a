//! Errors that tell the user what to do. Every message here is meant to be
//! shown as is (sign-in screen, status view, CLI) and never contains a
//! secret: text from servers goes through [`crate::redact`] first.

use serde::Serialize;
use thiserror::Error;

use crate::code_assist::CodeAssistError;
use crate::friendly::{
    API_KEY_REFUSED, ErrorCause, classify, host_of, http_status, network_message,
};
use crate::secret_store::StoreError;

/// What the CLI prints and the desktop sign-in screen shows for "sign in
/// again".
pub const SIGN_IN_HINT: &str =
    "Sign in again: open Sign in in Gemini Desktop, or run `gemini-desktop-cli auth login`.";

#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum AuthError {
    /// Not signed in, or the Google sign-in ended (revoked, expired). The
    /// message explains why and ends with [`SIGN_IN_HINT`].
    #[error("{0}")]
    SignInRequired(String),
    /// No OAuth client is configured; the message says how to add one.
    #[error("{0}")]
    OAuthClientMissing(String),
    #[error("Sign-in was cancelled.")]
    Cancelled,
    #[error(
        "No answer from the browser within {0} minutes, so sign-in was stopped. Try again; if the browser runs on another machine, use the paste-code option."
    )]
    TimedOut(u64),
    /// The callback carried another sign-in's `state` (possible forgery).
    #[error(
        "This answer did not belong to the sign-in in progress (state mismatch), so it was ignored and nothing was stored. The sign-in keeps waiting for Google's answer."
    )]
    StateMismatch,
    /// The user (or an admin policy) declined on Google's consent page.
    #[error(
        "Google did not grant access: {0}. Start the sign-in again and allow access, or use an API key."
    )]
    Denied(String),
    /// Google refused the code, the client or the token request.
    #[error("{0}")]
    Rejected(String),
    /// An API key the server refused.
    #[error("{0}")]
    InvalidApiKey(String),
    #[error("{0}")]
    CodeAssist(#[from] CodeAssistError),
    #[error("Cannot use the secret store: {0}")]
    Storage(String),
    #[error("{0}")]
    Network(String),
    /// A server answered something we cannot read.
    #[error("{0}")]
    Protocol(String),
    /// Settings or environment are wrong.
    #[error("{0}")]
    Config(String),
    /// What the user typed is wrong (e.g. an empty key or pasted code).
    #[error("{0}")]
    Input(String),
}

/// The error categories, for the UI to choose a screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "snake_case")]
pub enum AuthErrorKind {
    SignInRequired,
    OAuthClientMissing,
    Cancelled,
    TimedOut,
    StateMismatch,
    Denied,
    Rejected,
    InvalidApiKey,
    CodeAssist,
    Storage,
    Network,
    Protocol,
    Config,
    Input,
}

/// The host of Gemini Code Assist (its errors do not name it).
const CODE_ASSIST_HOST: &str = "cloudcode-pa.googleapis.com";

/// An error as the desktop shell hands it to the webview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct AuthErrorReport {
    pub kind: AuthErrorKind,
    /// What happened and what to do, in one or two sentences (for a
    /// network failure: which host could not be reached, and why).
    pub message: String,
    /// A link the user has to open (e.g. Google's account validation page).
    pub url: Option<String>,
    /// What kind of network or key failure it was, when it was one.
    pub cause: Option<ErrorCause>,
    /// The technical text (the error chain, redacted) when `message` was
    /// made friendlier than it: shown behind a "Details" toggle.
    pub detail: Option<String>,
}

impl AuthError {
    pub fn kind(&self) -> AuthErrorKind {
        match self {
            Self::SignInRequired(_) => AuthErrorKind::SignInRequired,
            Self::OAuthClientMissing(_) => AuthErrorKind::OAuthClientMissing,
            Self::Cancelled => AuthErrorKind::Cancelled,
            Self::TimedOut(_) => AuthErrorKind::TimedOut,
            Self::StateMismatch => AuthErrorKind::StateMismatch,
            Self::Denied(_) => AuthErrorKind::Denied,
            Self::Rejected(_) => AuthErrorKind::Rejected,
            Self::InvalidApiKey(_) => AuthErrorKind::InvalidApiKey,
            Self::CodeAssist(_) => AuthErrorKind::CodeAssist,
            Self::Storage(_) => AuthErrorKind::Storage,
            Self::Network(_) => AuthErrorKind::Network,
            Self::Protocol(_) => AuthErrorKind::Protocol,
            Self::Config(_) => AuthErrorKind::Config,
            Self::Input(_) => AuthErrorKind::Input,
        }
    }

    pub fn report(&self) -> AuthErrorReport {
        let text = self.to_string();
        let (cause, message, detail) = match self {
            Self::Network(_) | Self::CodeAssist(CodeAssistError::Network(_)) => {
                let cause = classify(&text);
                let host = host_of(&text).or_else(|| {
                    matches!(self, Self::CodeAssist(_)).then(|| CODE_ASSIST_HOST.to_owned())
                });
                let message = network_message(cause, host.as_deref(), http_status(&text));
                (Some(cause), message, Some(text))
            }
            Self::InvalidApiKey(_) => (
                Some(ErrorCause::InvalidKey),
                API_KEY_REFUSED.to_owned(),
                Some(text),
            ),
            _ => (None, text, None),
        };
        AuthErrorReport {
            kind: self.kind(),
            message,
            url: match self {
                Self::CodeAssist(e) => e.url().map(str::to_owned),
                _ => None,
            },
            cause,
            detail,
        }
    }

    /// Whether the user has to go through sign-in again.
    pub fn needs_sign_in(&self) -> bool {
        match self {
            Self::SignInRequired(_) => true,
            Self::CodeAssist(e) => e.needs_sign_in(),
            _ => false,
        }
    }

    pub(crate) fn network(error: &reqwest::Error) -> Self {
        Self::Network(format!(
            "Cannot reach the server: {}",
            crate::redact::error_chain(error)
        ))
    }
}

impl From<StoreError> for AuthError {
    fn from(error: StoreError) -> Self {
        Self::Storage(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_failure_reports_the_host_and_keeps_the_chain_as_detail() {
        let chain = "Cannot reach https://generativelanguage.googleapis.com to check the key: network error: error sending request for url (https://generativelanguage.googleapis.com/v1beta/models): client error (Connect): dns error: failed to lookup address information: Temporary failure in name resolution";
        let report = AuthError::Network(chain.into()).report();
        assert_eq!(report.kind, AuthErrorKind::Network);
        assert_eq!(report.cause, Some(ErrorCause::Dns));
        assert_eq!(
            report.message,
            "Can't reach generativelanguage.googleapis.com — check your connection."
        );
        assert_eq!(report.detail.as_deref(), Some(chain));
    }

    #[test]
    fn code_assist_network_failures_name_its_host() {
        let report =
            AuthError::CodeAssist(CodeAssistError::Network("operation timed out".into())).report();
        assert_eq!(report.cause, Some(ErrorCause::Timeout));
        assert!(
            report
                .message
                .starts_with("cloudcode-pa.googleapis.com did not answer"),
            "{}",
            report.message
        );
    }

    #[test]
    fn a_refused_key_says_what_to_do_and_other_errors_stay_as_they_are() {
        let report = AuthError::InvalidApiKey(
            "Google did not accept this API key (API error 400: API_KEY_INVALID)".into(),
        )
        .report();
        assert_eq!(report.cause, Some(ErrorCause::InvalidKey));
        assert_eq!(report.message, API_KEY_REFUSED);
        assert!(report.detail.unwrap().contains("API_KEY_INVALID"));
        let plain = AuthError::Cancelled.report();
        assert_eq!((plain.cause, plain.detail), (None, None));
        assert_eq!(plain.message, "Sign-in was cancelled.");
    }
}
