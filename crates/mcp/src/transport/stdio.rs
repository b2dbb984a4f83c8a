//! stdio servers: a child process in its own process group, JSON-RPC on
//! its stdin/stdout, stderr captured line by line into the server's log.
//!
//! The child is owned here rather than by rmcp's `TokioChildProcess` so
//! that its exit status is known (for the crash message) and the whole
//! process group (the server and anything it started) can be signalled
//! synchronously, even while the process is exiting.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::log::LogTail;

pub type StdioTransport = AsyncRwTransport<RoleClient, ChildStdout, ChildStdin>;

/// A running server process.
#[derive(Debug)]
pub struct ChildServer {
    pid: u32,
    exit: watch::Receiver<Option<String>>,
}

impl ChildServer {
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// How the process ended (`exit status 1`, `signal 9`), once it has.
    pub fn exit_status(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    /// Where the exit description arrives.
    pub fn exit_receiver(&self) -> watch::Receiver<Option<String>> {
        self.exit.clone()
    }

    /// Waits until the process has exited.
    pub async fn exited(&self) {
        let mut exit = self.exit.clone();
        let _ = exit.wait_for(Option::is_some).await;
    }

    /// Sends `signal` to the server's process group (the server and every
    /// process it started that did not leave the group).
    pub fn signal_group(&self, signal: i32) {
        #[cfg(unix)]
        {
            let Ok(pgid) = i32::try_from(self.pid) else {
                return;
            };
            // SAFETY: killpg only sends a signal; a group that is gone
            // yields ESRCH, which is ignored.
            unsafe {
                libc::killpg(pgid, signal);
            }
        }
        #[cfg(not(unix))]
        let _ = signal;
    }

    /// Stops the server: SIGTERM to its group, SIGKILL after `grace`.
    pub async fn terminate(&self, grace: std::time::Duration) {
        #[cfg(unix)]
        {
            self.signal_group(libc::SIGTERM);
            if tokio::time::timeout(grace, self.exited()).await.is_err() {
                self.signal_group(libc::SIGKILL);
            }
        }
        #[cfg(not(unix))]
        let _ = grace;
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        // A connection dropped without `terminate` (or a process exiting):
        // ask whatever is left of the group to go.
        #[cfg(unix)]
        if self.exit_status().is_none() {
            self.signal_group(libc::SIGTERM);
        }
    }
}

/// Starts `command` with `args` in `cwd` with exactly `env`; under bubblewrap when `sandboxed`
/// (prepared for that command line: bubblewrap is then the group's leader).
pub fn spawn(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
    log: Arc<LogTail>,
    sandboxed: Option<&gd_sandbox::Prepared>,
) -> std::io::Result<(StdioTransport, ChildServer)> {
    let mut cmd = match sandboxed {
        Some(prepared) => Command::from(prepared.command()),
        None => {
            let mut cmd = Command::new(command);
            cmd.args(args);
            cmd
        }
    };
    cmd.env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd.spawn()?;
    let pid = child.id().unwrap_or_default();
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("no stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout"))?;
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        tracing::debug!(target: "mcp_stderr", pid, "{line}");
                        log.push(&line);
                    }
                    Ok(None) => break,
                    // Not UTF-8: keep reading what can be read.
                    Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                        log.push("[a line that is not UTF-8]");
                    }
                    Err(_) => break,
                }
            }
        });
    }
    let (exit_tx, exit) = watch::channel(None);
    tokio::spawn(async move {
        let status = match child.wait().await {
            Ok(status) => describe(status),
            Err(e) => format!("unknown exit ({e})"),
        };
        let _ = exit_tx.send(Some(status));
    });
    Ok((
        AsyncRwTransport::new_client(stdout, stdin),
        ChildServer { pid, exit },
    ))
}

fn describe(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return format!("killed by signal {signal}");
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => status.to_string(),
    }
}
