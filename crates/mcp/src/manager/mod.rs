//! All MCP servers of a session: starting them in parallel, discovery,
//! status, calls, restarts after crashes, and the user's restart and
//! enable/disable requests.
//!
//! [`McpManager`] is the facade; the work is split by concept:
//! * [`options`]: what a manager is built from.
//! * `state`: one slot per server and the state transitions (start, stop,
//!   status events, discovery state).
//! * `supervisor`: the life of one server (connect, discover, serve,
//!   restart with backoff).
//! * `connect`: opening a connection per transport.
//! * `discovery`: a server's lists as declared tools, prompts, resources.
//! * `requests`: tool calls, resource reads and prompts, one request path.
//! * `sign_in`: OAuth sign-in to HTTP servers as the manager sees it.

mod connect;
mod discovery;
pub mod options;
mod requests;
mod sign_in;
mod state;
mod supervisor;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use gd_protocol::{McpDiscoveryState, McpPromptInfo, McpServerState, McpServerStatus};
use serde_json::Value;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tracing::info;

pub use crate::error::{CallError, McpError};
pub use options::{McpOptions, RestartPolicy};

use crate::client::Connection;
use state::{Inner, Slot};

/// At most one [`McpEvent::LogChanged`] per server in this time: a chatty
/// server's stderr must not flood the UI, which re-reads the tail per event.
pub const LOG_EVENT_INTERVAL: Duration = Duration::from_millis(250);

/// A tool of a connected server, as declared to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub server: String,
    /// The server's own name of the tool.
    pub name: String,
    /// `mcp_<server>_<tool>`, made valid.
    pub declared_name: String,
    pub title: Option<String>,
    pub description: String,
    /// The declared `parametersJsonSchema`.
    pub schema: Value,
    /// The server says the tool only reads (`annotations.readOnlyHint`).
    pub read_only_hint: bool,
    /// The server's entry has `trust: true`.
    pub trust: bool,
}

/// A resource a server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpResource {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

/// What subscribers hear.
#[derive(Debug, Clone, PartialEq)]
pub enum McpEvent {
    Status(McpServerStatus),
    Discovery(McpDiscoveryState),
    /// The tools or resources on offer changed.
    ToolsChanged,
    /// The server's log (stderr tail, see [`McpManager::log`]) grew; sent
    /// at once, then at most every [`LOG_EVENT_INTERVAL`].
    LogChanged(String),
}

/// The MCP servers of a session. Cheap to clone.
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("servers", &self.statuses())
            .finish_non_exhaustive()
    }
}

impl McpManager {
    /// Prepares the servers without starting any: invalid entries are in
    /// `error`, blocked ones in `blocked`, disabled ones in `disabled`.
    pub fn new(options: McpOptions) -> Self {
        let slots = options
            .servers
            .iter()
            .map(|entry| Slot::new(entry, &options))
            .collect();
        let (events, _) = broadcast::channel(1024);
        let (discovery, _) = watch::channel(McpDiscoveryState::NotStarted);
        Self {
            inner: Arc::new(Inner {
                options,
                slots: Mutex::new(slots),
                events,
                discovery,
                pending: Mutex::new(HashSet::new()),
                http: OnceLock::new(),
                stopped: CancellationToken::new(),
                tools_generation: AtomicU64::new(0),
                resources_listed: watch::channel(0).0,
                started: AtomicBool::new(false),
                runtime: OnceLock::new(),
            }),
        }
    }

    /// Settings entries that cannot be used: `(name, reason)`.
    pub fn invalid_entries(&self) -> Vec<(String, String)> {
        self.inner
            .options
            .servers
            .iter()
            .filter_map(|e| e.config.as_ref().err().map(|r| (e.name.clone(), r.clone())))
            .collect()
    }

    /// Whether any server is configured at all.
    pub fn is_empty(&self) -> bool {
        self.inner.lock().is_empty()
    }

