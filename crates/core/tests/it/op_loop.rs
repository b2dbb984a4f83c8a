//! One op loop per session: operations are taken while a turn runs (here
//! while its model request is still streaming, the fake server holding the
//! stream open), and conversation operations queue behind it in order.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{ConfirmationOutcome, Event, Op, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::json;

async fn next_event(h: &mut Harness) -> Event {
    tokio::time::timeout(Duration::from_secs(30), h.events.recv())
        .await
        .expect("no event within 30 s")
        .expect("session ended")
}

/// The events up to (and including) the first one `wanted` accepts.
async fn until(h: &mut Harness, wanted: impl Fn(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = next_event(h).await;
        let done = wanted(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn confirm_tool_and_interrupt_are_taken_while_the_model_request_streams() {
    let state = tempfile::tempdir().unwrap();
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        Some(state.path().join("auto-saved.toml")),
    ));
    // Request 1 asks for an edit (which needs the user's approval), request
    // 2 streams one chunk of its answer and then holds the stream open
    // forever.
    let mut h = Harness::start_with_policy(
        json!({
            "chunk_chars": 4,
            "faults": [{"request": 2, "kind": "hang", "hang_after_chunks": 1}],
            "steps": [
                {"functionCalls": [{"name": "write_file", "args": {"file_path": "hello.txt", "content": "hi there\n"}}]},
                {"text": "Updated the file as asked."}
            ]
        }),
        |_| {},
        policy,
    );
    h.handle.submit(Op::user_text("edit hello.txt")).unwrap();
    let asked = until(&mut h, |e| {
        matches!(e, Event::ToolConfirmationRequest { .. })
    })
    .await;
    let Some(Event::ToolConfirmationRequest { call_id, .. }) = asked.last() else {
        unreachable!()
    };
    let call_id = call_id.clone();

    // The turn waits for the answer; the loop takes it.
    h.handle
        .submit(Op::ConfirmTool {
            call_id: call_id.clone(),
            outcome: ConfirmationOutcome::ProceedOnce,
            content: None,
            hunks: None,
        })
        .unwrap();
    // The second request is streaming once its first piece arrives.
    until(&mut h, |e| matches!(e, Event::ContentDelta { .. })).await;
    assert_eq!(h.fake.main_requests().len(), 2);

    // While it streams: a conversation op is queued, immediate ones answer.
    h.handle.submit(Op::user_text("and then?")).unwrap();
    h.handle.submit(Op::Stats).unwrap();
    h.handle
        .submit(Op::OverrideTurnContext {
            approval_mode: Some(ApprovalMode::AutoEdit),
            model: None,
            review_mode: None,
        })
        .unwrap();
    // A confirmation answered already is refused at once.
    assert_eq!(
        h.handle.submit(Op::ConfirmTool {
            call_id: call_id.clone(),
            outcome: ConfirmationOutcome::ProceedOnce,
            content: None,
            hunks: None,
        }),
        Err(gd_core::SessionError::NoSuchConfirmation(call_id.clone()))
    );
    let answered = until(&mut h, |e| matches!(e, Event::TurnContext { .. })).await;
    let stats = answered
        .iter()
        .find_map(|e| match e {
            Event::SessionStats { stats } => Some(stats.clone()),
            _ => None,
        })
        .expect("the stats were answered while the request streamed");
    assert_eq!(stats.turns, 1);
    assert_eq!(stats.tools.decisions.accept, 1, "{stats:?}");
    assert!(
        !answered
            .iter()
            .any(|e| matches!(e, Event::TurnComplete { .. } | Event::TurnStarted { .. })),
        "{answered:?}"
    );

    // The interrupt ends the turn although the server never ends the stream.
    h.handle.submit(Op::Interrupt).unwrap();
    let ended = until(&mut h, |e| matches!(e, Event::TurnComplete { .. })).await;
    assert_eq!(status(&ended), TurnStatus::Cancelled);

    // Then the queued prompt runs as the next turn.
    let next = h.collect_turn().await;
    assert!(
        matches!(&next[0], Event::TurnStarted { turn_id } if turn_id == "turn-2"),
        "{next:?}"
    );
    assert_eq!(status(&next), TurnStatus::Completed);
}

#[tokio::test]
async fn conversation_ops_run_in_the_order_they_were_submitted() {
    let mut h = Harness::start(json!({"steps": [{"text": "one"}], "after_steps": {"text": "two"}}));
    h.handle.submit(Op::user_text("first")).unwrap();
    h.handle.submit(Op::Clear).unwrap();
    h.handle.submit(Op::user_text("second")).unwrap();
    h.handle.submit(Op::Shutdown).unwrap();
    // Not taken: the session ends at the shutdown.
    let _ = h.handle.submit(Op::user_text("third"));
    let mut kinds = Vec::new();
    while let Some(event) = h.events.recv().await {
        match event {
            Event::TurnComplete { turn_id, .. } => kinds.push(turn_id),
            Event::ConversationCleared { .. } => kinds.push("cleared".into()),
            _ => {}
        }
    }
    assert_eq!(kinds, ["turn-1", "cleared", "turn-2"]);
    h.handle.closed().await;
}
