//! The manager's shared state: one [`Slot`] per configured server and the
//! [`Inner`] that owns them, with the small state transitions every other
//! part uses (start, stop, status events, the discovery state). Each
//! server's slot carries a `generation`: a task that outlived a restart
//! finds its generation gone and leaves the slot alone.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use gd_protocol::{McpDiscoveryState, McpPromptInfo, McpServerState, McpServerStatus};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tracing::warn;

use super::supervisor::supervise;
use super::{LOG_EVENT_INTERVAL, McpEvent, McpOptions, McpResource, McpTool};
use crate::client::Connection;
use crate::config::{ServerConfig, ServerEntry, TransportConfig};
use crate::error::McpError;
use crate::log::LogTail;

/// How long a stopped server may take to exit before it is killed.
pub(super) const STOP_GRACE: Duration = Duration::from_millis(1500);

pub(super) struct Slot {
    pub(super) name: String,
    pub(super) config: Option<ServerConfig>,
    pub(super) status: McpServerStatus,
    pub(super) log: Arc<LogTail>,
    pub(super) tools: Vec<Arc<McpTool>>,
    pub(super) prompts: Vec<McpPromptInfo>,
    pub(super) resources: Vec<McpResource>,
    /// The connected server declared the `resources` capability in
    /// `initialize` and its resources/list has not answered yet: the
    /// resource tools are declared meanwhile, and use waits for the list.
    pub(super) resources_pending: bool,
    /// Connected, and its prompts and resources are still being listed.
    pub(super) listing: bool,
    pub(super) conn: Option<Arc<Connection>>,
    pub(super) run: Option<CancellationToken>,
    pub(super) generation: u64,
    /// The `WWW-Authenticate` header of the latest 401 (seeds discovery).
    pub(super) challenge: Option<String>,
}

impl Slot {
    /// A server as its settings entry, the filter and the enablement file
    /// leave it before any start: invalid entries are in `error`, blocked
    /// ones in `blocked`, disabled ones in `disabled`.
    pub(super) fn new(entry: &ServerEntry, options: &McpOptions) -> Self {
        let (config, state, error) = match &entry.config {
            Err(reason) => (
                None,
                McpServerState::Error,
                Some(format!("invalid settings entry: {reason}")),
            ),
            Ok(config) => match options.filter.blocked_reason(&entry.name) {
                Some(reason) => (Some(config.clone()), McpServerState::Blocked, Some(reason)),
                None if options.enablement.is_disabled(&entry.name) => (
                    Some(config.clone()),
                    McpServerState::Disabled,
                    Some(format!(
                        "Server '{}' is disabled. Enable it to start it.",
                        entry.name
                    )),
                ),
                None => (Some(config.clone()), McpServerState::Disconnected, None),
            },
        };
        if let Some(error) = &error
            && state == McpServerState::Error
        {
            warn!(server = %entry.name, "{error}");
        }
        Slot {
            name: entry.name.clone(),
            status: McpServerStatus {
                name: entry.name.clone(),
                state,
                transport: config.as_ref().map(|c| c.transport.kind()),
                trust: config.as_ref().is_some_and(|c| c.trust),
                description: config.as_ref().and_then(|c| c.description.clone()),
                tools: 0,
                tool_list: Vec::new(),
                prompts: 0,
                resources: 0,
                error,
                latency_ms: None,
                restarts: 0,
                auth_url: None,
            },
            config,
            log: Arc::new(LogTail::new()),
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            resources_pending: false,
            listing: false,
            conn: None,
            run: None,
            generation: 0,
            challenge: None,
        }
    }

    /// The URL of an HTTP or SSE server (what its sign-in is stored under).
    pub(super) fn remote_url(&self) -> Option<&str> {
        match &self.config.as_ref()?.transport {
            TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => Some(url),
            TransportConfig::Stdio { .. } => None,
        }
    }

    /// Why the server cannot be used as configured: its status's reason.
    pub(super) fn unavailable(&self) -> McpError {
        McpError::Unavailable(self.status.error.clone().unwrap_or_default())
    }
}

pub(super) struct Inner {
    pub(super) options: McpOptions,
    pub(super) slots: Mutex<Vec<Slot>>,
    pub(super) events: broadcast::Sender<McpEvent>,
    pub(super) discovery: watch::Sender<McpDiscoveryState>,
    pub(super) pending: Mutex<HashSet<String>>,
    pub(super) http: OnceLock<Result<reqwest::Client, String>>,
    pub(super) stopped: CancellationToken,
    /// Bumped whenever the tools or resources on offer change.
    pub(super) tools_generation: AtomicU64,
    /// Bumped whenever a server's resource list arrives or is given up
    /// (see [`McpManager::wait_resources`]).
    pub(super) resources_listed: watch::Sender<u64>,
    pub(super) started: AtomicBool,
    /// The runtime `start` ran on. Restarts, enabling and stops come from
    /// callers that may not be on a Tokio thread (a desktop app's
    /// synchronous IPC commands run on the UI thread), so the servers'
    /// tasks are spawned here rather than on "the current runtime".
    pub(super) runtime: OnceLock<tokio::runtime::Handle>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stopped.cancel();
    }
}

impl Inner {
    pub(super) fn lock(&self) -> MutexGuard<'_, Vec<Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn lock_pending(&self) -> MutexGuard<'_, HashSet<String>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn emit(&self, event: McpEvent) {
        if event == McpEvent::ToolsChanged {
            self.tools_generation.fetch_add(1, Ordering::SeqCst);
        }
        let _ = self.events.send(event);
    }

