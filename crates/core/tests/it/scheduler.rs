//! The tool scheduler: states, policy verdicts, confirmations and their
//! outcomes, concurrency and cancellation, with small tools made for the test.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use gd_core::approval::{Answer, ApprovalPolicy, Confirmations, Verdict};
use gd_core::chat::ToolCallRequest;
use gd_core::events::EventSink;
use gd_core::scheduler::{DECLINED_MESSAGE, MODIFIED_NOTE, Scheduler};
use gd_core::tools::{
    Tool, ToolContext, ToolError, ToolErrorKind, ToolInfo, ToolKind, ToolRegistry, ToolResult,
};
use gd_protocol::{
    ConfirmationDetails, ConfirmationOutcome, Event, SideBySideDiff, ToolCallState, ToolCallStatus,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::{Barrier, mpsc};
use tokio_util::sync::CancellationToken;

/// Writes `content` to `path` (relative to the workspace); shows an edit
/// confirmation with the file's current content.
struct FakeWrite;

fn schema_path_content() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]})
    })
}

impl ToolInfo for FakeWrite {
    fn name(&self) -> &str {
        "fake_write"
    }

    fn display_name(&self) -> &str {
        "FakeWrite"
    }

    fn description(&self) -> &str {
        "test"
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    fn parameter_schema(&self) -> &Value {
        schema_path_content()
    }

    fn modified_args(&self, args: &Value, content: &str) -> Option<Value> {
        Some(json!({"path": args["path"], "content": content}))
    }
}

impl Tool for FakeWrite {
    fn prepare<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Option<ConfirmationDetails>, ToolError>> {
        Box::pin(async move {
            let path = ctx.primary_dir().join(args["path"].as_str().unwrap());
            if args["content"] == "invalid" {
                return Err(ToolError::new(
                    ToolErrorKind::InvalidParams,
                    "content is invalid",
                ));
            }
            Ok(Some(ConfirmationDetails::Edit {
                title: "write".into(),
                file_path: path.display().to_string(),
                file_name: "f".into(),
                original: std::fs::read_to_string(&path).ok(),
                proposed: args["content"].as_str().unwrap().into(),
                unified_diff: String::new(),
                side_by_side: SideBySideDiff::default(),
                is_new_file: !path.exists(),
            }))
        })
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let path = ctx.primary_dir().join(args["path"].as_str().unwrap());
            std::fs::write(&path, args["content"].as_str().unwrap()).unwrap();
            ToolResult::success(format!("wrote {}", path.display()), "written")
        })
    }
}

/// A read-only tool that waits at a barrier shared by the calls of a batch,
/// so two calls only finish if they run at the same time.
struct Rendezvous(Arc<Barrier>);

impl ToolInfo for Rendezvous {
    fn name(&self) -> &str {
        "rendezvous"
    }

    fn display_name(&self) -> &str {
        "Rendezvous"
    }

    fn description(&self) -> &str {
        "test"
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn parameter_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
    }
}

impl Tool for Rendezvous {
    fn execute<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            self.0.wait().await;
            ToolResult::success(format!("met {}", args["n"]), "met")
        })
    }
}

/// A tool that runs until cancelled.
struct Forever;

impl ToolInfo for Forever {
    fn name(&self) -> &str {
        "forever"
    }

    fn display_name(&self) -> &str {
        "Forever"
    }

    fn description(&self) -> &str {
        "test"
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn parameter_schema(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object"}))
    }
}

impl Tool for Forever {
    fn execute<'a>(&'a self, _args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(futures::future::pending())
    }
}

/// Verdicts by tool name; records what was remembered.
#[derive(Default)]
struct ScriptedPolicy {
    verdicts: Mutex<HashMap<String, Verdict>>,
    remembered: Mutex<Vec<(String, bool)>>,
}

impl ScriptedPolicy {
    fn with(verdicts: &[(&str, Verdict)]) -> Arc<Self> {
        let policy = Self::default();
        for (name, verdict) in verdicts {
            policy
                .verdicts
                .lock()
                .unwrap()
                .insert((*name).into(), verdict.clone());
        }
        Arc::new(policy)
    }
}

impl ApprovalPolicy for ScriptedPolicy {
    fn decide(&self, tool: &dyn Tool, _args: &Value) -> Verdict {
        self.verdicts
            .lock()
            .unwrap()
            .get(tool.name())
            .cloned()
            .unwrap_or(Verdict::Ask)
    }
    fn remember(
        &self,
        tool: &dyn Tool,
        _args: &Value,
        _details: Option<&ConfirmationDetails>,
        outcome: ConfirmationOutcome,
    ) -> Result<(), String> {
        self.remembered.lock().unwrap().push((
            tool.name().into(),
            outcome == ConfirmationOutcome::ProceedAlwaysAndSave,
        ));
        self.verdicts
            .lock()
            .unwrap()
            .insert(tool.name().into(), Verdict::Allow);
        Ok(())
    }
}

