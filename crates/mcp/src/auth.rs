//! Where sign-in for HTTP MCP servers plugs in.
//!
//! OAuth is not implemented here yet. An [`AuthProvider`] given to the
//! manager is asked for a bearer token before each HTTP connection and told
//! when a server answers 401; the OAuth flow (discovery from the
//! `WWW-Authenticate` challenge, browser sign-in, token storage and refresh)
//! will implement it. Without a provider, or when it has no token, a 401
//! puts the server in the `needs_auth` state with a message saying so.

use futures::future::BoxFuture;

/// A 401 (or 403 with a challenge) from an HTTP MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthChallenge {
    pub server: String,
    pub url: String,
    /// The `WWW-Authenticate` header, when the server sent one.
    pub www_authenticate: Option<String>,
}

/// Supplies credentials for HTTP MCP servers.
pub trait AuthProvider: Send + Sync {
    /// A bearer token for `server` at `url`, if the user signed in.
    fn bearer_token<'a>(&'a self, server: &'a str, url: &'a str) -> BoxFuture<'a, Option<String>>;

    /// The server refused the connection for lack of credentials. The
    /// provider may start a sign-in; the manager restarts the server when
    /// asked to (`McpManager::restart`).
    fn unauthorized(&self, challenge: &AuthChallenge) {
        let _ = challenge;
    }
}

/// The message for a server that needs signing in.
pub fn needs_auth_message(challenge: &AuthChallenge) -> String {
    let mut message = format!(
        "needs authentication: {} answered 401 Unauthorized",
        challenge.url
    );
    if let Some(header) = &challenge.www_authenticate {
        message.push_str(&format!(" (WWW-Authenticate: {header})"));
    }
    message.push_str(". Signing in to MCP servers (OAuth) is not available yet; put a token in the server's `headers` (e.g. \"Authorization\": \"Bearer $TOKEN\").");
    message
}
