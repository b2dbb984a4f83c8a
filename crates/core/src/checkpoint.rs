//! The session's side of checkpoints (see `gd-checkpoint`): which tool
//! calls get one, linking them to the session, message and call, and
//! restoring.
//!
//! Every approved `write_file` / `replace` gets a checkpoint right before it
//! runs (whether the user or the policy approved it), so any edit can be
//! undone. The primary workspace is checkpointed; edits in other workspace
//! directories are not (their own shadow repositories would each need a
//! baseline).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gd_checkpoint::{
    ChangeKind, Checkpoint, CheckpointConfig, CheckpointError, CheckpointKind, CheckpointMeta,
    Checkpointer, RestoreReport, ShadowRepo,
};
use gd_protocol::{CheckpointInfo, CheckpointScope, RestoreAction, RestoredFile};
use serde_json::Value;
use tracing::debug;

use crate::tools::{EDIT_TOOLS, files};

/// A session's checkpoints of its primary workspace.
#[derive(Debug)]
pub struct SessionCheckpoints {
    checkpointer: Checkpointer,
    /// The conversation's id (a new one after `/clear`).
    session_id: Mutex<String>,
    /// The stored id of the running turn's prompt (see
    /// [`CheckpointMeta::message_id`]).
    message_id: Mutex<Option<String>>,
}

impl SessionCheckpoints {
    /// Opens (creating if needed) the shadow repository of `workspace`.
    pub fn open(
        config: &CheckpointConfig,
        workspace: &Path,
        session_id: &str,
    ) -> Result<Self, CheckpointError> {
        Ok(Self {
            checkpointer: Checkpointer::new(ShadowRepo::shared(config, workspace)?),
            session_id: Mutex::new(session_id.to_owned()),
            message_id: Mutex::new(None),
        })
    }

    /// Starts reading the workspace into the shadow repository in the
    /// background, so that the first edit's checkpoint is quick.
    pub fn start_baseline(&self) {
        if let Err(e) = self.checkpointer.start_baseline() {
            tracing::warn!(error = %e, "cannot start the checkpoint baseline");
        }
    }

    pub fn checkpointer(&self) -> &Checkpointer {
        &self.checkpointer
    }

    pub fn workspace(&self) -> &Path {
        self.checkpointer.repo().workspace()
    }

    /// Links the checkpoints from now on to this recorded message (the
    /// turn's prompt in the history store; `None` when it is not recorded).
    pub fn set_message_id(&self, id: Option<String>) {
        *self.message_id.lock().unwrap_or_else(|e| e.into_inner()) = id;
    }

    /// Links the checkpoints from now on to this conversation (`/clear`).
    pub fn set_session_id(&self, id: &str) {
        *self.session_id.lock().unwrap_or_else(|e| e.into_inner()) = id.to_owned();
    }

    /// Whether calls of `tool` get a checkpoint: the edit tools.
    pub fn covers(tool: &str) -> bool {
        EDIT_TOOLS.contains(&tool)
    }

    /// The workspace-relative file a call will write, if it is in the
    /// primary workspace.
    fn touched(&self, args: &Value) -> Option<String> {
        let path = args.get("file_path")?.as_str()?;
        let full = files::resolve(self.workspace(), path);
        let relative = full.strip_prefix(self.workspace()).ok()?;
        let relative = relative.to_str()?;
        (!relative.is_empty()).then(|| relative.to_owned())
    }

    /// The checkpoint before an approved edit, within the time budget (see
    /// [`Checkpointer::checkpoint`]). `None` when the call's file is not in
    /// the primary workspace.
    pub async fn before_edit(
        self: &Arc<Self>,
        call_id: &str,
        tool: &str,
        args: &Value,
    ) -> Option<Result<Checkpoint, CheckpointError>> {
        let Some(file) = self.touched(args) else {
            debug!(
                call_id,
                "the edit is outside the primary workspace: no checkpoint"
            );
            return None;
        };
        let meta = CheckpointMeta {
            session_id: Some(
                self.session_id
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone(),
            ),
            message_id: self
                .message_id
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            call_id: Some(call_id.to_owned()),
            tool: Some(tool.to_owned()),
            files: vec![file],
            label: None,
        };
        let this = self.clone();
        Some(
            tokio::task::spawn_blocking(move || this.checkpointer.checkpoint(&meta))
                .await
                .unwrap_or_else(|e| Err(join_error(e))),
        )
    }