struct Setup {
    scheduler: Scheduler,
    confirmations: Arc<Confirmations>,
    ctx: ToolContext,
    ws: PathBuf,
    _dir: tempfile::TempDir,
}

fn setup(policy: Arc<dyn ApprovalPolicy>, extra: Vec<Arc<dyn Tool>>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(FakeWrite));
    registry.register(Arc::new(Forever));
    for tool in extra {
        registry.register(tool);
    }
    let confirmations = Arc::new(Confirmations::default());
    let scheduler = Scheduler::new(Arc::new(registry), policy, confirmations.clone());
    let ctx = ToolContext::new(vec![ws.clone()]);
    Setup {
        scheduler,
        confirmations,
        ctx,
        ws,
        _dir: dir,
    }
}

fn call(id: &str, name: &str, args: Value) -> ToolCallRequest {
    ToolCallRequest {
        call_id: id.into(),
        name: name.into(),
        args,
    }
}

fn write(id: &str, path: &str, content: &str) -> ToolCallRequest {
    call(id, "fake_write", json!({"path": path, "content": content}))
}

fn response(parts: &[gd_gemini::Part]) -> Value {
    serde_json::to_value(&parts[0]).unwrap()["functionResponse"]["response"].clone()
}

/// Answers confirmation requests from a script, in order, and reports them.
fn answer_with(
    confirmations: Arc<Confirmations>,
    mut rx: mpsc::UnboundedReceiver<Event>,
    answers: Vec<Answer>,
) -> tokio::task::JoinHandle<Vec<Event>> {
    tokio::spawn(async move {
        let mut answers = answers.into_iter();
        let mut seen = Vec::new();
        while let Some(event) = rx.recv().await {
            if let Event::ToolConfirmationRequest { call_id, .. } = &event {
                let answer = answers.next().expect("an answer for every request");
                assert!(confirmations.answer(call_id, answer));
            }
            seen.push(event);
        }
        seen
    })
}

fn answer(outcome: ConfirmationOutcome) -> Answer {
    Answer {
        outcome,
        content: None,
        hunks: None,
        plan: None,
    }
}

