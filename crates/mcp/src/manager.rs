//! All MCP servers of a session: starting them in parallel, discovery,
//! status, calls, restarts after crashes, and the user's restart and
//! enable/disable requests.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use gd_protocol::{
    McpDiscoveryState, McpPromptArgument, McpPromptInfo, McpServerState, McpServerStatus,
    McpToolInfo,
};
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::auth::{AuthChallenge, is_auth_required, needs_auth_message, sign_in_lost_message};
use crate::client::{self, ConnectError, Connection, Discovered, Handler, Notice, error_text};
use crate::config::{ServerConfig, ServerEntry, ServerFilter, TransportConfig};
use crate::enablement::{Enablement, enablement_file};
use crate::env::server_environment;
use crate::log::{LogTail, NOTE_PREFIX};
use crate::names::{declared_schema, declared_tool_name, has_valid_types};
use crate::oauth::{McpOAuth, OAuthError};
use crate::transport::sse::{SseClientTransport, SseTransportError};
use crate::transport::stdio;

/// How long a stopped server may take to exit before it is killed.
const STOP_GRACE: Duration = Duration::from_millis(1500);

/// How long a remote server has to answer the `ping` that checks it is
/// still there after a failed request.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// At most one [`McpEvent::LogChanged`] per server in this time: a chatty
/// server's stderr must not flood the UI, which re-reads the tail per event.
pub const LOG_EVENT_INTERVAL: Duration = Duration::from_millis(250);

/// Restarts after a crash: `initial`, doubling up to `max`, at most
/// `max_attempts` in a row (a server that stayed up for `stable` starts
/// counting again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    pub initial: Duration,
    pub max: Duration,
    pub max_attempts: u32,
    pub stable: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(30),
            max_attempts: 5,
            stable: Duration::from_secs(60),
        }
    }
}

impl RestartPolicy {
    /// The wait before restart number `attempt` (1-based).
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(16));
        self.initial.saturating_mul(factor).min(self.max)
    }
}

/// What the manager is built from.
#[derive(Clone)]
pub struct McpOptions {
    pub servers: Vec<ServerEntry>,
    pub filter: ServerFilter,
    /// The session's workspace directories: offered as roots; the first is
    /// the default working directory of stdio servers.
    pub workspace_dirs: Vec<PathBuf>,
    pub enablement: Enablement,
    /// OAuth sign-in for HTTP servers; `None` = off (a 401 only says the
    /// server needs credentials).
    pub oauth: Option<McpOAuth>,
    pub client_name: String,
    pub client_version: String,
    pub restart: RestartPolicy,
    /// The environment stdio servers start from (before sanitising);
    /// `None` = this process's.
    pub process_env: Option<Vec<(String, String)>>,
}

impl std::fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpOptions")
            .field("servers", &self.servers)
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

impl McpOptions {
    /// Options for `servers` (the `mcpServers` object) with defaults: no
    /// filter, no persistence, no OAuth.
    pub fn new(servers: &Map<String, Value>, workspace_dirs: Vec<PathBuf>) -> Self {
        Self {
            servers: crate::config::parse_servers(servers),
            filter: ServerFilter::default(),
            workspace_dirs,
            enablement: Enablement::new(None),
            oauth: None,
            client_name: "gemini-desktop-mcp-client".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            restart: RestartPolicy::default(),
            process_env: None,
        }
    }

    /// Options from merged settings: `mcpServers`, `mcp.allowed`,
    /// `mcp.excluded`, and the enablement file under `home`.
    pub fn from_settings(
        settings: &gd_settings::Settings,
        workspace_dirs: Vec<PathBuf>,
        home: Option<&Path>,
    ) -> Self {
        let mut options = Self::new(&settings.mcp_servers, workspace_dirs);
        options.filter = ServerFilter {
            allowed: settings.mcp.allowed.clone(),
            excluded: settings.mcp.excluded.clone(),
        };
        options.enablement = Enablement::new(home.map(enablement_file));
        options.oauth = Some(McpOAuth::shared(settings, home));
        options
    }
}

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

/// Why a request to a server failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("MCP server '{0}' is not configured")]
    UnknownServer(String),
    #[error("{0}")]
    NotConnected(String),
    #[error("cancelled")]
    Cancelled,
    #[error("timed out after {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("{0}")]
    Failed(String),
}

struct Slot {
    name: String,
    config: Option<ServerConfig>,
    status: McpServerStatus,
    log: Arc<LogTail>,
    tools: Vec<Arc<McpTool>>,
    prompts: Vec<McpPromptInfo>,
    resources: Vec<McpResource>,
    /// The connected server declared the `resources` capability in
    /// `initialize` and its resources/list has not answered yet: the
    /// resource tools are declared meanwhile, and use waits for the list.
    resources_pending: bool,
    /// Connected, and its prompts and resources are still being listed.
    listing: bool,
    conn: Option<Arc<Connection>>,
    run: Option<CancellationToken>,
    generation: u64,
    /// The `WWW-Authenticate` header of the latest 401 (seeds discovery).
    challenge: Option<String>,
}

/// What signing in to one server needs.
struct OAuthTarget {
    oauth: McpOAuth,
    url: String,
    config: crate::config::OAuthConfig,
    challenge: Option<String>,
}

