//! Custom slash commands (Gemini CLI's custom commands): TOML files in
//! `~/.gemini/commands/` (user) and `<workspace>/.gemini/commands/`
//! (project, winning over a user command of the same name). A file's path
//! below the folder names the command: `git/commit.toml` is `/git:commit`.
//!
//! ```toml
//! description = "Reviews a file"   # optional
//! prompt = "Review @{src/main.rs} for {{args}}. Status: !{git status --short}"
//! ```
//!
//! [`template`] splits a prompt into text, `!{shell}` and `@{file}` pieces
//! and substitutes `{{args}}`; the agent runs the shell pieces as
//! `run_shell_command` calls (so the usual policy and confirmation apply)
//! and reads the file pieces like `@`-references.

pub mod catalog;
pub mod mcp_args;
pub mod template;

pub use catalog::{Catalog, Target};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gd_protocol::SlashCommandSource;
use serde::Deserialize;
use tracing::warn;

/// A built-in command: the frontends handle these (the desktop UI with
/// `Op::Clear`, `Op::Compress`, `Op::Stats`…); the core only offers them in
/// autocomplete and keeps their names from being taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltIn {
    pub name: &'static str,
    /// Other names Gemini CLI accepts for it.
    pub alt_names: &'static [&'static str],
    pub description: &'static str,
}

/// The built-in commands, in the order they are offered.
pub const BUILT_IN: &[BuiltIn] = &[
    BuiltIn {
        name: "clear",
        alt_names: &["new"],
        description: "Clear the screen and start a new conversation",
    },
    BuiltIn {
        name: "compress",
        alt_names: &["summarize", "compact"],
        description: "Replace the conversation so far with a summary, to save context",
    },
    BuiltIn {
        name: "memory",
        alt_names: &[],
        description: "Show, refresh or add to the memory (GEMINI.md): /memory show|refresh|add <text>",
    },
    BuiltIn {
        name: "mcp",
        alt_names: &[],
        description: "MCP servers, their state and tools: /mcp [list|auth|enable|disable|refresh] [server]",
    },
    BuiltIn {
        name: "stats",
        alt_names: &["usage"],
        description: "Session statistics: time, tokens per model, tool calls. /stats [session|model|tools]",
    },
    BuiltIn {
        name: "restore",
        alt_names: &[],
        description: "List the checkpoints taken before edits, or restore one: /restore [id]",
    },
    BuiltIn {
        name: "policies",
        alt_names: &[],
        description: "The policy rules of every tier: edit them, and test which rule decides a call",
    },
    BuiltIn {
        name: "agents",
        alt_names: &[],
        description: "The subagents the model can call, where each is defined, and files that could not be read: /agents [list]",
    },
    BuiltIn {
        name: "skills",
        alt_names: &[],
        description: "Agent skills: list them, or turn one off or on: /skills [list|enable|disable] [name]",
    },
    BuiltIn {
        name: "hooks",
        alt_names: &[],
        description: "The configured hooks and their last runs: /hooks [list|enable|disable] [name]",
    },
    BuiltIn {
        name: "extensions",
        alt_names: &[],
        description: "Installed extensions: list, install, enable or disable, update, uninstall",
    },
];

/// The built-in command `name` (or one of its other names) is, if any.
/// `/restore` exists only with checkpointing on, as in Gemini CLI.
pub fn built_in(name: &str, checkpointing: bool) -> Option<&'static BuiltIn> {
    BUILT_IN
        .iter()
        .filter(|b| checkpointing || b.name != "restore")
        .find(|b| b.name == name || b.alt_names.contains(&name))
}

/// A custom command loaded from a TOML file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    pub name: String,
    pub description: String,
    pub prompt: String,
    pub path: PathBuf,
    pub source: SlashCommandSource,
}

#[derive(Deserialize)]
struct CommandFile {
    prompt: String,
    description: Option<String>,
}