fn requests(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolConfirmationRequest { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect()
}

fn states(events: &[Event], id: &str) -> Vec<ToolCallState> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallState { call_id, state } if call_id == id => Some(*state),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn read_only_calls_run_concurrently_and_results_keep_call_order() {
    let barrier = Arc::new(Barrier::new(2));
    let s = setup(
        ScriptedPolicy::with(&[("rendezvous", Verdict::Allow)]),
        vec![Arc::new(Rendezvous(barrier))],
    );
    let (sink, _rx) = EventSink::new();
    let calls = [
        call("a", "rendezvous", json!({"n": 1})),
        call("b", "rendezvous", json!({"n": 2})),
    ];
    let batch = tokio::time::timeout(
        Duration::from_secs(5),
        s.scheduler.run(&calls, &s.ctx, &sink),
    )
    .await
    .expect("both calls ran at the same time");
    assert_eq!(response(&batch.completed[0].parts)["output"], "met 1");
    assert_eq!(response(&batch.completed[1].parts)["output"], "met 2");
}

#[tokio::test]
async fn approvals_are_asked_in_call_order_and_proceed_once_runs() {
    let s = setup(ScriptedPolicy::with(&[]), vec![]);
    let (sink, rx) = EventSink::new();
    let seen = answer_with(
        s.confirmations.clone(),
        rx,
        vec![
            answer(ConfirmationOutcome::ProceedOnce),
            answer(ConfirmationOutcome::ProceedOnce),
        ],
    );
    let batch = s
        .scheduler
        .run(
            &[write("1", "a.txt", "A"), write("2", "b.txt", "B")],
            &s.ctx,
            &sink,
        )
        .await;
    drop(sink);
    let events = seen.await.unwrap();
    assert_eq!(requests(&events), vec!["1", "2"]);
    assert!(!batch.declined);
    assert_eq!(std::fs::read_to_string(s.ws.join("a.txt")).unwrap(), "A");
    assert_eq!(std::fs::read_to_string(s.ws.join("b.txt")).unwrap(), "B");
    assert_eq!(
        states(&events, "1"),
        vec![
            ToolCallState::Validating,
            ToolCallState::AwaitingApproval,
            ToolCallState::Scheduled,
            ToolCallState::Executing,
            ToolCallState::Success
        ]
    );
}

#[tokio::test]
async fn cancel_declines_this_and_the_remaining_calls() {
    let s = setup(ScriptedPolicy::with(&[]), vec![]);
    let (sink, rx) = EventSink::new();
    let seen = answer_with(
        s.confirmations.clone(),
        rx,
        vec![answer(ConfirmationOutcome::Cancel)],
    );
    let batch = s
        .scheduler
        .run(
            &[write("1", "a.txt", "A"), write("2", "b.txt", "B")],
            &s.ctx,
            &sink,
        )
        .await;
    drop(sink);
    let events = seen.await.unwrap();
    assert!(batch.declined);
    assert_eq!(requests(&events), vec!["1"], "the second call is not asked");
    for done in &batch.completed {
        assert_eq!(done.status, ToolCallStatus::Cancelled);
        assert_eq!(response(&done.parts)["error"], DECLINED_MESSAGE);
        assert!(done.shown.declined, "the card says the user rejected it");
        assert_eq!(done.shown.diff, None, "nothing was applied");
    }
    assert!(!s.ws.join("a.txt").exists() && !s.ws.join("b.txt").exists());
}

#[tokio::test]
async fn proceed_always_is_remembered_and_covers_later_calls() {
    for (outcome, save) in [
        (ConfirmationOutcome::ProceedAlways, false),
        (ConfirmationOutcome::ProceedAlwaysAndSave, true),
    ] {
        let policy = ScriptedPolicy::with(&[]);
        let s = setup(policy.clone(), vec![]);
        let (sink, rx) = EventSink::new();
        let seen = answer_with(s.confirmations.clone(), rx, vec![answer(outcome)]);
        let batch = s
            .scheduler
            .run(
                &[write("1", "a.txt", "A"), write("2", "b.txt", "B")],
                &s.ctx,
                &sink,
            )
            .await;
        drop(sink);
        let events = seen.await.unwrap();
        assert_eq!(requests(&events), vec!["1"]);
        assert_eq!(
            *policy.remembered.lock().unwrap(),
            vec![("fake_write".to_string(), save)]
        );
        assert!(
            batch
                .completed
                .iter()
                .all(|c| c.status == ToolCallStatus::Success)
        );
    }
}

#[tokio::test]
async fn modified_content_is_applied_and_the_model_is_told() {
    let s = setup(ScriptedPolicy::with(&[]), vec![]);
    let (sink, rx) = EventSink::new();
    let seen = answer_with(
        s.confirmations.clone(),
        rx,
        vec![Answer {
            outcome: ConfirmationOutcome::ModifyWithEditor,
            content: Some("edited by the user".into()),
            hunks: None,
            plan: None,
        }],
    );
    let batch = s
        .scheduler
        .run(&[write("1", "a.txt", "proposed")], &s.ctx, &sink)
        .await;
    drop(sink);
    seen.await.unwrap();
    assert_eq!(
        std::fs::read_to_string(s.ws.join("a.txt")).unwrap(),
        "edited by the user"
    );
    let output = response(&batch.completed[0].parts)["output"]
        .as_str()
        .unwrap()
        .to_owned();
    // Gemini CLI's note, then the change itself: the model's line against the user's.
    assert!(output.contains(MODIFIED_NOTE), "{output}");
    assert!(
        output.ends_with("Change 1 (line 1 of their version):\n- proposed\n+ edited by the user\n"),
        "{output}"
    );
    // The card gets the change as applied (the user's version) and the full result.
    let shown = &batch.completed[0].shown;
    assert!(
        matches!(&shown.diff, Some(ConfirmationDetails::Edit { proposed, .. }) if proposed == "edited by the user"),
        "{:?}",
        shown.diff
    );
    assert!(!shown.declined);
    assert!(
        shown
            .output
            .as_deref()
            .is_some_and(|o| o.starts_with("wrote ")),
        "{:?}",
        shown.output
    );
}

#[tokio::test]
async fn denied_and_invalid_calls_never_reach_the_user() {
    let s = setup(
        ScriptedPolicy::with(&[("fake_write", Verdict::Deny(Some("Writes are off.".into())))]),
        vec![],
    );
    let (sink, rx) = EventSink::new();
    let seen = answer_with(s.confirmations.clone(), rx, vec![]);
    let batch = s
        .scheduler
        .run(
            &[
                write("1", "a.txt", "A"),
                call("2", "fake_write", json!({"path": 3, "content": "x"})),
                call("3", "nope", json!({})),
            ],
            &s.ctx,
            &sink,
        )
        .await;
    drop(sink);
    assert!(requests(&seen.await.unwrap()).is_empty());
    assert_eq!(
        response(&batch.completed[0].parts)["error"],
        "Tool execution denied by policy. Writes are off."
    );
    assert!(
        response(&batch.completed[1].parts)["error"]
            .as_str()
            .unwrap()
            .contains("params/path must be string")
    );
    assert!(
        response(&batch.completed[2].parts)["error"]
            .as_str()
            .unwrap()
            .starts_with("Tool \"nope\" not found.")
    );
    assert!(!s.ws.join("a.txt").exists());
}

#[tokio::test]
async fn prepare_errors_fail_before_asking() {
    let s = setup(ScriptedPolicy::with(&[]), vec![]);
    let (sink, rx) = EventSink::new();
    let seen = answer_with(s.confirmations.clone(), rx, vec![]);
    let batch = s
        .scheduler
        .run(&[write("1", "a.txt", "invalid")], &s.ctx, &sink)
        .await;
    drop(sink);
    assert!(requests(&seen.await.unwrap()).is_empty());
    assert_eq!(
        response(&batch.completed[0].parts)["error"],
        "content is invalid"
    );
}

#[tokio::test]
async fn a_file_changed_after_approval_is_confirmed_again() {
    let s = setup(ScriptedPolicy::with(&[]), vec![]);
    std::fs::write(s.ws.join("a.txt"), "v1").unwrap();
    let (sink, mut rx) = EventSink::new();
    let ws = s.ws.clone();
    let confirmations = s.confirmations.clone();
    let driver = tokio::spawn(async move {
        let mut originals = Vec::new();
        while let Some(event) = rx.recv().await {
            if let Event::ToolConfirmationRequest {
                call_id,
                details: ConfirmationDetails::Edit { original, .. },
                ..
            } = event
            {
                originals.push(original.clone());
                if originals.len() == 1 {
                    // Someone edits the file while the user looks at the diff.
                    std::fs::write(ws.join("a.txt"), "v2 from elsewhere").unwrap();
                }
                assert!(confirmations.answer(&call_id, answer(ConfirmationOutcome::ProceedOnce)));
            }
        }
        originals
    });
    let batch = s
        .scheduler
        .run(&[write("1", "a.txt", "mine")], &s.ctx, &sink)
        .await;
    drop(sink);
    let originals = driver.await.unwrap();
    assert_eq!(
        originals,
        vec![
            Some("v1".to_string()),
            Some("v2 from elsewhere".to_string())
        ]
    );
    assert_eq!(batch.completed[0].status, ToolCallStatus::Success);
    assert_eq!(std::fs::read_to_string(s.ws.join("a.txt")).unwrap(), "mine");
}

#[tokio::test]
async fn cancelling_the_turn_stops_waiting_and_running_calls() {
    let s = setup(
        ScriptedPolicy::with(&[("forever", Verdict::Allow), ("fake_write", Verdict::Allow)]),
        vec![],
    );
    let (sink, mut rx) = EventSink::new();
    let cancel: CancellationToken = s.ctx.cancel.clone();
    // Cancel once the first call is executing.
    let watcher = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            if matches!(
                event,
                Event::ToolCallState {
                    state: ToolCallState::Executing,
                    ..
                }
            ) {
                cancel.cancel();
            }
        }
    });
    let batch = tokio::time::timeout(
        Duration::from_secs(5),
        s.scheduler.run(
            &[call("1", "forever", json!({})), write("2", "a.txt", "A")],
            &s.ctx,
            &sink,
        ),
    )
    .await
    .expect("cancel ends the batch");
    drop(sink);
    watcher.await.unwrap();
    assert!(
        batch
            .completed
            .iter()
            .all(|c| c.status == ToolCallStatus::Cancelled && !c.shown.declined),
        "stopped, not rejected"
    );
    assert!(!s.ws.join("a.txt").exists());
}

#[tokio::test]
async fn cancelling_while_waiting_for_approval_withdraws_the_request() {
    let s = setup(ScriptedPolicy::with(&[]), vec![]);
    let (sink, mut rx) = EventSink::new();
    let cancel = s.ctx.cancel.clone();
    let watcher = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            if matches!(event, Event::ToolConfirmationRequest { .. }) {
                cancel.cancel();
            }
        }
    });
    let batch = s
        .scheduler
        .run(&[write("1", "a.txt", "A")], &s.ctx, &sink)
        .await;
    drop(sink);
    watcher.await.unwrap();
    assert_eq!(batch.completed[0].status, ToolCallStatus::Cancelled);
    assert!(
        !s.confirmations
            .answer("1", answer(ConfirmationOutcome::ProceedOnce)),
        "nothing waits any more"
    );
}
