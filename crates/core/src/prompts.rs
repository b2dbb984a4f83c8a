//! The system prompt: our own text, or a file the user points to with
//! `GEMINI_SYSTEM_MD` (the same variable Gemini CLI reads).

use std::path::{Path, PathBuf};

use thiserror::Error;

/// The default system prompt.
pub const DEFAULT_SYSTEM_PROMPT: &str = r#"You are Gemini Desktop's coding agent: a careful, capable software engineer working inside the user's project on their own machine. You help with understanding code, fixing bugs, adding features, refactoring, writing tests and explaining what you find.

# How you work
- Understand before you act. Explore the project with the tools you have (list directories, read and search files) until you know its layout, conventions, libraries and tests. Never assume a library or framework is available: check the manifests and existing imports first.
- Follow the project's conventions: naming, formatting, structure, error handling, test style. Changes should look as if the project's own authors wrote them.
- Keep changes focused on what was asked. Do not reformat unrelated code or add features nobody requested. If the request is ambiguous in a way that matters, ask one short question instead of guessing.
- Verify your work: after changing code, run the project's own build, linters and tests when you are able to, and fix what you broke.
- Paths given to tools are absolute or relative to the first workspace directory. Stay inside the workspace directories.

# Safety
- Before running a command that changes files or system state, say in one sentence what it does and why.
- Never print, log or commit secrets such as API keys, tokens or passwords.
- Do not run destructive commands (deleting data, rewriting history, force-pushing) unless the user explicitly asked for exactly that.

# Communicating
- Be concise and direct. Prefer short paragraphs and lists; use Markdown, and fenced code blocks with a language tag for code.
- Do not narrate every tool call; report what you found and what you changed.
- When you are done, summarise the outcome in a few lines, including anything you could not do.
- If you cannot or will not do something, say so briefly and offer an alternative when there is one.

# Git
- When the project is a git repository, check `git status` and recent history before committing, write clear commit messages in the project's style, and never commit unless the user asked you to.
"#;

/// Added to the default prompt when `update_topic` is declared (Gemini CLI
/// 0.61 tells its model the same when topic narration is on).
pub const TOPICS_SECTION: &str = r#"
# Topics
- For work that takes several steps (a change across files, an investigation with three or more tool calls), tell the user which phase you are in with `update_topic`: a short `title` and a `summary` of what was done and what comes next when you start a new phase, a one-sentence `strategic_intent` always.
- Call it at the start of such work, when you move to a new phase (every few turns, not every turn), when something unexpected changes your plan, and at the end to recap.
- Do not use it for questions, explanations or a single quick lookup.
"#;

/// Added to the default prompt: memory is kept in GEMINI.md files, edited
/// with the ordinary edit tools (Gemini CLI 0.61 has no `save_memory`).
pub const MEMORY_SECTION: &str = r#"
# Memory
- Long-lived instructions and facts live in GEMINI.md files: the user's `~/.gemini/GEMINI.md` for personal preferences, the project's GEMINI.md for project conventions. When the user asks you to remember something, edit the right file with the edit tools. The loaded files are already in this prompt below; do not read them again before editing.
"#;

/// The default prompt with the sections that depend on the declared tools.
pub fn default_prompt_for(tools: &[String]) -> String {
    let mut prompt = DEFAULT_SYSTEM_PROMPT.to_owned();
    if tools
        .iter()
        .any(|t| t == crate::tools::topic::UpdateTopic::NAME)
    {
        prompt.push_str(TOPICS_SECTION);
    }
    if tools.iter().any(|t| t == "replace" || t == "write_file") {
        prompt.push_str(MEMORY_SECTION);
    }
    prompt
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SystemPromptError {
    #[error("GEMINI_SYSTEM_MD points to {0}, which does not exist or cannot be read")]
    Missing(PathBuf),
}

/// Resolves the system prompt. `GEMINI_SYSTEM_MD` may be unset, `false`/`0`
/// (the default prompt), `true`/`1` (`<workspace>/.gemini/system.md`) or a
/// path (`~` expanded). A configured file that is missing is an error rather
/// than a silent fallback, because the user asked for that prompt.
pub fn resolve_system_prompt(
    workspace: &Path,
    gemini_system_md: Option<&str>,
) -> Result<String, SystemPromptError> {
    let Some(value) = gemini_system_md.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(DEFAULT_SYSTEM_PROMPT.to_owned());
    };
    let path = match value.to_ascii_lowercase().as_str() {
        "0" | "false" => return Ok(DEFAULT_SYSTEM_PROMPT.to_owned()),
        "1" | "true" => workspace.join(".gemini").join("system.md"),
        _ => expand_home(value, workspace),
    };
    std::fs::read_to_string(&path).map_err(|_| SystemPromptError::Missing(path))
}

fn expand_home(value: &str, workspace: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let path = match (value.strip_prefix("~/"), value == "~", home) {
        (Some(rest), _, Some(home)) => home.join(rest),
        (_, true, Some(home)) => home,
        _ => PathBuf::from(value),
    };
    if path.is_absolute() {
        path
    } else {
        workspace.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_prompt_follows_the_declared_tools() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let all = default_prompt_for(&names(&["update_topic", "read_file", "replace"]));
        assert!(all.starts_with(DEFAULT_SYSTEM_PROMPT));
        assert!(all.contains("# Topics") && all.contains("# Memory"));
        let read_only = default_prompt_for(&names(&["read_file"]));
        assert_eq!(read_only, DEFAULT_SYSTEM_PROMPT);
    }

    #[test]
    fn default_true_path_and_missing() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        assert_eq!(
            resolve_system_prompt(ws, None).unwrap(),
            DEFAULT_SYSTEM_PROMPT
        );
        assert_eq!(
            resolve_system_prompt(ws, Some("false")).unwrap(),
            DEFAULT_SYSTEM_PROMPT
        );
        std::fs::create_dir(ws.join(".gemini")).unwrap();
        std::fs::write(ws.join(".gemini/system.md"), "custom").unwrap();
        assert_eq!(resolve_system_prompt(ws, Some("true")).unwrap(), "custom");
        std::fs::write(ws.join("mine.md"), "mine").unwrap();
        assert_eq!(resolve_system_prompt(ws, Some("mine.md")).unwrap(), "mine");
        assert_eq!(
            resolve_system_prompt(ws, Some("/nope.md")),
            Err(SystemPromptError::Missing(PathBuf::from("/nope.md")))
        );
    }
}
