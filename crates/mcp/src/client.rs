//! One connection to one server: the rmcp client service on a transport,
//! the callbacks the server can make (roots, list-changed notifications,
//! log messages) and the discovery of its tools, prompts and resources.

// Roots and logging are deprecated by SEP-2577 (protocol 2026-07-28), but
// the servers people run today speak 2025 protocol versions and use both.
#![allow(deprecated)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProtocolVersion, Root,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, Peer, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::log::{LogTail, NOTE_PREFIX};
use crate::transport::stdio::ChildServer;

/// What a server told us changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Notice {
    Tools,
    Prompts,
    Resources,
}

/// The client side of a connection: what we declare and how we answer the
/// server's requests and notifications.
pub(crate) struct Handler {
    info: ClientConfig,
    roots: Vec<PathBuf>,
    notices: mpsc::UnboundedSender<Notice>,
    log: Arc<LogTail>,
}

impl Handler {
    pub fn new(
        client_name: &str,
        client_version: &str,
        roots: Vec<PathBuf>,
        notices: mpsc::UnboundedSender<Notice>,
        log: Arc<LogTail>,
    ) -> Self {
        // Roots like Gemini CLI: the workspace directories, with
        // notifications when they change.
        let capabilities: ClientCapabilities =
            serde_json::from_value(serde_json::json!({"roots": {"listChanged": true}}))
                .unwrap_or_default();
        let info = ClientConfig::new(
            capabilities,
            Implementation::new(client_name, client_version),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        Self {
            info,
            roots,
            notices,
            log,
        }
    }
}

#[allow(deprecated)]
impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self
            .roots
            .iter()
            .filter_map(|dir| {
                let uri = reqwest::Url::from_directory_path(dir).ok()?;
                let mut root = Root::new(uri.as_str().trim_end_matches('/'));
                if let Some(name) = dir.file_name() {
                    root = root.with_name(name.to_string_lossy());
                }
                Some(root)
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.notices.send(Notice::Tools);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.notices.send(Notice::Prompts);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.notices.send(Notice::Resources);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let data = match &params.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        self.log.push(&format!("[log {level}] {data}"));
    }
}

/// A live connection.
pub(crate) struct Connection {
    pub peer: Peer<RoleClient>,
    service: CancellationToken,
    closed: watch::Receiver<bool>,
    pub child: Option<ChildServer>,
    /// A liveness check runs (see [`Connection::probe`]).
    probing: AtomicBool,
    /// Why the connection was given up, when it was (not when closed).
    failure: Mutex<Option<String>>,
}

impl Connection {
    /// Serves `handler` on `transport` (sends `initialize`). `timeout`
    /// bounds the handshake.
    pub async fn open<T, E, A>(
        handler: Handler,
        transport: T,
        child: Option<ChildServer>,
        timeout: Duration,
    ) -> Result<Connection, ConnectError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let service = CancellationToken::new();
        let running =
            match tokio::time::timeout(timeout, handler.serve_with_ct(transport, service.clone()))
                .await
            {
                Ok(Ok(running)) => running,
                Ok(Err(e)) => {
                    return Err(if e.is_authorization_required() {
                        ConnectError::Unauthorized {
                            www_authenticate: e.auth_challenge().map(str::to_owned),
                        }
                    } else {
                        ConnectError::Failed(error_text(&e))
                    });
                }
                Err(_) => {
                    service.cancel();
                    return Err(ConnectError::Failed(format!(
                        "the server did not answer `initialize` within {} ms",
                        timeout.as_millis()
                    )));
                }
            };
        let peer = running.peer().clone();
        let (closed_tx, closed) = watch::channel(false);
        tokio::spawn(async move {
            let _ = running.waiting().await;
            let _ = closed_tx.send(true);
        });
        Ok(Connection {
            peer,
            service,
            closed,
            child,
            probing: AtomicBool::new(false),
            failure: Mutex::new(None),
        })
    }

