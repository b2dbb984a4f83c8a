//! Requests to a connected server: tool calls, resource reads and prompts
//! all go one way ([`Inner::request`]): the server's connection and
//! timeout, cancellation, the latency in its status, and one reading of
//! failures (a lost sign-in, a closed connection, a server that stopped
//! answering).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::McpManager;
use super::state::Inner;
use crate::auth::is_auth_required;
use crate::client::{Connection, error_text};
use crate::error::CallError;

/// How long a remote server has to answer the `ping` that checks it is
/// still there after a failed request.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

impl McpManager {
    /// Calls `tool` (the server's name of it) and returns the raw result
    /// as JSON. Cancelling sends `notifications/cancelled` to the server.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
    ) -> Result<Value, CallError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(args) = args {
            params = params.with_arguments(args);
        }
        let result = self
            .inner
            .request(server, Some(cancel), |conn| async move {
                conn.peer.call_tool(params).await
            })
            .await?;
        to_json(result)
    }

    /// Reads a resource; the raw `resources/read` result as JSON.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<Value, CallError> {
        let params = ReadResourceRequestParams::new(uri);
        let result = self
            .inner
            .request(server, Some(cancel), |conn| async move {
                conn.peer.read_resource(params).await
            })
            .await?;
        to_json(result)
    }

    /// Gets a prompt with `arguments`; its messages' text, one message per
    /// paragraph.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<String, CallError> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(
                arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            );
        }
        let result = self
            .inner
            .request(server, None, |conn| async move {
                conn.peer.get_prompt(params).await
            })
            .await?;
        let result = serde_json::to_value(result).unwrap_or_default();
        Ok(prompt_text(&result))
    }
}

/// A raw result as JSON.
fn to_json(result: impl serde::Serialize) -> Result<Value, CallError> {
    serde_json::to_value(result).map_err(|e| CallError::Failed(format!("unreadable result: {e}")))
}

/// The text of a `prompts/get` result's messages (text and embedded text
/// resources), one message per paragraph.
fn prompt_text(result: &Value) -> String {
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
    texts.join("\n\n")
}

impl Inner {
    /// Sends one request to `server` with its configured timeout: `send`
    /// gets the connection. With `cancel`, cancelling drops the request
    /// (rmcp then tells the server). The latency lands in the status;
    /// failures are read by [`Inner::request_error`], and a timeout checks
    /// that the server is still there.
    async fn request<T, F>(
        &self,
        server: &str,
        cancel: Option<&CancellationToken>,
        send: impl FnOnce(Arc<Connection>) -> F,
    ) -> Result<T, CallError>
    where
        F: Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let (conn, timeout) = self.connection(server)?;
        let started = Instant::now();
        let request = tokio::time::timeout(timeout, send(conn.clone()));
        let result = match cancel {
            Some(cancel) => tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(CallError::Cancelled),
                result = request => result,
            },
            None => request.await,
        };
        self.record_latency(server, started.elapsed());
        match result {
            Err(_) => {
                self.check_alive(&conn);
                Err(CallError::Timeout(timeout))
            }
            Ok(Err(e)) => Err(self.request_error(server, &conn, &e)),
            Ok(Ok(result)) => Ok(result),
        }
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
}