    pub(super) fn emit_status(&self, slot: &Slot) {
        self.emit(McpEvent::Status(slot.status.clone()));
    }

    pub(super) fn set_discovery(&self, state: McpDiscoveryState) {
        let changed = self.discovery.send_if_modified(|current| {
            let changed = *current != state;
            *current = state;
            changed
        });
        if changed {
            self.emit(McpEvent::Discovery(state));
        }
    }

    /// A server's first attempt after a start is over.
    pub(super) fn finish_pending(&self, name: &str) {
        let mut pending = self.lock_pending();
        if pending.remove(name) && pending.is_empty() {
            drop(pending);
            self.set_discovery(McpDiscoveryState::Completed);
        }
    }

    pub(super) fn start_slot(self: &Arc<Self>, slot: &mut Slot) {
        let Some(config) = slot.config.clone() else {
            return;
        };
        if self.stopped.is_cancelled() {
            return;
        }
        slot.generation += 1;
        let run = self.stopped.child_token();
        slot.run = Some(run.clone());
        self.lock_pending().insert(slot.name.clone());
        self.set_discovery(McpDiscoveryState::InProgress);
        let inner = self.clone();
        let name = slot.name.clone();
        let log = slot.log.clone();
        let generation = slot.generation;
        self.spawn(async move {
            supervise(&inner, &name, generation, &config, log, run).await;
        });
    }

    /// Spawns a server task on the manager's runtime (see `runtime`), or on
    /// the current one before `start`. Without either there is nowhere to
    /// run it: logged, not a panic.
    pub(super) fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let handle = self
            .runtime
            .get()
            .cloned()
            .or_else(|| tokio::runtime::Handle::try_current().ok());
        match handle {
            Some(handle) => {
                handle.spawn(task);
            }
            None => tracing::error!("no Tokio runtime to run an MCP server task on; skipped"),
        }
    }

    /// Stops whatever runs for `slot` and puts it in `state`.
    pub(super) fn stop_slot(&self, slot: &mut Slot, state: McpServerState, error: Option<String>) {
        slot.generation += 1;
        if let Some(run) = slot.run.take() {
            run.cancel();
        }
        if let Some(conn) = slot.conn.take() {
            self.spawn(async move { conn.close(STOP_GRACE).await });
        }
        let had_tools = self.clear_offer(slot);
        slot.status.state = state;
        slot.status.error = error;
        slot.status.auth_url = None;
        self.emit_status(slot);
        if had_tools {
            self.emit(McpEvent::ToolsChanged);
        }
        self.finish_pending(&slot.name);
    }

    /// Announces every server's log growth as [`McpEvent::LogChanged`]:
    /// the first new line at once, then at most one event per
    /// [`LOG_EVENT_INTERVAL`] (lines written meanwhile are covered by the
    /// next one).
    pub(super) fn follow_logs(self: &Arc<Self>) {
        let logs: Vec<(String, watch::Receiver<u64>)> = self
            .lock()
            .iter()
            .map(|slot| (slot.name.clone(), slot.log.subscribe()))
            .collect();
        for (name, mut changes) in logs {
            let weak = Arc::downgrade(self);
            let stopped = self.stopped.clone();
            self.spawn(async move {
                loop {
                    tokio::select! {
                        _ = stopped.cancelled() => return,
                        changed = changes.changed() => if changed.is_err() { return },
                    }
                    match weak.upgrade() {
                        Some(inner) => inner.emit(McpEvent::LogChanged(name.clone())),
                        None => return,
                    }
                    tokio::select! {
                        _ = stopped.cancelled() => return,
                        _ = tokio::time::sleep(LOG_EVENT_INTERVAL) => {}
                    }
                }
            });
        }
    }

    /// Marks the slot's resource list as outstanding or not, waking
    /// [`McpManager::wait_resources`] when that changes.
    pub(super) fn set_resources_pending(&self, slot: &mut Slot, pending: bool) {
        if slot.resources_pending != pending {
            slot.resources_pending = pending;
            self.resources_listed.send_modify(|n| *n += 1);
        }
    }

    /// Forgets what the slot's server offered (it stopped or its connection
    /// ended). Returns whether it offered tools or resources, i.e. whether
    /// [`McpEvent::ToolsChanged`] is due.
    pub(super) fn clear_offer(&self, slot: &mut Slot) -> bool {
        let had = !slot.tools.is_empty() || !slot.resources.is_empty() || slot.resources_pending;
        slot.listing = false;
        slot.tools.clear();
        slot.prompts.clear();
        slot.resources.clear();
        self.set_resources_pending(slot, false);
        slot.status.tools = 0;
        slot.status.tool_list.clear();
        slot.status.prompts = 0;
        slot.status.resources = 0;
        had
    }

    /// Runs `f` on the slot if it still belongs to `generation`.
    pub(super) fn update<R>(
        &self,
        name: &str,
        generation: u64,
        f: impl FnOnce(&mut Slot) -> R,
    ) -> Option<R> {
        let mut slots = self.lock();
        let slot = slots
            .iter_mut()
            .find(|s| s.name == name && s.generation == generation)?;
        Some(f(slot))
    }

    pub(super) fn set_state(
        &self,
        name: &str,
        generation: u64,
        state: McpServerState,
        error: Option<String>,
    ) {
        self.update(name, generation, |slot| {
            slot.status.state = state;
            slot.status.error = error;
            self.emit_status(slot);
        });
    }
}
