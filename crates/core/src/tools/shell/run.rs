//! `run_shell_command`: runs a command in its own process group, streams its
//! output while it runs, and reports output, exit code, signal, processes
//! left running and the group id.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gd_protocol::ConfirmationDetails;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::process::ChildStdout;

use super::background::{self, BackgroundProcesses, BackgroundStatus, MAX_DELAY};
use super::format::{self, ShellOutcome, untrusted};
use super::output::{DEFAULT_HEAD_BYTES, DEFAULT_TAIL_BYTES, OutputBuffer};
use super::parse::root_commands;
use super::process::{self, GroupGuard};
use crate::tools::{LlmContent, ToolContext, ToolError, ToolErrorKind, ToolResult, search_start};

/// Live output is sent at most once per this interval.
pub const OUTPUT_UPDATE_INTERVAL: Duration = Duration::from_secs(1);
/// Live output shows at most this much of the end of the output.
const LIVE_BYTES: usize = 64 * 1024;
/// After the command exits while processes it started still hold its
/// output open, output is collected until none arrived for this long.
const DRAIN_IDLE: Duration = Duration::from_millis(50);
/// Upper bound for collecting output after the command exited.
const DRAIN_LIMIT: Duration = Duration::from_secs(1);

/// Runs shell commands. Shares the session's [`BackgroundProcesses`] with
/// the background tools.
pub struct RunShellCommand {
    processes: Arc<BackgroundProcesses>,
    schema: Value,
    head_bytes: usize,
    tail_bytes: usize,
}

/// The arguments of a `run_shell_command` call (`description` is only
/// shown).
#[derive(Debug, Deserialize)]
pub struct Params {
    command: String,
    #[serde(default)]
    dir_path: Option<String>,
    #[serde(default)]
    is_background: Option<bool>,
    #[serde(default)]
    delay_ms: Option<i64>,
}

impl RunShellCommand {
    pub const NAME: &'static str = "run_shell_command";

