//! [`GoogleCredentials`]: the bearer tokens of the stored Google sign-in as
//! a [`CredentialSource`] for the Code Assist (and Vertex AI) transports.
//!
//! * The access token is refreshed when it has less than
//!   [`REFRESH_MARGIN`] left, or after the server rejected it
//!   ([`CredentialSource::invalidate`]).
//! * Another process (the desktop app and the CLI share the store) may have
//!   refreshed already: the store is read again before refreshing.
//! * A refresh token Google calls revoked or expired ends the sign-in:
//!   the tokens are deleted, the reason is recorded for the status view and
//!   every later call fails at once with the same "sign in again" message.
//!   Nothing retries a dead refresh token, so there is no loop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::Utc;
use futures::future::BoxFuture;
use gd_gemini::CredentialSource;
use gd_http::SecretString;
use tokio::sync::Mutex;
use tracing::{debug, info, warn};

use crate::error::{AuthError, SIGN_IN_HINT};
use crate::oauth::{GoogleOAuth, REFRESH_MARGIN, RefreshError, StoredTokens};
use crate::secret_store::{SecretKey, SecretStore};
use crate::state::{AuthMethod, StateFile};

/// Access tokens of the stored Google sign-in, refreshed ahead of expiry.
#[derive(Clone)]
pub struct GoogleCredentials {
    inner: Arc<Inner>,
}

struct Inner {
    oauth: GoogleOAuth,
    store: Arc<dyn SecretStore>,
    state: Arc<StateFile>,
    tokens: Mutex<Option<StoredTokens>>,
    /// Set once the sign-in is known to be dead: the message to repeat.
    dead: std::sync::Mutex<Option<String>>,
    invalidated: AtomicBool,
}

impl std::fmt::Debug for GoogleCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleCredentials")
            .field("client_id", &self.inner.oauth.client_id())
            .finish_non_exhaustive()
    }
}

impl GoogleCredentials {
    pub fn new(oauth: GoogleOAuth, store: Arc<dyn SecretStore>, state: Arc<StateFile>) -> Self {
        Self {
            inner: Arc::new(Inner {
                oauth,
                store,
                state,
                tokens: Mutex::new(None),
                dead: std::sync::Mutex::new(None),
                invalidated: AtomicBool::new(false),
            }),
        }
    }

    /// Starts from tokens already in hand (right after sign-in).
    pub fn with_tokens(self, tokens: StoredTokens) -> Self {
        if let Ok(mut slot) = self.inner.tokens.try_lock() {
            *slot = Some(tokens);
        }
        self
    }

    /// A valid access token, refreshing when needed.
    pub async fn token(&self) -> Result<SecretString, AuthError> {
        self.inner.token().await
    }

    /// The current tokens (for the status view), without refreshing.
    pub async fn current(&self) -> Option<StoredTokens> {
        self.inner.tokens.lock().await.clone()
    }
}

impl Inner {
    fn dead_message(&self) -> Option<String> {
        self.dead.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    async fn load_stored(&self) -> Result<Option<StoredTokens>, AuthError> {
        let store = self.store.clone();
        let secret = tokio::task::spawn_blocking(move || store.get(SecretKey::GoogleOauth))
            .await
            .map_err(|e| AuthError::Storage(e.to_string()))??;
        secret.map(|s| StoredTokens::from_secret(&s)).transpose()
    }

    async fn save(&self, tokens: &StoredTokens) -> Result<(), AuthError> {
        let store = self.store.clone();
        let secret = tokens.to_secret();
        tokio::task::spawn_blocking(move || store.set(SecretKey::GoogleOauth, &secret))
            .await
            .map_err(|e| AuthError::Storage(e.to_string()))??;
        Ok(())
    }

    fn die(&self, message: String) -> AuthError {
        *self.dead.lock().unwrap_or_else(|e| e.into_inner()) = Some(message.clone());
        AuthError::SignInRequired(message)
    }

    async fn token(&self) -> Result<SecretString, AuthError> {
        if let Some(message) = self.dead_message() {
            return Err(AuthError::SignInRequired(message));
        }
        let mut slot = self.tokens.lock().await;
        let now = Utc::now();
        let invalidated = self.invalidated.swap(false, Ordering::SeqCst);
        if let Some(tokens) = slot.as_ref()
            && !invalidated
            && tokens.is_fresh(REFRESH_MARGIN, now)
        {
            return Ok(SecretString::new(tokens.access_token.clone()));
        }
        // Maybe another process refreshed (or signed in again) meanwhile.
        let stored = self.load_stored().await?;
        let Some(stored) = stored else {
            return Err(self.die(format!("You are not signed in with Google. {SIGN_IN_HINT}")));
        };
        let rejected = slot.as_ref().map(|t| t.access_token.clone());
        let newer = rejected.as_deref() != Some(stored.access_token.as_str());
        if stored.is_fresh(REFRESH_MARGIN, now) && (newer || !invalidated) {
            let token = SecretString::new(stored.access_token.clone());
            *slot = Some(stored);
            return Ok(token);
        }
        debug!("refreshing the Google access token");
        match self.oauth.refresh(&stored).await {
            Ok(fresh) => {
                if let Err(e) = self.save(&fresh).await {
                    warn!(error = %e, "cannot save the refreshed token; using it for this session only");
                }
                let token = SecretString::new(fresh.access_token.clone());
                *slot = Some(fresh);
                Ok(token)
            }
            Err(RefreshError::SignInRequired(reason)) => {
                info!("the Google sign-in was revoked or has expired");
                *slot = None;
                let store = self.store.clone();
                let _ =
                    tokio::task::spawn_blocking(move || store.delete(SecretKey::GoogleOauth)).await;
                let message = format!(
                    "Your Google sign-in has expired or was revoked (Google said: {reason}). {SIGN_IN_HINT}"
                );
                self.state
                    .record_error(Some(AuthMethod::GoogleLogin), &message, true);
                Err(self.die(message))
            }
            Err(RefreshError::Transient(reason)) => {
                // The old token may still work for a few minutes.
                if !invalidated && !stored.is_expired(now) {
                    warn!(%reason, "token refresh failed; using the current token until it expires");
                    let token = SecretString::new(stored.access_token.clone());
                    *slot = Some(stored);
                    return Ok(token);
                }
                Err(AuthError::Network(format!(
                    "Could not refresh the Google sign-in: {reason}"
                )))
            }
        }
    }
}

impl CredentialSource for GoogleCredentials {
    fn access_token(&self) -> BoxFuture<'_, Result<SecretString, String>> {
        Box::pin(async move { self.inner.token().await.map_err(|e| e.to_string()) })
    }

    fn invalidate(&self) {
        self.inner.invalidated.store(true, Ordering::SeqCst);
    }
}
