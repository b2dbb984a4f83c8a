//! Runs the tool calls of one model response and turns their results into
//! the `functionResponse` parts of the next user message.
//!
//! Calls to unknown tools and calls with arguments that do not match the
//! tool's schema are not errors of the session: they go back to the model
//! as `{"error": ...}` responses so it can correct itself.
//!
//! Read-only calls run concurrently; as soon as one call may change state,
//! the batch runs one call at a time, in order. Confirmations are decided
//! before a call reaches this point (tools that would need one in a
//! non-interactive session are never declared).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use gd_gemini::{FunctionResponse, Part};
use gd_protocol::{Event, ToolCallStatus};
use serde_json::json;
use tracing::{Instrument, info_span};

use crate::chat::ToolCallRequest;
use crate::events::EventSink;
use crate::tools::{LlmContent, ToolContext, ToolRegistry, schema};

/// The message sent to the model for a call that was cancelled.
pub const CANCELLED_MESSAGE: &str = "[Operation Cancelled] Reason: User cancelled the operation.";

/// A finished call.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletedCall {
    pub request: ToolCallRequest,
    pub status: ToolCallStatus,
    /// `functionResponse` first, then any extra parts (e.g. `inlineData`).
    pub parts: Vec<Part>,
    pub display: Option<String>,
    pub error: Option<String>,
    pub duration: Duration,
}

#[derive(Clone)]
pub struct Scheduler {
    registry: Arc<ToolRegistry>,
}

