//! Reverting an applied edit after the fact (`Op::RevertEdit`).
//!
//! The inverse is written only when the file is exactly what the edit wrote
//! (as the edit tools read it: decoded, LF line endings): then nothing the
//! user did since can be lost. Otherwise nothing is written and the user
//! gets a three-way view (what the edit wrote, the disk, the revert applied
//! to what the edit wrote) with a merged proposal ([`crate::diff3`]); the
//! resolution they confirm is written only if the disk still reads as it
//! did when the view was made. Every write goes through the edit tools'
//! atomic, workspace-confined path (keeping line endings and encoding),
//! after a checkpoint. The model hears what happened with the next user
//! message ([`crate::agent::NextMessageNotes`]).

mod ledger;
mod note;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gd_protocol::{
    ConfirmationDetails, EditRevert, Event, HunkChoice, HunkDecision, RevertConflict,
};
use serde_json::json;
use tracing::{info, warn};

pub use ledger::{AppliedEdits, EditState};

use crate::agent::Agent;
use crate::checkpoint::SessionCheckpoints;
use crate::events::EventSink;
use crate::tools::fs_write::{self, TextFile};
use crate::tools::{files, hunks, text};

/// What `Op::RevertEdit` asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertRequest {
    pub call_id: String,
    /// Indexes of the hunks to revert; `None`: the whole edit.
    pub hunks: Option<Vec<u32>>,
    /// The user's resolution of the three-way view.
    pub resolved: Option<String>,
}

/// What a revert led to.
#[derive(Debug)]
enum Outcome {
    Reverted(EditRevert),
    Conflict(RevertConflict),
}

/// The edit as applied: where, and what it changed.
struct Edit {
    path: PathBuf,
    file_path: String,
    original: Option<String>,
    proposed: String,
}

/// Runs `request` and reports it: `Event::EditReverted`,
/// `Event::RevertConflict` or `Event::RevertFailed`.
pub async fn revert_edit(
    agent: &mut Agent,
    checkpoints: Option<&Arc<SessionCheckpoints>>,
    request: RevertRequest,
    sink: &EventSink,
) {
    match revert(agent, checkpoints, &request, sink).await {
        Ok(Outcome::Reverted(reverted)) => {
            info!(
                call_id = request.call_id,
                deleted = reverted.deleted,
                "edit reverted"
            );
            sink.emit(Event::EditReverted { reverted });
        }
        Ok(Outcome::Conflict(conflict)) => {
            info!(
                call_id = request.call_id,
                conflicts = conflict.conflicts,
                "revert needs a three-way merge"
            );
            sink.emit(Event::RevertConflict { conflict });
        }
        Err(message) => {
            warn!(call_id = request.call_id, %message, "revert refused");
            sink.emit(Event::RevertFailed {
                call_id: request.call_id,
                message,
            });
        }
    }
}

/// The edit `call_id` applied: from this session's ledger, else from the
/// stored history (a resumed conversation).
async fn find_edit(agent: &mut Agent, call_id: &str) -> Result<Edit, String> {
    let state = match agent.scheduler.applied_edits().get(call_id) {
        Some(state) => state,
        None => {
            let session_id = agent.config.session_id.clone();
            let store = match agent.history.as_mut() {
                Some(history) => history.store().await,
                None => None,
            };
            let record = store.and_then(|store| {
                store
                    .call_result(&session_id, call_id)
                    .map_err(|e| warn!(%e, "reading the history for a revert"))
                    .ok()
                    .flatten()
            });
            let details = record
                .and_then(|r| r.diff)
                .and_then(|d| serde_json::from_value::<ConfirmationDetails>(d).ok());
            match details {
                Some(details) => {
                    agent.scheduler.applied_edits().record(call_id, &details);
                    EditState::Applied(details)
                }
                None => {
                    return Err(format!(
                        "There is no applied edit with call id {call_id} in this conversation, so there is nothing to revert."
                    ));
                }
            }
        }
    };
    match state {
        EditState::Applied(ConfirmationDetails::Edit {
            file_path,
            original,
            proposed,
            ..
        }) => Ok(Edit {
            path: PathBuf::from(&file_path),
            file_path,
            original,
            proposed,
        }),
        EditState::Applied(_) => Err(format!("Call {call_id} did not edit a file.")),
        EditState::Reverted => Err("This edit was already reverted.".to_owned()),
    }
}

