//! The checkpoint commands: list a session's workspace checkpoints and restore one.
//!
//! Both only submit an op to the session (see `gd_core`'s checkpoint ops): the answers
//! (`checkpoints`, `checkpoint_restored`, `checkpoint_error`) arrive on the session's event
//! channel, queued behind a running turn like every other op, so a restore never races an edit
//! the agent is making.

use gd_protocol::{CommandError, Op};
use tauri::State;

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
/// `conversation` truncates the history at that message (refused by the session until the
/// history store exists). Answered by `checkpoint_restored` or `checkpoint_error`.
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

/// Truncates a recorded session's conversation at `message_id`: that message and everything
/// after it leave the history and the model's context (restoring "the conversation" of a
/// checkpoint). Answered by `rewound`, or a non-fatal `error` event.
#[tauri::command]
pub fn rewind_conversation(
    state: State<'_, AppState>,
    session_id: String,
    message_id: String,
) -> Result<(), CommandError> {
    state
        .sessions
        .submit(&session_id, Op::Rewind { message_id })
}
