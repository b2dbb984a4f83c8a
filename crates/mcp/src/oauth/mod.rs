//! OAuth for HTTP MCP servers, on rmcp's `auth` feature.
//!
//! A server that answers 401 goes to `needs_auth`. Signing in
//! ([`McpOAuth::login`], behind `McpManager::authenticate`) then runs:
//! discovery from the `WWW-Authenticate` challenge (RFC 9728 protected
//! resource metadata, then RFC 8414 authorization server metadata; or the
//! `oauth.authorizationUrl` / `oauth.tokenUrl` of the settings entry),
//! dynamic client registration (RFC 7591; or `oauth.clientId`), an
//! authorization URL with PKCE (S256) and `state`, the browser (a callback
//! the host provides), the loopback redirect ([`callback`]), and the token
//! exchange. Tokens go to the app's secret store ([`store`]); connections
//! then send them through rmcp's `AuthClient`, which refreshes them before
//! they expire and once more when the server refuses one. When the refresh
//! token is rejected the server goes back to `needs_auth`, saying so.
//!
//! One browser sign-in at a time, across servers and sessions: a second
//! request for the same server joins the running one, a request for another
//! server waits its turn.

pub mod callback;
mod login;
pub mod store;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use gd_auth::SecretStore;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use store::{SignInState, TokenStore};

use crate::config::OAuthConfig;
use crate::error::TokenStoreError;

/// How long the user has to finish signing in, as in Gemini CLI.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Opens the authorization page for the user (the system browser, or a
/// test acting as one). An error is reported, and the status still carries
/// the URL so the user can open it by hand.
pub type BrowserOpener = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// Why a sign-in did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    #[error("sign-in cancelled")]
    Cancelled,
    #[error("sign-in timed out: the browser did not come back within {} s", .0.as_secs())]
    TimedOut(Duration),
    #[error(
        "the sign-in redirect carried the wrong `state` (a stale or forged redirect); it was ignored"
    )]
    StateMismatch,
    #[error("the authorization server refused the sign-in ({0})")]
    Denied(String),
    #[error("{0}")]
    Failed(String),
}

/// Where the secret store comes from: given, or chosen on first use (the
/// keyring probe is a D-Bus round trip; sessions without OAuth servers
/// never pay it).
enum StoreSource {
    Given(TokenStore),
    Lazy {
        make: Box<dyn Fn() -> Result<Arc<dyn SecretStore>, String> + Send + Sync>,
        made: OnceLock<Result<TokenStore, TokenStoreError>>,
    },
}

/// A sign-in under way, joined by later requests for the same server.
struct Flow {
    done: watch::Receiver<Option<Result<(), OAuthError>>>,
    cancel: CancellationToken,
    auth_url: watch::Receiver<Option<String>>,
}

struct Inner {
    store: StoreSource,
    opener: Option<BrowserOpener>,
    timeout: Duration,
    client_name: String,
    /// Held for the browser part of a sign-in: one at a time.
    browser: tokio::sync::Mutex<()>,
    /// Sign-ins under way, by server URL.
    flows: Mutex<HashMap<String, Flow>>,
    http: OnceLock<Result<reqwest::Client, String>>,
    /// The URL of each completed sign-in: other sessions' managers restart
    /// their servers that were waiting for it.
    signed_in: tokio::sync::broadcast::Sender<String>,
}

/// The OAuth side of the MCP client: the token store, the browser and the
/// sign-ins under way. Cheap to clone; share one per process so that
/// sign-ins are serialised across sessions.
#[derive(Clone)]
pub struct McpOAuth {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpOAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpOAuth")
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// The opener hosts install for every [`McpOAuth`] without its own (the
/// desktop app: tauri-plugin-opener; the CLI: print and `xdg-open`).
static DEFAULT_OPENER: Mutex<Option<BrowserOpener>> = Mutex::new(None);

impl McpOAuth {
    /// Tokens in `store`.
    pub fn new(store: Arc<dyn SecretStore>) -> Self {
        Self::from_source(StoreSource::Given(TokenStore::new(store)))
    }

