//! `wait_for_previous` (Gemini CLI 0.61's flag on tools that may run
//! alongside others): read-only calls of one response run side by side; a
//! call with `wait_for_previous: true` starts only after the calls before
//! it finished.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use gd_core::approval::{AllowAll, Confirmations};
use gd_core::chat::ToolCallRequest;
use gd_core::events::EventSink;
use gd_core::scheduler::Scheduler;
use gd_core::tools::{Tool, ToolContext, ToolInfo, ToolKind, ToolRegistry, ToolResult};
use serde_json::{Value, json};

/// A read-only tool that logs when each call starts and ends, yielding in
/// between so that calls running together interleave.
struct Logged(Arc<Mutex<Vec<String>>>);

impl ToolInfo for Logged {
    fn name(&self) -> &str {
        "logged"
    }

    fn display_name(&self) -> &str {
        "Logged"
    }

    fn description(&self) -> &str {
        "test"
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn parameter_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| {
            json!({"type": "object", "properties": {
                "n": {"type": "integer"},
                "wait_for_previous": gd_core::tools::schema::wait_for_previous()
            }})
        })
    }
}

impl Tool for Logged {
    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let n = args["n"].clone();
            self.0.lock().unwrap().push(format!("start {n}"));
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            self.0.lock().unwrap().push(format!("end {n}"));
            ToolResult::success("ok", "ok")
        })
    }
}

async fn run(calls: &[Value]) -> Vec<String> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(Logged(log.clone())));
    let scheduler = Scheduler::new(
        Arc::new(registry),
        Arc::new(AllowAll),
        Arc::new(Confirmations::default()),
    );
    let ctx = ToolContext::new(vec![std::env::temp_dir()]);
    let (sink, _events) = EventSink::new();
    let requests: Vec<ToolCallRequest> = calls
        .iter()
        .enumerate()
        .map(|(i, args)| ToolCallRequest {
            call_id: format!("c{i}"),
            name: "logged".into(),
            args: args.clone(),
        })
        .collect();
    let batch = scheduler.run(&requests, &ctx, &sink).await;
    assert_eq!(batch.completed.len(), calls.len());
    log.lock().unwrap().clone()
}

#[tokio::test]
async fn read_only_calls_interleave_unless_told_to_wait() {
    assert_eq!(
        run(&[json!({"n": 1}), json!({"n": 2})]).await,
        ["start 1", "start 2", "end 1", "end 2"]
    );
    assert_eq!(
        run(&[
            json!({"n": 1}),
            json!({"n": 2}),
            json!({"n": 3, "wait_for_previous": true}),
            json!({"n": 4})
        ])
        .await,
        [
            "start 1", "start 2", "end 1", "end 2", "start 3", "end 3", "start 4", "end 4"
        ]
    );
}
