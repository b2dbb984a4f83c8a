//! Running one hook: `bash -c <command>` in the project folder, in a
//! process group of its own, with the event's JSON on standard input.
//!
//! At the time-out the whole group is stopped (SIGTERM, then SIGKILL after
//! a grace period): a hook that started a background child must not leave
//! it running, nor keep the agent waiting on the pipe that child holds open
//! (0.61 kills only the shell, and so waits for such a child).

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tracing::{debug, warn};

/// How much of each output stream is kept.
pub const OUTPUT_CAP: usize = 256 * 1024;
/// Between SIGTERM and SIGKILL at a time-out.
const KILL_GRACE: Duration = Duration::from_millis(1500);

/// What to run and with what.
#[derive(Debug, Clone)]
pub struct Invocation<'a> {
    pub command: &'a str,
    pub input: &'a [u8],
    pub cwd: &'a std::path::Path,
    /// The whole environment of the hook (nothing else is inherited).
    pub env: &'a [(String, String)],
    pub timeout: Duration,
}

/// How the process ended, before its answer is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRun {
    /// `None` when it was killed by a signal, timed out or never started.
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    /// It could not be started (the message says why).
    pub spawn_error: Option<String>,
    pub duration: Duration,
}

/// Runs one hook to its end or its time-out.
pub async fn run(inv: Invocation<'_>) -> RawRun {
    let started = Instant::now();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(inv.command)
        .current_dir(inv.cwd)
        .env_clear()
        .envs(inv.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return RawRun {
                exit_code: None,
                stdout: String::new(),
                stderr: String::new(),
                timed_out: false,
                spawn_error: Some(format!("cannot start the hook: {e}")),
                duration: started.elapsed(),
            };
        }
    };
    let pgid = child.id();
    let mut stdin = child.stdin.take();
    let input = inv.input.to_vec();
    let feed = async move {
        if let Some(stdin) = stdin.as_mut() {
            // A hook that does not read its input closes the pipe early:
            // that is its right, not an error.
            if let Err(e) = stdin.write_all(&input).await {
                debug!(error = %e, "hook did not read all of its input");
            }
        }
        drop(stdin);
    };
    // The readers run as tasks writing into shared buffers, so what the
    // hook wrote before a time-out is still there to show.
    let out_buf = Arc::new(Mutex::new(Vec::new()));
    let err_buf = Arc::new(Mutex::new(Vec::new()));
    let out_task = tokio::spawn(read_capped(child.stdout.take(), out_buf.clone()));
    let err_task = tokio::spawn(read_capped(child.stderr.take(), err_buf.clone()));
    let work = async {
        let (_, status) = tokio::join!(feed, child.wait());
        // The shell may be gone while a child it left holds the pipes.
        let _ = tokio::join!(out_task, err_task);
        status
    };
    let (exit_code, timed_out) = match tokio::time::timeout(inv.timeout, work).await {
        Ok(status) => (status.ok().and_then(|s| s.code()), false),
        Err(_) => {
            warn!(
                command = inv.command,
                timeout_ms = inv.timeout.as_millis() as u64,
                "hook timed out; stopping its process group"
            );
            if let Some(pgid) = pgid {
                stop_group(pgid as libc::pid_t, &mut child).await;
            }
            (None, true)
        }
    };
    RawRun {
        exit_code,
        stdout: text_of(&out_buf),
        stderr: text_of(&err_buf),
        timed_out,
        spawn_error: None,
        duration: started.elapsed(),
    }
}

/// SIGTERM to the group; once the shell has exited (or after the grace),
/// SIGKILL to whatever of the group is left, and then until none of it runs
/// any more (at most [`GONE_LIMIT`]): a signal is delivered when the process
/// next runs, so right after `killpg` a process it killed may still be
/// running (CI: a hook's grandchild seen running after the time-out).
async fn stop_group(pgid: libc::pid_t, child: &mut tokio::process::Child) {
    signal_group(pgid, libc::SIGTERM);
    let _ = tokio::time::timeout(KILL_GRACE, child.wait()).await;
    signal_group(pgid, libc::SIGKILL);
    let deadline = tokio::time::Instant::now() + GONE_LIMIT;
    while group_runs(pgid) && tokio::time::Instant::now() < deadline {
        // Nothing announces another process's death (they are not our children): look again
        // shortly.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// How long [`stop_group`] waits for a killed group to stop running.
const GONE_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether a process of group `pgid` still runs (zombies do not: they only wait to be reaped).
/// Read from `/proc/<pid>/stat`; where there is no `/proc`, nothing is known to run.
fn group_runs(pgid: libc::pid_t) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .any(|stat| {
            // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("Z");
            let pgrp = fields.nth(1).and_then(|p| p.parse::<libc::pid_t>().ok());
            pgrp == Some(pgid) && !matches!(state, "Z" | "X")
        })
}

fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: killpg only sends a signal; a group that is gone gives ESRCH.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// Reads a stream to its end, keeping the first [`OUTPUT_CAP`] bytes and
/// counting the rest.
async fn read_capped(stream: Option<impl AsyncRead + Unpin>, kept: Arc<Mutex<Vec<u8>>>) {
    let Some(mut stream) = stream else {
        return;
    };
    let mut buf = [0u8; 8192];
    let mut dropped = 0usize;
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                dropped += n.saturating_sub(room);
            }
        }
    }
    if dropped > 0 {
        let note = format!("\n[... {dropped} more bytes not kept]");
        kept.lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(note.as_bytes());
    }
}

fn text_of(buf: &Mutex<Vec<u8>>) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
}
