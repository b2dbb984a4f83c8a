//! Google OAuth 2.0 for an installed app, on top of the `oauth2` crate:
//! the authorization URL (state, PKCE S256, offline access), the code
//! exchange, refresh, revocation and the userinfo call. The loopback server
//! and paste-code handling are in [`crate::login`].

use std::fmt;
use std::time::Duration;

use chrono::{DateTime, Utc};
use gd_http::SecretString;
use oauth2::basic::{BasicClient, BasicErrorResponse, BasicErrorResponseType};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError,
    Scope, TokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};

use crate::config::{Endpoints, OAuthClient, SCOPES};
use crate::error::{AuthError, SIGN_IN_HINT};
use crate::http::Http;
use crate::redact::{error_chain, redact, redact_with};

/// Access tokens are refreshed this long before they expire.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// The tokens kept in the secret store (as JSON).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTokens {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The OAuth client the tokens belong to (refresh needs the same one).
    pub client_id: String,
}

impl fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredTokens")
            .field("access_token", &"[redacted]")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[redacted]"),
            )
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("client_id", &self.client_id)
            .finish()
    }
}

impl StoredTokens {
    pub fn to_secret(&self) -> SecretString {
        SecretString::new(serde_json::to_string(self).unwrap_or_default())
    }

    pub fn from_secret(secret: &SecretString) -> Result<Self, AuthError> {
        serde_json::from_str(secret.expose()).map_err(|e| {
            AuthError::Storage(format!(
                "the stored Google sign-in is unreadable ({}); sign in again",
                redact(&e.to_string())
            ))
        })
    }

    pub fn expires_at(&self) -> Option<DateTime<Utc>> {
        self.expires_at
            .and_then(|secs| DateTime::<Utc>::from_timestamp(secs, 0))
    }

    /// Whether the access token is good for at least `margin` more.
    pub fn is_fresh(&self, margin: Duration, now: DateTime<Utc>) -> bool {
        match self.expires_at() {
            // Checked: a stored expiry at the clock's very start minus the
            // margin is before its range (`DateTime - TimeDelta` panics).
            Some(at) => at
                .checked_sub_signed(chrono::Duration::from_std(margin).unwrap_or_default())
                .is_some_and(|fresh_until| fresh_until > now),
            // No expiry given: trust it until the server says otherwise.
            None => true,
        }
    }

    pub fn is_expired(&self, now: DateTime<Utc>) -> bool {
        self.expires_at().is_some_and(|at| at <= now)
    }

    fn secrets(&self) -> Vec<&str> {
        let mut out = vec![self.access_token.as_str()];
        if let Some(r) = &self.refresh_token {
            out.push(r);
        }
        out
    }
}

/// The Google account (`userinfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    pub email: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub picture: Option<String>,
}

/// A started authorization: the URL to open and what the exchange needs.
pub struct Authorization {
    pub url: String,
    pub state: CsrfToken,
    pub verifier: PkceCodeVerifier,
    pub redirect_uri: String,
}

/// Why a refresh failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshError {
    /// The refresh token is revoked, expired or belongs to another client:
    /// only a new sign-in helps. The text is Google's explanation.
    SignInRequired(String),
    /// Anything else (network, 5xx): worth trying again later.
    Transient(String),
}

type ConfiguredClient =
    BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// The OAuth operations against one client and set of endpoints.
#[derive(Debug, Clone)]
pub struct GoogleOAuth {
    client: OAuthClient,
    endpoints: Endpoints,
    http: Http,
}

impl GoogleOAuth {
    pub fn new(client: OAuthClient, endpoints: Endpoints, http: Http) -> Self {
        Self {
            client,
            endpoints,
            http,
        }
    }

    pub fn client_id(&self) -> &str {
        &self.client.client_id
    }

    pub fn client(&self) -> &OAuthClient {
        &self.client
    }

    pub fn endpoints(&self) -> &Endpoints {
        &self.endpoints
    }

    pub fn http(&self) -> &Http {
        &self.http
    }