    pub fn new(processes: Arc<BackgroundProcesses>) -> Self {
        Self {
            processes,
            schema: json!({
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "description": "The exact command to run, as `bash -c <command>`."
                    },
                    "description": {
                        "type": "string",
                        "description": "A short explanation of what the command does and why, shown to the user."
                    },
                    "dir_path": {
                        "type": "string",
                        "description": "Directory to run the command in, absolute or relative to the workspace root (default: the workspace root). Must be inside the workspace."
                    },
                    "is_background": {
                        "type": "boolean",
                        "description": "Start the command in the background and return at once with its PID. Use it for servers, watchers and anything else that does not finish on its own."
                    },
                    "delay_ms": {
                        "type": "integer",
                        "description": "With is_background: milliseconds to wait before returning (less if the process exits first), so that its first output is included."
                    }
                },
                "required": ["command"]
            }),
            head_bytes: DEFAULT_HEAD_BYTES,
            tail_bytes: DEFAULT_TAIL_BYTES,
        }
    }

    /// Keeps at most `head` bytes from the beginning and `tail` bytes from
    /// the end of a command's output (default 256 KiB and 768 KiB).
    pub fn with_output_limits(mut self, head: usize, tail: usize) -> Self {
        self.head_bytes = head;
        self.tail_bytes = tail;
        self
    }

    /// Checks what the schema cannot: a command that is not blank.
    fn check(params: &Params) -> Result<(), ToolError> {
        if params.command.trim().is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::InvalidParams,
                "The command must not be empty.",
            ));
        }
        Ok(())
    }

    /// The directory to run in: `dir_path` inside the workspace, else the
    /// first workspace directory. It must exist.
    fn working_dir(params: &Params, ctx: &ToolContext) -> Result<PathBuf, ToolError> {
        let dir = search_start::dir_or_workspace(ctx, params.dir_path.as_deref())?;
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => Ok(dir),
            Ok(_) => Err(ToolError::new(
                ToolErrorKind::NotADirectory,
                format!("Not a directory: {}", dir.display()),
            )),
            Err(_) => Err(ToolError::new(
                ToolErrorKind::NotFound,
                format!("Directory not found: {}", dir.display()),
            )),
        }
    }

    async fn run_foreground(&self, command: &str, cwd: PathBuf, ctx: &ToolContext) -> ToolResult {
        let confined = match crate::sandbox::confine(ctx, &process::shell_program(), command, &cwd)
        {
            Ok(confined) => confined,
            Err(message) => return ToolResult::error(ToolErrorKind::Execution, message),
        };
        let mut result = self.run_confined(command, &cwd, ctx, &confined).await;
        result.sandbox = Some(Box::new(confined.report(
            result.output.as_deref().unwrap_or_default(),
            result.exit_code,
            &cwd,
        )));
        result
    }

    /// [`Self::run_foreground`] once the sandbox (if any) is prepared.
    async fn run_confined(
        &self,
        command: &str,
        cwd: &std::path::Path,
        ctx: &ToolContext,
        confined: &crate::sandbox::Confined,
    ) -> ToolResult {
        let settings = &ctx.services.shell;
        let spawned = process::spawn_shell_with(
            command,
            cwd,
            Stdio::piped(),
            settings,
            confined.prepared.as_ref(),
        );
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let outcome = ShellOutcome {
                    error: Some(format!(
                        "Could not start {}: {e}",
                        process::shell_program().display()
                    )),
                    ..Default::default()
                };
                return outcome_result(&outcome);
            }
        };
        let pgid = child.id().unwrap_or_default();
        let mut guard = GroupGuard::new(pgid);
        let mut stdout = child.stdout.take();
        let mut buffer = OutputBuffer::new(self.head_bytes, self.tail_bytes);
        let mut live = LiveOutput::new(ctx);
        let mut chunk = vec![0u8; 32 * 1024];
        let mut eof = false;
        // `tools.shell.inactivityTimeout`: the clock restarts with each output.
        let inactivity = settings.inactivity_timeout;
        let far = Duration::from_secs(365 * 24 * 3600);
        let mut silent_until = tokio::time::Instant::now() + inactivity.unwrap_or(far);
        let mut timed_out = false;

        let waited = loop {
            let next_update = live.next_update();
            tokio::select! {
                biased;
                _ = ctx.cancel.cancelled() => break None,
                read = read_some(&mut stdout, &mut chunk), if !eof => match read {
                    Some(n) => {
                        buffer.push(&chunk[..n]);
                        live.changed(&buffer);
                        silent_until = tokio::time::Instant::now() + inactivity.unwrap_or(far);
                    }
                    None => eof = true,
                },
                _ = tokio::time::sleep_until(silent_until), if inactivity.is_some() => {
                    timed_out = true;
                    break None;
                }
                status = child.wait() => break Some(status),
                _ = tokio::time::sleep_until(next_update), if live.pending => live.emit(&buffer),
            }
        };

        let Some(waited) = waited else {
            let status = process::terminate_group(pgid, &mut child).await;
            guard.disarm();
            drain(&mut stdout, &mut buffer, &mut chunk, None).await;
            let (exit_code, signal) = status.as_ref().map_or((None, None), process::exit_parts);
            let outcome = ShellOutcome {
                output: buffer.text(),
                exit_code,
                signal,
                pgid: Some(pgid),
                cancelled: !timed_out,
                timed_out: timed_out.then_some(inactivity).flatten(),
                ..Default::default()
            };
            return outcome_result(&outcome);
        };

        let left_running = process::group_members(pgid);
        let idle = (!left_running.is_empty()).then_some(DRAIN_IDLE);
        if !eof {
            drain(&mut stdout, &mut buffer, &mut chunk, idle).await;
        }
        guard.disarm();
        if !left_running.is_empty() {
            self.processes.adopt(
                &left_running,
                pgid,
                command,
                stdout.take(),
                &background::log_dir(ctx),
            );
        }
        let mut outcome = ShellOutcome {
            output: buffer.text(),
            background_pids: left_running,
            pgid: Some(pgid),
            ..Default::default()
        };
        match waited {
            Ok(status) => (outcome.exit_code, outcome.signal) = process::exit_parts(&status),
            Err(e) => outcome.error = Some(format!("Could not wait for the command: {e}")),
        }
        outcome_result(&outcome)
    }

    async fn run_background(&self, params: &Params, cwd: PathBuf, ctx: &ToolContext) -> ToolResult {
        let confined =
            match crate::sandbox::confine(ctx, &process::shell_program(), &params.command, &cwd) {
                Ok(confined) => confined,
                Err(message) => return ToolResult::error(ToolErrorKind::Execution, message),
            };
        let mut result = self.start_background(params, &cwd, ctx, &confined).await;
        // Started: what it runs with (a refusal later shows in its log, read with
        // read_background_output; nobody is asked about a command that is already away).
        result.sandbox = Some(Box::new(crate::sandbox::ShellSandbox {
            used: confined.used.clone(),
            denial: None,
        }));
        result
    }

    async fn start_background(
        &self,
        params: &Params,
        cwd: &std::path::Path,
        ctx: &ToolContext,
        confined: &crate::sandbox::Confined,
    ) -> ToolResult {
        let pid = match self.processes.start(
            &params.command,
            cwd,
            &background::log_dir(ctx),
            &ctx.services.shell,
            confined.prepared.as_ref(),
        ) {
            Ok(pid) => pid,
            Err(e) => {
                return ToolResult::error(
                    ToolErrorKind::Execution,
                    format!("Could not start the command in the background: {e}"),
                );
            }
        };
        let delay = params
            .delay_ms
            .filter(|ms| *ms > 0)
            .map(|ms| Duration::from_millis(ms as u64).min(MAX_DELAY));
        let status = match delay {
            Some(limit) => tokio::select! {
                _ = ctx.cancel.cancelled() => None,
                status = self.processes.wait_for_exit(pid, limit) => status,
            },
            None => None,
        }
        .unwrap_or(BackgroundStatus::Running);
        let output = match delay {
            Some(_) => self
                .processes
                .read_output(pid, background::DEFAULT_LINES)
                .and_then(Result::ok)
                .unwrap_or_default(),
            None => String::new(),
        };
        let (mut text, display) = if status == BackgroundStatus::Running {
            (
                format!(
                    "Started in the background with PID {pid} (process group {pid}). Read its output with read_background_output (pid {pid}); list_background_processes shows whether it is still running. It is stopped when the session ends."
                ),
                format!("Started in the background (PID {pid})."),
            )
        } else {
            (
                format!("Started in the background with PID {pid}; it already {status}."),
                format!("Started in the background (PID {pid}); it already {status}."),
            )
        };
        if delay.is_some() {
            if output.trim().is_empty() {
                text.push_str("\nNo output yet.");
            } else {
                text.push_str(if status == BackgroundStatus::Running {
                    "\nOutput so far:\n"
                } else {
                    "\nOutput:\n"
                });
                text.push_str(&untrusted(&output));
            }
        }
        ToolResult::success(text, display)
    }
}

