//! `-o text`: the answer streamed to stdout, problems to stderr.

use std::io::{self, Write};

use gd_protocol::Event;

use super::Output;
use crate::exit::Fatal;
use crate::stats::Stats;

pub struct TextOutput<'a> {
    out: Box<dyn Write + 'a>,
    err: Box<dyn Write + 'a>,
    ends_with_newline: bool,
    wrote_any: bool,
}

impl<'a> TextOutput<'a> {
    pub fn new(out: Box<dyn Write + 'a>, err: Box<dyn Write + 'a>) -> Self {
        Self {
            out,
            err,
            ends_with_newline: true,
            wrote_any: false,
        }
    }

    fn finish_line(&mut self) -> io::Result<()> {
        if self.wrote_any && !self.ends_with_newline {
            self.out.write_all(b"\n")?;
            self.ends_with_newline = true;
        }
        self.out.flush()
    }
}

impl Output for TextOutput<'_> {
    fn start(&mut self, _session_id: &str, _model: &str, _prompt: &str) -> io::Result<()> {
        Ok(())
    }

    /// Each warning goes to stderr as it comes (a failed write ends the run).
    fn warnings_shown(&self) -> bool {
        true
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::ContentDelta { text } => {
                self.out.write_all(text.as_bytes())?;
                self.out.flush()?;
                self.wrote_any = true;
                self.ends_with_newline = text.ends_with('\n');
            }
            Event::Warning { message } => match super::hooks::turn_line(message) {
                Some(line) => writeln!(self.err, "{line}")?,
                None => writeln!(self.err, "Warning: {message}")?,
            },
            Event::HookRan { run } => {
                for line in super::hooks::run_lines(run) {
                    writeln!(self.err, "{line}")?;
                }
            }
            // A subagent's work, one short line per tool call and one at
            // its end, on stderr: stdout stays the answer alone.
            Event::Subagent {
                agent_name, event, ..
            } => match &**event {
                Event::ToolCallResponse {
                    name,
                    display,
                    error,
                    ..
                } => {
                    let what = error.as_deref().or(display.as_deref()).unwrap_or("");
                    let what = what.lines().next().unwrap_or("");
                    writeln!(self.err, "↳ {agent_name}: {name} {what}")?
                }
                Event::Warning { message } => {
                    writeln!(self.err, "↳ {agent_name}: Warning: {message}")?
                }
                _ => {}
            },
            Event::SubagentFinished {
                agent_name,
                status,
                usage,
                ..
            } => writeln!(
                self.err,
                "↳ {agent_name}: {} ({} requests, {} tokens)",
                match status {
                    gd_protocol::SubagentStatus::Completed => "finished",
                    gd_protocol::SubagentStatus::Cancelled => "stopped",
                    gd_protocol::SubagentStatus::TurnLimit => "ran out of turns",
                    gd_protocol::SubagentStatus::Timeout => "ran out of time",
                    gd_protocol::SubagentStatus::Failed => "failed",
                },
                usage.requests,
                usage.total_tokens
            )?,
            Event::LoopDetected { detail, .. } => {
                writeln!(self.err, "Loop detected, stopping: {detail}")?
            }
            Event::Error {
                message,
                fatal: false,
                ..
            } => writeln!(self.err, "Error: {message}")?,
            _ => {}
        }
        Ok(())
    }

    fn success(&mut self, _session_id: &str, _stats: &Stats, _duration_ms: u64) -> io::Result<()> {
        self.finish_line()
    }

    fn failure(
        &mut self,
        _session_id: Option<&str>,
        fatal: &Fatal,
        _stats: &Stats,
        _duration_ms: u64,
    ) -> io::Result<()> {
        self.finish_line()?;
        writeln!(self.err, "Error: {}", fatal.message)?;
        self.err.flush()
    }
}
