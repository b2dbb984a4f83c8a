//! [`FakeGemini`]: an in-process server for tests.
//!
//! The server runs on its own thread with its own tokio runtime, so the
//! handle works the same from plain `#[test]`s and from `#[tokio::test]`s
//! (whose runtime may be single-threaded and busy awaiting the client).

use crate::record::RecordedRequest;
use crate::scenario::{self, Scenario};
use crate::server;
use crate::state::{LogChange, ServerState};
use anyhow::{Context, Result};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A running fake Gemini server on `127.0.0.1`; dropped → shut down.
pub struct FakeGemini {
    addr: SocketAddr,
    state: Arc<ServerState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

fn owned_vars(vars: &[(&str, &str)]) -> Vec<(String, String)> {
    vars.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

impl FakeGemini {
    /// Starts a server with `scenario` (an inline object, a file path string,
    /// or `null` for the default one-step "OK" scenario) on a free port.
    ///
    /// Panics if the port cannot be bound or the scenario is invalid (the
    /// message names the bad field); use [`FakeGemini::try_start`] for a `Result`.
    pub fn start(scenario: Value) -> FakeGemini {
        Self::start_with_vars(scenario, &[])
    }

    /// Like [`FakeGemini::start`], replacing `{{NAME}}` in the scenario's strings.
    pub fn start_with_vars(scenario: Value, vars: &[(&str, &str)]) -> FakeGemini {
        match Self::try_start(scenario, vars) {
            Ok(fake) => fake,
            Err(e) => panic!("fake-gemini: cannot start: {e:#}"),
        }
    }

    /// Fallible start: an invalid scenario or a bind failure is an error.
    pub fn try_start(scenario: Value, vars: &[(&str, &str)]) -> Result<FakeGemini> {
        let scenario = scenario::load(&scenario, &owned_vars(vars))?;
        Self::spawn(scenario)
    }

    fn spawn(scenario: Scenario) -> Result<FakeGemini> {
        // Bind here, not on the server thread, so the port is known (and a
        // failure reported) before `start` returns.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").context("bind 127.0.0.1:0")?;
        listener.set_nonblocking(true).context("set_nonblocking")?;
        let addr = listener.local_addr().context("local_addr")?;
        let state = Arc::new(ServerState::new(scenario, None));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("build tokio runtime")?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread_state = state.clone();
        let thread = std::thread::Builder::new()
            .name(format!("fake-gemini-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => return eprintln!("fake-gemini: cannot register listener: {e}"),
                    };
                    let shutdown = async {
                        let _ = rx.await;
                    };
                    if let Err(e) = server::serve(listener, thread_state, shutdown).await {
                        eprintln!("fake-gemini: server error: {e}");
                    }
                });
                // Ends open connections (hangs, stalled streams) without waiting for them.
                runtime.shutdown_timeout(Duration::from_secs(1));
            })
            .context("spawn server thread")?;
        Ok(FakeGemini {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// All requests recorded since the start or the last reset, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests()
    }

    /// The recorded requests of kind `main` (the agent's chat turns).
    pub fn main_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.kind == "main")
            .collect()
    }

    /// Replaces the scenario and clears the journal and counters (request
    /// numbering for `faults` and `fail_first` starts again at 1).
    /// Panics on an invalid scenario; see [`FakeGemini::try_reset`].
    pub fn reset(&self, scenario: Value, vars: &[(&str, &str)]) {
        if let Err(e) = self.try_reset(scenario, vars) {
            panic!("fake-gemini: invalid scenario: {e:#}");
        }
    }

    /// Fallible reset; on error the previous scenario stays in force.
    pub fn try_reset(&self, scenario: Value, vars: &[(&str, &str)]) -> Result<()> {
        let scenario = scenario::load(&scenario, &owned_vars(vars))?;
        self.state.reset(Some(scenario), LogChange::Keep);
        Ok(())
    }

    /// Also append every request record to this JSONL file (`None` stops logging).
    pub fn set_log(&self, path: Option<std::path::PathBuf>) {
        self.state.set_log(path);
    }

    /// Waits (without polling) until at least `n` requests are recorded.
    /// Returns false on timeout. Requests are recorded as soon as they
    /// arrive, before any scripted delay or hang.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.state.wait_for_requests(n, timeout)
    }
}

impl Drop for FakeGemini {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for FakeGemini {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeGemini")
            .field("addr", &self.addr)
            .finish()
    }
}