/// Turns an outcome into the tool result; a command that could not be run
/// is an error.
fn outcome_result(outcome: &ShellOutcome) -> ToolResult {
    let text = format::llm_text(outcome);
    let display = format::display_text(outcome);
    // The model gets the wrapped text; the card says what happened in a sentence (the output,
    // if any, is shown beside it).
    let error = if outcome.timed_out.is_some() {
        Some(ToolError::new(ToolErrorKind::Execution, text.clone()))
    } else if outcome.cancelled {
        Some(ToolError::new(ToolErrorKind::Cancelled, text.clone()))
    } else {
        outcome
            .error
            .as_ref()
            .map(|_| ToolError::new(ToolErrorKind::Execution, text.clone()))
    }
    .map(|e| e.for_people(format::failure_text(outcome)));
    ToolResult {
        llm_content: LlmContent::Text(text),
        display,
        error,
        // People see the plain output (no wrappers) and the exit code.
        output: Some(outcome.output.clone()),
        exit_code: outcome.exit_code,
        sandbox: None,
    }
}

/// Reads what is available; `None` at end of output (or on a read error).
async fn read_some(stdout: &mut Option<ChildStdout>, chunk: &mut [u8]) -> Option<usize> {
    let pipe = stdout.as_mut()?;
    match pipe.read(chunk).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

/// Collects output still arriving after the command ended: until the end
/// of the output, at most [`DRAIN_LIMIT`], and with `idle`, until nothing
/// arrived for that long. The pipe is closed at its end.
async fn drain(
    stdout: &mut Option<ChildStdout>,
    buffer: &mut OutputBuffer,
    chunk: &mut [u8],
    idle: Option<Duration>,
) {
    let deadline = tokio::time::Instant::now() + DRAIN_LIMIT;
    loop {
        let until = idle.map_or(deadline, |idle| {
            (tokio::time::Instant::now() + idle).min(deadline)
        });
        match tokio::time::timeout_at(until, read_some(stdout, chunk)).await {
            Ok(Some(n)) => buffer.push(&chunk[..n]),
            Ok(None) => {
                *stdout = None;
                return;
            }
            Err(_) => return,
        }
    }
}

/// Throttles live output to one update per [`OUTPUT_UPDATE_INTERVAL`]; an
/// update that is due later is sent when its time comes.
struct LiveOutput<'a> {
    ctx: &'a ToolContext,
    last: Option<Instant>,
    pending: bool,
}