struct Inner {
    options: McpOptions,
    slots: Mutex<Vec<Slot>>,
    events: broadcast::Sender<McpEvent>,
    discovery: watch::Sender<McpDiscoveryState>,
    pending: Mutex<HashSet<String>>,
    http: OnceLock<Result<reqwest::Client, String>>,
    stopped: CancellationToken,
    /// Bumped whenever the tools or resources on offer change.
    tools_generation: AtomicU64,
    /// Bumped whenever a server's resource list arrives or is given up
    /// (see [`McpManager::wait_resources`]).
    resources_listed: watch::Sender<u64>,
    started: AtomicBool,
    /// The runtime `start` ran on. Restarts, enabling and stops come from
    /// callers that may not be on a Tokio thread (a desktop app's
    /// synchronous IPC commands run on the UI thread), so the servers'
    /// tasks are spawned here rather than on "the current runtime".
    runtime: OnceLock<tokio::runtime::Handle>,
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
            .map(|entry| {
                let (config, state, error) = match &entry.config {
                    Err(reason) => (
                        None,
                        McpServerState::Error,
                        Some(format!("invalid settings entry: {reason}")),
                    ),
                    Ok(config) => match options.filter.blocked_reason(&entry.name) {
                        Some(reason) => {
                            (Some(config.clone()), McpServerState::Blocked, Some(reason))
                        }
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
            })
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

    /// Calls `tool` (the server's name of it) and returns the raw result
    /// as JSON. Cancelling sends `notifications/cancelled` to the server.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
    ) -> Result<Value, CallError> {
        let (conn, timeout) = self.inner.connection(server)?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(args) = args {
            params = params.with_arguments(args);
        }
        let started = Instant::now();
        let result = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(CallError::Cancelled),
            result = tokio::time::timeout(timeout, conn.peer.call_tool(params)) => result,
        };
        self.inner.record_latency(server, started.elapsed());
        match result {
            Err(_) => {
                self.inner.check_alive(&conn);
                Err(CallError::Timeout(timeout))
            }
            Ok(Err(e)) => Err(self.inner.request_error(server, &conn, &e)),
            Ok(Ok(result)) => serde_json::to_value(result)
                .map_err(|e| CallError::Failed(format!("unreadable result: {e}"))),
        }
    }

