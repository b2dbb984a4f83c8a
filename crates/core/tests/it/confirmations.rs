//! Confirmations through the session API, as the desktop app drives them:
//! the policy asks, a `ToolConfirmationRequest` event arrives, and
//! `Op::ConfirmTool` answers it while the turn waits.

use crate::common;

use std::sync::Arc;

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{ConfirmationDetails, ConfirmationOutcome, Event, Op, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::json;

fn interactive_policy(dir: &std::path::Path) -> Arc<PolicyApproval> {
    Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        Some(dir.join("auto-saved.toml")),
    ))
}

/// Runs a turn, answering each confirmation with the next outcome; returns
/// the events and the confirmations' details.
async fn turn_answering(
    h: &mut Harness,
    prompt: &str,
    answers: Vec<(ConfirmationOutcome, Option<&str>)>,
) -> (Vec<Event>, Vec<ConfirmationDetails>) {
    h.handle.submit(Op::user_text(prompt)).unwrap();
    let mut answers = answers.into_iter();
    let mut events = Vec::new();
    let mut asked = Vec::new();
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::ToolConfirmationRequest {
            call_id, details, ..
        } = &event
        {
            asked.push(details.clone());
            let (outcome, content) = answers.next().expect("an answer for every confirmation");
            h.handle
                .submit(Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome,
                    content: content.map(str::to_owned),
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

fn write_then_answer() -> serde_json::Value {
    json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "hello.txt", "content": "hi there\n"}}]},
        {"text": "Updated."}
    ]})
}

#[tokio::test]
async fn an_edit_is_shown_as_a_diff_and_applied_after_approval() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        write_then_answer(),
        |_| {},
        interactive_policy(state.path()),
    );
    let (events, asked) = turn_answering(
        &mut h,
        "change hello",
        vec![(ConfirmationOutcome::ProceedOnce, None)],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    match &asked[0] {
        ConfirmationDetails::Edit {
            original,
            proposed,
            side_by_side,
            unified_diff,
            is_new_file,
            ..
        } => {
            assert_eq!(original.as_deref(), Some("hello\n"));
            assert_eq!(proposed, "hi there\n");
            assert!(!is_new_file);
            assert_eq!((side_by_side.added, side_by_side.removed), (1, 1));
            assert!(unified_diff.contains("-hello\n+hi there"), "{unified_diff}");
        }
        other => panic!("expected an edit confirmation, got {other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap(),
        "hi there\n"
    );
}

#[tokio::test]
async fn declining_ends_the_turn_without_asking_the_model_again() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        write_then_answer(),
        |_| {},
        interactive_policy(state.path()),
    );
    let (events, _) = turn_answering(
        &mut h,
        "change hello",
        vec![(ConfirmationOutcome::Cancel, None)],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Declined);
    assert_eq!(
        h.fake.main_requests().len(),
        1,
        "the model is not asked to continue"
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap(),
        "hello\n"
    );
    // The refusal is in history for the next turn.
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("never mind").await;
    let contents = h.bodies()[0]["contents"].as_array().unwrap().clone();
    assert_valid_history(&contents);
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["response"]["error"],
        gd_core::scheduler::DECLINED_MESSAGE
    );
}

#[tokio::test]
async fn the_users_edit_is_written_and_the_model_told() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        write_then_answer(),
        |_| {},
        interactive_policy(state.path()),
    );
    let (events, _) = turn_answering(
        &mut h,
        "change hello",
        vec![(
            ConfirmationOutcome::ModifyWithEditor,
            Some("my own words\n"),
        )],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap(),
        "my own words\n"
    );
    let output = h.bodies()[1]["contents"][2]["parts"][0]["functionResponse"]["response"]["output"]
        .as_str()
        .unwrap()
        .to_owned();
    // Gemini CLI's note, then what the change was (the model's line, the user's).
    assert!(
        output.contains(gd_core::scheduler::MODIFIED_NOTE),
        "{output}"
    );
    assert!(
        output.ends_with("Change 1 (line 1 of their version):\n- hi there\n+ my own words\n"),
        "{output}"
    );
}

#[tokio::test]
async fn always_allow_covers_the_rest_of_the_session_and_save_writes_a_rule() {
    let state = tempfile::tempdir().unwrap();
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "echo one"}}]},
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "echo two"}}]},
        {"text": "done"}
    ]});
    let mut h = Harness::start_with_policy(scenario, |_| {}, interactive_policy(state.path()));
    let (events, asked) = turn_answering(
        &mut h,
        "echo twice",
        vec![(ConfirmationOutcome::ProceedAlwaysAndSave, None)],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(asked.len(), 1, "the second echo is covered by the approval");
    match &asked[0] {
        ConfirmationDetails::Execute {
            command,
            root_commands,
            ..
        } => {
            assert_eq!(command, "echo one");
            assert_eq!(root_commands, &vec!["echo".to_string()]);
        }
        other => panic!("expected an execute confirmation, got {other:?}"),
    }
    let saved = std::fs::read_to_string(state.path().join("auto-saved.toml")).unwrap();
    assert!(
        saved.contains("commandPrefix") && saved.contains("echo") && saved.contains("allow"),
        "{saved}"
    );
    let (engine, errors) = PolicyEngine::load(&gd_policy::PolicySources {
        user_dir: Some(state.path().to_path_buf()),
        ..Default::default()
    });
    assert!(errors.is_empty(), "{errors:?}");
    let args = json!({"command": "echo three"});
    let call = gd_policy::ToolCall {
        name: "run_shell_command",
        args: &args,
        mcp_server: None,
        subagent: None,
    };
    assert_eq!(
        engine.decide(&call, gd_policy::Mode::Default, true),
        gd_policy::Decision::Allow
    );
}

#[tokio::test]
async fn answering_an_unknown_confirmation_is_an_error() {
    let h = Harness::start(json!({"steps": [{"text": "x"}]}));
    let result = h.handle.submit(Op::ConfirmTool {
        call_id: "nope".into(),
        outcome: ConfirmationOutcome::ProceedOnce,
        content: None,
        hunks: None,
    });
    assert_eq!(
        result,
        Err(gd_core::SessionError::NoSuchConfirmation("nope".into()))
    );
}

/// "Always allow edits" on a `replace` covers the next `write_file` of the
/// session too (issue 34: the rule covered one tool only, and the next
/// edit was asked again), and nothing but edits: a shell command is still
/// asked.
#[tokio::test]
async fn always_allow_edits_covers_every_edit_tool_and_nothing_else() {
    let state = tempfile::tempdir().unwrap();
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "replace", "args": {
            "file_path": "hello.txt", "instruction": "shout",
            "old_string": "hello", "new_string": "HELLO"}}]},
        {"functionCalls": [{"name": "write_file", "args": {
            "file_path": "notes.txt", "content": "written without asking\n"}}]},
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "echo still asked"}}]},
        {"text": "done"}
    ]});
    let mut h = Harness::start_with_policy(scenario, |_| {}, interactive_policy(state.path()));
    let (events, asked) = turn_answering(
        &mut h,
        "edit twice, then run",
        vec![
            (ConfirmationOutcome::ProceedAlways, None),
            (ConfirmationOutcome::ProceedOnce, None),
        ],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let kinds: Vec<&str> = asked
        .iter()
        .map(|d| match d {
            ConfirmationDetails::Edit { .. } => "edit",
            ConfirmationDetails::Execute { .. } => "execute",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["edit", "execute"], "{asked:?}");
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("notes.txt")).unwrap(),
        "written without asking\n"
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap(),
        "HELLO\n"
    );
}
