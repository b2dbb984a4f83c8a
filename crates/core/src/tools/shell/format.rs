//! The text of shell results, for the model and for people.
//!
//! For the model the result lists only what matters, one `Name: value` line
//! each, inside `<untrusted_context>` (command output is data, never
//! instructions), as Gemini CLI 0.61 does:
//!
//! ```text
//! <untrusted_context>
//! Output: hi
//! Process Group PGID: 21734
//! </untrusted_context>
//! ```
//!
//! `Output` is always there (`(empty)` when there was none); `Error` only
//! when the command could not be run; `Exit Code` only when non-zero;
//! `Signal` only when a signal ended the command; `Background PIDs` only
//! when the command left processes running; `Process Group PGID` whenever
//! a process was started. People see the plain output.

/// What became of one foreground command.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShellOutcome {
    /// Plain text of stdout and stderr, interleaved (already cleaned).
    pub output: String,
    /// Why the command could not be run or waited for.
    pub error: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// Processes of the command's group still running after it returned.
    pub background_pids: Vec<u32>,
    pub pgid: Option<u32>,
    /// The user interrupted the command.
    pub cancelled: bool,
    /// Stopped after this long without output (`tools.shell.inactivityTimeout`).
    pub timed_out: Option<std::time::Duration>,
}

/// Wraps text that comes from outside (command output) so the model treats
/// it as data.
pub fn untrusted(text: &str) -> String {
    format!("<untrusted_context>\n{text}\n</untrusted_context>")
}

/// The result text for the model.
pub fn llm_text(outcome: &ShellOutcome) -> String {
    if let Some(limit) = outcome.timed_out {
        // Gemini CLI 0.61's words, so the model reacts the same way.
        let mut text = format!(
            "Command was automatically cancelled because it exceeded the timeout of {:.1} minutes without output.",
            limit.as_secs_f64() / 60.0
        );
        if outcome.output.trim().is_empty() {
            text.push_str(" There was no output before it was cancelled.");
        } else {
            text.push_str(" Below is the output before it was cancelled:\n");
            text.push_str(&outcome.output);
        }
        return untrusted(&text);
    }
    if outcome.cancelled {
        let mut text = String::from("Command was cancelled by the user before it finished.");
        if outcome.output.is_empty() {
            text.push_str(" It produced no output.");
        } else {
            text.push_str(" Output until then:\n");
            text.push_str(&outcome.output);
        }
        return untrusted(&text);
    }
    let output = if outcome.output.is_empty() {
        "(empty)"
    } else {
        outcome.output.as_str()
    };
    let mut lines = vec![format!("Output: {output}")];
    if let Some(error) = &outcome.error {
        lines.push(format!("Error: {error}"));
    }
    if let Some(code) = outcome.exit_code.filter(|c| *c != 0) {
        lines.push(format!("Exit Code: {code}"));
    }
    if let Some(signal) = outcome.signal {
        lines.push(format!("Signal: {signal}"));
    }
    if !outcome.background_pids.is_empty() {
        let pids: Vec<String> = outcome.background_pids.iter().map(u32::to_string).collect();
        lines.push(format!("Background PIDs: {}", pids.join(", ")));
    }
    if let Some(pgid) = outcome.pgid {
        lines.push(format!("Process Group PGID: {pgid}"));
    }
    untrusted(&lines.join("\n"))
}

/// The result text for people: the output, or what happened when there
/// was none.
pub fn display_text(outcome: &ShellOutcome) -> String {
    if let Some(limit) = outcome.timed_out {
        let stopped = stopped_text(limit);
        return if outcome.output.is_empty() {
            stopped
        } else {
            format!(
                "{stopped}\n\nOutput before it was stopped:\n{}",
                outcome.output
            )
        };
    }
    if outcome.cancelled {
        return if outcome.output.is_empty() {
            "Command cancelled.".to_owned()
        } else {
            format!(
                "Command cancelled.\n\nOutput before cancellation:\n{}",
                outcome.output
            )
        };
    }
    if !outcome.output.is_empty() {
        return outcome.output.clone();
    }
    if let Some(signal) = outcome.signal {
        format!("Command terminated by signal {signal}.")
    } else if let Some(error) = &outcome.error {
        format!("Command failed: {error}")
    } else if let Some(code) = outcome.exit_code.filter(|c| *c != 0) {
        format!("Command exited with code {code}.")
    } else {
        String::new()
    }
}

/// What people read on the card of a command that was cancelled or could not
/// run: one sentence, never the model's wrapped text (the output until then
/// is shown beside it).
pub fn failure_text(outcome: &ShellOutcome) -> String {
    match &outcome.error {
        _ if outcome.timed_out.is_some() => stopped_text(outcome.timed_out.unwrap_or_default()),
        _ if outcome.cancelled => "Command cancelled.".to_owned(),
        Some(error) => format!("Command failed: {error}"),
        None => display_text(outcome),
    }
}

fn stopped_text(limit: std::time::Duration) -> String {
    format!(
        "Command stopped: no output for {} seconds (tools.shell.inactivityTimeout).",
        limit.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_stopped_for_silence_says_so_in_0_61s_words() {
        let stopped = ShellOutcome {
            output: "started".into(),
            timed_out: Some(std::time::Duration::from_secs(90)),
            pgid: Some(7),
            ..Default::default()
        };
        assert_eq!(
            llm_text(&stopped),
            "<untrusted_context>\nCommand was automatically cancelled because it exceeded the timeout of 1.5 minutes without output. Below is the output before it was cancelled:\nstarted\n</untrusted_context>"
        );
        assert_eq!(
            failure_text(&stopped),
            "Command stopped: no output for 90 seconds (tools.shell.inactivityTimeout)."
        );
    }

    #[test]
    fn only_meaningful_fields() {
        let ok = ShellOutcome {
            output: "hi".into(),
            exit_code: Some(0),
            pgid: Some(21734),
            ..Default::default()
        };
        assert_eq!(
            llm_text(&ok),
            "<untrusted_context>\nOutput: hi\nProcess Group PGID: 21734\n</untrusted_context>"
        );
        assert_eq!(display_text(&ok), "hi");

        let all = ShellOutcome {
            output: String::new(),
            error: Some("boom".into()),
            exit_code: Some(2),
            signal: Some(9),
            background_pids: vec![5, 6],
            pgid: Some(4),
            cancelled: false,
            timed_out: None,
        };
        assert_eq!(
            llm_text(&all),
            "<untrusted_context>\nOutput: (empty)\nError: boom\nExit Code: 2\nSignal: 9\nBackground PIDs: 5, 6\nProcess Group PGID: 4\n</untrusted_context>"
        );
        assert_eq!(display_text(&all), "Command terminated by signal 9.");
        assert_eq!(failure_text(&all), "Command failed: boom");
    }

    #[test]
    fn cancelled_commands() {
        let cancelled = ShellOutcome {
            output: "partial".into(),
            cancelled: true,
            ..Default::default()
        };
        assert_eq!(
            llm_text(&cancelled),
            "<untrusted_context>\nCommand was cancelled by the user before it finished. Output until then:\npartial\n</untrusted_context>"
        );
        assert_eq!(
            display_text(&cancelled),
            "Command cancelled.\n\nOutput before cancellation:\npartial"
        );
        // The card shows the output beside it.
        assert_eq!(failure_text(&cancelled), "Command cancelled.");
    }
}
