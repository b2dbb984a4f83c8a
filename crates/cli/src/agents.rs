//! `gemini-desktop-cli agents list` (and `/agents` as a headless prompt):
//! the subagents a session in the current directory could call, what the
//! app's `/agents` panel shows. Built-in agents come first, then the
//! workspace's (trusted folders only) and the user's definition files.
//!
//! Text: a table on standard output; `--output-format json`: one object
//! `{agents: [AgentInfo], errors: [DefinitionError]}`. Files that could not
//! be read and broken `agents.overrides` entries are printed on standard
//! error (`path:line: message`); the exit code is 0 all the same, as for
//! `mcp list`, since the listing itself succeeded.

use std::io::Write;

use std::path::PathBuf;

use gd_core::launch::{TrustOverride, WorkspaceSettings, home_dir, load_workspace};
use gd_core::subagents::{AgentCatalog, listing, load};
use gd_protocol::{AgentInfo, DefinitionSource};

use crate::args::{AgentsCommand, OutputFormat};
use crate::exit;

/// Runs one `agents` subcommand; returns the exit code.
pub fn run(command: &AgentsCommand, format: Option<OutputFormat>, skip_trust: bool) -> i32 {
    match command {
        AgentsCommand::List { output_format } => list(output_format.or(format), skip_trust),
    }
}

/// Whether a headless prompt is the `/agents` command (`/agents` or
/// `/agents list`), which prints the listing instead of going to the model.
pub fn is_agents_command(prompt: &str) -> bool {
    matches!(
        gd_core::commands::parse_invocation(prompt.trim()),
        Some(("agents", args)) if args.trim().is_empty() || args.trim() == "list"
    )
}

/// The current directory, the home folder and the settings of a listing
/// (`agents list`, `skills list`), trusted or not as `skip_trust` and the
/// trust settings say; `Err` is the exit code after the error is printed.
pub(crate) fn load_here(
    skip_trust: bool,
) -> Result<(PathBuf, Option<PathBuf>, WorkspaceSettings), i32> {
    let workspace = std::env::current_dir().map_err(|e| {
        eprintln!("Error: cannot use the current directory: {e}");
        exit::INPUT_ERROR
    })?;
    let home = home_dir();
    let trust = if skip_trust {
        TrustOverride::Trust
    } else {
        TrustOverride::Decide
    };
    let loaded = load_workspace(&workspace, home.as_deref(), trust).map_err(|e| {
        eprintln!("Error: {e}");
        exit::CONFIG_ERROR
    })?;
    Ok((workspace, home, loaded))
}

/// Prints the listing for the current directory.
pub fn list(format: Option<OutputFormat>, skip_trust: bool) -> i32 {
    let (workspace, home, loaded) = match load_here(skip_trust) {
        Ok(here) => here,
        Err(code) => return code,
    };
    let trusted = loaded.trust.is_trusted();
    let catalog = load::load(loaded.settings(), home.as_deref(), &workspace, trusted);
    if !trusted {
        eprintln!(
            "This folder is not trusted: its .gemini/agents are not read (use --skip-trust or trust it)."
        );
    }
    print(&catalog, format)
}

/// Prints `catalog` (the problems on standard error, the listing on
/// standard output) in `format`.
pub fn print(catalog: &AgentCatalog, format: Option<OutputFormat>) -> i32 {
    for warning in catalog.launch_warnings() {
        eprintln!("{warning}");
    }
    let (agents, errors) = listing::listing(catalog);
    let mut out = std::io::stdout().lock();
    let written = match format {
        Some(OutputFormat::Json | OutputFormat::StreamJson) => {
            let value = serde_json::json!({ "agents": agents, "errors": errors });
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            )
        }
        _ => write!(out, "{}", table(&agents)),
    };
    match written {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            eprintln!("Error: cannot write the listing: {e}");
            exit::GENERAL_ERROR
        }
    }
}

/// The text listing: one row per agent, then its note if it has one.
pub fn table(agents: &[AgentInfo]) -> String {
    if agents.is_empty() {
        return "No agents available (experimental.enableAgents may be false).\n".into();
    }
    let header = [
        "NAME", "SOURCE", "KIND", "MODEL", "TURNS", "TIMEOUT", "STATUS",
    ];
    let rows: Vec<[String; 7]> = agents
        .iter()
        .map(|a| {
            [
                a.name.clone(),
                source(a.source).into(),
                format!("{:?}", a.kind).to_lowercase(),
                a.model.clone(),
                a.max_turns.to_string(),
                format!("{}m", a.timeout_mins),
                if a.enabled { "enabled" } else { "disabled" }.into(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<w$}  "));
            }
        }
        s.push('\n');
        s
    };
    let mut text = line(&header);
    for (row, agent) in rows.iter().zip(agents) {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        text.push_str(&line(&cells));
        text.push_str(&format!("    {}\n", agent.description.trim()));
        if let Some(path) = &agent.path {
            text.push_str(&format!("    file: {path}\n"));
        }
        if let Some(note) = &agent.note {
            text.push_str(&format!("    note: {note}\n"));
        }
    }
    text
}

pub(crate) fn source(source: DefinitionSource) -> &'static str {
    match source {
        DefinitionSource::BuiltIn => "built-in",
        DefinitionSource::User => "user",
        DefinitionSource::Workspace => "workspace",
        DefinitionSource::Extension => "extension",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_command() {
        assert!(is_agents_command("/agents"));
        assert!(is_agents_command(" /agents list "));
        assert!(!is_agents_command("/agents reload"));
        assert!(!is_agents_command("tell me about /agents"));
    }
}
