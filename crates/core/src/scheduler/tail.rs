//! AfterTool's `tailToolCallRequest`: a hook asks for another tool to run
//! right after a call, and that tool's result is what the model receives
//! for its call (0.61's programmatic tool routing).
//!
//! A tail call is a call like any other: it is validated, its BeforeTool
//! hooks run, the policy judges it and the user is asked when the policy
//! asks — a hook can route to a tool, never around an approval. It gets its
//! own card (`<call id>#tail<n>`) so people see both what the model asked
//! for and what ran in its place; its `functionResponse` carries the
//! model's call id and tool name, as 0.61 sends it. A tail's own tail is
//! followed up to [`MAX_TAIL_CALLS`] deep, so two hooks naming each other
//! cannot loop forever.

use gd_gemini::Part;
use gd_protocol::Event;

use super::{CompletedCall, Scheduler};
use crate::chat::ToolCallRequest;
use crate::events::EventSink;
use crate::tools::{ToolContext, ToolRegistry};

/// How many tail calls one model call may lead to.
pub const MAX_TAIL_CALLS: usize = 3;

impl Scheduler {
    /// Runs the tail calls the batch's AfterTool hooks asked for; returns
    /// the results in call order (each tail right after the call it
    /// replaces) and whether the user declined one.
    pub(super) async fn tail_calls(
        &self,
        registry: &ToolRegistry,
        completed: Vec<CompletedCall>,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> (Vec<CompletedCall>, bool) {
        let mut out = Vec::with_capacity(completed.len());
        let mut declined = false;
        for mut done in completed {
            let original = done.request.clone();
            let mut next = done.tail_call.take();
            out.push(done);
            let mut hops = 0;
            while let Some(tail) = next.take() {
                if hops == MAX_TAIL_CALLS {
                    sink.emit(Event::Warning {
                        message: format!(
                            "A hook asked for more than {MAX_TAIL_CALLS} tail calls after {}; {} was not run.",
                            original.name, tail.name
                        ),
                    });
                    break;
                }
                if ctx.cancel.is_cancelled() {
                    break;
                }
                hops += 1;
                let request = ToolCallRequest {
                    call_id: format!("{}#tail{hops}", original.call_id),
                    name: tail.name,
                    args: tail.args,
                };
                super::announce(registry, &request, Some(&original.call_id), sink);
                let mut call = self.validate(registry, &request, ctx, sink).await;
                declined |= self
                    .ask_approvals(std::slice::from_mut(&mut call), ctx, sink)
                    .await;
                let mut result = self.execute(call, ctx, sink).await;
                answer_as(&mut result.parts, &original);
                next = result.tail_call.take();
                // The model hears only the last result of the chain.
                if let Some(replaced) = out.last_mut() {
                    replaced.parts.clear();
                }
                out.push(result);
            }
        }
        (out, declined)
    }
}

/// Names a tail's response after the call the model made.
fn answer_as(parts: &mut [Part], original: &ToolCallRequest) {
    for part in parts {
        if let Some(response) = part.function_response.as_mut() {
            response.id = Some(original.call_id.clone());
            response.name = original.name.clone();
        }
    }
}