    /// Tokens in the store `make` returns, called on first use.
    pub fn with_lazy_store(
        make: impl Fn() -> Result<Arc<dyn SecretStore>, String> + Send + Sync + 'static,
    ) -> Self {
        Self::from_source(StoreSource::Lazy {
            make: Box::new(make),
            made: OnceLock::new(),
        })
    }

    fn from_source(store: StoreSource) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                opener: None,
                timeout: DEFAULT_LOGIN_TIMEOUT,
                client_name: "Gemini Desktop".into(),
                browser: tokio::sync::Mutex::new(()),
                flows: Mutex::new(HashMap::new()),
                http: OnceLock::new(),
                signed_in: tokio::sync::broadcast::channel(16).0,
            }),
        }
    }

    fn inner_mut(&mut self) -> &mut Inner {
        Arc::get_mut(&mut self.inner).expect("configure McpOAuth before sharing it")
    }

    /// Opens authorization pages with `opener` instead of the default.
    pub fn with_opener(mut self, opener: BrowserOpener) -> Self {
        self.inner_mut().opener = Some(opener);
        self
    }

    /// How long a sign-in may wait for the browser.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.inner_mut().timeout = timeout;
        self
    }

    /// The process's instance for sessions built from settings: tokens in
    /// the store the app keeps its Gemini credentials in (gd-auth's
    /// selection: keyring, else `~/.gemini/gemini-desktop/secrets.json`).
    pub fn shared(settings: &gd_settings::Settings, home: Option<&Path>) -> Self {
        static SHARED: OnceLock<McpOAuth> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                let settings = settings.clone();
                let home = home.map(Path::to_path_buf);
                Self::with_lazy_store(move || {
                    let env: gd_auth::manager::EnvFn =
                        Arc::new(|name: &str| std::env::var(name).ok());
                    let config =
                        gd_auth::AuthConfig::from_settings(&settings, &*env, home.as_deref())
                            .map_err(|e| e.to_string())?;
                    let manager = gd_auth::AuthManager::new(config, env, home.clone())
                        .map_err(|e| e.to_string())?;
                    manager
                        .store()
                        .map(|s| s.store.clone())
                        .map_err(|e| e.to_string())
                })
            })
            .clone()
    }

    /// Installs the opener used by every instance without its own.
    pub fn set_default_opener(opener: BrowserOpener) {
        *DEFAULT_OPENER.lock().unwrap_or_else(|e| e.into_inner()) = Some(opener);
    }

    /// The token store.
    pub fn store(&self) -> Result<TokenStore, TokenStoreError> {
        match &self.inner.store {
            StoreSource::Given(store) => Ok(store.clone()),
            StoreSource::Lazy { make, made } => made
                .get_or_init(|| {
                    make()
                        .map(TokenStore::new)
                        .map_err(TokenStoreError::Unavailable)
                })
                .clone(),
        }
    }

    /// What is stored for the server at `url`.
    pub async fn sign_in_state(&self, url: &str) -> SignInState {
        match self.store() {
            Ok(store) => store.state(url).await.unwrap_or(SignInState::None),
            Err(_) => SignInState::None,
        }
    }

    /// Forgets the sign-in to the server at `url`.
    pub async fn sign_out(&self, url: &str) -> Result<(), TokenStoreError> {
        self.store()?.clear(url).await
    }

    /// The client for the OAuth requests (discovery, registration, tokens):
    /// the app's (proxy, TLS roots) with an overall timeout.
    fn http(&self) -> Result<reqwest::Client, String> {
        self.inner
            .http
            .get_or_init(|| {
                gd_http::http_client_builder()
                    .connect_timeout(Duration::from_secs(10))
                    .timeout(Duration::from_secs(30))
                    .build()
                    .map_err(|e| format!("cannot build the HTTP client: {e}"))
            })
            .clone()
    }

    /// Opens `url` with the instance's opener, the host's default, or the system's; only
    /// `http`/`https` URLs are handed to any of them (hosts' openers need not check).
    fn open_browser(&self, url: &str) -> Result<(), String> {
        gd_auth::browser::check_web_url(url)?;
        if let Some(opener) = &self.inner.opener {
            return opener(url);
        }
        let default = DEFAULT_OPENER
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match default {
            Some(opener) => opener(url),
            None => open_system_browser(url),
        }
    }

    /// Signs in to the server `server` at `url`, or joins the sign-in
    /// already running for that URL. `on_url` hears the authorization page
    /// once the browser is sent there. Returns when the tokens are stored.
    pub async fn login(
        &self,
        server: &str,
        url: &str,
        config: &OAuthConfig,
        challenge: Option<String>,
        on_url: impl Fn(&str) + Send + Sync + 'static,
    ) -> Result<(), OAuthError> {
        let (mut done, mut auth_url) = {
            let mut flows = self.inner.flows.lock().unwrap_or_else(|e| e.into_inner());
            match flows.get(url) {
                Some(flow) => (flow.done.clone(), flow.auth_url.clone()),
                None => {
                    let (done_tx, done) = watch::channel(None);
                    let (url_tx, auth_url) = watch::channel(None);
                    let cancel = CancellationToken::new();
                    flows.insert(
                        url.to_owned(),
                        Flow {
                            done: done.clone(),
                            cancel: cancel.clone(),
                            auth_url: auth_url.clone(),
                        },
                    );
                    let this = self.clone();
                    let request = login::Request {
                        server: server.to_owned(),
                        url: url.to_owned(),
                        config: config.clone(),
                        challenge,
                    };
                    tokio::spawn(async move {
                        let result = login::run(&this, &request, &url_tx, &cancel).await;
                        match &result {
                            Ok(()) => {
                                tracing::info!(server = %request.server, "signed in to the MCP server");
                                let _ = this.inner.signed_in.send(request.url.clone());
                            }
                            Err(e) => {
                                tracing::warn!(server = %request.server, "MCP sign-in failed: {e}")
                            }
                        }
                        this.inner
                            .flows
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .remove(&request.url);
                        let _ = done_tx.send(Some(result));
                    });
                    (done, auth_url)
                }
            }
        };
        loop {
            tokio::select! {
                changed = done.changed() => {
                    if changed.is_err() {
                        break;
                    }
                }
                changed = auth_url.changed() => {
                    if changed.is_ok()
                        && let Some(url) = auth_url.borrow_and_update().clone()
                    {
                        on_url(&url);
                    }
                    continue;
                }
            }
            if done.borrow().is_some() {
                break;
            }
        }
        done.borrow().clone().unwrap_or_else(|| {
            Err(OAuthError::Failed(
                "the sign-in stopped unexpectedly (see the log)".into(),
            ))
        })
    }

    /// The URLs of sign-ins completed from now on.
    pub fn subscribe_sign_ins(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.inner.signed_in.subscribe()
    }

    /// Stops the sign-in running for `url`, if any. Returns whether one was.
    pub fn cancel(&self, url: &str) -> bool {
        let flows = self.inner.flows.lock().unwrap_or_else(|e| e.into_inner());
        match flows.get(url) {
            Some(flow) => {
                flow.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Whether a sign-in runs for `url`.
    pub fn is_signing_in(&self, url: &str) -> bool {
        self.inner
            .flows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(url)
    }

    /// An rmcp authorization manager with the stored sign-in for `url`, for
    /// a connection; `None` when nothing usable is stored.
    pub(crate) async fn authorized(
        &self,
        url: &str,
        config: &OAuthConfig,
    ) -> Result<Option<rmcp::transport::auth::AuthorizationManager>, String> {
        login::authorized(self, url, config).await
    }
}

/// `GEMINI_DESKTOP_BROWSER` (a command taking the URL) when set, else the
/// platform's opener.
pub use gd_auth::browser::open as open_system_browser;
