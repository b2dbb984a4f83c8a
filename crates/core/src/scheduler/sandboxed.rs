//! Running an approved call, and when the sandbox refused a command something (a write
//! outside its folders, the network), asking the user whether to run it again with that
//! allowed (issue 36).
//!
//! The question goes through the same confirmation path as any other (`Op::ConfirmTool` on the
//! call's id), so the app, the approval inbox and a hook see it alike; where nobody can be
//! asked (headless), the answer is no. Whatever happens, the model hears what was refused and
//! whether it was allowed.

use gd_protocol::{ConfirmationOutcome, ToolCallState};
use serde_json::Value;

use super::response::append_note;
use super::{CANCELLED_MESSAGE, Call, Outcome, Scheduler, emit_state};
use crate::events::EventSink;
use crate::sandbox::Grant;
use crate::sandbox::expansion::{self, Refusal};
use crate::tools::{LlmContent, Tool, ToolContext, ToolResult, search_start};

/// How many times one call may be widened and run again (each answer can only add what the
/// last run was refused; a command that keeps wanting more is stopped asking after this).
const MAX_ROUNDS: usize = 3;

impl Scheduler {
    /// Runs an approved call in `call_ctx`; see the module comment for what follows a
    /// sandbox refusal.
    pub(super) async fn run_approved(
        &self,
        call: &Call,
        tool: &dyn Tool,
        call_ctx: &mut ToolContext,
        sink: &EventSink,
    ) -> Outcome {
        let Some(mut result) = run_once(call, tool, call_ctx).await else {
            return Outcome::Cancelled(CANCELLED_MESSAGE);
        };
        let mut allowed: Option<(Grant, bool)> = None;
        for _ in 0..MAX_ROUNDS {
            let Some(denial) = result.sandbox.as_ref().and_then(|s| s.denial.clone()) else {
                break;
            };
            let command = call
                .args
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let dir = call.args.get("dir_path").and_then(Value::as_str);
            let cwd = search_start::dir_or_workspace(call_ctx, dir)
                .unwrap_or_else(|_| call_ctx.primary_dir().to_path_buf());
            let Some((details, grant)) =
                expansion::request(&command, &cwd, &denial, &call_ctx.workspace_dirs)
            else {
                note(
                    &mut result,
                    &expansion::refused_note(&denial, Refusal::NotGrantable),
                );
                break;
            };
            if !self.policy.can_ask() {
                note(
                    &mut result,
                    &expansion::refused_note(&denial, Refusal::NoOneToAsk),
                );
                break;
            }
            // The card shows the whole output of the refused run while the user decides (the
            // live output may have stopped short of it).
            if let Some(output) = &result.output {
                call_ctx.emit_output(output.clone());
            }
            let Some(answer) = self.ask(&call.request, details, call_ctx, sink).await else {
                return Outcome::Cancelled(CANCELLED_MESSAGE);
            };
            let always = match answer.outcome {
                ConfirmationOutcome::Cancel => {
                    note(
                        &mut result,
                        &expansion::refused_note(&denial, Refusal::Declined),
                    );
                    break;
                }
                ConfirmationOutcome::ProceedOnce | ConfirmationOutcome::ModifyWithEditor => false,
                ConfirmationOutcome::ProceedAlways
                | ConfirmationOutcome::ProceedAlwaysAndSave
                | ConfirmationOutcome::ProceedAlwaysServer => true,
            };
            if always {
                call_ctx.services.sandbox_grants.remember(&command, &grant);
            }
            let mut once = call_ctx.sandbox_grant.clone().unwrap_or_default();
            once.join(&grant);
            call_ctx.sandbox_grant = Some(once);
            let (mut all, was_always) = allowed.take().unwrap_or_default();
            all.join(&grant);
            allowed = Some((all, was_always || always));
            emit_state(sink, &call.request.call_id, ToolCallState::Executing);
            let Some(rerun) = run_once(call, tool, call_ctx).await else {
                return Outcome::Cancelled(CANCELLED_MESSAGE);
            };
            result = rerun;
        }
        if let Some((grant, always)) = allowed {
            let text = expansion::granted_note(&grant, always);
            result.llm_content = match result.llm_content {
                LlmContent::Text(rest) => LlmContent::Text(format!("{text}\n\n{rest}")),
                LlmContent::Parts(mut parts) => {
                    parts.insert(0, gd_gemini::Part::text(text));
                    LlmContent::Parts(parts)
                }
            };
        }
        Outcome::Ran(result)
    }
}

/// One run of the tool; `None` when the turn was interrupted first.
async fn run_once(call: &Call, tool: &dyn Tool, call_ctx: &ToolContext) -> Option<ToolResult> {
    tokio::select! {
        biased;
        _ = call_ctx.cancel.cancelled() => None,
        result = tool.execute(call.args.clone(), call_ctx) => Some(result),
    }
}

fn note(result: &mut ToolResult, text: &str) {
    let content = std::mem::replace(&mut result.llm_content, LlmContent::Text(String::new()));
    result.llm_content = append_note(content, text);
}
