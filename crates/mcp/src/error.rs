//! The errors of the MCP client's public API.
//!
//! Typed so that callers can tell "no such server" from "the server cannot
//! do that" without matching on text; every message is written for the user
//! (frontends show `to_string()` as it is), so the texts are part of the
//! behaviour and stay as Gemini Desktop has always shown them.

use std::time::Duration;

use crate::oauth::OAuthError;

/// Why a request to a server (a tool call, a resource read, a prompt)
/// failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("MCP server '{0}' is not configured")]
    UnknownServer(String),
    #[error("{0}")]
    NotConnected(String),
    #[error("cancelled")]
    Cancelled,
    #[error("timed out after {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("{0}")]
    Failed(String),
}

/// Why a request about a server (restart, enable/disable, sign-in,
/// sign-out) could not be carried out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("MCP server '{0}' is not configured")]
    UnknownServer(String),
    /// The server cannot run as configured (an invalid settings entry, a
    /// blocked or disabled server): the reason its status shows.
    #[error("{0}")]
    Unavailable(String),
    #[error("MCP server '{0}' runs as a local process (stdio): there is nothing to sign in to")]
    NotRemote(String),
    #[error(
        "OAuth sign-in is turned off for MCP server '{0}' (`oauth.enabled: false` in its settings entry)"
    )]
    OAuthDisabled(String),
    #[error("OAuth sign-in for MCP servers is not available here")]
    OAuthUnavailable,
    /// The enablement file could not be written (the I/O error's text).
    #[error("cannot save the MCP server enablement: {0}")]
    Enablement(String),
    #[error("Sign-in cancelled.")]
    SignInCancelled,
    #[error("Sign-in failed: {0}")]
    SignInFailed(OAuthError),
    #[error(transparent)]
    TokenStore(#[from] TokenStoreError),
}

impl From<OAuthError> for McpError {
    fn from(error: OAuthError) -> Self {
        match error {
            OAuthError::Cancelled => Self::SignInCancelled,
            other => Self::SignInFailed(other),
        }
    }
}

/// Why the MCP sign-ins in the secret store could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenStoreError {
    /// No secret store could be opened (the text says why).
    #[error("{0}")]
    Unavailable(String),
    #[error("cannot read the MCP sign-ins: {0}")]
    Read(String),
    #[error("cannot save the MCP sign-ins: {0}")]
    Write(String),
    #[error("the secret store task failed: {0}")]
    Task(String),
}
