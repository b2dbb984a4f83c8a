//! What a server that wants credentials is told to the user: the
//! `needs_auth` message, which depends on whether OAuth sign-in is offered
//! for the server and on what the token store knows (see [`crate::oauth`]).

use crate::oauth::SignInState;

/// A 401 (or 403 with a challenge) from an HTTP MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthChallenge {
    pub server: String,
    pub url: String,
    /// The `WWW-Authenticate` header, when the server sent one.
    pub www_authenticate: Option<String>,
}

/// The message for a server that needs signing in. `sign_in` is `None`
/// when OAuth is off for the server (`oauth.enabled: false`, or a frontend
/// without it).
pub fn needs_auth_message(challenge: &AuthChallenge, sign_in: Option<SignInState>) -> String {
    let name = &challenge.server;
    let Some(state) = sign_in else {
        let mut message = format!(
            "needs authentication: {} answered 401 Unauthorized",
            challenge.url
        );
        if let Some(header) = &challenge.www_authenticate {
            message.push_str(&format!(" (WWW-Authenticate: {header})"));
        }
        message.push_str(". OAuth sign-in is off for this server; put a token in its `headers` (e.g. \"Authorization\": \"Bearer $TOKEN\").");
        return message;
    };
    let how = format!(
        "Sign in with Authenticate in the MCP panel, or run `gemini-desktop-cli mcp auth {name}`."
    );
    match state {
        SignInState::None => format!(
            "needs authentication: {} answered 401 Unauthorized. {how}",
            challenge.url
        ),
        SignInState::Rejected => format!(
            "the sign-in to {} expired or was revoked, and refreshing it was refused. {how}",
            challenge.url
        ),
        SignInState::SignedIn => format!(
            "{} refused the saved sign-in (401 Unauthorized). {how}",
            challenge.url
        ),
    }
}

/// A connected server refused its token mid-session and refreshing it did
/// not help.
pub fn sign_in_lost_message(server: &str, url: &str) -> String {
    format!(
        "{url} refused the sign-in (it expired or was revoked, and refreshing it failed). Sign in with Authenticate in the MCP panel, or run `gemini-desktop-cli mcp auth {server}`."
    )
}

/// Whether an error (or one of its causes) is rmcp saying the server wants
/// (new) credentials.
pub(crate) fn is_auth_required(error: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::transport::auth::AuthError;
    use rmcp::transport::streamable_http_client::AuthRequiredError;
    // rmcp's DynamicTransportError does not expose its cause as `source()`;
    // its message carries StreamableHttpError::AuthRequired's.
    if error.to_string().ends_with("error: Auth required") {
        return true;
    }
    let mut current = Some(error);
    while let Some(e) = current {
        if e.is::<AuthRequiredError>()
            || matches!(
                e.downcast_ref::<AuthError>(),
                Some(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_))
            )
        {
            return true;
        }
        current = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_do() {
        let challenge = AuthChallenge {
            server: "remote".into(),
            url: "http://h/mcp".into(),
            www_authenticate: Some("Bearer realm=\"x\"".into()),
        };
        let off = needs_auth_message(&challenge, None);
        assert!(off.contains("headers") && off.contains("realm"), "{off}");
        let none = needs_auth_message(&challenge, Some(SignInState::None));
        assert!(none.contains("mcp auth remote"), "{none}");
        let rejected = needs_auth_message(&challenge, Some(SignInState::Rejected));
        assert!(rejected.contains("expired or was revoked"), "{rejected}");
    }
}
