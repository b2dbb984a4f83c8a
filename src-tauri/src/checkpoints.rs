//! The checkpoint commands: list a session's workspace checkpoints and restore one, and the
//! checkpoints of a stored session for the history browser.
//!
//! Listing and restoring only submit an op to the session (see `gd_core`'s checkpoint ops): the
//! answers (`checkpoints`, `checkpoint_restored`, `checkpoint_error`) arrive on the session's
//! event channel, queued behind a running turn like every other op, so a restore never races an
//! edit the agent is making. A restore from the history resumes the edit's session first (the
//! UI does that), so the conversation half applies to it.

use gd_protocol::{CheckpointInfo, CommandError, CommandErrorKind, Op};
use tauri::State;

use crate::history::History;
use crate::state::AppState;

/// Asks the session for its workspace's checkpoints (answered by a `checkpoints` event,
/// newest first, or `checkpoint_error`).
#[tauri::command]
pub fn list_checkpoints(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::ListCheckpoints)
}

/// Restores a checkpoint: `code` puts the workspace's files back as they were before the edit,
/// `conversation` truncates the session's history at the prompt of the edit's turn (the
/// session's own checkpoints only), both does the code then the conversation. Answered by
/// `checkpoint_restored` or `checkpoint_error`.
#[tauri::command]
pub fn restore_checkpoint(
    state: State<'_, AppState>,
    session_id: String,
    checkpoint_id: String,
    code: bool,
    conversation: bool,
) -> Result<(), CommandError> {
    state.sessions.submit(
        &session_id,
        Op::RestoreCheckpoint {
            checkpoint_id,
            code,
            conversation,
        },
    )
}

/// The checkpoints of a stored session (its edits and the snapshots taken before its restores),
/// newest first, read from its workspace's shadow repository without starting it: the history
/// browser offers Restore on the transcript's edits that have one. Empty when there are none.
#[tauri::command]
pub async fn history_checkpoints(
    history: State<'_, History>,
    session_id: String,
) -> Result<Vec<CheckpointInfo>, CommandError> {
    let store = history.store()?;
    tauri::async_runtime::spawn_blocking(move || {
        let session = store
            .session(&session_id)
            .map_err(|e| input(format!("Cannot read the session history: {e}")))?
            .ok_or_else(|| input(format!("No session {session_id} in the history.")))?;
        let Some(root) = gd_core::checkpoint::default_root() else {
            return Ok(Vec::new());
        };
        gd_core::checkpoint::session_checkpoints(
            &root,
            std::path::Path::new(&session.workspace),
            &session_id,
        )
        .map_err(|e| input(format!("Cannot read the checkpoints: {e}")))
    })
    .await
    .map_err(|e| input(e.to_string()))?
}

fn input(message: impl Into<String>) -> CommandError {
    CommandError::new(CommandErrorKind::Input, message)
}