impl Scheduler {
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        Self { registry }
    }

    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Executes `calls` and returns their results in call order.
    pub async fn run(
        &self,
        calls: &[ToolCallRequest],
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Vec<CompletedCall> {
        for call in calls {
            sink.emit(Event::ToolCallRequest {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                args: call.args.clone(),
            });
        }
        let all_read_only = calls.iter().all(|call| {
            self.registry
                .get(&call.name)
                .is_none_or(|tool| tool.kind().is_read_only())
        });
        if all_read_only {
            join_all(calls.iter().map(|call| self.execute(call, ctx, sink))).await
        } else {
            let mut done = Vec::with_capacity(calls.len());
            for call in calls {
                done.push(self.execute(call, ctx, sink).await);
            }
            done
        }
    }

    async fn execute(
        &self,
        call: &ToolCallRequest,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> CompletedCall {
        let span = info_span!("tool_call", name = %call.name, call_id = %call.call_id);
        let started = Instant::now();
        let outcome = async {
            if ctx.cancel.is_cancelled() {
                return Outcome::Cancelled;
            }
            let Some(tool) = self.registry.get(&call.name) else {
                return Outcome::Failed(self.registry.not_found_message(&call.name));
            };
            if let Err(problem) = schema::validate(&call.args, tool.parameter_schema()) {
                return Outcome::Failed(format!("Invalid parameters for {}: {problem}", call.name));
            }
            tokio::select! {
                biased;
                _ = ctx.cancel.cancelled() => Outcome::Cancelled,
                result = tool.execute(call.args.clone(), ctx) => match result.error {
                    Some(error) => Outcome::Failed(error.message),
                    None => Outcome::Done { content: result.llm_content, display: result.display },
                },
            }
        }
        .instrument(span)
        .await;
        let completed = complete(call, outcome, started.elapsed());
        sink.emit(Event::ToolCallResponse {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            status: completed.status,
            display: completed.display.clone(),
            error: completed.error.clone(),
            duration_ms: completed.duration.as_millis() as u64,
        });
        completed
    }
}

enum Outcome {
    Done {
        content: LlmContent,
        display: String,
    },
    Failed(String),
    Cancelled,
}

fn complete(call: &ToolCallRequest, outcome: Outcome, duration: Duration) -> CompletedCall {
    let (status, parts, display, error) = match outcome {
        Outcome::Done { content, display } => (
            ToolCallStatus::Success,
            function_response_parts(&call.call_id, &call.name, content),
            Some(display),
            None,
        ),
        Outcome::Failed(message) => (
            ToolCallStatus::Error,
            vec![error_response(&call.call_id, &call.name, &message)],
            None,
            Some(message),
        ),
        Outcome::Cancelled => (
            ToolCallStatus::Cancelled,
            vec![error_response(&call.call_id, &call.name, CANCELLED_MESSAGE)],
            None,
            Some("Cancelled".to_owned()),
        ),
    };
    CompletedCall {
        request: call.clone(),
        status,
        parts,
        display,
        error,
        duration,
    }
}

/// Converts a tool's content for the model into parts: text becomes
/// `response.output`; other parts (images, documents) follow the
/// `functionResponse` as siblings in the same user message.
pub fn function_response_parts(call_id: &str, name: &str, content: LlmContent) -> Vec<Part> {
    let (output, extra) = match content {
        LlmContent::Text(text) => (text, Vec::new()),
        LlmContent::Parts(parts) => {
            let (texts, others): (Vec<Part>, Vec<Part>) = parts.into_iter().partition(|p| {
                p.text.is_some() && p.inline_data.is_none() && p.file_data.is_none()
            });
            let text: Vec<String> = texts.into_iter().filter_map(|p| p.text).collect();
            let output = if text.is_empty() {
                "Tool execution succeeded.".to_owned()
            } else {
                text.join("\n")
            };
            (output, others)
        }
    };
    let mut parts = vec![Part::function_response(FunctionResponse {
        id: Some(call_id.to_owned()),
        name: name.to_owned(),
        response: json!({ "output": output }),
        extra: Default::default(),
    })];
    parts.extend(extra);
    parts
}

/// A `functionResponse` carrying an error message for the model.
pub fn error_response(call_id: &str, name: &str, message: &str) -> Part {
    Part::function_response(FunctionResponse {
        id: Some(call_id.to_owned()),
        name: name.to_owned(),
        response: json!({ "error": message }),
        extra: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(vec![dir.to_path_buf()])
    }

    fn call(id: &str, name: &str, args: serde_json::Value) -> ToolCallRequest {
        ToolCallRequest {
            call_id: id.into(),
            name: name.into(),
            args,
        }
    }

    #[tokio::test]
    async fn results_in_call_order_with_errors_for_bad_calls() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let scheduler = Scheduler::new(Arc::new(ToolRegistry::with_builtins()));
        let (sink, mut events) = EventSink::new();
        let calls = vec![
            call(
                "a",
                "list_directory",
                json!({"dir_path": root.to_str().unwrap()}),
            ),
            call("b", "run_shell_command", json!({"command": "ls"})),
            call("c", "list_directory", json!({"dir_path": 42})),
        ];
        let done = scheduler.run(&calls, &ctx(&root), &sink).await;
        let responses: Vec<_> = done
            .iter()
            .map(|c| serde_json::to_value(&c.parts[0]).unwrap()["functionResponse"].clone())
            .collect();
        assert_eq!(responses[0]["id"], "a");
        assert!(
            responses[0]["response"]["output"]
                .as_str()
                .unwrap()
                .starts_with("Directory ")
        );
        // The suggestions depend on which tools are built in.
        let unknown = responses[1]["response"]["error"].as_str().unwrap();
        assert!(
            unknown.starts_with("Tool \"run_shell_command\" not found. Did you mean ")
                && unknown.contains("\"list_directory\""),
            "{unknown}"
        );
        assert_eq!(
            responses[2]["response"]["error"],
            "Invalid parameters for list_directory: params/dir_path must be string"
        );
        assert_eq!(done[2].status, ToolCallStatus::Error);
        drop(sink);
        let mut kinds = Vec::new();
        while let Some(e) = events.recv().await {
            kinds.push(
                serde_json::to_value(&e).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        assert_eq!(
            kinds.iter().filter(|k| *k == "tool_call_request").count(),
            3
        );
        assert_eq!(
            kinds.iter().filter(|k| *k == "tool_call_response").count(),
            3
        );
    }

    #[tokio::test]
    async fn cancelled_before_start_reports_cancelled() {
        let dir = tempfile::tempdir().unwrap();
        let scheduler = Scheduler::new(Arc::new(ToolRegistry::with_builtins()));
        let (sink, _events) = EventSink::new();
        let c = ctx(dir.path());
        c.cancel.cancel();
        let done = scheduler
            .run(
                &[call("a", "list_directory", json!({"dir_path": "."}))],
                &c,
                &sink,
            )
            .await;
        assert_eq!(done[0].status, ToolCallStatus::Cancelled);
        let v = serde_json::to_value(&done[0].parts[0]).unwrap();
        assert_eq!(
            v["functionResponse"]["response"]["error"],
            CANCELLED_MESSAGE
        );
    }

    #[test]
    fn parts_content_puts_binary_beside_the_response() {
        let parts = function_response_parts(
            "id",
            "read_file",
            LlmContent::Parts(vec![Part::inline_data("image/png", "AAAA")]),
        );
        assert_eq!(parts.len(), 2);
        let v = serde_json::to_value(&parts[0]).unwrap();
        assert_eq!(
            v["functionResponse"]["response"]["output"],
            "Tool execution succeeded."
        );
        assert!(parts[1].inline_data.is_some());
    }
}
