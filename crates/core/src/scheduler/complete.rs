//! A finished call as the model and people get it: the `functionResponse`
//! parts (truncated, with the notes edits and hooks add) and what the card
//! shows beyond them.

use gd_protocol::{ConfirmationDetails, ToolCallStatus};

use super::response::append_note;
use super::{
    Call, CompletedCall, DECLINED_MESSAGE, MODIFIED_NOTE, Outcome, Scheduler, ShownResult,
    error_response, function_response_parts, hooked, mcp_ref,
};
use crate::tools::{ToolContext, ToolResult};

impl Scheduler {
    pub(super) fn complete(
        &self,
        call: &Call,
        outcome: Outcome,
        ctx: &ToolContext,
    ) -> CompletedCall {
        let id = &call.request.call_id;
        let name = &call.request.name;
        let mut shown = ShownResult {
            mcp: call.tool.as_deref().and_then(mcp_ref),
            decided_by: call.decided_by.clone(),
            subagent: ctx
                .services
                .subagents
                .as_ref()
                .and_then(|s| s.take_transcript(id))
                .map(Box::new),
            ..ShownResult::default()
        };
        let (status, parts, display, error) = match outcome {
            Outcome::Ran(ToolResult {
                error: Some(error),
                output,
                exit_code,
                sandbox,
                ..
            }) => {
                shown.output = output;
                shown.exit_code = exit_code;
                shown.sandbox = sandbox.map(|s| s.used);
                (
                    ToolCallStatus::Error,
                    vec![error_response(id, name, &error.message)],
                    None,
                    Some(error.people_text().to_owned()),
                )
            }
            Outcome::Ran(ToolResult {
                llm_content,
                display,
                output,
                exit_code,
                sandbox,
                ..
            }) => {
                shown.sandbox = sandbox.map(|s| s.used);
                // The full result for people: the tool's own, else the model's text
                // before truncation (when it says more than `display`).
                shown.output = output.or_else(|| {
                    let text = llm_content.text();
                    (!text.is_empty() && text != display).then_some(text)
                });
                shown.exit_code = exit_code;
                if let Some(details @ ConfirmationDetails::Edit { .. }) = &call.details {
                    shown.diff = Some(details.clone());
                }
                let mut content = crate::truncation::limit_content(llm_content, id, ctx);
                if call.modified {
                    content = append_note(content, MODIFIED_NOTE);
                }
                if let Some(report) = &call.hunk_report {
                    content = append_note(content, report);
                }
                content = hooked::notes(call, content);
                (
                    ToolCallStatus::Success,
                    function_response_parts(id, name, content),
                    Some(display),
                    None,
                )
            }
            Outcome::Failed(message) => (
                ToolCallStatus::Error,
                vec![error_response(id, name, &message)],
                None,
                Some(message),
            ),
            Outcome::Cancelled(message) => {
                shown.declined = message == DECLINED_MESSAGE;
                (
                    ToolCallStatus::Cancelled,
                    vec![error_response(id, name, message)],
                    None,
                    Some(message.to_owned()),
                )
            }
        };
        CompletedCall {
            request: call.request.clone(),
            status,
            parts,
            display,
            error,
            duration: call.started.elapsed(),
            shown,
            hook_stop: call.hooks.stop.clone(),
            tail_call: call.hooks.tail.clone(),
        }
    }
}
