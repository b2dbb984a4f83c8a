//! MCP sign-ins kept in the app's secret store (gd-auth's `SecretStore`:
//! the OS keyring, else a 0600 file), next to the Gemini credentials.
//!
//! One secret, [`SecretKey::McpOauth`], holds a JSON document with an entry
//! per server URL: rmcp's `StoredCredentials` (client id, tokens, scopes,
//! issuer) and whether the authorization server rejected the refresh token
//! (so the server's status can say why it needs signing in again). One
//! secret instead of one per server because the store's keys are a fixed
//! set; the read-modify-write runs under a process-wide lock.
//!
//! Nothing here logs tokens: `StoredCredentials`' `Debug` redacts them and
//! errors never carry the document.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use gd_auth::{SecretKey, SecretStore};
use gd_http::SecretString;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

use crate::error::TokenStoreError;

/// Serialises every read-modify-write of the document in this process.
static DOCUMENT_LOCK: Mutex<()> = Mutex::new(());

#[derive(Debug, Default, Serialize, Deserialize)]
struct Document {
    #[serde(default)]
    servers: BTreeMap<String, Entry>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Entry {
    #[serde(default)]
    credentials: Option<StoredCredentials>,
    /// The refresh token was rejected (`invalid_grant`): signed out by the
    /// server.
    #[serde(default)]
    rejected: bool,
}

/// What the store knows about a server's sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInState {
    /// Never signed in (or signed out).
    None,
    /// Tokens are stored.
    SignedIn,
    /// The authorization server rejected the refresh token: the tokens are
    /// gone and the user has to sign in again.
    Rejected,
}

/// The MCP sign-ins in a [`SecretStore`].
#[derive(Clone)]
pub struct TokenStore {
    store: Arc<dyn SecretStore>,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenStore")
            .field("store", &self.store.kind())
            .finish()
    }
}

impl TokenStore {
    pub fn new(store: Arc<dyn SecretStore>) -> Self {
        Self { store }
    }

    /// Runs `f` on the document off the async runtime (keyring calls
    /// block), writing it back when `f` says it changed.
    async fn with_document<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Document) -> (T, bool) + Send + 'static,
    ) -> Result<T, TokenStoreError> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            let _guard = DOCUMENT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            let mut document = match store.get(SecretKey::McpOauth) {
                Ok(None) => Document::default(),
                Ok(Some(text)) => serde_json::from_str(text.expose()).unwrap_or_else(|e| {
                    // serde's message names a line and column, never content.
                    tracing::warn!("the stored MCP sign-ins are unreadable ({e}); starting over");
                    Document::default()
                }),
                Err(e) => return Err(TokenStoreError::Read(e.to_string())),
            };
            let (value, changed) = f(&mut document);
            if changed {
                if document.servers.is_empty() {
                    store
                        .delete(SecretKey::McpOauth)
                        .map_err(|e| TokenStoreError::Write(e.to_string()))?;
                } else {
                    let text = serde_json::to_string(&document)
                        .map_err(|e| TokenStoreError::Write(e.to_string()))?;
                    store
                        .set(SecretKey::McpOauth, &SecretString::new(text))
                        .map_err(|e| TokenStoreError::Write(e.to_string()))?;
                }
            }
            Ok(value)
        })
        .await
        .map_err(|e| TokenStoreError::Task(e.to_string()))?
    }

    pub async fn load(&self, url: &str) -> Result<Option<StoredCredentials>, TokenStoreError> {
        let url = url.to_owned();
        self.with_document(move |d| {
            (
                d.servers.get(&url).and_then(|e| e.credentials.clone()),
                false,
            )
        })
        .await
    }

    pub async fn save(
        &self,
        url: &str,
        credentials: StoredCredentials,
    ) -> Result<(), TokenStoreError> {
        let url = url.to_owned();
        self.with_document(move |d| {
            d.servers.insert(
                url,
                Entry {
                    credentials: Some(credentials),
                    rejected: false,
                },
            );
            ((), true)
        })
        .await
    }

    /// Forgets a server's sign-in.
    pub async fn clear(&self, url: &str) -> Result<(), TokenStoreError> {
        let url = url.to_owned();
        self.with_document(move |d| {
            let changed = d.servers.remove(&url).is_some();
            ((), changed)
        })
        .await
    }

    /// The refresh token was rejected: drop the tokens, remember why.
    pub async fn mark_rejected(&self, url: &str) -> Result<(), TokenStoreError> {
        let url = url.to_owned();
        self.with_document(move |d| {
            let entry = d.servers.entry(url).or_default();
            entry.credentials = None;
            entry.rejected = true;
            ((), true)
        })
        .await
    }

    pub async fn state(&self, url: &str) -> Result<SignInState, TokenStoreError> {
        let url = url.to_owned();
        self.with_document(move |d| {
            let state = match d.servers.get(&url) {
                Some(Entry {
                    credentials: Some(c),
                    ..
                }) if c.token_response.is_some() => SignInState::SignedIn,
                Some(Entry { rejected: true, .. }) => SignInState::Rejected,
                _ => SignInState::None,
            };
            (state, false)
        })
        .await
    }
}

/// rmcp's view of one server's entry.
pub(crate) struct ServerCredentials {
    pub store: TokenStore,
    pub url: String,
}

fn store_error(error: TokenStoreError) -> AuthError {
    AuthError::CredentialStoreError(error.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.store.load(&self.url).await.map_err(store_error)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.store
            .save(&self.url, credentials)
            .await
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store.clear(&self.url).await.map_err(store_error)
    }

    async fn on_refresh_token_rejected(
        &self,
        _credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        tracing::warn!(url = %self.url, "the MCP server's authorization server rejected the refresh token; signing in again is needed");
        self.store
            .mark_rejected(&self.url)
            .await
            .map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_auth::secret_store::MemoryStore;

    #[tokio::test]
    async fn entries_per_url_and_rejection() {
        let store = TokenStore::new(Arc::new(MemoryStore::default()));
        let a = "http://a/mcp";
        assert_eq!(store.state(a).await.unwrap(), SignInState::None);
        let creds: StoredCredentials = serde_json::from_value(serde_json::json!({
            "client_id": "c1",
            "token_response": {"access_token": "at", "token_type": "bearer", "refresh_token": "rt", "expires_in": 60},
        }))
        .unwrap();
        store.save(a, creds).await.unwrap();
        assert_eq!(store.state(a).await.unwrap(), SignInState::SignedIn);
        assert_eq!(
            store.state("http://b/mcp").await.unwrap(),
            SignInState::None
        );
        assert_eq!(store.load(a).await.unwrap().unwrap().client_id, "c1");
        store.mark_rejected(a).await.unwrap();
        assert_eq!(store.state(a).await.unwrap(), SignInState::Rejected);
        assert!(store.load(a).await.unwrap().is_none());
        store.clear(a).await.unwrap();
        assert_eq!(store.state(a).await.unwrap(), SignInState::None);
    }
}