/// The content the revert leaves (`None`: the created file goes away), the
/// hunks reverted (`None`: all of them) and the hunks with their fates.
type Target = (Option<String>, Option<Vec<u32>>, hunks::Applied);

/// What reverting `asked` (all hunks when `None`) of `edit` leaves.
fn target(edit: &Edit, asked: Option<&[u32]>) -> Result<Target, String> {
    let original = edit.original.as_deref().unwrap_or("");
    let count = hunks::hunks(original, &edit.proposed).len();
    let chosen: Vec<u32> = match asked {
        None => (0..count as u32).collect(),
        Some([]) => return Err("Choose at least one hunk to revert.".to_owned()),
        Some(list) => {
            if let Some(bad) = list.iter().find(|&&h| h as usize >= count) {
                return Err(format!(
                    "The edit has {count} hunks; there is no hunk {}.",
                    bad + 1
                ));
            }
            let mut list = list.to_vec();
            list.sort_unstable();
            list.dedup();
            list
        }
    };
    let decisions: Vec<HunkDecision> = (0..count as u32)
        .map(|hunk| HunkDecision {
            hunk,
            choice: if chosen.contains(&hunk) {
                HunkChoice::Reject
            } else {
                HunkChoice::Accept
            },
        })
        .collect();
    let applied = hunks::apply(original, &edit.proposed, &decisions)
        .map_err(|e| format!("The hunks cannot be reverted: {e}."))?;
    if chosen.len() == count {
        Ok((edit.original.clone(), None, applied))
    } else {
        Ok((Some(applied.content.clone()), Some(chosen), applied))
    }
}

async fn revert(
    agent: &mut Agent,
    checkpoints: Option<&Arc<SessionCheckpoints>>,
    request: &RevertRequest,
    sink: &EventSink,
) -> Result<Outcome, String> {
    let call_id = request.call_id.as_str();
    let edit = find_edit(agent, call_id).await?;
    let roots = agent.config.workspace_dirs.clone();
    let shown = text::display_path(&edit.path, &roots);
    let ledger = agent.scheduler.applied_edits().clone();
    let disk = fs_write::read_for_edit_in(&roots, &edit.path).map_err(|e| {
        format!(
            "{shown} cannot be read, so nothing was reverted: {}",
            e.message
        )
    })?;
    if disk.as_ref().is_some_and(|f| f.binary) {
        return Err(format!(
            "{shown} no longer looks like a text file; nothing was reverted."
        ));
    }

    if let Some(resolved) = &request.resolved {
        let Some(seen) = ledger.conflict(call_id) else {
            return Err(format!(
                "There is no open three-way view for this edit of {shown}; revert it again to get one."
            ));
        };
        let Some(file) = disk.filter(|f| f.text == seen) else {
            return Err(format!(
                "{shown} changed again while the revert was being resolved; nothing was written. Revert again to merge with its new content."
            ));
        };
        checkpoint(checkpoints, call_id, &edit.file_path, sink).await;
        write(&roots, &edit.path, resolved, Some(&file))?;
        ledger.set(call_id, EditState::Reverted);
        agent
            .notes()
            .push(note::resolved(&shown, call_id, resolved));
        return Ok(Outcome::Reverted(EditRevert {
            call_id: call_id.to_owned(),
            file_path: edit.file_path,
            hunks: request.hunks.clone(),
            deleted: false,
            resolved: true,
            remaining: None,
        }));
    }

    let (target, reverted_hunks, applied) = target(&edit, request.hunks.as_deref())?;
    let Some(file) = disk else {
        return Err(format!(
            "{shown} no longer exists, so there is nothing to revert; nothing was written."
        ));
    };
    if file.text != edit.proposed {
        if target.as_deref() == Some(file.text.as_str()) {
            return Err(format!(
                "{shown} already reads as the revert would leave it; nothing was written."
            ));
        }
        let reverted = target.unwrap_or_default();
        let merged = crate::diff3::merge(&edit.proposed, &file.text, &reverted);
        ledger.offer_conflict(call_id, &file.text);
        return Ok(Outcome::Conflict(RevertConflict {
            call_id: call_id.to_owned(),
            file_path: edit.file_path,
            base: edit.proposed,
            current: file.text,
            reverted,
            merged: merged.text,
            conflicts: u32::try_from(merged.conflicts).unwrap_or(u32::MAX),
            hunks: request.hunks.clone(),
        }));
    }

    checkpoint(checkpoints, call_id, &edit.file_path, sink).await;
    let deleted = match &target {
        Some(content) => {
            write(&roots, &edit.path, content, Some(&file))?;
            false
        }
        None => {
            delete(&roots, &edit.path, &shown)?;
            true
        }
    };
    let remaining = match (&target, &reverted_hunks) {
        (Some(content), Some(_)) => {
            let details = remaining_details(&edit, content, &shown);
            ledger.set(call_id, EditState::Applied(details.clone()));
            Some(details)
        }
        _ => {
            ledger.set(call_id, EditState::Reverted);
            None
        }
    };
    let words = if deleted {
        note::deleted(&shown, call_id)
    } else {
        note::reverted_hunks(&shown, call_id, &applied, reverted_hunks.is_none())
    };
    agent.notes().push(words);
    Ok(Outcome::Reverted(EditRevert {
        call_id: call_id.to_owned(),
        file_path: edit.file_path,
        hunks: reverted_hunks,
        deleted,
        resolved: false,
        remaining,
    }))
}

