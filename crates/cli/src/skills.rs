//! `gemini-desktop-cli skills list|enable|disable` and `/skills …` as a
//! headless prompt (Gemini CLI 0.61's `gemini skills` and `/skills`): the
//! agent skills a session in the current directory has, and
//! `skills.disabled` in the user's or the workspace's settings.json.
//!
//! `list` prints a table (or `{skills, errors}` with `-o json`); skill files
//! that could not be read are printed on standard error as
//! `path:line: message` and do not change the exit code.

use std::io::Write;
use std::path::Path;

use gd_core::config::SessionConfig;
use gd_core::launch::home_dir;
use gd_core::skills::{SkillCatalog, enablement, load};
use gd_protocol::{SettingsScope, SkillInfo};

use crate::args::{Args, OutputFormat, ScopeArg, SkillsCommand};
use crate::exit;

/// Runs one `skills` subcommand; returns the exit code.
pub fn run(command: &SkillsCommand, format: Option<OutputFormat>, skip_trust: bool) -> i32 {
    match command {
        SkillsCommand::List { all, output_format } => {
            let (workspace, home, loaded) = match crate::agents::load_here(skip_trust) {
                Ok(here) => here,
                Err(code) => return code,
            };
            let trusted = loaded.trust.is_trusted();
            if !trusted {
                eprintln!(
                    "This folder is not trusted: its .gemini/skills and .agents/skills are not read (use --skip-trust or trust it)."
                );
            }
            let catalog = load(loaded.settings(), home.as_deref(), &workspace, trusted);
            print(&catalog, output_format.or(format), *all)
        }
        SkillsCommand::Enable { name, scope } | SkillsCommand::Disable { name, scope } => {
            let enabled = matches!(command, SkillsCommand::Enable { .. });
            match std::env::current_dir() {
                Ok(workspace) => toggle(name, enabled, *scope, home_dir().as_deref(), &workspace),
                Err(e) => {
                    eprintln!("Error: cannot use the current directory: {e}");
                    exit::INPUT_ERROR
                }
            }
        }
    }
}

fn toggle(
    name: &str,
    enabled: bool,
    scope: ScopeArg,
    home: Option<&Path>,
    workspace: &Path,
) -> i32 {
    let Some(home) = home else {
        eprintln!("Error: no home folder to find the settings in.");
        return exit::CONFIG_ERROR;
    };
    let scope = match scope {
        ScopeArg::User => SettingsScope::User,
        ScopeArg::Workspace => SettingsScope::Workspace,
    };
    match enablement::change(scope, home, workspace, name, enabled) {
        Ok(changed) => {
            println!("{}", enablement::describe(name, enabled, &changed));
            exit::SUCCESS
        }
        Err(message) => {
            eprintln!("Error: {message}");
            exit::CONFIG_ERROR
        }
    }
}

/// `/skills`, `/skills list`, `/skills enable <name>`, `/skills disable
/// <name>` as a headless prompt: done here, nothing sent to the model.
/// `None` when the prompt is something else.
pub fn headless_command(prompt: &str, config: &SessionConfig, args: &Args) -> Option<i32> {
    let ("skills", rest) = gd_core::commands::parse_invocation(prompt.trim())? else {
        return None;
    };
    let words: Vec<&str> = rest.split_whitespace().collect();
    let workspace = config.workspace_dirs.first()?;
    match words.as_slice() {
        [] | ["list"] => Some(print(&config.skills, Some(args.format()), false)),
        ["list", "all"] | ["list", "--all"] => {
            Some(print(&config.skills, Some(args.format()), true))
        }
        ["enable", name] => Some(toggle(
            name,
            true,
            ScopeArg::User,
            home_dir().as_deref(),
            workspace,
        )),
        ["disable", name] => Some(toggle(
            name,
            false,
            ScopeArg::User,
            home_dir().as_deref(),
            workspace,
        )),
        _ => {
            eprintln!("Usage: /skills [list [all]|enable <name>|disable <name>]");
            Some(exit::INPUT_ERROR)
        }
    }
}

/// Prints the catalog's skills (the hidden ones too with `all`).
pub fn print(catalog: &SkillCatalog, format: Option<OutputFormat>, all: bool) -> i32 {
    for error in catalog.errors() {
        eprintln!("Skill loading error: {error}");
    }
    let skills: Vec<SkillInfo> = catalog
        .infos()
        .into_iter()
        .filter(|s| all || s.shadowed_by.is_none())
        .collect();
    let mut out = std::io::stdout().lock();
    let written = match format {
        Some(OutputFormat::Json | OutputFormat::StreamJson) => {
            let value = serde_json::json!({ "skills": skills, "errors": catalog.error_infos() });
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            )
        }
        _ => write!(out, "{}", table(&skills, catalog.is_off())),
    };
    match written {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            eprintln!("Error: cannot write the listing: {e}");
            exit::GENERAL_ERROR
        }
    }
}

fn table(skills: &[SkillInfo], off: bool) -> String {
    let mut text = String::new();
    if off {
        text.push_str("Skills are turned off (skills.enabled is false).\n");
    }
    if skills.is_empty() {
        text.push_str("No skills found.\n");
        return text;
    }
    for s in skills {
        let status = match (s.enabled, s.shadowed_by) {
            (_, Some(by)) => format!("hidden by a {} skill", crate::agents::source(by)),
            (true, None) => "enabled".into(),
            (false, None) => "disabled".into(),
        };
        text.push_str(&format!(
            "{}  [{}]  {status}\n",
            s.name,
            crate::agents::source(s.source)
        ));
        text.push_str(&format!("    {}\n", s.description.trim()));
        if let Some(location) = &s.location {
            text.push_str(&format!("    folder: {location}\n"));
        }
    }
    text
}
