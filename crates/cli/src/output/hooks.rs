//! What a headless run prints on stderr about hooks, in Gemini CLI 0.61's
//! words (tests/fixtures/hooks/gemini-cli-0.61/*.stderr.txt): a failed or
//! blocking run's summary and warning, a time-out's error, a hook's system
//! message, and the turn-level "Agent execution stopped/blocked" lines.

use gd_hooks::event_name;
use gd_protocol::{HookOutcome, HookRun};

/// The stderr lines for one hook run (none for a quiet success).
pub fn run_lines(run: &HookRun) -> Vec<String> {
    let mut lines = Vec::new();
    let event = event_name(run.event);
    // 0.61 counts a run as failed unless it exited 0.
    if run.exit_code != Some(0) {
        lines.push(format!(
            "Hook execution for {event}: 0 succeeded, 1 failed ({}), total duration: {}ms",
            run.label, run.duration_ms
        ));
        lines.push(format!(
            "[WARNING] Hook(s) [{}] failed for event {event}.",
            run.label
        ));
        if matches!(run.outcome, HookOutcome::TimedOut | HookOutcome::Failed) {
            let mut stderr = run.stderr.trim_end().lines().collect::<Vec<_>>();
            // The runner puts its own error last (see gd_hooks::registry).
            if let Some(error) = stderr.pop() {
                lines.push(format!("Hook execution error: {error}"));
            }
            // 0.61 drops what the hook wrote; it is often why it hung.
            if !stderr.is_empty() {
                lines.push(format!("Hook stderr: {}", stderr.join("\n")));
            }
        }
    }
    if let Some(message) = &run.system_message {
        lines.push(format!("Hook system message: {message}"));
    }
    lines
}

/// A warning as 0.61 prints the turn-level ones hooks cause:
/// "Agent execution stopped: …" as is, "[WARNING] Agent execution blocked:
/// …"; `None` for any other warning.
pub fn turn_line(message: &str) -> Option<String> {
    if message.starts_with("Agent execution stopped: ") {
        Some(message.to_owned())
    } else if message.starts_with("Agent execution blocked: ") {
        Some(format!("[WARNING] {message}"))
    } else {
        None
    }
}