/// What is still applied after some hunks were reverted: the original
/// against the file as now written.
fn remaining_details(edit: &Edit, content: &str, shown: &str) -> ConfirmationDetails {
    let file_diff = crate::diff::diff_file(edit.original.as_deref(), content, shown);
    ConfirmationDetails::Edit {
        title: format!("Edit {shown}"),
        file_path: edit.file_path.clone(),
        file_name: fs_write::file_name(&edit.path),
        original: edit.original.clone(),
        proposed: content.to_owned(),
        unified_diff: file_diff.unified,
        side_by_side: file_diff.side_by_side,
        is_new_file: edit.original.is_none(),
    }
}

/// The checkpoint before a revert writes, announced as the checkpoint of
/// the call `<call_id>-revert` (so the edit's own card keeps the one from
/// before the edit, and the revert can be undone from the checkpoint
/// list). A failure is a warning: the revert itself is the undo the user
/// asked for.
async fn checkpoint(
    checkpoints: Option<&Arc<SessionCheckpoints>>,
    call_id: &str,
    file_path: &str,
    sink: &EventSink,
) {
    let Some(checkpoints) = checkpoints else {
        return;
    };
    let id = format!("{call_id}-revert");
    let created = checkpoints
        .before_edit(&id, "revert_edit", &json!({ "file_path": file_path }))
        .await;
    match created {
        Some(Ok(checkpoint)) => sink.emit(Event::CheckpointCreated {
            call_id: id,
            checkpoint_id: checkpoint.id,
            scope: crate::checkpoint::scope(checkpoint.kind),
            files: checkpoint.meta.files,
        }),
        Some(Err(error)) => {
            warn!(%error, call_id, "no checkpoint before the revert");
            sink.emit(Event::Warning {
                message: format!("Could not save a checkpoint before reverting: {error}"),
            });
        }
        None => {}
    }
}

fn write(
    roots: &[PathBuf],
    path: &Path,
    content: &str,
    file: Option<&TextFile>,
) -> Result<(), String> {
    fs_write::write_text(roots, path, content, file)
        .map_err(|e| format!("The revert could not be written: {}", e.message))
}

/// Deletes the file an edit created (checked unchanged just before).
fn delete(roots: &[PathBuf], path: &Path, shown: &str) -> Result<(), String> {
    if !files::is_within(path, roots) {
        return Err(format!(
            "{shown} is outside the workspace; it was not deleted."
        ));
    }
    std::fs::remove_file(path).map_err(|e| format!("{shown} could not be deleted: {e}."))
}