impl<'a> LiveOutput<'a> {
    fn new(ctx: &'a ToolContext) -> Self {
        Self {
            ctx,
            last: None,
            pending: false,
        }
    }

    fn changed(&mut self, buffer: &OutputBuffer) {
        if self.ctx.output.is_none() {
            return;
        }
        self.pending = true;
        if self
            .last
            .is_none_or(|last| last.elapsed() >= OUTPUT_UPDATE_INTERVAL)
        {
            self.emit(buffer);
        }
    }

    fn next_update(&self) -> tokio::time::Instant {
        let at = self
            .last
            .map_or_else(Instant::now, |last| last + OUTPUT_UPDATE_INTERVAL);
        tokio::time::Instant::from_std(at)
    }

    fn emit(&mut self, buffer: &OutputBuffer) {
        self.ctx.emit_output(buffer.live_text(LIVE_BYTES));
        self.last = Some(Instant::now());
        self.pending = false;
    }
}

crate::tools::tool_info! {
    RunShellCommand,
    display: "Shell",
    kind: Execute,
    description: "Runs a shell command as `bash -c <command>` and returns its output (stdout and stderr interleaved as they were written), a non-zero exit code, the signal that ended it, processes it left running (Background PIDs) and its process group (PGID). \
The command runs in its own process group without a terminal; stdin is empty, so it must not wait for input, and pagers are disabled. \
For servers, watchers and other commands that do not finish on their own, set is_background: the call returns at once with a PID; read the output later with read_background_output and see all such processes with list_background_processes. Background processes are stopped when the session ends. \
Prefer the dedicated tools for listing, reading, searching and editing files.",

    fn describe_call(&self, args: &Value) -> String {
        let get = |key: &str| args.get(key).and_then(Value::as_str);
        let mut text = get("command").unwrap_or_default().to_owned();
        if let Some(dir) = get("dir_path").filter(|d| !d.is_empty()) {
            text.push_str(&format!(" [in {dir}]"));
        }
        if let Some(description) = get("description").filter(|d| !d.is_empty()) {
            text.push_str(&format!(" ({})", description.replace('\n', " ")));
        }
        if args.get("is_background").and_then(Value::as_bool) == Some(true) {
            text.push_str(" [background]");
        }
        text
    }
}

impl crate::tools::TypedTool for RunShellCommand {
    type Args = Params;

    async fn prepare(&self, params: Params, ctx: &ToolContext) -> crate::tools::typed::Prepared {
        Self::check(&params)?;
        let dir = Self::working_dir(&params, ctx)?;
        Ok(Some(ConfirmationDetails::Execute {
            title: "Confirm Shell Command".to_owned(),
            root_commands: root_commands(&params.command),
            command: params.command,
            directory: dir.display().to_string(),
        }))
    }

    async fn run(&self, params: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        Self::check(&params)?;
        let cwd = Self::working_dir(&params, ctx)?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new(
                ToolErrorKind::Cancelled,
                "Command was cancelled before it started.",
            ));
        }
        Ok(if params.is_background == Some(true) {
            self.run_background(&params, cwd, ctx).await
        } else {
            self.run_foreground(&params.command, cwd, ctx).await
        })
    }
}