    /// Reads a resource; the raw `resources/read` result as JSON.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<Value, CallError> {
        let (conn, timeout) = self.inner.connection(server)?;
        let started = Instant::now();
        let result = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(CallError::Cancelled),
            result = tokio::time::timeout(timeout, conn.peer.read_resource(ReadResourceRequestParams::new(uri))) => result,
        };
        self.inner.record_latency(server, started.elapsed());
        match result {
            Err(_) => {
                self.inner.check_alive(&conn);
                Err(CallError::Timeout(timeout))
            }
            Ok(Err(e)) => Err(self.inner.request_error(server, &conn, &e)),
            Ok(Ok(result)) => serde_json::to_value(result)
                .map_err(|e| CallError::Failed(format!("unreadable result: {e}"))),
        }
    }

    /// Gets a prompt with `arguments`; its messages' text, one message per
    /// paragraph.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<String, CallError> {
        let (conn, timeout) = self.inner.connection(server)?;
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(
                arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            );
        }
        let started = Instant::now();
        let result = tokio::time::timeout(timeout, conn.peer.get_prompt(params)).await;
        self.inner.record_latency(server, started.elapsed());
        let result = match result {
            Err(_) => return Err(CallError::Timeout(timeout)),
            Ok(Err(e)) => return Err(self.inner.request_error(server, &conn, &e)),
            Ok(Ok(result)) => serde_json::to_value(result).unwrap_or_default(),
        };
        let texts: Vec<String> = result
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|message| {
                let content = message.get("content")?;
                match content.get("type").and_then(Value::as_str)? {
                    "text" => content.get("text")?.as_str().map(str::to_owned),
                    "resource" => content
                        .get("resource")?
                        .get("text")?
                        .as_str()
                        .map(str::to_owned),
                    _ => None,
                }
            })
            .collect();
        Ok(texts.join("\n\n"))
    }

    /// Stops a server (if running) and starts it again.
    pub fn restart(&self, server: &str) -> Result<(), String> {
        let mut slots = self.inner.lock();
        let slot = slots
            .iter_mut()
            .find(|s| s.name == server)
            .ok_or_else(|| format!("MCP server '{server}' is not configured"))?;
        match slot.status.state {
            McpServerState::Blocked | McpServerState::Disabled => {
                return Err(slot.status.error.clone().unwrap_or_default());
            }
            _ if slot.config.is_none() => {
                return Err(slot.status.error.clone().unwrap_or_default());
            }
            _ => {}
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

    /// Signs in to the HTTP server `server` with OAuth: discovery, client
    /// registration, the browser, the loopback redirect, tokens into the
    /// store; then restarts the server with them. The server is
    /// `authenticating` meanwhile (its status carries the authorization
    /// URL). A second request for the same server joins the running
    /// sign-in; sign-ins for other servers wait their turn. On failure the
    /// server goes back to `needs_auth` with the reason.
    pub async fn authenticate(&self, server: &str) -> Result<(), String> {
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
                let message = match &error {
                    OAuthError::Cancelled => "Sign-in cancelled.".to_owned(),
                    other => format!("Sign-in failed: {other}"),
                };
                self.inner.after_failed_login(server, &message);
                Err(message)
            }
        }
    }

    /// [`McpManager::authenticate`] in the background (for callers that
    /// cannot wait: the status events tell how it goes). Errors that stop
    /// it from starting are returned.
    pub fn start_authentication(&self, server: &str) -> Result<(), String> {
        self.inner.oauth_target(server)?;
        let this = self.clone();
        let name = server.to_owned();
        self.inner.spawn(async move {
            let _ = this.authenticate(&name).await;
        });
        Ok(())
    }

    /// Stops the sign-in running for `server`. Returns whether one ran.
    pub fn cancel_authentication(&self, server: &str) -> Result<bool, String> {
        let target = self.inner.oauth_target(server)?;
        Ok(target.oauth.cancel(&target.url))
    }

    /// Forgets the stored sign-in to `server` and restarts it (it then
    /// needs signing in again).
    pub async fn sign_out(&self, server: &str) -> Result<(), String> {
        let target = self.inner.oauth_target(server)?;
        target.oauth.sign_out(&target.url).await?;
        self.restart(server)
    }

    /// Turns a server off (stopping it) or on (starting it), and records
    /// the choice in the enablement file.
    pub fn set_enabled(&self, server: &str, enabled: bool) -> Result<(), String> {
        let mut slots = self.inner.lock();
        let slot = slots
            .iter_mut()
            .find(|s| s.name == server)
            .ok_or_else(|| format!("MCP server '{server}' is not configured"))?;
        self.inner
            .options
            .enablement
            .set_enabled(server, enabled)
            .map_err(|e| format!("cannot save the MCP server enablement: {e}"))?;
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
    }

    /// Stops every server: SIGTERM to stdio servers' process groups at once,
    /// then up to `grace` for them to exit before SIGKILL.
    pub async fn shutdown(&self, grace: Duration) {
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
        futures::future::join_all(conns.iter().map(|c| c.close(grace))).await;
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stopped.cancel();
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Vec<Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_pending(&self) -> MutexGuard<'_, HashSet<String>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn emit(&self, event: McpEvent) {
        if event == McpEvent::ToolsChanged {
            self.tools_generation.fetch_add(1, Ordering::SeqCst);
        }
        let _ = self.events.send(event);
    }

    fn emit_status(&self, slot: &Slot) {
        self.emit(McpEvent::Status(slot.status.clone()));
    }

    fn set_discovery(&self, state: McpDiscoveryState) {
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
    fn finish_pending(&self, name: &str) {
        let mut pending = self.lock_pending();
        if pending.remove(name) && pending.is_empty() {
            drop(pending);
            self.set_discovery(McpDiscoveryState::Completed);
        }
    }

    fn start_slot(self: &Arc<Self>, slot: &mut Slot) {
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
    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
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
    fn stop_slot(&self, slot: &mut Slot, state: McpServerState, error: Option<String>) {
        slot.generation += 1;
        if let Some(run) = slot.run.take() {
            run.cancel();
        }
        if let Some(conn) = slot.conn.take() {
            self.spawn(async move { conn.close(STOP_GRACE).await });
        }
        let had_tools =
            !slot.tools.is_empty() || !slot.resources.is_empty() || slot.resources_pending;
        slot.listing = false;
        slot.tools.clear();
        slot.prompts.clear();
        slot.resources.clear();
        self.set_resources_pending(slot, false);
        slot.status.tools = 0;
        slot.status.tool_list.clear();
        slot.status.prompts = 0;
        slot.status.resources = 0;
        slot.status.state = state;
        slot.status.error = error;
        slot.status.auth_url = None;
        self.emit_status(slot);
        if had_tools {
            self.emit(McpEvent::ToolsChanged);
        }
        self.finish_pending(&slot.name);
    }

    /// What signing in to `server` needs, or why it cannot.
    fn oauth_target(&self, server: &str) -> Result<OAuthTarget, String> {
        let slots = self.lock();
        let slot = slots
            .iter()
            .find(|s| s.name == server)
            .ok_or_else(|| format!("MCP server '{server}' is not configured"))?;
        let config = slot
            .config
            .as_ref()
            .ok_or_else(|| slot.status.error.clone().unwrap_or_default())?;
        if matches!(
            slot.status.state,
            McpServerState::Disabled | McpServerState::Blocked
        ) {
            return Err(slot.status.error.clone().unwrap_or_default());
        }
        let url = match &config.transport {
            TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => url.clone(),
            TransportConfig::Stdio { .. } => {
                return Err(format!(
                    "MCP server '{server}' runs as a local process (stdio): there is nothing to sign in to"
                ));
            }
        };
        if !config.oauth.is_enabled() {
            return Err(format!(
                "OAuth sign-in is turned off for MCP server '{server}' (`oauth.enabled: false` in its settings entry)"
            ));
        }
        let oauth = self
            .options
            .oauth
            .clone()
            .ok_or_else(|| "OAuth sign-in for MCP servers is not available here".to_owned())?;
        Ok(OAuthTarget {
            oauth,
            url,
            config: config.oauth.clone(),
            challenge: slot.challenge.clone(),
        })
    }

    /// Restarts servers waiting in `needs_auth` when a sign-in to their URL
    /// completes elsewhere (another session, the CLI in this process).
    fn follow_sign_ins(self: &Arc<Self>, mut sign_ins: broadcast::Receiver<String>) {
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
                    let same = matches!(
                        slot.config.as_ref().map(|c| &c.transport),
                        Some(TransportConfig::Http { url: u, .. } | TransportConfig::Sse { url: u, .. }) if *u == url
                    );
                    if same && slot.status.state == McpServerState::NeedsAuth {
                        info!(server = %slot.name, "signed in elsewhere; connecting");
                        inner.stop_slot(slot, McpServerState::Disconnected, None);
                        inner.start_slot(slot);
                    }
                }
            }
        });
    }

    /// Announces every server's log growth as [`McpEvent::LogChanged`]:
    /// the first new line at once, then at most one event per
    /// [`LOG_EVENT_INTERVAL`] (lines written meanwhile are covered by the
    /// next one).
    fn follow_logs(self: &Arc<Self>) {
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

    /// Stops a sign-in under way for the slot's server, if any.
    fn cancel_sign_in(&self, slot: &Slot) {
        if slot.status.state != McpServerState::Authenticating {
            return;
        }
        if let (Some(oauth), Some(config)) = (&self.options.oauth, &slot.config)
            && let TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } =
                &config.transport
        {
            oauth.cancel(url);
        }
    }

    /// The server waits for the browser (`auth_url` once known).
    fn set_authenticating(&self, server: &str, auth_url: Option<&str>) {
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
    fn restart_after_login(self: &Arc<Self>, server: &str) {
        let mut slots = self.lock();
        if let Some(slot) = slots.iter_mut().find(|s| s.name == server)
            && slot.status.state == McpServerState::Authenticating
        {
            self.stop_slot(slot, McpServerState::Disconnected, None);
            slot.status.restarts = 0;
            self.start_slot(slot);
        }
    }

    fn after_failed_login(&self, server: &str, message: &str) {
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
    fn sign_in_lost(&self, server: &str) -> String {
        let mut slots = self.lock();
        let Some(slot) = slots.iter_mut().find(|s| s.name == server) else {
            return format!("MCP server '{server}' needs signing in again");
        };
        let url = match slot.config.as_ref().map(|c| &c.transport) {
            Some(TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. }) => {
                url.clone()
            }
            _ => String::new(),
        };
        let message = sign_in_lost_message(server, &url);
        warn!(server, "{message}");
        self.stop_slot(slot, McpServerState::NeedsAuth, Some(message.clone()));
        message
    }

    /// Marks the slot's resource list as outstanding or not, waking
    /// [`McpManager::wait_resources`] when that changes.
    fn set_resources_pending(&self, slot: &mut Slot, pending: bool) {
        if slot.resources_pending != pending {
            slot.resources_pending = pending;
            self.resources_listed.send_modify(|n| *n += 1);
        }
    }

    /// Runs `f` on the slot if it still belongs to `generation`.
    fn update<R>(&self, name: &str, generation: u64, f: impl FnOnce(&mut Slot) -> R) -> Option<R> {
        let mut slots = self.lock();
        let slot = slots
            .iter_mut()
            .find(|s| s.name == name && s.generation == generation)?;
        Some(f(slot))
    }

    fn set_state(&self, name: &str, generation: u64, state: McpServerState, error: Option<String>) {
        self.update(name, generation, |slot| {
            slot.status.state = state;
            slot.status.error = error;
            self.emit_status(slot);
        });
    }

    fn connection(&self, server: &str) -> Result<(Arc<Connection>, Duration), CallError> {
        let slots = self.lock();
        let slot = slots
            .iter()
            .find(|s| s.name == server)
            .ok_or_else(|| CallError::UnknownServer(server.to_owned()))?;
        match (&slot.conn, &slot.config) {
            (Some(conn), Some(config)) if !conn.is_closed() => Ok((conn.clone(), config.timeout)),
            _ => {
                let state = serde_json::to_value(slot.status.state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let mut message = format!("MCP server '{server}' is not connected ({state})");
                if let Some(error) = &slot.status.error {
                    message.push_str(&format!(": {error}"));
                }
                Err(CallError::NotConnected(message))
            }
        }
    }

    fn record_latency(&self, server: &str, elapsed: Duration) {
        let mut slots = self.lock();
        if let Some(slot) = slots.iter_mut().find(|s| s.name == server) {
            slot.status.latency_ms = Some(elapsed.as_millis() as u64);
            self.emit_status(slot);
        }
    }

    /// After a request to a remote server failed or timed out: checks in
    /// the background that the server still answers (see
    /// [`Connection::probe`]). A stdio server's exit closes its connection
    /// by itself.
    fn check_alive(&self, conn: &Arc<Connection>) {
        if conn.child.is_none() && !conn.is_closed() {
            let conn = conn.clone();
            self.spawn(async move { conn.probe(PROBE_TIMEOUT).await });
        }
    }

    fn request_error(
        &self,
        server: &str,
        conn: &Arc<Connection>,
        error: &rmcp::ServiceError,
    ) -> CallError {
        if is_auth_required(error) {
            return CallError::Failed(self.sign_in_lost(server));
        }
        self.check_alive(conn);
        if conn.is_closed() || matches!(error, rmcp::ServiceError::TransportClosed) {
            let exit = conn
                .child
                .as_ref()
                .and_then(|c| c.exit_status())
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            return CallError::Failed(format!(
                "MCP server '{server}' closed the connection{exit} before answering"
            ));
        }
        CallError::Failed(error_text(error))
    }

    fn http_client(&self) -> Result<reqwest::Client, String> {
        self.http
            .get_or_init(|| {
                gd_gemini::http_client_builder()
                    .connect_timeout(Duration::from_secs(10))
                    .build()
                    .map_err(|e| format!("cannot build the HTTP client: {e}"))
            })
            .clone()
    }

    /// Opens a connection for `config`.
    async fn connect(
        &self,
        name: &str,
        config: &ServerConfig,
        log: &Arc<LogTail>,
        notices: &mpsc::UnboundedSender<Notice>,
    ) -> Result<(Connection, Duration), ConnectError> {
        let handler = || {
            Handler::new(
                &self.options.client_name,
                &self.options.client_version,
                self.options.workspace_dirs.clone(),
                notices.clone(),
                log.clone(),
            )
        };
        let started = Instant::now();
        let conn = match &config.transport {
            TransportConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let process_env = self
                    .options
                    .process_env
                    .clone()
                    .unwrap_or_else(|| std::env::vars().collect());
                let (env, blocked) = server_environment(process_env, env);
                for key in blocked {
                    let line = format!(
                        "{NOTE_PREFIX}not setting {key}: it could inject code into the server process"
                    );
                    warn!(server = name, "{line}");
                    log.push(&line);
                }
                let base = self
                    .options
                    .workspace_dirs
                    .first()
                    .cloned()
                    .or_else(|| std::env::current_dir().ok())
                    .unwrap_or_else(|| PathBuf::from("."));
                let dir = match cwd {
                    Some(cwd) => base.join(cwd),
                    None => base,
                };
                let (transport, child) = stdio::spawn(command, args, &env, &dir, log.clone())
                    .map_err(|e| {
                        ConnectError::Failed(format!(
                            "cannot start `{command}` in {}: {e}",
                            dir.display()
                        ))
                    })?;
                let exit = child.exit_receiver();
                match Connection::open(handler(), transport, Some(child), config.timeout).await {
                    Ok(conn) => conn,
                    Err(ConnectError::Failed(message)) => {
                        // Give the exit status a moment to arrive: it says
                        // more than "connection closed".
                        let mut exit = exit;
                        let status = tokio::time::timeout(
                            Duration::from_millis(300),
                            exit.wait_for(Option::is_some),
                        )
                        .await
                        .ok()
                        .and_then(|r| r.ok().and_then(|s| s.clone()));
                        let mut text = match status {
                            Some(status) => format!(
                                "the server process exited ({status}) before answering `initialize`"
                            ),
                            None => message,
                        };
                        if let Some(line) = log.last_line() {
                            text.push_str(&format!("; last stderr line: {line}"));
                        }
                        return Err(ConnectError::Failed(text));
                    }
                    Err(other) => return Err(other),
                }
            }
            TransportConfig::Http {
                url,
                headers,
                sse_fallback,
            } => {
                let client = self.http_client().map_err(ConnectError::Failed)?;
                let authorized = self.authorized(name, url, &config.oauth, log).await;
                let mut custom = std::collections::HashMap::new();
                for (k, v) in headers {
                    if k.eq_ignore_ascii_case("accept")
                        || k.eq_ignore_ascii_case("mcp-session-id")
                        || k.eq_ignore_ascii_case("last-event-id")
                    {
                        log.push(&format!(
                            "{NOTE_PREFIX}header {k} is set by the transport; ignored"
                        ));
                        continue;
                    }
                    if let (Ok(k), Ok(v)) = (
                        reqwest::header::HeaderName::from_bytes(k.as_bytes()),
                        reqwest::header::HeaderValue::from_str(v),
                    ) {
                        custom.insert(k, v);
                    }
                }
                let transport_config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
                // Signed in: rmcp's AuthClient puts the token on every
                // request, refreshing it before it expires and once more
                // when the server refuses it.
                let opened = match &authorized {
                    Some(auth) => {
                        let transport = StreamableHttpClientTransport::with_client(
                            auth.clone(),
                            transport_config,
                        );
                        Connection::open(handler(), transport, None, config.timeout).await
                    }
                    None => {
                        let transport =
                            StreamableHttpClientTransport::with_client(client, transport_config);
                        Connection::open(handler(), transport, None, config.timeout).await
                    }
                };
                match opened {
                    Ok(conn) => conn,
                    Err(ConnectError::Failed(http_error)) if *sse_fallback => {
                        debug!(server = name, %http_error, "streamable HTTP failed; trying SSE");
                        log.push(&format!(
                            "{NOTE_PREFIX}streamable HTTP failed ({http_error}); trying the SSE transport"
                        ));
                        let token = match &authorized {
                            Some(auth) => auth.get_access_token().await.ok(),
                            None => None,
                        };
                        match self
                            .connect_sse(url, headers, token, config.timeout, handler())
                            .await
                        {
                            Ok(conn) => conn,
                            Err(unauthorized @ ConnectError::Unauthorized { .. }) => {
                                return Err(unauthorized);
                            }
                            Err(ConnectError::Failed(sse_error)) => {
                                return Err(ConnectError::Failed(format!(
                                    "{http_error} (the SSE transport failed too: {sse_error})"
                                )));
                            }
                        }
                    }
                    Err(other) => return Err(other),
                }
            }
            TransportConfig::Sse { url, headers } => {
                let token = match self.authorized(name, url, &config.oauth, log).await {
                    Some(auth) => auth.get_access_token().await.ok(),
                    None => None,
                };
                self.connect_sse(url, headers, token, config.timeout, handler())
                    .await?
            }
        };
        Ok((conn, started.elapsed()))
    }

    /// The stored OAuth sign-in for `url` as an HTTP client that sends
    /// it, when there is one. Problems (discovery down, store locked) are
    /// noted in the server's log: the connection then goes without, and a
    /// 401 says the server needs signing in.
    async fn authorized(
        &self,
        name: &str,
        url: &str,
        config: &crate::config::OAuthConfig,
        log: &LogTail,
    ) -> Option<rmcp::transport::auth::AuthClient<reqwest::Client>> {
        let oauth = self
            .options
            .oauth
            .as_ref()
            .filter(|_| config.is_enabled())?;
        let client = self.http_client().ok()?;
        match oauth.authorized(url, config).await {
            Ok(Some(manager)) => Some(rmcp::transport::auth::AuthClient::new(client, manager)),
            Ok(None) => None,
            Err(e) => {
                let line = format!("{NOTE_PREFIX}OAuth: {e}");
                warn!(server = name, "{line}");
                log.push(&line);
                None
            }
        }
    }

    async fn connect_sse(
        &self,
        url: &str,
        headers: &[(String, String)],
        token: Option<String>,
        timeout: Duration,
        handler: Handler,
    ) -> Result<Connection, ConnectError> {
        let client = self.http_client().map_err(ConnectError::Failed)?;
        let mut map = reqwest::header::HeaderMap::new();
        for (k, v) in headers {
            if let (Ok(k), Ok(v)) = (
                reqwest::header::HeaderName::from_bytes(k.as_bytes()),
                reqwest::header::HeaderValue::from_str(v),
            ) {
                map.insert(k, v);
            }
        }
        if let Some(token) = token
            && let Ok(v) = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
        {
            map.insert(reqwest::header::AUTHORIZATION, v);
        }
        let transport = match tokio::time::timeout(
            timeout,
            SseClientTransport::connect(client, url, map),
        )
        .await
        {
            Err(_) => {
                return Err(ConnectError::Failed(format!(
                    "the SSE stream did not open within {} ms",
                    timeout.as_millis()
                )));
            }
            Ok(Err(SseTransportError::Unauthorized { www_authenticate })) => {
                return Err(ConnectError::Unauthorized { www_authenticate });
            }
            Ok(Err(e)) => return Err(ConnectError::Failed(e.to_string())),
            Ok(Ok(t)) => t,
        };
        Connection::open(handler, transport, None, timeout).await
    }

    /// Turns discovered lists into the slot's tools, prompts and resources.
    fn apply_discovery(&self, slot: &mut Slot, found: &Discovered) {
        let config = slot.config.clone();
        let trust = config.as_ref().is_some_and(|c| c.trust);
        if let Some(tools) = &found.tools {
            let mut seen = HashSet::new();
            slot.tools = tools
                .iter()
                .filter(|tool| {
                    config
                        .as_ref()
                        .is_none_or(|c| c.tool_enabled(tool.name.as_ref()))
                })
                .filter(|tool| {
                    let schema = Value::Object((*tool.input_schema).clone());
                    if has_valid_types(&schema) {
                        return true;
                    }
                    let line = format!(
                        "{NOTE_PREFIX}skipping tool '{}': its input schema lacks type information",
                        tool.name
                    );
                    warn!(server = %slot.name, "{line}");
                    slot.log.push(&line);
                    false
                })
                .filter(|tool| seen.insert(tool.name.to_string()))
                .map(|tool| {
                    Arc::new(McpTool {
                        server: slot.name.clone(),
                        name: tool.name.to_string(),
                        declared_name: declared_tool_name(&slot.name, &tool.name),
                        title: tool.title.clone(),
                        description: tool.description.as_deref().unwrap_or("").to_owned(),
                        schema: declared_schema(&tool.input_schema),
                        read_only_hint: tool
                            .annotations
                            .as_ref()
                            .and_then(|a| a.read_only_hint)
                            .unwrap_or(false),
                        trust,
                    })
                })
                .collect();
        }
        if let Some(prompts) = &found.prompts {
            slot.prompts = prompts
                .iter()
                .map(|p| McpPromptInfo {
                    server: slot.name.clone(),
                    name: p.name.clone(),
                    description: p.description.clone(),
                    arguments: p
                        .arguments
                        .iter()
                        .flatten()
                        .map(|a| McpPromptArgument {
                            name: a.name.clone(),
                            description: a.description.clone(),
                            required: a.required.unwrap_or(false),
                        })
                        .collect(),
                })
                .collect();
        }
        if let Some(resources) = &found.resources {
            slot.resources = resources
                .iter()
                .map(|r| McpResource {
                    server: slot.name.clone(),
                    uri: r.uri.clone(),
                    name: r.name.clone(),
                    description: r.description.clone(),
                    mime_type: r.mime_type.clone(),
                })
                .collect();
        }
        slot.status.tools = slot.tools.len() as u32;
        slot.status.tool_list = slot
            .tools
            .iter()
            .map(|t| McpToolInfo {
                name: t.name.clone(),
                declared_name: t.declared_name.clone(),
                description: t.description.clone(),
            })
            .collect();
        slot.status.prompts = slot.prompts.len() as u32;
        slot.status.resources = slot.resources.len() as u32;
    }
}

