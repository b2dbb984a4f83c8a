//! Confirmations of an untrusted MCP server's tools through the session API,
//! against the real python fixture server over stdio: the MCP confirmation
//! names server, tool and arguments; "always allow this tool" covers that
//! tool only, "always allow this server" every tool of the server; what the
//! server writes to stderr is announced (`McpServerLogChanged`) and readable
//! (`Op::McpServerLog`).

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{ConfirmationDetails, ConfirmationOutcome, Event, McpToolRef, Op, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn start(scenario: Value, state: &Path) -> Harness {
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        Some(state.join("auto-saved.toml")),
    ));
    Harness::start_with_tools(scenario, |_| {}, policy, with_fixture_server)
}

/// Runs a turn, answering each confirmation with the next outcome; returns
/// the events and the MCP confirmations' (server, tool, args).
async fn turn_answering(
    h: &mut Harness,
    answers: Vec<ConfirmationOutcome>,
) -> (Vec<Event>, Vec<(String, String, Value)>) {
    h.handle.submit(Op::user_text("use the tools")).unwrap();
    let mut answers = answers.into_iter();
    let mut events = Vec::new();
    let mut asked = Vec::new();
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(60), h.events.recv())
            .await
            .expect("the turn goes on")
            .expect("the session is alive");
        if let Event::ToolConfirmationRequest {
            call_id, details, ..
        } = &event
        {
            match details {
                ConfirmationDetails::Mcp {
                    server_name,
                    tool_name,
                    args,
                    ..
                } => asked.push((server_name.clone(), tool_name.clone(), args.clone())),
                other => panic!("expected an MCP confirmation, got {other:?}"),
            }
            let outcome = answers.next().expect("an answer for every confirmation");
            h.handle
                .submit(Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome,
                    content: None,
                    hunks: None,
                })
                .unwrap();
        }
        let done = matches!(event, Event::TurnComplete { .. });
        events.push(event);
        if done {
            return (events, asked);
        }
    }
}

/// The `functionResponse.response` of each request's last content.
fn outputs(h: &Harness) -> Vec<Value> {
    h.bodies()
        .iter()
        .skip(1)
        .map(|b| {
            b["contents"].as_array().unwrap().last().unwrap()["parts"][0]["functionResponse"]
                ["response"]
                .clone()
        })
        .collect()
}

fn three_calls() -> Value {
    json!({"steps": [
        {"functionCalls": [{"name": "mcp_fixture_add", "args": {"a": 1, "b": 2}}]},
        {"functionCalls": [{"name": "mcp_fixture_add", "args": {"a": 3, "b": 4}}]},
        {"functionCalls": [{"name": "mcp_fixture_echo", "args": {"text": "hi"}}]},
        {"text": "done"}
    ]})
}

fn wrapped(text: &str) -> Value {
    json!({"output": format!("<untrusted_context>\n{text}\n</untrusted_context>")})
}

#[tokio::test]
async fn always_allow_the_tool_asks_again_for_another_tool_of_the_server() {
    let state = tempfile::tempdir().unwrap();
    let mut h = start(three_calls(), state.path());
    let (events, asked) = turn_answering(
        &mut h,
        vec![
            ConfirmationOutcome::ProceedAlways,
            ConfirmationOutcome::ProceedOnce,
        ],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(
        asked,
        vec![
            ("fixture".into(), "add".into(), json!({"a": 1, "b": 2})),
            ("fixture".into(), "echo".into(), json!({"text": "hi"})),
        ],
        "the second add is covered, echo is not"
    );
    assert_eq!(outputs(&h), vec![wrapped("3"), wrapped("7"), wrapped("hi")]);
}

#[tokio::test]
async fn always_allow_the_server_covers_its_other_tools() {
    let state = tempfile::tempdir().unwrap();
    let mut h = start(three_calls(), state.path());
    let (events, asked) =
        turn_answering(&mut h, vec![ConfirmationOutcome::ProceedAlwaysServer]).await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(
        asked,
        vec![("fixture".into(), "add".into(), json!({"a": 1, "b": 2}))]
    );
    assert_eq!(outputs(&h), vec![wrapped("3"), wrapped("7"), wrapped("hi")]);
    // The calls name their server and tool as the server does (the cards' titles).
    let named: Vec<(String, Option<McpToolRef>)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallRequest { name, mcp, .. } => Some((name.clone(), mcp.clone())),
            _ => None,
        })
        .collect();
    let fixture = |tool: &str| {
        Some(McpToolRef {
            server: "fixture".into(),
            tool: tool.into(),
        })
    };
    assert_eq!(
        named,
        vec![
            ("mcp_fixture_add".into(), fixture("add")),
            ("mcp_fixture_add".into(), fixture("add")),
            ("mcp_fixture_echo".into(), fixture("echo")),
        ]
    );
}

#[tokio::test]
async fn declining_an_mcp_call_does_not_run_it() {
    let state = tempfile::tempdir().unwrap();
    let mut h = start(three_calls(), state.path());
    let (events, asked) = turn_answering(&mut h, vec![ConfirmationOutcome::Cancel]).await;
    assert_eq!(asked.len(), 1);
    assert_ne!(status(&events), TurnStatus::Completed);
    assert_eq!(
        h.bodies().len(),
        1,
        "the model is not asked again after a decline"
    );
}

#[tokio::test]
async fn a_servers_stderr_is_announced_and_its_tail_can_be_read() {
    let state = tempfile::tempdir().unwrap();
    let mut h = start(
        json!({"steps": [
            {"functionCalls": [{"name": "mcp_fixture_crash", "args": {}}]},
            {"text": "it crashed"}
        ]}),
        state.path(),
    );
    let (mut events, asked) = turn_answering(&mut h, vec![ConfirmationOutcome::ProceedOnce]).await;
    assert_eq!(asked.len(), 1);
    // The server wrote its last words to stderr: the session says so (the
    // event may come after the turn), and the tail has them.
    let announced = |events: &[Event]| {
        events
            .iter()
            .any(|e| matches!(e, Event::McpServerLogChanged { name } if name == "fixture"))
    };
    while !announced(&events) {
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .expect("the stderr write is announced")
            .expect("the session is alive");
        events.push(event);
    }
    h.handle
        .submit(Op::McpServerLog {
            name: "fixture".into(),
        })
        .unwrap();
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .expect("the log is sent")
            .expect("the session is alive");
        if let Event::McpServerLog { name, lines } = event {
            assert_eq!(name, "fixture");
            assert!(
                lines.iter().any(|l| l == "fixture: crashing on purpose"),
                "{lines:?}"
            );
            break;
        }
    }
}
