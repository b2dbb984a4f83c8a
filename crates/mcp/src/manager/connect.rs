//! Opening a connection to a server, per transport: stdio (a process in
//! its own group, with a sanitised environment), streamable HTTP (with the
//! stored OAuth sign-in, falling back to legacy SSE when the entry allows),
//! and SSE.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::sync::mpsc;
use tracing::{debug, warn};

use super::state::Inner;
use crate::client::{ConnectError, Connection, Handler, Notice};
use crate::config::{OAuthConfig, ServerConfig, TransportConfig};
use crate::env::server_environment;
use crate::log::{LogTail, NOTE_PREFIX};
use crate::transport::sse::{SseClientTransport, SseTransportError};
use crate::transport::stdio;

impl Inner {
    pub(super) fn http_client(&self) -> Result<reqwest::Client, String> {
        self.http
            .get_or_init(|| {
                gd_http::http_client_builder()
                    .connect_timeout(Duration::from_secs(10))
                    .build()
                    .map_err(|e| format!("cannot build the HTTP client: {e}"))
            })
            .clone()
    }

    /// Opens a connection for `config`; also how long that took.
    pub(super) async fn connect(
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
                let dir = self.working_dir(cwd.as_deref());
                let env = self.stdio_environment(name, env, log);
                let confined = if config.sandbox {
                    Some(self.confine(command, args, &dir)?)
                } else {
                    None
                };
                let (transport, child) =
                    stdio::spawn(command, args, &env, &dir, log.clone(), confined.as_ref())
                        .map_err(|e| {
                            ConnectError::Failed(format!(
                                "cannot start `{command}` in {}: {e}",
                                dir.display()
                            ))
                        })?;
                let exit = child.exit_receiver();
                match Connection::open(handler(), transport, Some(child), config.timeout).await {
                    Ok(conn) => Ok(conn),
                    Err(error) => Err(with_exit_status(error, exit, log).await),
                }
            }
            TransportConfig::Http {
                url,
                headers,
                sse_fallback,
            } => {
                self.connect_http(name, url, headers, *sse_fallback, config, log, handler)
                    .await
            }
            TransportConfig::Sse { url, headers } => {
                let token = match self.authorized(name, url, &config.oauth, log).await {
                    Some(auth) => auth.get_access_token().await.ok(),
                    None => None,
                };
                self.connect_sse(url, headers, token, config.timeout, handler())
                    .await
            }
        }?;
        Ok((conn, started.elapsed()))
    }

    /// `command args` in the sandbox of the session's policy (`sandbox: true`); refused when
    /// no sandbox can start here: the server is not started unconfined.
    fn confine(
        &self,
        command: &str,
        args: &[String],
        dir: &Path,
    ) -> Result<gd_sandbox::Prepared, ConnectError> {
        let sandbox = gd_sandbox::Sandbox::detect().map_err(|unavailable| {
            ConnectError::Failed(format!(
                "not started: its entry says `sandbox: true` and the sandbox cannot start here. \
                 {unavailable}"
            ))
        })?;
        // Its own folder (`cwd`) is readable, as everything is, and writable only when it is
        // in the workspace.
        let mut policy = self.options.sandbox.clone();
        policy.writable.retain(|w| w.is_dir());
        policy.extra_writable.retain(|w| w.is_dir());
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        sandbox
            .prepare(&policy, Path::new(command), &args, dir)
            .map_err(|e| ConnectError::Failed(format!("not started in the sandbox: {e}")))
    }

    /// A stdio server's working directory: `cwd` of its entry, relative to
    /// the first workspace directory (else this process's).
    fn working_dir(&self, cwd: Option<&Path>) -> PathBuf {
        let base = self
            .options
            .workspace_dirs
            .first()
            .cloned()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        match cwd {
            Some(cwd) => base.join(cwd),
            None => base,
        }
    }

    /// A stdio server's environment: the process's, sanitised, with the
    /// entry's `env`. Variables that could inject code are left out, and
    /// the server's log says so.
    fn stdio_environment(
        &self,
        name: &str,
        env: &[(String, String)],
        log: &LogTail,
    ) -> BTreeMap<String, String> {
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
        env
    }

    /// Streamable HTTP, with the stored sign-in when there is one; the SSE
    /// transport when that fails and the entry allows it.
    #[allow(clippy::too_many_arguments)]
    async fn connect_http(
        &self,
        name: &str,
        url: &str,
        headers: &[(String, String)],
        sse_fallback: bool,
        config: &ServerConfig,
        log: &Arc<LogTail>,
        handler: impl Fn() -> Handler,
    ) -> Result<Connection, ConnectError> {
        let client = self.http_client().map_err(ConnectError::Failed)?;
        let authorized = self.authorized(name, url, &config.oauth, log).await;
        let transport_config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(custom_headers(headers, log));
        // Signed in: rmcp's AuthClient puts the token on every
        // request, refreshing it before it expires and once more
        // when the server refuses it.
        let opened = match &authorized {
            Some(auth) => {
                let transport =
                    StreamableHttpClientTransport::with_client(auth.clone(), transport_config);
                Connection::open(handler(), transport, None, config.timeout).await
            }
            None => {
                let transport =
                    StreamableHttpClientTransport::with_client(client, transport_config);
                Connection::open(handler(), transport, None, config.timeout).await
            }
        };
        let http_error = match opened {
            Err(ConnectError::Failed(http_error)) if sse_fallback => http_error,
            other => return other,
        };
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
            Err(ConnectError::Failed(sse_error)) => Err(ConnectError::Failed(format!(
                "{http_error} (the SSE transport failed too: {sse_error})"
            ))),
            other => other,
        }
    }

    /// The stored OAuth sign-in for `url` as an HTTP client that sends
    /// it, when there is one. Problems (discovery down, store locked) are
    /// noted in the server's log: the connection then goes without, and a
    /// 401 says the server needs signing in.
    async fn authorized(
        &self,
        name: &str,
        url: &str,
        config: &OAuthConfig,
        log: &LogTail,
    ) -> Option<AuthClient<reqwest::Client>> {
        let oauth = self
            .options
            .oauth
            .as_ref()
            .filter(|_| config.is_enabled())?;
        let client = self.http_client().ok()?;
        match oauth.authorized(url, config).await {
            Ok(Some(manager)) => Some(AuthClient::new(client, manager)),
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
            if let Some((k, v)) = header(k, v) {
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
}

/// A `connect` failure of a stdio server, with its exit status when it
/// arrives within a moment (it says more than "connection closed") and the
/// last line of its stderr.
async fn with_exit_status(
    error: ConnectError,
    mut exit: tokio::sync::watch::Receiver<Option<String>>,
    log: &LogTail,
) -> ConnectError {
    let ConnectError::Failed(message) = error else {
        return error;
    };
    let status = tokio::time::timeout(Duration::from_millis(300), exit.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|r| r.ok().and_then(|s| s.clone()));
    let mut text = match status {
        Some(status) => {
            format!("the server process exited ({status}) before answering `initialize`")
        }
        None => message,
    };
    if let Some(line) = log.last_line() {
        text.push_str(&format!("; last stderr line: {line}"));
    }
    ConnectError::Failed(text)
}

/// The entry's `headers` for streamable HTTP. The transport sets `Accept`,
/// `Mcp-Session-Id` and `Last-Event-Id` itself: those are ignored, and the
/// server's log says so.
fn custom_headers(
    headers: &[(String, String)],
    log: &LogTail,
) -> std::collections::HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue> {
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
        if let Some((k, v)) = header(k, v) {
            custom.insert(k, v);
        }
    }
    custom
}

/// One header of the entry; `None` when it is not a valid header.
fn header(
    name: &str,
    value: &str,
) -> Option<(reqwest::header::HeaderName, reqwest::header::HeaderValue)> {
    Some((
        reqwest::header::HeaderName::from_bytes(name.as_bytes()).ok()?,
        reqwest::header::HeaderValue::from_str(value).ok()?,
    ))
}
