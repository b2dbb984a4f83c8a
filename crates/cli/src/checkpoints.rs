//! `--list-checkpoints` and `--restore-checkpoint`: the current folder's
//! checkpoints, without a session (no model, no credentials needed).
//!
//! Gemini CLI lists and restores checkpoints with its interactive `/restore`
//! and `/rewind` commands; headless, these flags do the same through the
//! path the desktop app uses (`gd_core::restore`): `--restore-mode` picks
//! the code, the conversation (the edit's session in the history store) or
//! both, as `/rewind` offers.

use std::io::Write;
use std::sync::Arc;

use gd_checkpoint::{CheckpointConfig, CheckpointError, ShadowRepo};
use gd_core::checkpoint::info;
use gd_core::restore::{RestoreChoice, RestoreError, Restored};
use gd_protocol::RestoreAction;
use gd_store::Store;
use serde_json::json;

use crate::args::{Args, OutputFormat, RestoreMode};
use crate::exit;

pub async fn run(args: &Args) -> i32 {
    match run_inner(args).await {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            let code = match &e {
                RestoreError::Checkpoint {
                    source: CheckpointError::InvalidId(_) | CheckpointError::NotFound(_),
                    ..
                }
                | RestoreError::Nothing
                | RestoreError::NoConversation(_)
                | RestoreError::OtherSession { .. }
                | RestoreError::ConversationGone(_) => exit::INPUT_ERROR,
                _ => exit::GENERAL_ERROR,
            };
            let message = match e {
                // The checkpoint's own error reads better without our prefix.
                RestoreError::Checkpoint { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            let _ = writeln!(std::io::stderr(), "Error: {message}");
            code
        }
    }
}

async fn run_inner(args: &Args) -> Result<(), RestoreError> {
    let checkpoint_error = |source| RestoreError::Checkpoint {
        id: args.restore_checkpoint.clone().unwrap_or_default(),
        source,
    };
    let workspace = std::env::current_dir()
        .map_err(|e| CheckpointError::Io {
            path: ".".into(),
            source: e,
        })
        .map_err(checkpoint_error)?;
    let env = |name: &str| std::env::var(name).ok();
    let root = CheckpointConfig::default_root(&env, gd_core::launch::home_dir().as_deref())
        .ok_or_else(|| CheckpointError::Io {
            path: "~".into(),
            source: std::io::Error::other("no home directory (HOME is not set)"),
        })
        .map_err(checkpoint_error)?;
    let repo = Arc::new(
        ShadowRepo::open(&CheckpointConfig::new(root), &workspace).map_err(checkpoint_error)?,
    );
    let json = args.format() != OutputFormat::Text;
    if let Some(id) = &args.restore_checkpoint {
        let restored = restore(&repo, id, args.restore_mode).await?;
        print_restored(&restored, json);
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    let list: Vec<_> = repo
        .list()
        .map_err(checkpoint_error)?
        .iter()
        .map(info)
        .collect();
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

/// Restores through `gd_core::restore`, the conversation in the history
/// store (the session the checkpoint belongs to).
async fn restore(
    repo: &Arc<ShadowRepo>,
    id: &str,
    mode: RestoreMode,
) -> Result<Restored, RestoreError> {
    let choice = RestoreChoice {
        code: mode != RestoreMode::Conversation,
        conversation: mode != RestoreMode::Code,
    };
    let store = if choice.conversation {
        Some(Store::open_default().map_err(|e| RestoreError::History(e.to_string()))?)
    } else {
        None
    };
    let rewind_store = store.clone();
    gd_core::restore::restore(repo, id, choice, None, store.as_ref(), async move |point| {
        let Some(store) = rewind_store else {
            return Err("the history is not open".to_owned());
        };
        tokio::task::spawn_blocking(move || store.rewind(&point.session_id, &point.message_id))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())
    })
    .await
}

fn print_restored(restored: &Restored, json: bool) {
    let mut out = std::io::stdout().lock();
    if json {
        let value = json!({
            "checkpoint_id": restored.checkpoint_id,
            "files": restored.files,
            "undo_checkpoint_id": restored.undo_checkpoint_id,
            "conversation": restored.conversation,
        });
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
        return;
    }
    for file in &restored.files {
        let action = match file.action {
            RestoreAction::Recreated => "recreated",
            RestoreAction::Removed => "removed",
            RestoreAction::Reverted => "reverted",
        };
        let _ = writeln!(out, "{action:9} {}", file.path);
    }
    let id = &restored.checkpoint_id;
    if let Some(conversation) = &restored.conversation {
        let _ = writeln!(
            out,
            "Rewound the conversation: removed {} message{} from the edit's prompt on.",
            conversation.removed,
            if conversation.removed == 1 { "" } else { "s" }
        );
    }
    if restored.conversation.is_none() || !restored.files.is_empty() {
        let _ = writeln!(
            out,
            "Restored checkpoint {id} ({} files changed).{}",
            restored.files.len(),
            restored
                .undo_checkpoint_id
                .as_ref()
                .map(|u| format!(" To undo: gemini-desktop-cli --restore-checkpoint {u}"))
                .unwrap_or_default()
        );
    }
}
