//! Background processes of a session: the registry the three shell tools
//! share, and the tools that list them and read their output.
//!
//! A process gets here in two ways: `run_shell_command` with
//! `is_background: true` starts it detached, its output going to a log
//! file; or a foreground command returns while processes it started (`cmd &`)
//! are still running in its group, and those are adopted, the rest of their
//! output being copied to a log file.
//!
//! The processes belong to the session: when the registry is dropped (the
//! session's tools are dropped when the session ends), every group that
//! still has a live process gets SIGTERM and, 200 ms later, SIGKILL, and
//! the log files are removed. Nothing the agent started outlives the
//! session by accident.

use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Local};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::process::ChildStdout;
use tokio::sync::watch;

use super::format::untrusted;
use super::output::{format_bytes, last_lines, skip_partial_char, terminal_text};
use super::process;
use crate::tools::{ToolContext, ToolError, ToolErrorKind, ToolResult};

/// Lines `read_background_output` returns when `lines` is not given.
pub const DEFAULT_LINES: usize = 100;
/// Longest wait a `delay_ms` can ask for.
pub const MAX_DELAY: Duration = Duration::from_secs(300);
/// At most this much of the end of a log is read to find its last lines.
const READ_WINDOW: u64 = 1024 * 1024;

/// How a background process is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackgroundStatus {
    Running,
    /// Ended; `code` for a normal exit, `signal` when a signal ended it.
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// A process left running by a foreground command that has since ended;
    /// it is not our child, so its exit status is unknown.
    Finished,
}

impl std::fmt::Display for BackgroundStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Running => f.write_str("running"),
            Self::Exited {
                signal: Some(signal),
                ..
            } => write!(f, "killed by signal {signal}"),
            Self::Exited {
                code: Some(code), ..
            } => write!(f, "exited with code {code}"),
            Self::Exited { .. } | Self::Finished => f.write_str("finished"),
        }
    }
}

/// What `list_background_processes` shows of one process.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundProcessInfo {
    pub pid: u32,
    pub pgid: u32,
    pub command: String,
    /// Started by a foreground command that returned while it still ran.
    pub left_running: bool,
    pub status: BackgroundStatus,
    pub started: DateTime<Local>,
    /// Size of its output log so far.
    pub output_bytes: u64,
    pub log_path: PathBuf,
}

struct Entry {
    pid: u32,
    pgid: u32,
    command: String,
    started: DateTime<Local>,
    log: PathBuf,
    /// Exit of a process we started (`None` while running); adopted
    /// processes have no receiver.
    exit: Option<watch::Receiver<Option<BackgroundStatus>>>,
}

impl Entry {
    fn status(&self) -> BackgroundStatus {
        match &self.exit {
            Some(rx) => rx.borrow().unwrap_or(BackgroundStatus::Running),
            None if process::is_alive(self.pid) => BackgroundStatus::Running,
            None => BackgroundStatus::Finished,
        }
    }

    fn info(&self) -> BackgroundProcessInfo {
        BackgroundProcessInfo {
            pid: self.pid,
            pgid: self.pgid,
            command: self.command.clone(),
            left_running: self.exit.is_none(),
            status: self.status(),
            started: self.started,
            output_bytes: std::fs::metadata(&self.log).map_or(0, |m| m.len()),
            log_path: self.log.clone(),
        }
    }
}

/// The background processes of one session. Shared by the shell tools;
/// dropping it ends the processes (see the module documentation).
#[derive(Default)]
pub struct BackgroundProcesses {
    entries: Mutex<Vec<Entry>>,
}

impl std::fmt::Debug for BackgroundProcesses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pids: Vec<u32> = self.lock().iter().map(|e| e.pid).collect();
        f.debug_struct("BackgroundProcesses")
            .field("pids", &pids)
            .finish()
    }
}

