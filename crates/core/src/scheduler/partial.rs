//! Approving only part of an edit: the user's per-hunk decisions
//! (`Op::ConfirmTool { hunks }`) narrow the call to the accepted hunks.
//!
//! The narrowed content goes through the tool's own `modified_args` (the
//! path "modify with editor" takes), so it is planned, re-checked against
//! the disk and written by the tool exactly like any approved edit: confined
//! to the workspace, with the file's line endings and encoding. Only the
//! words the model hears differ: the hunk report (see
//! [`crate::tools::hunk_report`]) follows the tool's result.

use std::path::Path;

use gd_protocol::{ConfirmationDetails, HunkDecision};
use serde_json::Value;
use tracing::debug;

use super::{Call, MODIFIED_NOTE, Scheduler, Stage};
use crate::events::EventSink;
use crate::tools::{Tool, ToolContext, ToolResult, hunk_report, hunks, text};

impl Scheduler {
    /// An approval, narrowed first to the accepted hunks when the user
    /// decided per hunk (`edited`: the user's own version of the proposal).
    pub(super) async fn approve(
        &self,
        call: &mut Call,
        tool: &dyn Tool,
        ctx: &ToolContext,
        sink: &EventSink,
        hunks: Option<&[gd_protocol::HunkDecision]>,
        edited: Option<&str>,
    ) -> Stage {
        if let Some(decisions) = hunks {
            match narrow(call, tool, ctx, decisions, edited).await {
                Ok(Some(stage)) => return stage,
                Ok(None) => {}
                Err(message) => return Stage::Failed(message),
            }
        }
        self.scheduled(call, sink)
    }
}

impl Scheduler {
    /// An approval of the user's own version of the proposal, whole.
    pub(super) async fn modified(
        &self,
        call: &mut Call,
        tool: &dyn Tool,
        ctx: &ToolContext,
        sink: &EventSink,
        content: &str,
    ) -> Stage {
        let Some(args) = tool.modified_args(&resolved_args(call), content) else {
            return Stage::Failed(format!(
                "The proposal of {} cannot be modified.",
                tool.name()
            ));
        };
        match tool.prepare(&args, ctx).await {
            Ok(details) => {
                call.args = args;
                call.details = details;
                call.modified = true;
                self.scheduled(call, sink)
            }
            Err(error) => Stage::Failed(error.message),
        }
    }
}

/// The call's arguments with the path its edit confirmation resolved:
/// `replace` needs an absolute path to rebuild its arguments from a new
/// content, and the model may have given a relative one.
pub(super) fn resolved_args(call: &Call) -> Value {
    let mut args = call.args.clone();
    if let (Some(ConfirmationDetails::Edit { file_path, .. }), Some(object)) =
        (&call.details, args.as_object_mut())
    {
        object.insert("file_path".to_owned(), Value::String(file_path.clone()));
    }
    args
}

/// What the user changed by hand in the model's proposal (`content`: their
/// version), for the model; None when the call is no edit or nothing
/// differs. Taken while `call.details` is still the model's proposal.
pub(super) fn hand_edits(call: &Call, content: &str, ctx: &ToolContext) -> Option<String> {
    let Some(ConfirmationDetails::Edit {
        proposed,
        file_path,
        ..
    }) = &call.details
    else {
        return None;
    };
    let shown = text::display_path(Path::new(file_path), &ctx.workspace_dirs);
    hunk_report::hand_edits(proposed, content, &shown)
}

/// Puts `extra` ahead of what the call's report already says.
pub(super) fn add_report(call: &mut Call, extra: Option<String>) {
    let Some(extra) = extra else { return };
    call.hunk_report = Some(match call.hunk_report.take() {
        Some(report) => format!("{extra}\n{report}"),
        None => extra,
    });
}

/// Narrows `call` to the accepted hunks of what the user saw (`edited`, the
/// user's own version, replaces the proposal when given). Returns the stage
/// the call is in afterwards: still approved, answered without running
/// when nothing was accepted, or failed on a bad answer.
pub(super) async fn narrow(
    call: &mut Call,
    tool: &dyn Tool,
    ctx: &ToolContext,
    decisions: &[HunkDecision],
    edited: Option<&str>,
) -> Result<Option<Stage>, String> {
    let Some(ConfirmationDetails::Edit {
        original,
        proposed,
        file_path,
        ..
    }) = &call.details
    else {
        return Err(format!(
            "The user decided on hunks, but {} proposes no file edit.",
            tool.name()
        ));
    };
    let original = original.as_deref().unwrap_or("");
    let proposed = edited.unwrap_or(proposed);
    let applied = hunks::apply(original, proposed, decisions)
        .map_err(|e| format!("The user's decisions on the change could not be applied: {e}."))?;
    let shown = text::display_path(Path::new(file_path), &ctx.workspace_dirs);
    let report = hunk_report::report(&applied, &shown);
    debug!(
        hunks = applied.hunks.len(),
        everything = applied.everything_applied(),
        nothing = applied.nothing_applied(),
        "per-hunk decisions"
    );
    if applied.nothing_applied() && applied.content == original {
        // Writing the original again would be a "no change" error from the
        // tool; the model is told what was refused instead.
        let mut message = report;
        if edited.is_some() {
            message = format!("{message}\n{MODIFIED_NOTE}");
        }
        // The card shows no diff: nothing of it was written.
        call.details = None;
        return Ok(Some(Stage::Answered(ToolResult::success(
            message,
            format!("No change applied to {shown}"),
        ))));
    }
    let Some(args) = tool.modified_args(&resolved_args(call), &applied.content) else {
        return Err(format!(
            "The proposal of {} cannot be modified.",
            tool.name()
        ));
    };
    let details = tool.prepare(&args, ctx).await.map_err(|e| e.message)?;
    call.args = args;
    call.details = details;
    call.modified = edited.is_some() || !applied.everything_applied();
    call.hunk_report = (!applied.everything_applied()).then_some(report);
    Ok(None)
}