    /// Every checkpoint of the workspace, newest first.
    pub async fn list(self: &Arc<Self>) -> Result<Vec<CheckpointInfo>, CheckpointError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.checkpointer.repo().list())
            .await
            .unwrap_or_else(|e| Err(join_error(e)))
            .map(|list| list.iter().map(info).collect())
    }
}

/// Where the shadow repositories are (`$GEMINI_DESKTOP_CHECKPOINT_DIR`, else
/// `~/.gemini/gemini-desktop/checkpoints`).
pub fn default_root() -> Option<PathBuf> {
    let env = |name: &str| std::env::var(name).ok();
    CheckpointConfig::default_root(&env, crate::launch::home_dir().as_deref())
}

/// The checkpoints of a recorded session, newest first, read from its
/// workspace's shadow repository without a running session (the history
/// browser offers them on the transcript's edits): its edits and the
/// snapshots taken before its restores. None when the folder is gone or
/// has no checkpoints (no repository is created for asking).
pub fn session_checkpoints(
    root: &Path,
    workspace: &Path,
    session_id: &str,
) -> Result<Vec<CheckpointInfo>, CheckpointError> {
    let Ok(workspace) = workspace.canonicalize() else {
        return Ok(Vec::new());
    };
    if !ShadowRepo::dir_for(root, &workspace).join("HEAD").is_file() {
        return Ok(Vec::new());
    }
    let repo = ShadowRepo::open(&CheckpointConfig::new(root), &workspace)?;
    Ok(repo
        .list()?
        .iter()
        .filter(|c| c.meta.session_id.as_deref() == Some(session_id))
        .map(info)
        .collect())
}

pub(crate) fn join_error(e: tokio::task::JoinError) -> CheckpointError {
    CheckpointError::Io {
        path: PathBuf::new(),
        source: std::io::Error::other(format!("the checkpoint task failed: {e}")),
    }
}

/// The protocol's view of a checkpoint.
pub fn info(checkpoint: &Checkpoint) -> CheckpointInfo {
    CheckpointInfo {
        checkpoint_id: checkpoint.id.clone(),
        scope: scope(checkpoint.kind),
        created_at: checkpoint.created_at.clone(),
        session_id: checkpoint.meta.session_id.clone(),
        message_id: checkpoint.meta.message_id.clone(),
        call_id: checkpoint.meta.call_id.clone(),
        tool: checkpoint.meta.tool.clone(),
        files: checkpoint.meta.files.clone(),
        label: checkpoint.meta.label.clone(),
    }
}

pub fn scope(kind: CheckpointKind) -> CheckpointScope {
    match kind {
        CheckpointKind::Full => CheckpointScope::Full,
        CheckpointKind::Partial => CheckpointScope::Partial,
    }
}

/// The protocol's view of what a restore changed.
pub fn restored_files(report: &RestoreReport) -> Vec<RestoredFile> {
    report
        .changes
        .iter()
        .map(|c| RestoredFile {
            path: c.path.clone(),
            action: match c.kind {
                ChangeKind::Recreate => RestoreAction::Recreated,
                ChangeKind::Remove => RestoreAction::Removed,
                ChangeKind::Revert => RestoreAction::Reverted,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_touched_file_is_workspace_relative() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let cps =
            SessionCheckpoints::open(&CheckpointConfig::new(data.path()), ws.path(), "s").unwrap();
        let root = ws.path().canonicalize().unwrap();
        assert_eq!(
            cps.touched(&json!({"file_path": "src/a.rs"})).as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(
            cps.touched(&json!({"file_path": root.join("b/../c.txt").to_str().unwrap()}))
                .as_deref(),
            Some("c.txt")
        );
        assert_eq!(cps.touched(&json!({"file_path": "/etc/passwd"})), None);
        assert_eq!(cps.touched(&json!({"content": "x"})), None);
        assert!(SessionCheckpoints::covers("replace"));
        assert!(!SessionCheckpoints::covers("run_shell_command"));
    }
}