    /// Checks that a remote server still answers, after one of its requests
    /// failed: the streamable HTTP transport outlives a dead server (each
    /// request fails on its own, and it quietly starts a new session once
    /// the server is back), so without this a crashed HTTP server would look
    /// connected and never be restarted with its tools re-listed. A `ping`
    /// that fails without any answer from the server ends the connection
    /// (the supervisor then restarts it); one probe at a time.
    pub async fn probe(&self, limit: Duration) {
        if self.child.is_some() || self.is_closed() || self.probing.swap(true, Ordering::SeqCst) {
            return;
        }
        let ping = rmcp::model::ClientRequest::PingRequest(rmcp::model::PingRequest::default());
        let problem = match tokio::time::timeout(limit, self.peer.send_request(ping)).await {
            // Any JSON-RPC answer, even an error, means the server is there.
            Ok(Ok(_)) | Ok(Err(rmcp::ServiceError::McpError(_))) => None,
            Ok(Err(e)) => Some(error_text(&e)),
            Err(_) => Some(format!("no answer to ping within {} ms", limit.as_millis())),
        };
        self.probing.store(false, Ordering::SeqCst);
        if let Some(problem) = problem {
            self.fail(format!("the server stopped answering ({problem})"));
        }
    }

    /// Gives the connection up for `reason` (see [`Connection::failure`]).
    pub fn fail(&self, reason: String) {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
        self.close_now();
    }

    /// Why [`Connection::fail`] gave the connection up.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Resolves when the connection has ended (the server exited or the
    /// stream closed, or [`Connection::close`] was called).
    pub async fn closed(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|c| *c).await;
    }

    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Ends the connection; a child process is terminated with its group.
    pub async fn close(&self, grace: Duration) {
        self.service.cancel();
        if let Some(child) = &self.child {
            child.terminate(grace).await;
        }
    }

    /// Like [`Connection::close`] without waiting: SIGTERM to the group.
    pub fn close_now(&self) {
        self.service.cancel();
        #[cfg(unix)]
        if let Some(child) = &self.child {
            child.signal_group(libc::SIGTERM);
        }
    }
}

/// Why a connection could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConnectError {
    /// HTTP 401: the server needs credentials.
    Unauthorized {
        www_authenticate: Option<String>,
    },
    Failed(String),
}

/// An error and its causes on one line, without repeating nested messages.
pub(crate) fn error_text(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(error);
    while let Some(e) = current {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.retain(|p| !text.contains(p.as_str()));
            parts.push(text);
        }
        current = e.source();
    }
    parts.join(": ")
}

/// What discovery found.
#[derive(Debug, Default, Clone)]
pub(crate) struct Discovered {
    pub tools: Option<Vec<rmcp::model::Tool>>,
    pub prompts: Option<Vec<rmcp::model::Prompt>>,
    pub resources: Option<Vec<rmcp::model::Resource>>,
}

async fn with_timeout<T>(
    timeout: Duration,
    what: &str,
    f: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("{what} failed: {}", error_text(&e))),
        Err(_) => Err(format!("{what} timed out after {} ms", timeout.as_millis())),
    }
}

fn method_not_found(error: &str) -> bool {
    error.contains("-32601") || error.to_ascii_lowercase().contains("method not found")
}

/// Every page of tools/list.
pub(crate) async fn list_tools(
    peer: &Peer<RoleClient>,
    timeout: Duration,
) -> Result<Vec<rmcp::model::Tool>, String> {
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = with_timeout(
            timeout,
            "tools/list",
            peer.list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor))),
        )
        .await?;
        all.extend(page.tools);
        cursor = page.next_cursor;
        if cursor.is_none() {
            return Ok(all);
        }
    }
}

pub(crate) async fn list_prompts(
    peer: &Peer<RoleClient>,
    timeout: Duration,
) -> Result<Vec<rmcp::model::Prompt>, String> {
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = with_timeout(
            timeout,
            "prompts/list",
            peer.list_prompts(Some(PaginatedRequestParams::default().with_cursor(cursor))),
        )
        .await?;
        all.extend(page.prompts);
        cursor = page.next_cursor;
        if cursor.is_none() {
            return Ok(all);
        }
    }
}

