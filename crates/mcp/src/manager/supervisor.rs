//! The life of one server after a start: connect, discover, serve its
//! notifications, and restart with backoff after a crash.
//!
//! One task per server and start ([`supervise`]); it owns nothing but its
//! connection and writes to the server's slot only while the slot still
//! carries its `generation` (a restart, a stop or a sign-in bumps it, and
//! the old task's writes then land nowhere). Each attempt is a sequence of
//! named steps ([`Supervised::connect`], [`Supervised::discover_tools`],
//! [`Supervised::install`], [`Supervised::serve`],
//! [`Supervised::after_crash`]); a step that ends the attempt returns an
//! [`Attempt`] as its error, so the sequence reads top to bottom.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gd_protocol::McpServerState;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::McpEvent;
use super::discovery::refresh;
use super::options::RestartPolicy;
use super::state::{Inner, STOP_GRACE};
use crate::auth::{AuthChallenge, needs_auth_message};
use crate::client::{self, ConnectError, Connection, Discovered, Notice};
use crate::config::{ServerConfig, TransportConfig};
use crate::log::LogTail;

/// How an attempt to run the server ended.
enum Attempt {
    /// Nothing more to do: stopped, waiting for a sign-in, or nothing on
    /// offer.
    Stop,
    /// The attempt failed before the server was in use.
    Failed(String),
    /// The connection ended without being asked to; `stable` when it had
    /// been up long enough to count restarts from zero again.
    Crashed { message: String, stable: bool },
}

/// Prompts and resources, listed in the background after the tools.
type RestLists = client::PromptsAndResources;

/// The server's first lists, and what it announced while they came.
struct FirstDiscovery {
    found: Discovered,
    /// Prompt/resource changes announced before their lists came.
    deferred: HashSet<Notice>,
    /// The prompts and resources, still being listed.
    rest: AbortOnDrop<RestLists>,
}

/// One server's run, shared by its steps.
struct Supervised<'a> {
    inner: &'a Arc<Inner>,
    name: &'a str,
    generation: u64,
    config: &'a ServerConfig,
    log: Arc<LogTail>,
    run: CancellationToken,
}

/// Connects, discovers and serves `name` until it is stopped, waits for a
/// sign-in, or crashed more often than the restart policy allows.
pub(super) async fn supervise(
    inner: &Arc<Inner>,
    name: &str,
    generation: u64,
    config: &ServerConfig,
    log: Arc<LogTail>,
    run: CancellationToken,
) {
    let server = Supervised {
        inner,
        name,
        generation,
        config,
        log,
        run,
    };
    let policy = inner.options.restart;
    let mut attempt = 0u32;
    let mut ever_connected = false;
    loop {
        let error = match server.attempt().await {
            Attempt::Stop => return,
            Attempt::Failed(message) => message,
            Attempt::Crashed { message, stable } => {
                ever_connected = true;
                if stable {
                    attempt = 0;
                }
                message
            }
        };
        server
            .fail_or_retry(&policy, &mut attempt, ever_connected, error)
            .await;
        if !ever_connected || server.run.is_cancelled() || attempt > policy.max_attempts {
            return;
        }
    }
}

