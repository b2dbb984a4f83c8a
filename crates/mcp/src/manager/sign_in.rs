//! OAuth sign-in to HTTP servers, as the manager sees it: which server a
//! sign-in is for, its status while the browser is out, what happens after
//! (restart with the tokens, or back to `needs_auth` with the reason), and
//! sign-ins completed elsewhere. The OAuth protocol itself is
//! [`crate::oauth`].

use std::sync::Arc;

use gd_protocol::McpServerState;
use tokio::sync::broadcast;
use tracing::{info, warn};

use super::McpManager;
use super::state::{Inner, Slot};
use crate::auth::sign_in_lost_message;
use crate::config::{OAuthConfig, TransportConfig};
use crate::error::McpError;
use crate::oauth::McpOAuth;

/// What signing in to one server needs.
struct OAuthTarget {
    oauth: McpOAuth,
    url: String,
    config: OAuthConfig,
    challenge: Option<String>,
}

impl McpManager {
    /// Signs in to the HTTP server `server` with OAuth: discovery, client
    /// registration, the browser, the loopback redirect, tokens into the
    /// store; then restarts the server with them. The server is
    /// `authenticating` meanwhile (its status carries the authorization
    /// URL). A second request for the same server joins the running
    /// sign-in; sign-ins for other servers wait their turn. On failure the
    /// server goes back to `needs_auth` with the reason.
    pub async fn authenticate(&self, server: &str) -> Result<(), McpError> {
        let target = self.inner.oauth_target(server)?;
        self.inner.set_authenticating(server, None);
        let inner = self.inner.clone();
        let name = server.to_owned();
        let on_url = move |auth_url: &str| inner.set_authenticating(&name, Some(auth_url));
        let result = target
            .oauth
            .login(
                server,
                &target.url,
                &target.config,
                target.challenge,
                on_url,
            )
            .await;
        match result {
            Ok(()) => {
                self.inner.restart_after_login(server);
                Ok(())
            }
            Err(error) => {
                let error = McpError::from(error);
                self.inner.after_failed_login(server, &error.to_string());
                Err(error)
            }
        }
    }

    /// [`McpManager::authenticate`] in the background (for callers that
    /// cannot wait: the status events tell how it goes). Errors that stop
    /// it from starting are returned.
    pub fn start_authentication(&self, server: &str) -> Result<(), McpError> {
        self.inner.oauth_target(server)?;
        let this = self.clone();
        let name = server.to_owned();
        self.inner.spawn(async move {
            let _ = this.authenticate(&name).await;
        });
        Ok(())
    }

    /// Stops the sign-in running for `server`. Returns whether one ran.
    pub fn cancel_authentication(&self, server: &str) -> Result<bool, McpError> {
        let target = self.inner.oauth_target(server)?;
        Ok(target.oauth.cancel(&target.url))
    }

    /// Forgets the stored sign-in to `server` and restarts it (it then
    /// needs signing in again).
    pub async fn sign_out(&self, server: &str) -> Result<(), McpError> {
        let target = self.inner.oauth_target(server)?;
        target.oauth.sign_out(&target.url).await?;
        self.restart(server)
    }
}

impl Inner {
    /// What signing in to `server` needs, or why it cannot.
    fn oauth_target(&self, server: &str) -> Result<OAuthTarget, McpError> {
        let slots = self.lock();
        let slot = slots
            .iter()
            .find(|s| s.name == server)
            .ok_or_else(|| McpError::UnknownServer(server.to_owned()))?;
        let config = slot.config.as_ref().ok_or_else(|| slot.unavailable())?;
        if matches!(
            slot.status.state,
            McpServerState::Disabled | McpServerState::Blocked
        ) {
            return Err(slot.unavailable());
        }
        let url = match &config.transport {
            TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => url.clone(),
            TransportConfig::Stdio { .. } => return Err(McpError::NotRemote(server.to_owned())),
        };
        if !config.oauth.is_enabled() {
            return Err(McpError::OAuthDisabled(server.to_owned()));
        }
        let oauth = self
            .options
            .oauth
            .clone()
            .ok_or(McpError::OAuthUnavailable)?;
        Ok(OAuthTarget {
            oauth,
            url,
            config: config.oauth.clone(),
            challenge: slot.challenge.clone(),
        })
    }

