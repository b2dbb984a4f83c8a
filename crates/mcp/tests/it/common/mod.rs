//! Finding the real MCP servers the tests run, and small helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gd_mcp::{McpManager, McpOptions, RestartPolicy};
use gd_protocol::{McpServerState, McpServerStatus};
use serde_json::{Value, json};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn installed(var: &str, default: PathBuf) -> PathBuf {
    let path = std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
    assert!(
        path.exists(),
        "{} not found: run scripts/install-mcp-test-deps.sh (or scripts/install-deps.sh --test), or set {var}",
        path.display()
    );
    path
}

/// The python with `mcp==2.3.0` (scripts/install-mcp-test-deps.sh).
pub fn python() -> PathBuf {
    installed(
        "GD_TEST_MCP_PYTHON",
        repo_root().join("target/test-deps/venv-mcp/bin/python"),
    )
}

/// server-everything's entry point (scripts/install-mcp-test-deps.sh).
pub fn everything_js() -> PathBuf {
    installed(
        "GD_TEST_MCP_EVERYTHING",
        repo_root().join(
            "target/test-deps/mcp-node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        ),
    )
}

pub fn fixture_server() -> PathBuf {
    repo_root().join("tests/fixtures/mcp/fixture_server.py")
}

/// The server that pages its tools and resources (low-level SDK API).
pub fn paged_server() -> PathBuf {
    repo_root().join("tests/fixtures/mcp/paged_server.py")
}

/// A stdio entry running the paged server.
pub fn paged_stdio(extra: Value) -> Value {
    let mut entry = json!({
        "command": python(),
        "args": [paged_server()],
        "timeout": 60000
    });
    if let (Value::Object(entry), Value::Object(extra)) = (&mut entry, extra) {
        entry.extend(extra);
    }
    entry
}

/// A stdio entry running the fixture server.
pub fn fixture_stdio(extra: Value) -> Value {
    let mut entry = json!({
        "command": python(),
        "args": [fixture_server(), "stdio"],
        "timeout": 60000
    });
    if let (Value::Object(entry), Value::Object(extra)) = (&mut entry, extra) {
        entry.extend(extra);
    }
    entry
}

/// Options for `servers` with fast restarts.
pub fn options(servers: Value, workspace: &Path) -> McpOptions {
    let mut options = McpOptions::new(servers.as_object().unwrap(), vec![workspace.to_path_buf()]);
    options.restart = RestartPolicy {
        initial: Duration::from_millis(200),
        max: Duration::from_secs(1),
        max_attempts: 3,
        stable: Duration::from_secs(60),
    };
    options
}

pub async fn started(options: McpOptions) -> McpManager {
    let manager = McpManager::new(options);
    manager.start();
    tokio::time::timeout(Duration::from_secs(90), manager.wait_discovery())
        .await
        .expect("discovery finishes");
    manager
}

/// Polls until `pred` holds for the server's status.
pub async fn wait_status(
    manager: &McpManager,
    server: &str,
    what: &str,
    pred: impl Fn(&McpServerStatus) -> bool,
) -> McpServerStatus {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let status = manager.status(server).expect("configured");
        if pred(&status) {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {server} to be {what}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn assert_connected(manager: &McpManager, server: &str) -> McpServerStatus {
    let status = manager.status(server).unwrap();
    assert_eq!(
        status.state,
        McpServerState::Connected,
        "{status:?}\nlog: {:?}",
        manager.log(server)
    );
    status
}

/// Runs the fixture server over HTTP or SSE; killed on drop.
pub struct HttpFixture {
    child: std::process::Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl HttpFixture {
    pub fn start(mode: &str) -> Self {
        Self::start_with(mode, None, &[])
    }

    /// On a given port (`None`: a free one), with extra environment.
    pub fn start_with(mode: &str, port: Option<u16>, env: &[(&str, &Path)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let mut command = std::process::Command::new(python());
        command
            .arg(fixture_server())
            .arg(mode)
            .arg(&port_file)
            .stdin(std::process::Stdio::null());
        if let Some(port) = port {
            command.env("FIXTURE_PORT", port.to_string());
        }
        for (k, v) in env {
            command.env(k, v);
        }
        let child = command.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(90);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "the {mode} fixture did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Self {
            child,
            port,
            _dir: dir,
        }
    }
}

impl HttpFixture {
    /// Waits for the server process to end (after its `crash` tool).
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        self.child.wait().unwrap()
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a process is alive (not counting zombies as alive is not
/// possible from here, but our children are reaped).
pub fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}