pub(crate) async fn list_resources(
    peer: &Peer<RoleClient>,
    timeout: Duration,
) -> Result<Vec<rmcp::model::Resource>, String> {
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = with_timeout(
            timeout,
            "resources/list",
            peer.list_resources(Some(PaginatedRequestParams::default().with_cursor(cursor))),
        )
        .await?;
        all.extend(page.resources);
        cursor = page.next_cursor;
        if cursor.is_none() {
            return Ok(all);
        }
    }
}

fn capabilities(peer: &Peer<RoleClient>) -> rmcp::model::ServerCapabilities {
    peer.peer_info()
        .map(|info| info.capabilities.clone())
        .unwrap_or_default()
}

/// Whether the server declared the `resources` capability in `initialize`.
pub(crate) fn offers_resources(peer: &Peer<RoleClient>) -> bool {
    capabilities(peer).resources.is_some()
}

/// A tools/list request on its way (see [`send_tools_list`]).
pub(crate) struct ToolsRequest(Option<rmcp::service::RequestHandle<RoleClient>>);

/// Sends tools/list (its first page) if the server has tools, and returns
/// once the request is queued, so that requests sent after it are answered
/// after it by servers that work one request at a time.
pub(crate) async fn send_tools_list(peer: &Peer<RoleClient>) -> Result<ToolsRequest, String> {
    if capabilities(peer).tools.is_none() {
        return Ok(ToolsRequest(None));
    }
    let request = rmcp::model::ClientRequest::ListToolsRequest(
        rmcp::model::ListToolsRequest::with_param(PaginatedRequestParams::default()),
    );
    peer.send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .map(|handle| ToolsRequest(Some(handle)))
        .map_err(|e| format!("tools/list failed: {}", error_text(&e)))
}

/// The answer to [`send_tools_list`], with any further pages (`None` when
/// the server has no tools). A failure fails discovery.
pub(crate) async fn discover_tools(
    peer: &Peer<RoleClient>,
    request: ToolsRequest,
    timeout: Duration,
) -> Result<Option<Vec<rmcp::model::Tool>>, String> {
    let Some(handle) = request.0 else {
        return Ok(None);
    };
    let first = match tokio::time::timeout(timeout, handle.await_response()).await {
        Err(_) => {
            return Err(format!(
                "tools/list timed out after {} ms",
                timeout.as_millis()
            ));
        }
        Ok(Err(e)) => {
            let e = format!("tools/list failed: {}", error_text(&e));
            return if method_not_found(&e) {
                Ok(None)
            } else {
                Err(e)
            };
        }
        Ok(Ok(rmcp::model::ServerResult::ListToolsResult(page))) => page,
        Ok(Ok(_)) => return Err("tools/list: unexpected answer".into()),
    };
    let mut tools = first.tools;
    let mut cursor = first.next_cursor;
    while cursor.is_some() {
        let page = with_timeout(
            timeout,
            "tools/list",
            peer.list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor))),
        )
        .await?;
        tools.extend(page.tools);
        cursor = page.next_cursor;
    }
    Ok(Some(tools))
}

pub(crate) type PromptsAndResources = (
    Option<Vec<rmcp::model::Prompt>>,
    Option<Vec<rmcp::model::Resource>>,
);

/// prompts/list and resources/list, as the capabilities say. Failures are
/// logged and leave the list out (`None` = not offered).
pub(crate) async fn list_prompts_and_resources(
    peer: Peer<RoleClient>,
    timeout: Duration,
    log: std::sync::Arc<LogTail>,
) -> PromptsAndResources {
    let caps = capabilities(&peer);
    let logged = |e: String| {
        if !method_not_found(&e) {
            log.push(&format!("{NOTE_PREFIX}{e}"));
        }
    };
    let prompts = async {
        match caps.prompts {
            Some(_) => list_prompts(&peer, timeout).await.map_err(logged).ok(),
            None => None,
        }
    };
    let resources = async {
        match caps.resources {
            Some(_) => list_resources(&peer, timeout).await.map_err(logged).ok(),
            None => None,
        }
    };
    tokio::join!(prompts, resources)
}