    fn oauth_client(&self) -> Result<ConfiguredClient, AuthError> {
        let bad = |what: &str, url: &str, e: oauth2::url::ParseError| {
            AuthError::Config(format!("the OAuth {what} URL '{url}' is invalid: {e}"))
        };
        let e = &self.endpoints;
        let mut client = BasicClient::new(ClientId::new(self.client.client_id.clone()))
            .set_auth_uri(
                AuthUrl::new(e.auth_url.clone())
                    .map_err(|x| bad("authorization", &e.auth_url, x))?,
            )
            .set_token_uri(
                TokenUrl::new(e.token_url.clone()).map_err(|x| bad("token", &e.token_url, x))?,
            )
            // Google accepts the client credentials in the form body, like
            // Google's own libraries send them.
            .set_auth_type(AuthType::RequestBody);
        if let Some(secret) = &self.client.client_secret {
            client = client.set_client_secret(ClientSecret::new(secret.expose().to_owned()));
        }
        Ok(client)
    }

    /// The authorization URL for `redirect_uri`, with a fresh `state` and PKCE
    /// S256 challenge, offline access (a refresh token) and our scopes.
    pub fn authorize(&self, redirect_uri: &str) -> Result<Authorization, AuthError> {
        let client = self.oauth_client()?;
        let redirect = RedirectUrl::new(redirect_uri.to_owned())
            .map_err(|e| AuthError::Config(format!("bad redirect URI '{redirect_uri}': {e}")))?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state) = client
            .authorize_url(CsrfToken::new_random)
            .set_redirect_uri(std::borrow::Cow::Owned(redirect))
            .add_scopes(SCOPES.iter().map(|s| Scope::new((*s).to_owned())))
            .set_pkce_challenge(challenge)
            .add_extra_param("access_type", "offline")
            // Without it Google sends a refresh token only on the very first
            // consent; a new sign-in after a local sign-out would get none.
            .add_extra_param("prompt", "consent")
            .url();
        Ok(Authorization {
            url: url.to_string(),
            state,
            verifier,
            redirect_uri: redirect_uri.to_owned(),
        })
    }

    /// Exchanges an authorization code (with the PKCE verifier).
    pub async fn exchange_code(
        &self,
        code: &str,
        verifier: PkceCodeVerifier,
        redirect_uri: &str,
    ) -> Result<StoredTokens, AuthError> {
        let client = self.oauth_client()?;
        let redirect = RedirectUrl::new(redirect_uri.to_owned())
            .map_err(|e| AuthError::Config(format!("bad redirect URI: {e}")))?;
        let response = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .set_pkce_verifier(verifier)
            .set_redirect_uri(std::borrow::Cow::Owned(redirect))
            .request_async(&self.http)
            .await
            .map_err(|e| {
                let message = token_error_message(&e, &[code]);
                match &e {
                    RequestTokenError::Request(_) => AuthError::Network(format!(
                        "Cannot reach Google's token endpoint: {message}"
                    )),
                    _ => AuthError::Rejected(format!(
                        "Google did not accept the sign-in ({message}). Start the sign-in again."
                    )),
                }
            })?;
        let tokens = StoredTokens {
            access_token: response.access_token().secret().clone(),
            refresh_token: response.refresh_token().map(|r| r.secret().clone()),
            expires_at: expiry(response.expires_in()),
            scopes: response
                .scopes()
                .map(|s| s.iter().map(|s| s.to_string()).collect())
                .unwrap_or_else(|| SCOPES.iter().map(|s| (*s).to_owned()).collect()),
            client_id: self.client.client_id.clone(),
        };
        Ok(tokens)
    }

    /// Gets a new access token. Google usually omits the refresh token in
    /// the answer; the old one is kept then.
    pub async fn refresh(&self, tokens: &StoredTokens) -> Result<StoredTokens, RefreshError> {
        let Some(refresh) = tokens.refresh_token.clone() else {
            return Err(RefreshError::SignInRequired(
                "the sign-in has no refresh token".into(),
            ));
        };
        if tokens.client_id != self.client.client_id {
            return Err(RefreshError::SignInRequired(
                "the sign-in was made with another OAuth client than the one configured now".into(),
            ));
        }
        let client = self
            .oauth_client()
            .map_err(|e| RefreshError::Transient(e.to_string()))?;
        let result = client
            .exchange_refresh_token(&RefreshToken::new(refresh.clone()))
            .request_async(&self.http)
            .await;
        match result {
            Ok(response) => Ok(StoredTokens {
                access_token: response.access_token().secret().clone(),
                refresh_token: Some(
                    response
                        .refresh_token()
                        .map(|r| r.secret().clone())
                        .unwrap_or(refresh),
                ),
                expires_at: expiry(response.expires_in()),
                scopes: response
                    .scopes()
                    .map(|s| s.iter().map(|s| s.to_string()).collect())
                    .unwrap_or_else(|| tokens.scopes.clone()),
                client_id: tokens.client_id.clone(),
            }),
            Err(e) => {
                let message = token_error_message(&e, &tokens.secrets());
                match &e {
                    RequestTokenError::ServerResponse(r)
                        if matches!(
                            r.error(),
                            BasicErrorResponseType::InvalidGrant
                                | BasicErrorResponseType::InvalidClient
                                | BasicErrorResponseType::UnauthorizedClient
                        ) =>
                    {
                        Err(RefreshError::SignInRequired(message))
                    }
                    _ => Err(RefreshError::Transient(message)),
                }
            }
        }
    }

    /// Revokes the refresh token (which also ends its access tokens) with
    /// Google's revocation endpoint (`POST token=...`). The oauth2 crate's
    /// RFC 7009 request insists on HTTPS, which the loopback fakes of the
    /// tests cannot offer, so this one request is sent directly.
    pub async fn revoke(&self, tokens: &StoredTokens) -> Result<(), AuthError> {
        let token = tokens
            .refresh_token
            .as_deref()
            .unwrap_or(&tokens.access_token);
        let body = oauth2::url::form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .finish();
        let response = self
            .http
            .client()
            .post(&self.endpoints.revoke_url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| {
                AuthError::Network(format!(
                    "Could not revoke the Google sign-in: {}",
                    redact_with(&error_chain(&e), &tokens.secrets())
                ))
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let text = response.text().await.unwrap_or_default();
        // Already revoked or expired: the goal is reached.
        if text.contains("invalid_token") || text.contains("invalid_grant") {
            return Ok(());
        }
        Err(AuthError::Network(format!(
            "Could not revoke the Google sign-in (HTTP {status}): {}",
            redact_with(&snippet(&text), &tokens.secrets())
        )))
    }

    /// The signed-in account.
    pub async fn userinfo(&self, access_token: &SecretString) -> Result<UserInfo, AuthError> {
        let response = self
            .http
            .client()
            .get(&self.endpoints.userinfo_url)
            .bearer_auth(access_token.expose())
            .send()
            .await
            .map_err(|e| AuthError::network(&e))?;
        let status = response.status();
        let body = response.text().await.map_err(|e| AuthError::network(&e))?;
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(AuthError::SignInRequired(format!(
                "Google did not accept the new sign-in when reading the account. {SIGN_IN_HINT}"
            )));
        }
        if !status.is_success() {
            return Err(AuthError::Protocol(format!(
                "Could not read the Google account (HTTP {status}): {}",
                redact_with(&snippet(&body), &[access_token.expose()])
            )));
        }
        serde_json::from_str(&body)
            .map_err(|e| AuthError::Protocol(format!("Unreadable Google account information: {e}")))
    }
}