/// Re-lists what the server said changed.
async fn refresh(
    conn: &Connection,
    notices: &HashSet<Notice>,
    timeout: Duration,
    log: &LogTail,
) -> Discovered {
    let tools = async {
        if notices.contains(&Notice::Tools) {
            match client::list_tools(&conn.peer, timeout).await {
                Ok(t) => Some(t),
                Err(e) => {
                    log.push(&format!("{NOTE_PREFIX}{e}"));
                    None
                }
            }
        } else {
            None
        }
    };
    let prompts = async {
        if notices.contains(&Notice::Prompts) {
            client::list_prompts(&conn.peer, timeout).await.ok()
        } else {
            None
        }
    };
    let resources = async {
        if notices.contains(&Notice::Resources) {
            client::list_resources(&conn.peer, timeout).await.ok()
        } else {
            None
        }
    };
    let (tools, prompts, resources) = tokio::join!(tools, prompts, resources);
    Discovered {
        tools,
        prompts,
        resources,
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn drain(rx: &mut mpsc::UnboundedReceiver<Notice>, into: &mut HashSet<Notice>) {
    while let Ok(notice) = rx.try_recv() {
        into.insert(notice);
    }
}

/// The life of one server after a start: connect, discover, serve
/// notifications, and restart with backoff after a crash.
async fn supervise(
    inner: &Arc<Inner>,
    name: &str,
    generation: u64,
    config: &ServerConfig,
    log: Arc<LogTail>,
    run: CancellationToken,
) {
    let policy = inner.options.restart;
    let mut attempt = 0u32;
    let mut ever_connected = false;
    loop {
        inner.set_state(name, generation, McpServerState::Connecting, None);
        let (notice_tx, mut notices) = mpsc::unbounded_channel();
        let connected = tokio::select! {
            _ = run.cancelled() => return,
            result = inner.connect(name, config, &log, &notice_tx) => result,
        };
        let error = match connected {
            Err(ConnectError::Unauthorized { www_authenticate }) => {
                let challenge = AuthChallenge {
                    server: name.to_owned(),
                    url: match &config.transport {
                        TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => {
                            url.clone()
                        }
                        TransportConfig::Stdio { command, .. } => command.clone(),
                    },
                    www_authenticate,
                };
                let sign_in = match inner
                    .options
                    .oauth
                    .as_ref()
                    .filter(|_| config.oauth.is_enabled())
                {
                    Some(oauth) => Some(oauth.sign_in_state(&challenge.url).await),
                    None => None,
                };
                let message = needs_auth_message(&challenge, sign_in);
                info!(server = name, "{message}");
                inner.update(name, generation, |slot| {
                    slot.challenge = challenge.www_authenticate.clone();
                    slot.status.state = McpServerState::NeedsAuth;
                    slot.status.error = Some(message);
                    inner.emit_status(slot);
                });
                inner.finish_pending(name);
                return;
            }
            Err(ConnectError::Failed(message)) => message,
            Ok((conn, latency)) => 'connected: {
                // All lists are requested at once, tools first; the server is
                // declared as soon as its tools are known. Prompts and
                // resources follow (the first model request does not wait
                // for them: the resource tools are declared from the
                // `resources` capability, and wait for the list when used).
                let tools_request = match client::send_tools_list(&conn.peer).await {
                    Ok(request) => request,
                    Err(message) => {
                        conn.close(STOP_GRACE).await;
                        break 'connected message;
                    }
                };
                let rest = tokio::spawn(client::list_prompts_and_resources(
                    conn.peer.clone(),
                    config.timeout,
                    log.clone(),
                ));
                let mut rest = AbortOnDrop(rest);
                let listed = tokio::select! {
                    _ = run.cancelled() => {
                        conn.close_now();
                        return;
                    }
                    tools = client::discover_tools(&conn.peer, tools_request, config.timeout) => tools,
                };
                let mut found = match listed {
                    Ok(tools) => Discovered {
                        tools,
                        prompts: None,
                        resources: None,
                    },
                    Err(message) => {
                        conn.close(STOP_GRACE).await;
                        break 'connected message;
                    }
                };
                // Tools that changed while we were listing (servers often
                // register tools right after `initialized`).
                let mut changed = HashSet::new();
                drain(&mut notices, &mut changed);
                if changed.remove(&Notice::Tools) {
                    let again =
                        refresh(&conn, &HashSet::from([Notice::Tools]), config.timeout, &log).await;
                    found.tools = again.tools.or(found.tools);
                }
                // A server that declares resources gets the resource tools
                // now; their use waits for its list (wait_resources).
                let resources_declared = client::offers_resources(&conn.peer);
                let conn = Arc::new(conn);
                let installed = inner.update(name, generation, |slot| {
                    inner.apply_discovery(slot, &found);
                    slot.conn = Some(conn.clone());
                    slot.listing = true;
                    inner.set_resources_pending(slot, resources_declared);
                    slot.status.state = McpServerState::Connected;
                    slot.status.error = None;
                    slot.status.latency_ms = Some(latency.as_millis() as u64);
                    inner.emit_status(slot);
                });
                if installed.is_none() {
                    conn.close_now();
                    return;
                }
                inner.emit(McpEvent::ToolsChanged);
                inner.finish_pending(name);
                info!(
                    server = name,
                    latency_ms = latency.as_millis() as u64,
                    "MCP server connected"
                );
                let has_tools = found.tools.as_ref().is_some_and(|t| !t.is_empty());
                let mut rest_done = false;
                // Prompt/resource changes announced before their lists came.
                let mut deferred = changed;
                ever_connected = true;
                let connected_at = Instant::now();
                loop {
                    tokio::select! {
                        _ = run.cancelled() => return,
                        _ = conn.closed() => break,
                        lists = &mut rest.0, if !rest_done => {
                            rest_done = true;
                            let (prompts, resources) = lists.unwrap_or((None, None));
                            let empty = prompts.as_ref().is_none_or(Vec::is_empty)
                                && resources.as_ref().is_none_or(Vec::is_empty);
                            if empty && !has_tools {
                                conn.close(STOP_GRACE).await;
                                inner.update(name, generation, |slot| {
                                    slot.conn = None;
                                    slot.listing = false;
                                    // Announced before waiters see the list done.
                                    if resources_declared {
                                        inner.emit(McpEvent::ToolsChanged);
                                    }
                                    inner.set_resources_pending(slot, false);
                                });
                                inner.set_state(
                                    name,
                                    generation,
                                    McpServerState::Error,
                                    Some("No prompts, tools, or resources found on the server.".into()),
                                );
                                return;
                            }
                            let mut lists = Discovered { tools: None, prompts, resources };
                            if !deferred.is_empty() {
                                let again = refresh(&conn, &deferred, config.timeout, &log).await;
                                lists.prompts = again.prompts.or(lists.prompts);
                                lists.resources = again.resources.or(lists.resources);
                                deferred.clear();
                            }
                            // Listed (or not offered after all): the
                            // resource tools stay only if there are some.
                            let resources_changed = resources_declared
                                || lists.resources.as_ref().is_some_and(|r| !r.is_empty());
                            inner.update(name, generation, |slot| {
                                inner.apply_discovery(slot, &lists);
                                slot.listing = false;
                                // The new tool set is announced before
                                // wait_resources callers see the list done.
                                if resources_changed {
                                    inner.emit(McpEvent::ToolsChanged);
                                }
                                inner.set_resources_pending(slot, false);
                                inner.emit_status(slot);
                            });
                        }
                        Some(notice) = notices.recv() => {
                            let mut changed = HashSet::from([notice]);
                            drain(&mut notices, &mut changed);
                            let again = refresh(&conn, &changed, config.timeout, &log).await;
                            let tools_changed = again.tools.is_some() || again.resources.is_some();
                            inner.update(name, generation, |slot| {
                                inner.apply_discovery(slot, &again);
                                inner.emit_status(slot);
                            });
                            if tools_changed {
                                inner.emit(McpEvent::ToolsChanged);
                            }
                        }
                    }
                }
                // The connection ended without being asked to: a crash.
                if connected_at.elapsed() >= policy.stable {
                    attempt = 0;
                }
                let status = match &conn.child {
                    Some(child) => {
                        let _ =
                            tokio::time::timeout(Duration::from_millis(300), child.exited()).await;
                        child.exit_status()
                    }
                    None => None,
                };
                let mut message = match (status, conn.failure()) {
                    (Some(status), _) => format!("the server process exited ({status})"),
                    (None, Some(failure)) => failure,
                    (None, None) => "the connection to the server closed".to_owned(),
                };
                if let Some(line) = log.last_line() {
                    message.push_str(&format!("; last stderr line: {line}"));
                }
                warn!(server = name, "{message}");
                let had = inner.update(name, generation, |slot| {
                    slot.conn = None;
                    let had = !slot.tools.is_empty()
                        || !slot.resources.is_empty()
                        || slot.resources_pending;
                    slot.listing = false;
                    inner.set_resources_pending(slot, false);
                    slot.tools.clear();
                    slot.prompts.clear();
                    slot.resources.clear();
                    slot.status.tools = 0;
                    slot.status.tool_list.clear();
                    slot.status.prompts = 0;
                    slot.status.resources = 0;
                    had
                });
                if had == Some(true) {
                    inner.emit(McpEvent::ToolsChanged);
                }
                message
            }
        };
        fail_or_retry(
            inner,
            name,
            generation,
            &run,
            &policy,
            &mut attempt,
            ever_connected,
            error,
        )
        .await;
        if !ever_connected || run.is_cancelled() || attempt > policy.max_attempts {
            return;
        }
    }
}

/// After a failure: a server that never connected stays in `error`; one
/// that crashed waits for its next restart (or gives up).
#[allow(clippy::too_many_arguments)]
async fn fail_or_retry(
    inner: &Arc<Inner>,
    name: &str,
    generation: u64,
    run: &CancellationToken,
    policy: &RestartPolicy,
    attempt: &mut u32,
    ever_connected: bool,
    error: String,
) {
    if !ever_connected {
        inner.set_state(name, generation, McpServerState::Error, Some(error));
        inner.finish_pending(name);
        return;
    }
    *attempt += 1;
    if *attempt > policy.max_attempts {
        inner.set_state(
            name,
            generation,
            McpServerState::Error,
            Some(format!(
                "{error}; gave up after {} restarts (restart it to try again)",
                policy.max_attempts
            )),
        );
        return;
    }
    let delay = policy.delay(*attempt);
    inner.set_state(
        name,
        generation,
        McpServerState::Error,
        Some(format!(
            "{error}; restarting in {} ms (attempt {} of {})",
            delay.as_millis(),
            attempt,
            policy.max_attempts
        )),
    );
    tokio::select! {
        _ = run.cancelled() => {}
        _ = tokio::time::sleep(delay) => {
            inner.update(name, generation, |slot| slot.status.restarts += 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RestartPolicy::default();
        let delays: Vec<u64> = (1..=7).map(|a| p.delay(a).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30]);
    }
}
