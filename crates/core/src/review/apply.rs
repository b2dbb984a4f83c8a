//! `Op::ApplyTurnReview`: writing what the user accepted of a turn review.
//!
//! Order: every decision is checked and turned into the content to write
//! first (a bad decision refuses that file, nothing else); then one
//! checkpoint of the workspace; then each file is written on its own,
//! atomically, in the style of the file on disk (line endings, encoding,
//! permissions; see [`fs_write::write_text`]), unless it changed on disk
//! since it was staged. The model is told, with its next message, exactly
//! what was not applied, in the words of a per-hunk confirmation
//! ([`hunk_report`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gd_protocol::{Event, NotAppliedReason, ReviewAccept, ReviewDecision, ReviewNotApplied};
use serde_json::json;
use tracing::{info, warn};

use super::{StagedFile, Staging};
use crate::agent::NextMessageNotes;
use crate::checkpoint::SessionCheckpoints;
use crate::events::EventSink;
use crate::tools::{fs_write, hunk_report, hunks, text};

/// The call id the review's checkpoint is linked to.
pub const REVIEW_CALL_ID: &str = "turn-review";

/// What one staged file comes to.
enum Plan {
    Write {
        content: String,
        /// What the model must hear about a partial or edited write.
        note: Option<String>,
    },
    Skip(ReviewNotApplied, String),
}

/// Applies the user's `decisions` on the pending review in `staging` (a
/// staged file without a decision is not applied), then forgets the review.
pub async fn apply(
    staging: &Staging,
    roots: &[PathBuf],
    decisions: Vec<ReviewDecision>,
    notes: &NextMessageNotes,
    checkpoints: Option<&Arc<SessionCheckpoints>>,
    sink: &EventSink,
) {
    let files = staging.files();
    if files.is_empty() {
        sink.emit(Event::Warning {
            message: "There is no pending review to apply.".to_owned(),
        });
        return;
    }
    for decision in &decisions {
        if !files.iter().any(|f| f.path == Path::new(&decision.path)) {
            sink.emit(Event::Warning {
                message: format!(
                    "{} is not part of the pending review; its decision was ignored.",
                    decision.path
                ),
            });
        }
    }
    let plans: Vec<(StagedFile, Plan)> = files
        .into_iter()
        .map(|file| {
            let decision = decisions
                .iter()
                .find(|d| Path::new(&d.path) == file.path.as_path());
            let plan = plan(&file, decision, roots);
            (file, plan)
        })
        .collect();
    if let Some(checkpoints) = checkpoints
        && let Some((first, _)) = plans.iter().find(|(_, p)| matches!(p, Plan::Write { .. }))
    {
        checkpoint(checkpoints, first, sink).await;
    }
    let roots = roots.to_vec();
    let outcome = tokio::task::spawn_blocking(move || write_all(&roots, plans)).await;
    let (written, not_applied, model_notes) = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            warn!(%error, "applying the review failed");
            sink.emit(Event::Warning {
                message: format!("Applying the review failed: {error}"),
            });
            return;
        }
    };
    for note in model_notes {
        notes.push(note);
    }
    info!(
        written = written.len(),
        not_applied = not_applied.len(),
        "turn review applied"
    );
    staging.clear();
    sink.emit(Event::TurnReviewApplied {
        written,
        not_applied,
    });
}

/// What to write of `file` after `decision`.
fn plan(file: &StagedFile, decision: Option<&ReviewDecision>, roots: &[PathBuf]) -> Plan {
    let shown = text::display_path(&file.path, roots);
    let path = file.path.display().to_string();
    let rejected = || {
        Plan::Skip(
            ReviewNotApplied {
                path: path.clone(),
                reason: NotAppliedReason::Rejected,
                message: format!("{shown}: rejected, not written"),
            },
            rejected_note(&shown, file),
        )
    };
    let Some(decision) = decision else {
        return rejected();
    };
    let proposed = decision.edited.as_deref().unwrap_or(&file.staged);
    // What the user changed by hand, their lines against the staged ones (as a confirmation's
    // "modify" is reported).
    let edited_note = decision.edited.as_deref().and_then(|edited| {
        hunk_report::hand_edits(&file.staged, edited, &shown)
            .map(|report| format!("End-of-turn review: {report}"))
    });
    match &decision.accept {
        ReviewAccept::None => rejected(),
        ReviewAccept::All => Plan::Write {
            content: proposed.to_owned(),
            note: edited_note,
        },
        ReviewAccept::Hunks { hunks: decisions } => {
            let original = file.original.as_deref().unwrap_or("");
            let applied = match hunks::apply(original, proposed, decisions) {
                Ok(applied) => applied,
                Err(error) => {
                    return Plan::Skip(
                        ReviewNotApplied {
                            path,
                            reason: NotAppliedReason::Failed,
                            message: format!(
                                "{shown}: the decisions on its changes could not be applied ({error}); not written"
                            ),
                        },
                        rejected_note(&shown, file),
                    );
                }
            };
            if applied.nothing_applied() && applied.content == original {
                return rejected();
            }
            let mut note = (!applied.everything_applied()).then(|| {
                format!(
                    "End-of-turn review: {}",
                    hunk_report::report(&applied, &shown)
                )
            });
            if let Some(edited) = edited_note {
                note = Some(match note {
                    Some(n) => format!("{n}\n{edited}"),
                    None => edited,
                });
            }
            Plan::Write {
                content: applied.content,
                note,
            }
        }
    }
}