impl BackgroundProcesses {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts `command` detached in its own process group, its output going
    /// to a new log file in `log_dir`, with the environment `settings` give
    /// a foreground command (the pager, the redacted variables removed: a
    /// background command must not be a way around the redaction). Must be
    /// called within a Tokio runtime (a task waits for the process).
    pub fn start(
        &self,
        command: &str,
        cwd: &Path,
        log_dir: &Path,
        settings: &crate::tools::ShellSettings,
        sandboxed: Option<&gd_sandbox::Prepared>,
    ) -> io::Result<u32> {
        std::fs::create_dir_all(log_dir)?;
        let log = log_dir.join(format!("background-{}.log", uuid::Uuid::new_v4()));
        let file = std::fs::File::create(&log)?;
        let mut child =
            match process::spawn_shell_with(command, cwd, Stdio::from(file), settings, sandboxed) {
                Ok(child) => child,
                Err(e) => {
                    let _ = std::fs::remove_file(&log);
                    return Err(e);
                }
            };
        let pid = child
            .id()
            .ok_or_else(|| io::Error::other("the process ended before its PID was known"))?;
        let (tx, rx) = watch::channel(None);
        tokio::spawn(async move {
            let status = match child.wait().await {
                Ok(status) => {
                    let (code, signal) = process::exit_parts(&status);
                    BackgroundStatus::Exited { code, signal }
                }
                Err(_) => BackgroundStatus::Finished,
            };
            let _ = tx.send(Some(status));
        });
        self.lock().push(Entry {
            pid,
            pgid: pid,
            command: command.to_owned(),
            started: Local::now(),
            log,
            exit: Some(rx),
        });
        Ok(pid)
    }

    /// Takes over processes a foreground command left running in group
    /// `pgid`: they are listed, ended with the session, and the rest of
    /// the command's output (still arriving on `rest`) is copied to a log.
    pub fn adopt(
        &self,
        pids: &[u32],
        pgid: u32,
        command: &str,
        rest: Option<ChildStdout>,
        log_dir: &Path,
    ) {
        if pids.is_empty() {
            return;
        }
        let log = log_dir.join(format!("left-running-{}.log", uuid::Uuid::new_v4()));
        let file = std::fs::create_dir_all(log_dir).and_then(|()| std::fs::File::create(&log));
        match (file, rest) {
            (Ok(mut file), Some(mut rest)) => {
                tokio::spawn(async move {
                    let mut chunk = vec![0u8; 16 * 1024];
                    // Reading until every writer is gone also keeps the
                    // processes from dying of SIGPIPE.
                    while let Ok(n) = rest.read(&mut chunk).await {
                        if n == 0 || file.write_all(&chunk[..n]).is_err() {
                            break;
                        }
                    }
                });
            }
            (Ok(_), None) => {}
            (Err(e), _) => tracing::warn!("cannot create a log for background output: {e}"),
        }
        let started = Local::now();
        let mut entries = self.lock();
        for pid in pids {
            entries.push(Entry {
                pid: *pid,
                pgid,
                command: command.to_owned(),
                started,
                log: log.clone(),
                exit: None,
            });
        }
    }

    /// All processes, in the order they were started.
    pub fn list(&self) -> Vec<BackgroundProcessInfo> {
        self.lock().iter().map(Entry::info).collect()
    }

    pub fn get(&self, pid: u32) -> Option<BackgroundProcessInfo> {
        self.lock().iter().find(|e| e.pid == pid).map(Entry::info)
    }

    /// Waits until process `pid` (one we started) exits, at most `limit`.
    /// Returns its status then (`Running` when the limit passed first).
    pub async fn wait_for_exit(&self, pid: u32, limit: Duration) -> Option<BackgroundStatus> {
        let rx = self
            .lock()
            .iter()
            .find(|e| e.pid == pid)
            .map(|e| e.exit.clone())?;
        let Some(mut rx) = rx else {
            return self.get(pid).map(|i| i.status);
        };
        let _ = tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await;
        let status = rx.borrow().unwrap_or(BackgroundStatus::Running);
        Some(status)
    }

    /// The last `lines` lines of the output of `pid`, as plain text.
    /// `None` for an unknown PID.
    pub fn read_output(&self, pid: u32, lines: usize) -> Option<io::Result<String>> {
        let log = self.lock().iter().find(|e| e.pid == pid)?.log.clone();
        Some(read_tail(&log).map(|text| last_lines(text.trim_end(), lines).to_owned()))
    }

    /// Ends every group that still has a live process (SIGTERM, then
    /// SIGKILL after a grace period), without waiting.
    pub fn terminate_all(&self) {
        let mut pgids: Vec<u32> = self.lock().iter().map(|e| e.pgid).collect();
        pgids.sort_unstable();
        pgids.dedup();
        pgids.retain(|pgid| !process::group_members(*pgid).is_empty());
        process::terminate_groups_detached(pgids);
    }
}