    /// Restarts servers waiting in `needs_auth` when a sign-in to their URL
    /// completes elsewhere (another session, the CLI in this process).
    pub(super) fn follow_sign_ins(self: &Arc<Self>, mut sign_ins: broadcast::Receiver<String>) {
        let weak = Arc::downgrade(self);
        let stopped = self.stopped.clone();
        self.spawn(async move {
            loop {
                let url = tokio::select! {
                    _ = stopped.cancelled() => return,
                    received = sign_ins.recv() => match received {
                        Ok(url) => url,
                        Err(broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                };
                let Some(inner) = weak.upgrade() else { return };
                let mut slots = inner.lock();
                for slot in slots.iter_mut() {
                    if slot.remote_url() == Some(url.as_str())
                        && slot.status.state == McpServerState::NeedsAuth
                    {
                        info!(server = %slot.name, "signed in elsewhere; connecting");
                        inner.stop_slot(slot, McpServerState::Disconnected, None);
                        inner.start_slot(slot);
                    }
                }
            }
        });
    }

    /// Stops a sign-in under way for the slot's server, if any.
    pub(super) fn cancel_sign_in(&self, slot: &Slot) {
        if slot.status.state != McpServerState::Authenticating {
            return;
        }
        if let (Some(oauth), Some(url)) = (&self.options.oauth, slot.remote_url()) {
            oauth.cancel(url);
        }
    }

    /// The server waits for the browser (`auth_url` once known).
    pub(super) fn set_authenticating(&self, server: &str, auth_url: Option<&str>) {
        let mut slots = self.lock();
        if let Some(slot) = slots.iter_mut().find(|s| s.name == server)
            && !matches!(
                slot.status.state,
                McpServerState::Disabled | McpServerState::Blocked
            )
        {
            slot.status.state = McpServerState::Authenticating;
            slot.status.error = Some(match auth_url {
                Some(_) => "Waiting for you to sign in in the browser…".into(),
                None => "Preparing the sign-in…".into(),
            });
            if auth_url.is_some() {
                slot.status.auth_url = auth_url.map(str::to_owned);
            }
            self.emit_status(slot);
        }
    }

    /// Signed in: start again with the tokens (once, however many callers
    /// waited for the sign-in).
    pub(super) fn restart_after_login(self: &Arc<Self>, server: &str) {
        let mut slots = self.lock();
        if let Some(slot) = slots.iter_mut().find(|s| s.name == server)
            && slot.status.state == McpServerState::Authenticating
        {
            self.stop_slot(slot, McpServerState::Disconnected, None);
            slot.status.restarts = 0;
            self.start_slot(slot);
        }
    }

    pub(super) fn after_failed_login(&self, server: &str, message: &str) {
        let mut slots = self.lock();
        if let Some(slot) = slots.iter_mut().find(|s| s.name == server)
            && slot.status.state == McpServerState::Authenticating
        {
            slot.status.auth_url = None;
            if slot.conn.as_ref().is_some_and(|c| !c.is_closed()) {
                // It was connected (signing in again): it still is.
                slot.status.state = McpServerState::Connected;
                slot.status.error = None;
            } else {
                slot.status.state = McpServerState::NeedsAuth;
                slot.status.error = Some(message.to_owned());
            }
            self.emit_status(slot);
        }
    }

    /// A connected server refused its credentials and rmcp could not
    /// refresh them: stop it and say it needs signing in.
    pub(super) fn sign_in_lost(&self, server: &str) -> String {
        let mut slots = self.lock();
        let Some(slot) = slots.iter_mut().find(|s| s.name == server) else {
            return format!("MCP server '{server}' needs signing in again");
        };
        let message = sign_in_lost_message(server, slot.remote_url().unwrap_or_default());
        warn!(server, "{message}");
        self.stop_slot(slot, McpServerState::NeedsAuth, Some(message.clone()));
        message
    }
}