/// When a token lasting `expires_in` (the server's word) expires, in Unix
/// seconds. Any number may arrive: the sum saturates (it overflowed, a
/// panic in debug builds, and `as i64` turned `u64::MAX` into a token
/// expired a second ago); past the clock's range it reads as no expiry
/// given (see [`StoredTokens::expires_at`]), so the token is used until
/// the server rejects it.
fn expiry(expires_in: Option<Duration>) -> Option<i64> {
    expires_in.map(|d| {
        let secs = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
        Utc::now().timestamp().saturating_add(secs)
    })
}

fn snippet(text: &str) -> String {
    text.chars().take(300).collect()
}

fn token_error_message<RE: std::error::Error + 'static>(
    error: &RequestTokenError<RE, BasicErrorResponse>,
    secrets: &[&str],
) -> String {
    let text = match error {
        RequestTokenError::ServerResponse(r) => match r.error_description() {
            Some(desc) => format!("{}: {desc}", r.error()),
            None => r.error().to_string(),
        },
        RequestTokenError::Request(e) => error_chain(e),
        // The body may hold tokens: name the problem only.
        RequestTokenError::Parse(e, _) => format!("unreadable answer ({})", e.path()),
        RequestTokenError::Other(text) => text.clone(),
    };
    redact_with(&text, secrets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ClientSource;

    fn oauth() -> GoogleOAuth {
        GoogleOAuth::new(
            OAuthClient {
                client_id: "cid.apps.googleusercontent.com".into(),
                client_secret: Some(SecretString::new("csecret")),
                source: ClientSource::Environment,
            },
            Endpoints::default(),
            Http::new().unwrap(),
        )
    }

    #[test]
    fn authorization_url_has_state_pkce_offline_and_scopes() {
        let auth = oauth()
            .authorize("http://127.0.0.1:5555/oauth2callback")
            .unwrap();
        let url = oauth2::url::Url::parse(&auth.url).unwrap();
        assert!(auth.url.starts_with(crate::config::GOOGLE_AUTH_URL));
        let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["client_id"], "cid.apps.googleusercontent.com");
        assert_eq!(q["redirect_uri"], "http://127.0.0.1:5555/oauth2callback");
        assert_eq!(q["state"], *auth.state.secret());
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["access_type"], "offline");
        assert_eq!(q["scope"], SCOPES.join(" "));
        assert!(q["code_challenge"].len() >= 43);
        assert!(!q.contains_key("client_secret"), "{}", auth.url);
    }

    /// The server's `expires_in` may be any number: it neither overflows
    /// (a panic in debug builds) nor wraps into a token already expired.
    #[test]
    fn any_token_lifetime_gives_a_usable_expiry() {
        let now = Utc::now();
        let tokens = |expires_at| StoredTokens {
            access_token: "a".into(),
            refresh_token: None,
            expires_at,
            scopes: vec![],
            client_id: "c".into(),
        };
        let hour = expiry(Some(Duration::from_secs(3600))).unwrap();
        assert!((hour - now.timestamp() - 3600).abs() <= 1, "{hour}");
        for huge in [i64::MAX as u64, u64::MAX] {
            let at = expiry(Some(Duration::from_secs(huge)));
            let tokens = tokens(at);
            assert!(tokens.is_fresh(REFRESH_MARGIN, now), "{huge}: {at:?}");
            assert!(!tokens.is_expired(now), "{huge}: {at:?}");
        }
        // A stored expiry at the clock's very start is stale, not a panic.
        let first = chrono::DateTime::<Utc>::MIN_UTC.timestamp();
        assert!(!tokens(Some(first)).is_fresh(REFRESH_MARGIN, now));
    }

    #[test]
    fn tokens_debug_and_freshness() {
        let now = Utc::now();
        let tokens = StoredTokens {
            access_token: "ya29.secret".into(),
            refresh_token: Some("1//refresh".into()),
            expires_at: Some(now.timestamp() + 200),
            scopes: vec![],
            client_id: "c".into(),
        };
        let debug = format!("{tokens:?}");
        assert!(!debug.contains("ya29") && !debug.contains("1//"), "{debug}");
        assert!(!tokens.is_fresh(REFRESH_MARGIN, now), "within the margin");
        assert!(tokens.is_fresh(Duration::from_secs(60), now));
        assert!(!tokens.is_expired(now));
        let round = StoredTokens::from_secret(&tokens.to_secret()).unwrap();
        assert_eq!(round, tokens);
    }
}