impl Drop for BackgroundProcesses {
    fn drop(&mut self) {
        self.terminate_all();
        let mut logs: Vec<PathBuf> = self.lock().iter().map(|e| e.log.clone()).collect();
        logs.dedup();
        for log in logs {
            let _ = std::fs::remove_file(log);
        }
    }
}

/// The end of a log file as text (at most [`READ_WINDOW`] bytes).
fn read_tail(path: &Path) -> io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(READ_WINDOW);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(READ_WINDOW).read_to_end(&mut bytes)?;
    let bytes = if start > 0 {
        skip_partial_char(&bytes)
    } else {
        &bytes
    };
    if bytes.iter().take(4096).any(|b| *b == 0) && start == 0 {
        return Ok(format!("[Binary output, {} not shown]", format_bytes(len)));
    }
    Ok(terminal_text(&String::from_utf8_lossy(bytes)))
}

/// Where background logs go: `<temp dir>/background`, or the system temp
/// dir when the session has none.
pub fn log_dir(ctx: &ToolContext) -> PathBuf {
    let temp = &ctx.services.temp_dir;
    if temp.as_os_str().is_empty() {
        std::env::temp_dir().join("gemini-desktop-background")
    } else {
        temp.join("background")
    }
}

/// Waits `delay_ms` (capped at [`MAX_DELAY`]) unless the turn is cancelled
/// first; returns false when cancelled.
pub async fn delay(ctx: &ToolContext, delay_ms: Option<i64>) -> bool {
    let Some(ms) = delay_ms.filter(|ms| *ms > 0) else {
        return !ctx.cancel.is_cancelled();
    };
    let wait = Duration::from_millis(ms as u64).min(MAX_DELAY);
    tokio::select! {
        _ = ctx.cancel.cancelled() => false,
        _ = tokio::time::sleep(wait) => true,
    }
}

fn wait_for_previous_schema() -> Value {
    crate::tools::schema::wait_for_previous()
}

/// `list_background_processes`: the background processes of this session.
pub struct ListBackgroundProcesses {
    processes: Arc<BackgroundProcesses>,
    schema: Value,
}

impl ListBackgroundProcesses {
    pub const NAME: &'static str = "list_background_processes";

    pub fn new(processes: Arc<BackgroundProcesses>) -> Self {
        Self {
            processes,
            schema: json!({
                "type": "object",
                "properties": {
                    "wait_for_previous": wait_for_previous_schema()
                }
            }),
        }
    }
}

crate::tools::tool_info! {
    ListBackgroundProcesses,
    display: "List Background Processes",
    kind: Read,
    description: "Lists the processes started in the background during this session (with is_background, or left running by a command), with their PID, status, start time, output size and command.",
}

impl crate::tools::TypedTool for ListBackgroundProcesses {
    /// No arguments but `wait_for_previous`, which the scheduler reads.
    type Args = IgnoredAny;

    async fn run(&self, _args: IgnoredAny, _ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let processes = self.processes.list();
        if processes.is_empty() {
            let text = "No background processes have been started in this session.";
            return Ok(ToolResult::success(text, text));
        }
        let lines: Vec<String> = processes.iter().map(list_line).collect();
        let running = processes
            .iter()
            .filter(|p| p.status == BackgroundStatus::Running)
            .count();
        let text = format!("Background processes:\n{}", lines.join("\n"));
        let display = format!(
            "{} background process(es), {running} running.",
            processes.len()
        );
        Ok(ToolResult::success(text, display))
    }
}

/// `- PID 1234 (running; started 2025-01-02 10:00:00; output 1.2 KB): npm run dev`
fn list_line(info: &BackgroundProcessInfo) -> String {
    let origin = if info.left_running {
        "left running by: "
    } else {
        ""
    };
    format!(
        "- PID {} ({}; started {}; output {}): {origin}{}",
        info.pid,
        info.status,
        info.started.format("%Y-%m-%d %H:%M:%S"),
        format_bytes(info.output_bytes),
        info.command
    )
}