/// The custom commands by name, and a message per file that could not be
/// used. `workspace` is `None` in an untrusted folder: its commands are not
/// loaded.
pub fn load_commands(
    home: Option<&Path>,
    workspace: Option<&Path>,
) -> (BTreeMap<String, CustomCommand>, Vec<String>) {
    let mut commands = BTreeMap::new();
    let mut problems = Vec::new();
    let dirs = [
        home.map(|h| (h.join(".gemini/commands"), SlashCommandSource::User)),
        workspace.map(|w| (w.join(".gemini/commands"), SlashCommandSource::Project)),
    ];
    for (dir, source) in dirs.into_iter().flatten() {
        let mut files = Vec::new();
        collect_toml(&dir, &mut files);
        files.sort();
        for path in files {
            match load_one(&dir, &path, source) {
                Ok(command) => {
                    commands.insert(command.name.clone(), command);
                }
                Err(message) => {
                    warn!(path = %path.display(), %message, "custom command skipped");
                    problems.push(format!(
                        "Custom command {} skipped: {message}",
                        path.display()
                    ));
                }
            }
        }
    }
    if let Some(home) = home {
        add_extension_commands(
            home,
            workspace.unwrap_or(home),
            &mut commands,
            &mut problems,
        );
    }
    (commands, problems)
}

/// The enabled extensions' `commands/**/*.toml`. A name a user or project
/// command (or an earlier extension) already has becomes
/// `<extension>:<name>`, as 0.61's command resolver renames extension
/// commands.
fn add_extension_commands(
    home: &Path,
    workspace: &Path,
    commands: &mut BTreeMap<String, CustomCommand>,
    problems: &mut Vec<String>,
) {
    let loaded = crate::extensions::load(Some(home), workspace);
    for ext in loaded.enabled() {
        let dir = ext.path.join("commands");
        for file in &ext.contributions.commands {
            match load_one(&dir, &file.path, SlashCommandSource::User) {
                Ok(mut command) => {
                    if commands.contains_key(&command.name) {
                        let base = format!("{}:{}", ext.manifest.name, command.name);
                        let mut name = base.clone();
                        let mut n = 1;
                        while commands.contains_key(&name) {
                            name = format!("{base}{n}");
                            n += 1;
                        }
                        command.name = name;
                    }
                    commands.insert(command.name.clone(), command);
                }
                Err(message) => problems.push(format!(
                    "Custom command {} (extension {}) skipped: {message}",
                    file.path.display(),
                    ext.manifest.name
                )),
            }
        }
    }
}

fn collect_toml(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_toml(&path, out),
            Ok(_) if path.extension().is_some_and(|e| e == "toml") => out.push(path),
            _ => {}
        }
    }
}

fn load_one(dir: &Path, path: &Path, source: SlashCommandSource) -> Result<CustomCommand, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let file: CommandFile = toml::from_str(&text).map_err(|e| e.message().to_owned())?;
    let relative = path.strip_prefix(dir).map_err(|e| e.to_string())?;
    let name = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().replace(':', "_"))
        .collect::<Vec<_>>()
        .join(":");
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("'{name}' is not a usable command name"));
    }
    let description = file
        .description
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(|| format!("Custom command from {}", relative.display()));
    Ok(CustomCommand {
        name,
        description,
        prompt: file.prompt,
        path: path.to_path_buf(),
        source,
    })
}

/// `(name, args)` when `text` is `/name` or `/name args`. Like Gemini CLI,
/// `//…` and `/*…` are not commands (a comment, a path with an empty
/// segment).
pub fn parse_invocation(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    if rest.starts_with(['/', '*']) {
        return None;
    }
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest.trim_end(), ""),
    };
    (!name.is_empty()).then_some((name, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invocations() {
        assert_eq!(
            parse_invocation("/git:commit fix it "),
            Some(("git:commit", "fix it"))
        );
        assert_eq!(parse_invocation("  /plan"), Some(("plan", "")));
        assert_eq!(parse_invocation("/"), None);
        assert_eq!(parse_invocation("no slash"), None);
        assert_eq!(parse_invocation("// a comment"), None);
        assert_eq!(parse_invocation("/* a comment */"), None);
    }
}