impl Supervised<'_> {
    /// One connection, from `connecting` to its end.
    async fn attempt(&self) -> Attempt {
        self.inner
            .set_state(self.name, self.generation, McpServerState::Connecting, None);
        let (notice_tx, mut notices) = mpsc::unbounded_channel();
        match self.run_connection(&notice_tx, &mut notices).await {
            Ok(attempt) | Err(attempt) => attempt,
        }
    }

    async fn run_connection(
        &self,
        notice_tx: &mpsc::UnboundedSender<Notice>,
        notices: &mut mpsc::UnboundedReceiver<Notice>,
    ) -> Result<Attempt, Attempt> {
        let (conn, latency) = self.connect(notice_tx).await?;
        let first = self.discover_tools(&conn, notices).await?;
        // A server that declares resources gets the resource tools now;
        // their use waits for its list (wait_resources).
        let resources_declared = client::offers_resources(&conn.peer);
        let conn = Arc::new(conn);
        self.install(&conn, &first.found, resources_declared, latency)?;
        let has_tools = first.found.tools.as_ref().is_some_and(|t| !t.is_empty());
        let connected_at = Instant::now();
        self.serve(&conn, notices, first, has_tools, resources_declared)
            .await?;
        let stable = connected_at.elapsed() >= self.inner.options.restart.stable;
        let message = self.after_crash(&conn).await;
        Ok(Attempt::Crashed { message, stable })
    }

    /// Opens the connection. A server that wants credentials goes to
    /// `needs_auth` and the attempt ends there.
    async fn connect(
        &self,
        notice_tx: &mpsc::UnboundedSender<Notice>,
    ) -> Result<(Connection, Duration), Attempt> {
        let connected = tokio::select! {
            _ = self.run.cancelled() => return Err(Attempt::Stop),
            result = self.inner.connect(self.name, self.config, &self.log, notice_tx) => result,
        };
        match connected {
            Ok(connected) => Ok(connected),
            Err(ConnectError::Failed(message)) => Err(Attempt::Failed(message)),
            Err(ConnectError::Unauthorized { www_authenticate }) => {
                self.needs_auth(www_authenticate).await;
                Err(Attempt::Stop)
            }
        }
    }

    /// The server answered 401: `needs_auth`, saying how to sign in (and
    /// why again, when its sign-in was rejected).
    async fn needs_auth(&self, www_authenticate: Option<String>) {
        let challenge = AuthChallenge {
            server: self.name.to_owned(),
            url: match &self.config.transport {
                TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => url.clone(),
                TransportConfig::Stdio { command, .. } => command.clone(),
            },
            www_authenticate,
        };
        let sign_in = match self
            .inner
            .options
            .oauth
            .as_ref()
            .filter(|_| self.config.oauth.is_enabled())
        {
            Some(oauth) => Some(oauth.sign_in_state(&challenge.url).await),
            None => None,
        };
        let message = needs_auth_message(&challenge, sign_in);
        info!(server = self.name, "{message}");
        self.inner.update(self.name, self.generation, |slot| {
            slot.challenge = challenge.www_authenticate.clone();
            slot.status.state = McpServerState::NeedsAuth;
            slot.status.error = Some(message);
            self.inner.emit_status(slot);
        });
        self.inner.finish_pending(self.name);
    }

    /// All lists are requested at once, tools first; the server is
    /// declared as soon as its tools are known. Prompts and resources
    /// follow (the first model request does not wait for them: the
    /// resource tools are declared from the `resources` capability, and
    /// wait for the list when used).
    async fn discover_tools(
        &self,
        conn: &Connection,
        notices: &mut mpsc::UnboundedReceiver<Notice>,
    ) -> Result<FirstDiscovery, Attempt> {
        let timeout = self.config.timeout;
        let tools_request = match client::send_tools_list(&conn.peer).await {
            Ok(request) => request,
            Err(message) => {
                conn.close(STOP_GRACE).await;
                return Err(Attempt::Failed(message));
            }
        };
        let rest = AbortOnDrop(tokio::spawn(client::list_prompts_and_resources(
            conn.peer.clone(),
            timeout,
            self.log.clone(),
        )));
        let listed = tokio::select! {
            _ = self.run.cancelled() => {
                conn.close_now();
                return Err(Attempt::Stop);
            }
            tools = client::discover_tools(&conn.peer, tools_request, timeout) => tools,
        };
        let mut found = match listed {
            Ok(tools) => Discovered {
                tools,
                prompts: None,
                resources: None,
            },
            Err(message) => {
                conn.close(STOP_GRACE).await;
                return Err(Attempt::Failed(message));
            }
        };
        // Tools that changed while we were listing (servers often register
        // tools right after `initialized`).
        let mut changed = HashSet::new();
        drain(notices, &mut changed);
        if changed.remove(&Notice::Tools) {
            let again = refresh(conn, &HashSet::from([Notice::Tools]), timeout, &self.log).await;
            found.tools = again.tools.or(found.tools);
        }
        Ok(FirstDiscovery {
            found,
            deferred: changed,
            rest,
        })
    }

    /// Puts the connection and its tools into the server's slot:
    /// `connected`. Ends the attempt when the slot moved on meanwhile.
    fn install(
        &self,
        conn: &Arc<Connection>,
        found: &Discovered,
        resources_declared: bool,
        latency: Duration,
    ) -> Result<(), Attempt> {
        let inner = self.inner;
        let installed = inner.update(self.name, self.generation, |slot| {
            inner.apply_discovery(slot, found);
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
            return Err(Attempt::Stop);
        }
        inner.emit(McpEvent::ToolsChanged);
        inner.finish_pending(self.name);
        info!(
            server = self.name,
            latency_ms = latency.as_millis() as u64,
            "MCP server connected"
        );
        Ok(())
    }

    /// Serves the connection until it closes (`Ok`), is stopped, or turns
    /// out to offer nothing at all: the prompt and resource lists as they
    /// arrive, and re-listing on `list_changed` notifications.
    async fn serve(
        &self,
        conn: &Arc<Connection>,
        notices: &mut mpsc::UnboundedReceiver<Notice>,
        first: FirstDiscovery,
        has_tools: bool,
        resources_declared: bool,
    ) -> Result<(), Attempt> {
        let FirstDiscovery {
            mut deferred,
            mut rest,
            ..
        } = first;
        let mut rest_done = false;
        loop {
            tokio::select! {
                _ = self.run.cancelled() => return Err(Attempt::Stop),
                _ = conn.closed() => return Ok(()),
                lists = &mut rest.0, if !rest_done => {
                    rest_done = true;
                    let lists = lists.unwrap_or((None, None));
                    self.lists_arrived(conn, lists, &mut deferred, has_tools, resources_declared)
                        .await?;
                }
                Some(notice) = notices.recv() => {
                    let mut changed = HashSet::from([notice]);
                    drain(notices, &mut changed);
                    self.relist(conn, &changed).await;
                }
            }
        }
    }

    /// The prompts and resources came (or failed): into the slot, with
    /// what changed meanwhile listed again. A server with no tools,
    /// prompts or resources at all is closed and in `error`.
    async fn lists_arrived(
        &self,
        conn: &Connection,
        (prompts, resources): RestLists,
        deferred: &mut HashSet<Notice>,
        has_tools: bool,
        resources_declared: bool,
    ) -> Result<(), Attempt> {
        let inner = self.inner;
        let empty = prompts.as_ref().is_none_or(Vec::is_empty)
            && resources.as_ref().is_none_or(Vec::is_empty);
        if empty && !has_tools {
            conn.close(STOP_GRACE).await;
            inner.update(self.name, self.generation, |slot| {
                slot.conn = None;
                slot.listing = false;
                // Announced before waiters see the list done.
                if resources_declared {
                    inner.emit(McpEvent::ToolsChanged);
                }
                inner.set_resources_pending(slot, false);
            });
            inner.set_state(
                self.name,
                self.generation,
                McpServerState::Error,
                Some("No prompts, tools, or resources found on the server.".into()),
            );
            return Err(Attempt::Stop);
        }
        let mut lists = Discovered {
            tools: None,
            prompts,
            resources,
        };
        if !deferred.is_empty() {
            let again = refresh(conn, deferred, self.config.timeout, &self.log).await;
            lists.prompts = again.prompts.or(lists.prompts);
            lists.resources = again.resources.or(lists.resources);
            deferred.clear();
        }
        // Listed (or not offered after all): the resource tools stay only
        // if there are some.
        let resources_changed =
            resources_declared || lists.resources.as_ref().is_some_and(|r| !r.is_empty());
        inner.update(self.name, self.generation, |slot| {
            inner.apply_discovery(slot, &lists);
            slot.listing = false;
            // The new tool set is announced before wait_resources callers
            // see the list done.
            if resources_changed {
                inner.emit(McpEvent::ToolsChanged);
            }
            inner.set_resources_pending(slot, false);
            inner.emit_status(slot);
        });
        Ok(())
    }

    /// The server said its tools, prompts or resources changed: list
    /// those again.
    async fn relist(&self, conn: &Connection, changed: &HashSet<Notice>) {
        let again = refresh(conn, changed, self.config.timeout, &self.log).await;
        let tools_changed = again.tools.is_some() || again.resources.is_some();
        self.inner.update(self.name, self.generation, |slot| {
            self.inner.apply_discovery(slot, &again);
            self.inner.emit_status(slot);
        });
        if tools_changed {
            self.inner.emit(McpEvent::ToolsChanged);
        }
    }

    /// The connection ended without being asked to: what the server
    /// offered is gone. Returns why it ended (the exit status, the
    /// transport's failure, the last stderr line).
    async fn after_crash(&self, conn: &Connection) -> String {
        let status = match &conn.child {
            Some(child) => {
                let _ = tokio::time::timeout(Duration::from_millis(300), child.exited()).await;
                child.exit_status()
            }
            None => None,
        };
        let mut message = match (status, conn.failure()) {
            (Some(status), _) => format!("the server process exited ({status})"),
            (None, Some(failure)) => failure,
            (None, None) => "the connection to the server closed".to_owned(),
        };
        if let Some(line) = self.log.last_line() {
            message.push_str(&format!("; last stderr line: {line}"));
        }
        warn!(server = self.name, "{message}");
        let had = self.inner.update(self.name, self.generation, |slot| {
            slot.conn = None;
            self.inner.clear_offer(slot)
        });
        if had == Some(true) {
            self.inner.emit(McpEvent::ToolsChanged);
        }
        message
    }

    /// After a failure: a server that never connected stays in `error`;
    /// one that crashed waits for its next restart (or gives up).
    async fn fail_or_retry(
        &self,
        policy: &RestartPolicy,
        attempt: &mut u32,
        ever_connected: bool,
        error: String,
    ) {
        let (inner, name, generation) = (self.inner, self.name, self.generation);
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
            _ = self.run.cancelled() => {}
            _ = tokio::time::sleep(delay) => {
                inner.update(name, generation, |slot| slot.status.restarts += 1);
            }
        }
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
