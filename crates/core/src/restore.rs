//! Restoring a checkpoint: the code (the workspace's files as they were
//! before the edit), the conversation (the session history truncated at the
//! prompt whose turn made the edit, so the model forgets that turn), or both.
//!
//! One path for every frontend: the session's `Op::RestoreCheckpoint` (the
//! desktop app) and the headless `--restore-checkpoint` both call
//! [`restore`]. Everything that can be checked is checked before anything
//! changes — the checkpoint exists, it belongs to the session, its prompt is
//! still in the history — so a "code and conversation" restore does not
//! stop halfway for a reason known in advance.
//!
//! A checkpoint names its conversation by the stored id of its turn's prompt
//! (`CheckpointMeta::message_id`) and by its tool call id. Checkpoints taken
//! before the history store existed held the chat's own prompt id instead;
//! for those the prompt is found through the tool call.

use std::sync::Arc;

use gd_checkpoint::{Checkpoint, CheckpointError, ShadowRepo};
use gd_protocol::{RestoredConversation, RestoredFile};
use gd_store::{Store, StoreError};

use crate::checkpoint::restored_files;

/// What a restore puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoreChoice {
    /// The workspace's files.
    pub code: bool,
    /// The session history, truncated at the edit's prompt.
    pub conversation: bool,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub checkpoint_id: String,
    /// The files that changed (empty without `code`).
    pub files: Vec<RestoredFile>,
    /// A checkpoint of the files just before the restore, to undo it.
    pub undo_checkpoint_id: Option<String>,
    pub conversation: Option<RestoredConversation>,
}

#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("Nothing to restore: ask for the code, the conversation or both.")]
    Nothing,
    #[error("Checkpointing is off for this session (general.checkpointing.enabled).")]
    CheckpointsOff,
    #[error("Cannot restore checkpoint {id}: {source}")]
    Checkpoint {
        id: String,
        #[source]
        source: CheckpointError,
    },
    #[error(
        "This session is not recorded in the history, so its conversation cannot be restored; restore the code only."
    )]
    NotRecorded,
    #[error(
        "Checkpoint {0} was not taken before an edit of a recorded session, so it has no conversation to restore; restore the code only."
    )]
    NoConversation(String),
    #[error(
        "Checkpoint {checkpoint} belongs to another session ({session}); open that session from the history to restore its conversation."
    )]
    OtherSession { checkpoint: String, session: String },
    #[error(
        "The conversation of checkpoint {0} is no longer in the history (it was rewound or deleted); restore the code only."
    )]
    ConversationGone(String),
    #[error("Cannot read the session history: {0}")]
    History(String),
    #[error("The files were restored, but the conversation was not: {message}{}", undo_hint(.undo))]
    ConversationFailed {
        message: String,
        undo: Option<String>,
    },
}

fn undo_hint(undo: &Option<String>) -> String {
    undo.as_ref()
        .map(|id| format!(" (checkpoint {id} undoes the restore of the files)"))
        .unwrap_or_default()
}

/// Where the conversation of a checkpoint is: the session and the stored
/// message its history is truncated at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationPoint {
    pub session_id: String,
    pub message_id: String,
}

/// Restores checkpoint `checkpoint_id` of `repo`.
///
/// `session_id` is the session asking (the desktop's running session): only
/// its own checkpoints' conversation can be restored, and the snapshot taken
/// before the restore is listed with it. `None` (the headless CLI) restores
/// the conversation of the session the checkpoint belongs to. `store` is the
/// history; `rewind` truncates the conversation at a message of that
/// session (the running session also drops it from the model's context)
/// and returns how many messages went.
pub async fn restore(
    repo: &Arc<ShadowRepo>,
    checkpoint_id: &str,
    choice: RestoreChoice,
    session_id: Option<&str>,
    store: Option<&Store>,
    rewind: impl AsyncFnOnce(ConversationPoint) -> Result<usize, String>,
) -> Result<Restored, RestoreError> {
    if !choice.code && !choice.conversation {
        return Err(RestoreError::Nothing);
    }
    let checkpoint_error = |source| RestoreError::Checkpoint {
        id: checkpoint_id.to_owned(),
        source,
    };
    let checkpoint = {
        let (repo, id) = (repo.clone(), checkpoint_id.to_owned());
        blocking(move || repo.get(&id))
            .await
            .map_err(checkpoint_error)?
    };
    let point = match (choice.conversation, store) {
        (false, _) => None,
        (true, None) => return Err(RestoreError::NotRecorded),
        (true, Some(store)) => {
            let (store, checkpoint, session) = (
                store.clone(),
                checkpoint.clone(),
                session_id.map(str::to_owned),
            );
            Some(
                tokio::task::spawn_blocking(move || {
                    conversation_point(&store, &checkpoint, session.as_deref())
                })
                .await
                .map_err(|e| RestoreError::History(e.to_string()))??,
            )
        }
    };
    let mut restored = Restored {
        checkpoint_id: checkpoint_id.to_owned(),
        files: Vec::new(),
        undo_checkpoint_id: None,
        conversation: None,
    };
    if choice.code {
        let (repo, id) = (repo.clone(), checkpoint_id.to_owned());
        let by = session_id
            .map(str::to_owned)
            .or_else(|| checkpoint.meta.session_id.clone());
        let report = blocking(move || repo.restore_in_session(&id, by.as_deref()))
            .await
            .map_err(checkpoint_error)?;
        restored.files = restored_files(&report);
        restored.undo_checkpoint_id = report.undo;
    }
    if let Some(point) = point {
        let message_id = point.message_id.clone();
        let removed = rewind(point)
            .await
            .map_err(|message| RestoreError::ConversationFailed {
                message,
                undo: restored.undo_checkpoint_id.clone(),
            })?;
        restored.conversation = Some(RestoredConversation {
            message_id,
            removed: removed as u32,
        });
    }
    Ok(restored)
}

/// The stored message a restore of `checkpoint`'s conversation truncates
/// the history at: the prompt of the edit's turn, in the checkpoint's
/// session, which must be `session_id` when one is given.
pub fn conversation_point(
    store: &Store,
    checkpoint: &Checkpoint,
    session_id: Option<&str>,
) -> Result<ConversationPoint, RestoreError> {
    let history = |e: StoreError| RestoreError::History(e.to_string());
    let owner = checkpoint
        .meta
        .session_id
        .clone()
        .ok_or_else(|| RestoreError::NoConversation(checkpoint.id.clone()))?;
    if let Some(current) = session_id
        && current != owner
    {
        return Err(RestoreError::OtherSession {
            checkpoint: checkpoint.id.clone(),
            session: owner,
        });
    }
    if let Some(message_id) = &checkpoint.meta.message_id
        && store.locate(&owner, message_id).map_err(history)?.is_some()
    {
        return Ok(ConversationPoint {
            session_id: owner,
            message_id: message_id.clone(),
        });
    }
    // Older checkpoints name the chat's prompt id: find the prompt through
    // the tool call.
    if let Some(call_id) = &checkpoint.meta.call_id
        && let Some(message_id) = store
            .turn_prompt_for_call(&owner, call_id)
            .map_err(history)?
    {
        return Ok(ConversationPoint {
            session_id: owner,
            message_id,
        });
    }
    Err(RestoreError::ConversationGone(checkpoint.id.clone()))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, CheckpointError> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(crate::checkpoint::join_error(e)))
}
