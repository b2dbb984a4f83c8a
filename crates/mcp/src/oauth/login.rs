//! The steps of one sign-in, and the authorization manager a connection
//! uses afterwards. rmcp does the protocol (discovery, registration, PKCE,
//! token requests); this module adds the settings, the browser, the
//! loopback redirect and the store.

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession, OAuthClientConfig,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::callback::CallbackListener;
use super::store::ServerCredentials;
use super::{McpOAuth, OAuthError};
use crate::config::OAuthConfig;

pub(super) struct Request {
    pub server: String,
    pub url: String,
    pub config: OAuthConfig,
    /// The `WWW-Authenticate` header of the server's 401.
    pub challenge: Option<String>,
}

fn failed(what: &str) -> impl Fn(AuthError) -> OAuthError + '_ {
    move |e| OAuthError::Failed(format!("{what}: {}", crate::client::error_text(&e)))
}

/// A manager for `url` on our HTTP client and store, with the configured
/// endpoints when settings give them.
async fn manager(
    oauth: &McpOAuth,
    url: &str,
    config: &OAuthConfig,
) -> Result<AuthorizationManager, OAuthError> {
    // First: building our client installs the process's TLS crypto
    // provider, which rmcp's own default client (built below, then
    // replaced) needs too.
    let http = oauth.http().map_err(OAuthError::Failed)?;
    // Private addresses are fine: the user configured this server, often on
    // a company network.
    let mut manager = AuthorizationManager::new_allowing_private_addresses(url)
        .await
        .map_err(failed("invalid server URL"))?;
    manager
        .with_client(http)
        .map_err(failed("OAuth client setup"))?;
    manager.set_credential_store(ServerCredentials {
        store: oauth
            .store()
            .map_err(|e| OAuthError::Failed(e.to_string()))?,
        url: url.to_owned(),
    });
    if let (Some(authorization), Some(token)) = (&config.authorization_url, &config.token_url) {
        // AuthorizationMetadata is non-exhaustive: built through serde.
        let metadata: AuthorizationMetadata = serde_json::from_value(serde_json::json!({
            "authorization_endpoint": authorization,
            "token_endpoint": token,
        }))
        .map_err(|e| OAuthError::Failed(format!("oauth endpoints: {e}")))?;
        manager.set_metadata(metadata);
    }
    Ok(manager)
}

/// One sign-in, from discovery to stored tokens. Holds the browser lock
/// from opening the page until the redirect came (or the wait ended).
pub(super) async fn run(
    oauth: &McpOAuth,
    request: &Request,
    auth_url_tx: &watch::Sender<Option<String>>,
    cancel: &CancellationToken,
) -> Result<(), OAuthError> {
    let config = &request.config;
    let mut manager = manager(oauth, &request.url, config).await?;
    if config.authorization_url.is_none() {
        let resolution = tokio::select! {
            _ = cancel.cancelled() => return Err(OAuthError::Cancelled),
            r = manager.resolve_metadata_from_challenge(request.challenge.as_deref()) => r,
        }
        .map_err(failed("OAuth discovery failed"))?;
        if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
            tracing::info!(server = %request.server, "the MCP server publishes no OAuth metadata; trying /authorize, /token and /register on its host");
        }
        manager.set_metadata(resolution.metadata);
    }

    // One browser flow at a time; cancelling works while waiting for it.
    let _browser = tokio::select! {
        _ = cancel.cancelled() => return Err(OAuthError::Cancelled),
        guard = oauth.inner.browser.lock() => guard,
    };
    let listener = CallbackListener::bind(config.redirect_uri.as_deref()).await?;
    let mut authorization = AuthorizationRequest::new(listener.redirect_uri())
        .with_client_name(oauth.inner.client_name.clone());
    if let Some(challenge) = &request.challenge {
        authorization = authorization.with_challenge(challenge.clone());
    }
    if let Some(scopes) = config.scopes.as_ref().filter(|s| !s.is_empty()) {
        authorization = authorization.with_scopes(scopes.iter().cloned());
    }
    if let Some(client_id) = &config.client_id {
        authorization = authorization.with_preregistered_client(client_id.clone());
        if let Some(secret) = &config.client_secret {
            authorization = authorization.with_client_secret(secret.clone());
        }
    }
    let session = tokio::select! {
        _ = cancel.cancelled() => return Err(OAuthError::Cancelled),
        s = AuthorizationSession::new(manager, authorization) => s,
    }
    .map_err(|(_, e)| {
        OAuthError::Failed(format!(
            "cannot start the sign-in: {}",
            crate::client::error_text(&e)
        ))
    })?;
    let auth_url = session.get_authorization_url().to_owned();
    let state = reqwest::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| OAuthError::Failed("the authorization URL has no `state`".into()))?;
    // The authorization endpoint is the remote server's word: a `file:` or custom-scheme
    // "page" would make the opener show local files or start another app. Refused before any
    // opener (ours or the host's) sees it, and before the status offers it as a link.
    gd_auth::browser::check_web_url(&auth_url).map_err(|e| {
        OAuthError::Failed(format!(
            "the server's authorization endpoint is not a web page; {e}"
        ))
    })?;
    let _ = auth_url_tx.send(Some(auth_url.clone()));
    if let Err(e) = oauth.open_browser(&auth_url) {
        // The status carries the URL: the user can still open it.
        tracing::warn!(server = %request.server, "{e}");
    }
    let callback = listener.wait(&state, oauth.inner.timeout, cancel).await?;
    drop(_browser);
    tokio::select! {
        _ = cancel.cancelled() => Err(OAuthError::Cancelled),
        r = session.handle_callback_with_issuer(&callback.code, &callback.state, callback.issuer.as_deref()) => {
            r.map(|_| ()).map_err(failed("the token exchange failed"))
        }
    }
}

/// The manager a connection authenticates with, when the store has a
/// usable sign-in for `url` (no network otherwise).
pub(super) async fn authorized(
    oauth: &McpOAuth,
    url: &str,
    config: &OAuthConfig,
) -> Result<Option<AuthorizationManager>, String> {
    let stored = oauth
        .store()
        .map_err(|e| e.to_string())?
        .load(url)
        .await
        .map_err(|e| e.to_string())?;
    let Some(stored) = stored.filter(|c| c.token_response.is_some()) else {
        return Ok(None);
    };
    let mut manager = manager(oauth, url, config)
        .await
        .map_err(|e| e.to_string())?;
    // Discovery (unless configured), the issuer check, the stored client.
    let usable = manager.initialize_from_store().await.map_err(|e| {
        format!(
            "cannot use the saved sign-in: {}",
            crate::client::error_text(&e)
        )
    })?;
    if !usable {
        return Ok(None);
    }
    if let Some(secret) = &config.client_secret {
        // The store keeps the client id only; a confidential client needs
        // its secret for refreshes.
        let redirect = config
            .redirect_uri
            .clone()
            .unwrap_or_else(|| url.to_owned());
        manager
            .configure_client(
                OAuthClientConfig::new(stored.client_id.clone(), redirect)
                    .with_client_secret(secret.clone()),
            )
            .map_err(|e| crate::client::error_text(&e))?;
    }
    Ok(Some(manager))
}