/// `read_background_output`: the end of a background process's output.
pub struct ReadBackgroundOutput {
    processes: Arc<BackgroundProcesses>,
    schema: Value,
}

/// The arguments of a `read_background_output` call.
#[derive(Debug, Deserialize)]
pub struct ReadParams {
    pid: i64,
    lines: Option<i64>,
    delay_ms: Option<i64>,
}

impl ReadBackgroundOutput {
    pub const NAME: &'static str = "read_background_output";

    pub fn new(processes: Arc<BackgroundProcesses>) -> Self {
        Self {
            processes,
            schema: json!({
                "type": "object",
                "properties": {
                    "pid": {
                        "type": "integer",
                        "description": "PID of the background process, as reported when it was started or listed."
                    },
                    "lines": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "How many lines from the end of the output to return (default 100)."
                    },
                    "delay_ms": {
                        "type": "integer",
                        "description": "Milliseconds to wait before reading, to give the process time to produce output (at most 300000)."
                    },
                    "wait_for_previous": wait_for_previous_schema()
                },
                "required": ["pid"]
            }),
        }
    }
}

crate::tools::tool_info! {
    ReadBackgroundOutput,
    display: "Read Background Output",
    kind: Read,
    description: "Returns the last lines of output (stdout and stderr together) of a process running in the background, and whether it is still running. Optionally waits a moment first.",
    fn describe_call(&self, args: &Value) -> String {
        match args.get("pid").and_then(Value::as_i64) {
            Some(pid) => format!("PID {pid}"),
            None => self.display_name().to_owned(),
        }
    }
}

impl crate::tools::TypedTool for ReadBackgroundOutput {
    type Args = ReadParams;

    async fn run(&self, params: ReadParams, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let lines = match params.lines {
            None => DEFAULT_LINES,
            Some(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX),
            Some(_) => {
                return Err(ToolError::new(
                    ToolErrorKind::InvalidParams,
                    "lines must be at least 1.",
                ));
            }
        };
        let unknown = || {
            Err(ToolError::new(
                ToolErrorKind::NotFound,
                format!(
                    "No background process with PID {} was started in this session. Use list_background_processes to see the known ones.",
                    params.pid
                ),
            ))
        };
        let Ok(pid) = u32::try_from(params.pid) else {
            return unknown();
        };
        if self.processes.get(pid).is_none() {
            return unknown();
        }
        if !delay(ctx, params.delay_ms).await {
            return Err(ToolError::new(
                ToolErrorKind::Cancelled,
                "Cancelled by the user.",
            ));
        }
        let Some(info) = self.processes.get(pid) else {
            return unknown();
        };
        let output = match self.processes.read_output(pid, lines) {
            Some(Ok(output)) => output,
            Some(Err(e)) => {
                return Err(ToolError::new(
                    ToolErrorKind::Io,
                    format!("Cannot read the output of background process {pid}: {e}"),
                ));
            }
            None => return unknown(),
        };
        if output.trim().is_empty() {
            let text = format!(
                "Background process {pid} ({}) has produced no output yet.",
                info.status
            );
            return Ok(ToolResult::success(text.clone(), text));
        }
        let count = output.lines().count();
        let text = format!(
            "Last {count} line(s) of output of background process {pid} ({}):\n{}",
            info.status,
            untrusted(&output)
        );
        Ok(ToolResult::success(text, output))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_wording() {
        assert_eq!(BackgroundStatus::Running.to_string(), "running");
        assert_eq!(
            BackgroundStatus::Exited {
                code: Some(3),
                signal: None
            }
            .to_string(),
            "exited with code 3"
        );
        assert_eq!(
            BackgroundStatus::Exited {
                code: None,
                signal: Some(15)
            }
            .to_string(),
            "killed by signal 15"
        );
        assert_eq!(BackgroundStatus::Finished.to_string(), "finished");
    }

    #[test]
    fn tail_of_a_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("x.log");
        std::fs::write(&log, "\x1b[32mone\x1b[0m\ntwo\nthree\n").unwrap();
        assert_eq!(read_tail(&log).unwrap(), "one\ntwo\nthree\n");
        std::fs::write(&log, b"\0\x01\x02").unwrap();
        assert_eq!(
            read_tail(&log).unwrap(),
            "[Binary output, 3 bytes not shown]"
        );
    }
}