    /// Starts every startable server, all at once. Needs a Tokio runtime.
    /// Only the first call does anything.
    pub fn start(&self) {
        if self.inner.started.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let _ = self.inner.runtime.set(handle);
        }
        let mut slots = self.inner.lock();
        let startable: Vec<usize> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.config.is_some() && s.status.state == McpServerState::Disconnected)
            .map(|(i, _)| i)
            .collect();
        for i in startable {
            self.inner.start_slot(&mut slots[i]);
        }
        drop(slots);
        if self.inner.lock_pending().is_empty() {
            self.inner.set_discovery(McpDiscoveryState::Completed);
        }
        if let Some(oauth) = &self.inner.options.oauth {
            self.inner.follow_sign_ins(oauth.subscribe_sign_ins());
        }
        self.inner.follow_logs();
    }

    /// Events from now on (status changes, discovery, tool changes).
    pub fn subscribe(&self) -> broadcast::Receiver<McpEvent> {
        self.inner.events.subscribe()
    }

    /// Changes whenever the tools or resources on offer change.
    pub fn tools_generation(&self) -> u64 {
        self.inner.tools_generation.load(Ordering::SeqCst)
    }

    /// Whether [`McpManager::start`] was called.
    pub fn is_started(&self) -> bool {
        self.inner.started.load(Ordering::SeqCst)
    }

    pub fn discovery_state(&self) -> McpDiscoveryState {
        *self.inner.discovery.borrow()
    }

    /// Resolves once no server is in its first connection attempt.
    pub async fn wait_discovery(&self) {
        let mut rx = self.inner.discovery.subscribe();
        let _ = rx
            .wait_for(|state| *state != McpDiscoveryState::InProgress)
            .await;
    }

    /// Resolves once the first discovery is over and every connected server
    /// has listed its prompts and resources (they follow the tools, which
    /// is all [`McpManager::wait_discovery`] waits for).
    pub async fn wait_prompts(&self) {
        let mut events = self.subscribe();
        self.wait_discovery().await;
        while self.inner.lock().iter().any(|s| s.listing) {
            if let Err(broadcast::error::RecvError::Closed) = events.recv().await {
                return;
            }
        }
    }

    /// Every configured server, in settings order.
    pub fn statuses(&self) -> Vec<McpServerStatus> {
        self.inner.lock().iter().map(|s| s.status.clone()).collect()
    }

    pub fn status(&self, server: &str) -> Option<McpServerStatus> {
        self.inner
            .lock()
            .iter()
            .find(|s| s.name == server)
            .map(|s| s.status.clone())
    }

    /// The process id of a running stdio server (also its process group).
    pub fn server_pid(&self, server: &str) -> Option<u32> {
        self.inner
            .lock()
            .iter()
            .find(|s| s.name == server)
            .and_then(|s| s.conn.as_ref())
            .and_then(|c| c.child.as_ref())
            .map(|c| c.pid())
    }

    /// The latest stderr lines of a server.
    pub fn log(&self, server: &str) -> Option<Vec<String>> {
        self.inner
            .lock()
            .iter()
            .find(|s| s.name == server)
            .map(|s| s.log.lines())
    }

    /// The tools of connected servers: servers in name order (as Gemini CLI
    /// sorts them), each server's tools in its own order.
    pub fn tools(&self) -> Vec<Arc<McpTool>> {
        let slots = self.inner.lock();
        let mut order: Vec<&Slot> = slots.iter().collect();
        order.sort_by_key(|s| s.name.to_lowercase());
        order
            .into_iter()
            .flat_map(|s| s.tools.iter().cloned())
            .collect()
    }

    /// Whether a connected server offers resources: it declared the
    /// capability and its list is still coming, or it listed some. Known as
    /// soon as the server answers `initialize`, so the resource tools are
    /// declared to the first model request without waiting for
    /// resources/list.
    pub fn offers_resources(&self) -> bool {
        self.inner
            .lock()
            .iter()
            .any(|s| s.conn.is_some() && (s.resources_pending || !s.resources.is_empty()))
    }

    /// Resolves once no connected server's resources/list is outstanding
    /// (each ends with the list, its failure, or the connection), or when
    /// `cancel` fires. [`McpManager::resources`] is complete afterwards.
    pub async fn wait_resources(&self, cancel: &CancellationToken) -> Result<(), CallError> {
        let mut listed = self.inner.resources_listed.subscribe();
        loop {
            listed.borrow_and_update();
            if !self.inner.lock().iter().any(|s| s.resources_pending) {
                return Ok(());
            }
            tokio::select! {
                _ = cancel.cancelled() => return Err(CallError::Cancelled),
                changed = listed.changed() => if changed.is_err() { return Ok(()) },
            }
        }
    }

    /// The resources of connected servers, in server order.
    pub fn resources(&self) -> Vec<McpResource> {
        self.inner
            .lock()
            .iter()
            .flat_map(|s| s.resources.iter().cloned())
            .collect()
    }

    /// The prompts of connected servers.
    pub fn prompts(&self) -> Vec<McpPromptInfo> {
        self.inner
            .lock()
            .iter()
            .flat_map(|s| s.prompts.iter().cloned())
            .collect()
    }

    /// Stops a server (if running) and starts it again.
    pub fn restart(&self, server: &str) -> Result<(), McpError> {
        let mut slots = self.inner.lock();
        let slot = slots
            .iter_mut()
            .find(|s| s.name == server)
            .ok_or_else(|| McpError::UnknownServer(server.to_owned()))?;
        if slot.config.is_none()
            || matches!(
                slot.status.state,
                McpServerState::Blocked | McpServerState::Disabled
            )
        {
            return Err(slot.unavailable());
        }
        info!(server, "restarting MCP server");
        // A sign-in waiting for the browser stops: the user started over.
        self.inner.cancel_sign_in(slot);
        self.inner
            .stop_slot(slot, McpServerState::Disconnected, None);
        slot.status.restarts = 0;
        self.inner.start_slot(slot);
        Ok(())
    }

    /// Turns a server off (stopping it) or on (starting it), and records
    /// the choice in the enablement file.
    pub fn set_enabled(&self, server: &str, enabled: bool) -> Result<(), McpError> {
        let mut slots = self.inner.lock();
        let slot = slots
            .iter_mut()
            .find(|s| s.name == server)
            .ok_or_else(|| McpError::UnknownServer(server.to_owned()))?;
        self.inner
            .options
            .enablement
            .set_enabled(server, enabled)
            .map_err(|e| McpError::Enablement(e.to_string()))?;
        if enabled {
            if slot.status.state == McpServerState::Disabled {
                slot.status.state = McpServerState::Disconnected;
                slot.status.error = None;
                self.inner.emit_status(slot);
                if slot.config.is_some() {
                    self.inner.start_slot(slot);
                }
            }
        } else if slot.status.state != McpServerState::Disabled {
            let reason = format!("Server '{server}' is disabled. Enable it to start it.");
            if slot.status.state == McpServerState::Blocked || slot.config.is_none() {
                // It was not running; keep its more important reason.
                return Ok(());
            }
            self.inner.cancel_sign_in(slot);
            self.inner
                .stop_slot(slot, McpServerState::Disabled, Some(reason));
        }
        Ok(())
    }

    /// Stops every server at once without waiting: SIGTERM to the stdio
    /// servers' process groups, HTTP connections dropped. For a process
    /// about to exit (what Gemini CLI does at exit, too).
    pub fn terminate(&self) {
        self.close_all();
    }

    /// Stops every server: SIGTERM to stdio servers' process groups at once,
    /// then up to `grace` for them to exit before SIGKILL.
    pub async fn shutdown(&self, grace: Duration) {
        let conns = self.close_all();
        futures::future::join_all(conns.iter().map(|c| c.close(grace))).await;
    }

    /// Stops every server's task and closes its connection now (SIGTERM to
    /// a stdio server's process group); the connections, for waiting.
    fn close_all(&self) -> Vec<Arc<Connection>> {
        self.inner.stopped.cancel();
        let conns: Vec<Arc<Connection>> = {
            let mut slots = self.inner.lock();
            slots
                .iter_mut()
                .filter_map(|slot| {
                    slot.run = None;
                    slot.conn.take()
                })
                .collect()
        };
        for conn in &conns {
            conn.close_now();
        }
        conns
    }
}