/// The note for a staged file none of which was written.
fn rejected_note(shown: &str, file: &StagedFile) -> String {
    match &file.original {
        None => format!(
            "Your staged creation of {shown} was NOT applied: the user rejected it at the end-of-turn review; the file does not exist. Do not create it again unless the user asks."
        ),
        Some(_) => format!(
            "Your staged changes to {shown} were NOT applied: the user rejected them at the end-of-turn review; the file is as it was before your turn. Do not make these changes again unless the user asks."
        ),
    }
}

/// Writes the planned files, one by one; returns the written paths, the
/// files not (fully) written and the notes for the model.
fn write_all(
    roots: &[PathBuf],
    plans: Vec<(StagedFile, Plan)>,
) -> (Vec<String>, Vec<ReviewNotApplied>, Vec<String>) {
    let mut written = Vec::new();
    let mut not_applied = Vec::new();
    let mut notes = Vec::new();
    for (file, plan) in plans {
        let shown = text::display_path(&file.path, roots);
        let path = file.path.display().to_string();
        let (content, note) = match plan {
            Plan::Skip(skipped, note) => {
                not_applied.push(skipped);
                notes.push(note);
                continue;
            }
            Plan::Write { content, note } => (content, note),
        };
        let current = match fs_write::read_for_edit_in(roots, &file.path) {
            Ok(current) => current,
            Err(error) => {
                not_applied.push(ReviewNotApplied {
                    path,
                    reason: NotAppliedReason::Failed,
                    message: format!("{shown}: {}", error.message),
                });
                notes.push(format!(
                    "Your staged changes to {shown} were NOT applied: the file could not be read ({}).",
                    error.message
                ));
                continue;
            }
        };
        if current.as_ref().map(|f| f.text.as_str()) != file.original.as_deref() {
            not_applied.push(ReviewNotApplied {
                path,
                reason: NotAppliedReason::ChangedOnDisk,
                message: format!("{shown} changed on disk after it was staged; not written"),
            });
            notes.push(format!(
                "Your staged changes to {shown} were NOT applied: the file changed on disk after your turn staged them. Read it again before editing it."
            ));
            continue;
        }
        match fs_write::write_text(roots, &file.path, &content, current.as_ref()) {
            Ok(()) => {
                if let Some(note) = note {
                    not_applied.push(ReviewNotApplied {
                        path: path.clone(),
                        reason: NotAppliedReason::PartlyApplied,
                        message: format!("{shown}: written as the user decided, not all as staged"),
                    });
                    notes.push(note);
                }
                written.push(path);
            }
            Err(error) => {
                not_applied.push(ReviewNotApplied {
                    path,
                    reason: NotAppliedReason::Failed,
                    message: format!("{shown}: {}", error.message),
                });
                notes.push(format!(
                    "Your staged changes to {shown} were NOT applied: writing failed ({}).",
                    error.message
                ));
            }
        }
    }
    (written, not_applied, notes)
}

/// One checkpoint of the workspace before the review's writes.
async fn checkpoint(checkpoints: &Arc<SessionCheckpoints>, first: &StagedFile, sink: &EventSink) {
    let args = json!({ "file_path": first.path.display().to_string() });
    match checkpoints
        .before_edit(REVIEW_CALL_ID, "write_file", &args)
        .await
    {
        Some(Ok(checkpoint)) => sink.emit(Event::CheckpointCreated {
            call_id: REVIEW_CALL_ID.to_owned(),
            checkpoint_id: checkpoint.id,
            scope: crate::checkpoint::scope(checkpoint.kind),
            files: checkpoint.meta.files,
        }),
        Some(Err(error)) => {
            warn!(%error, "checkpoint before the review failed");
            sink.emit(Event::Warning {
                message: format!("Could not save a checkpoint before applying the review: {error}"),
            });
        }
        None => {}
    }
}
