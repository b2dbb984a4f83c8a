//! Slash commands in `-p` prompts, as Gemini CLI's non-interactive mode
//! treats them: a custom command or an MCP prompt is expanded and sent (the
//! core does that), a command whose result needs the interactive UI
//! (`/restore` with checkpointing on) stops the run with an input error,
//! and anything else — the other built-in commands included — is sent to
//! the model as typed.

use crate::exit::Fatal;

/// Gemini CLI's message when a command cannot run without its UI.
pub const UNSUPPORTED: &str =
    "Exiting due to command result that is not supported in non-interactive mode.";

/// The input error a headless run stops with for `prompt`, if any.
pub fn unsupported(prompt: &str, checkpointing: bool) -> Option<Fatal> {
    let (name, _) = gd_core::commands::parse_invocation(prompt)?;
    let command = gd_core::commands::built_in(name, checkpointing)?;
    (command.name == "restore").then(|| Fatal::input(UNSUPPORTED))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_restore_needs_the_ui() {
        assert!(unsupported("/restore", true).is_some());
        assert!(unsupported("/restore 2026-abc", true).is_some());
        assert!(
            unsupported("/restore", false).is_none(),
            "not a command without checkpointing"
        );
        for prompt in [
            "/stats",
            "/clear",
            "/compress",
            "/mcp",
            "/memory show",
            "hello",
            "/usr/bin/env",
        ] {
            assert!(unsupported(prompt, true).is_none(), "{prompt}");
        }
    }
}
