//! `--list-checkpoints` and `--restore-checkpoint`: the current folder's
//! checkpoints, without a session (no model, no credentials needed).
//!
//! Gemini CLI lists and restores checkpoints with its interactive `/restore`
//! command; headless, these two flags do the code part.

use std::io::Write;

use gd_checkpoint::{CheckpointConfig, CheckpointError, ShadowRepo};
use gd_core::checkpoint::{info, restored_files};
use gd_protocol::RestoreAction;
use serde_json::json;

use crate::args::{Args, OutputFormat};
use crate::exit;

pub fn run(args: &Args) -> i32 {
    match run_inner(args) {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            let code = match e {
                CheckpointError::InvalidId(_) | CheckpointError::NotFound(_) => exit::INPUT_ERROR,
                _ => exit::GENERAL_ERROR,
            };
            let _ = writeln!(std::io::stderr(), "Error: {e}");
            code
        }
    }
}

fn run_inner(args: &Args) -> Result<(), CheckpointError> {
    let workspace = std::env::current_dir().map_err(|e| CheckpointError::Io {
        path: ".".into(),
        source: e,
    })?;
    let env = |name: &str| std::env::var(name).ok();
    let root = CheckpointConfig::default_root(&env, gd_core::launch::home_dir().as_deref())
        .ok_or_else(|| CheckpointError::Io {
            path: "~".into(),
            source: std::io::Error::other("no home directory (HOME is not set)"),
        })?;
    let repo = ShadowRepo::open(&CheckpointConfig::new(root), &workspace)?;
    let json = args.output_format != OutputFormat::Text;
    let mut out = std::io::stdout().lock();
    if let Some(id) = &args.restore_checkpoint {
        let report = repo.restore(id)?;
        let files = restored_files(&report);
        if json {
            let value = json!({
                "checkpoint_id": report.checkpoint,
                "files": files,
                "undo_checkpoint_id": report.undo,
            });
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        } else {
            for file in &files {
                let action = match file.action {
                    RestoreAction::Recreated => "recreated",
                    RestoreAction::Removed => "removed",
                    RestoreAction::Reverted => "reverted",
                };
                let _ = writeln!(out, "{action:9} {}", file.path);
            }
            let _ = writeln!(
                out,
                "Restored checkpoint {id} ({} files changed).{}",
                files.len(),
                report
                    .undo
                    .map(|u| format!(" To undo: gemini-desktop-cli --restore-checkpoint {u}"))
                    .unwrap_or_default()
            );
        }
        return Ok(());
    }
    let list: Vec<_> = repo.list()?.iter().map(info).collect();
    if json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        );
    } else if list.is_empty() {
        let _ = writeln!(out, "No checkpoints for {}.", repo.workspace().display());
    } else {
        for c in &list {
            let what = match (&c.tool, &c.label) {
                (Some(tool), _) => format!("{tool} {}", c.files.join(", ")),
                (None, Some(label)) => label.clone(),
                (None, None) => String::new(),
            };
            let scope = match c.scope {
                gd_protocol::CheckpointScope::Full => "",
                gd_protocol::CheckpointScope::Partial => " (edited files only)",
            };
            let _ = writeln!(out, "{}  {}  {what}{scope}", c.checkpoint_id, c.created_at);
        }
    }
    Ok(())
}
