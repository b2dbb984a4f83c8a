//! Per-hunk decisions through the session API: an edit confirmation is
//! answered with `Op::ConfirmTool { hunks }`, only the accepted hunks reach
//! the disk (through the tool's own write path), and the next request's
//! `functionResponse` tells the model which hunks were not applied.

use crate::common;

use std::sync::Arc;

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{
    ConfirmationDetails, ConfirmationOutcome, Event, HunkChoice, HunkDecision, Op, TurnStatus,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn interactive_policy(dir: &std::path::Path) -> Arc<PolicyApproval> {
    Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        Some(dir.join("auto-saved.toml")),
    ))
}

/// 25 numbered lines; the proposal changes lines 2 and 22: two hunks.
fn lines(changed: bool) -> Vec<String> {
    (1..=25)
        .map(|i| match i {
            2 | 22 if changed => format!("line {i} changed"),
            _ => format!("line {i}"),
        })
        .collect()
}

fn lf(lines: &[String]) -> String {
    lines.join("\n") + "\n"
}

fn crlf(lines: &[String]) -> String {
    lines.join("\r\n") + "\r\n"
}

fn edit_then_answer(call: Value) -> Value {
    json!({"steps": [{"functionCalls": [call]}, {"text": "Done."}]})
}

fn replace_call() -> Value {
    json!({"name": "replace", "args": {
        "file_path": "two.txt",
        "instruction": "change two lines",
        "old_string": lf(&lines(false)),
        "new_string": lf(&lines(true)),
    }})
}

/// Runs a turn answering its one confirmation with `outcome` and `hunks`;
/// returns the events and what the confirmation showed.
async fn answer_with_hunks(
    h: &mut Harness,
    outcome: ConfirmationOutcome,
    content: Option<&str>,
    hunks: Vec<HunkDecision>,
) -> (Vec<Event>, Vec<ConfirmationDetails>) {
    h.handle.submit(Op::user_text("edit it")).unwrap();
    let mut hunks = Some(hunks);
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
            h.handle
                .submit(Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome,
                    content: content.map(str::to_owned),
                    hunks: hunks.take().filter(|h| !h.is_empty()),
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

fn decide(hunk: u32, choice: HunkChoice) -> HunkDecision {
    HunkDecision { hunk, choice }
}

/// The `functionResponse.response` of the edit, as sent in the second request.
fn response(h: &Harness) -> Value {
    h.bodies()[1]["contents"][2]["parts"][0]["functionResponse"]["response"].clone()
}

#[tokio::test]
async fn a_rejected_hunk_is_not_written_and_the_model_hears_it() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        edit_then_answer(replace_call()),
        |_| {},
        interactive_policy(state.path()),
    );
    // A CRLF file: the tools edit LF text and write CRLF back.
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, crlf(&lines(false))).unwrap();
    let (events, asked) = answer_with_hunks(
        &mut h,
        ConfirmationOutcome::ProceedOnce,
        None,
        vec![decide(0, HunkChoice::Accept), decide(1, HunkChoice::Reject)],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let ConfirmationDetails::Edit { side_by_side, .. } = &asked[0] else {
        panic!("expected an edit confirmation, got {:?}", asked[0]);
    };
    assert_eq!(side_by_side.hunks.len(), 2);
    let mut expected = lines(false);
    expected[1] = "line 2 changed".into();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), crlf(&expected));

    let response = response(&h);
    assert_eq!(response["error"], Value::Null, "{response}");
    let output = response["output"].as_str().unwrap();
    assert!(
        output.contains(gd_core::scheduler::MODIFIED_NOTE),
        "{output}"
    );
    assert!(
        output.contains("The user applied 1 of 2 proposed changes to two.txt"),
        "{output}"
    );
    assert!(
        output.contains(
            "Not applied (the user rejected it; do not make this change again unless asked): hunk 2, lines 19\u{2013}25 of the file, which still reads as before:\n- line 22\n+ line 22 changed\n"
        ),
        "{output}"
    );
    assert!(output.contains("2: line 2 changed\n"), "{output}");
    assert!(output.contains("22: line 22\n"), "{output}");
    // The card is marked as changed by the user.
    let modified = events
        .iter()
        .any(|e| matches!(e, Event::ToolCallResponse { modified: true, .. }));
    assert!(modified, "the tool card says the user changed the edit");
}

#[tokio::test]
async fn rejecting_every_hunk_writes_nothing_and_says_so() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        edit_then_answer(replace_call()),
        |_| {},
        interactive_policy(state.path()),
    );
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(false))).unwrap();
    let (events, _) = answer_with_hunks(
        &mut h,
        ConfirmationOutcome::ProceedOnce,
        None,
        vec![decide(0, HunkChoice::Reject), decide(1, HunkChoice::Reject)],
    )
    .await;
    // Not a decline: the model goes on, knowing what was refused.
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&lines(false)));
    let output = response(&h)["output"].as_str().unwrap().to_owned();
    assert!(
        output.starts_with("The user applied 0 of 2 proposed changes to two.txt"),
        "{output}"
    );
    assert!(output.contains("- line 2\n+ line 2 changed\n"), "{output}");
}

#[tokio::test]
async fn bad_decisions_fail_the_call_without_writing() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        edit_then_answer(replace_call()),
        |_| {},
        interactive_policy(state.path()),
    );
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(false))).unwrap();
    answer_with_hunks(
        &mut h,
        ConfirmationOutcome::ProceedOnce,
        None,
        vec![decide(7, HunkChoice::Accept)],
    )
    .await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&lines(false)));
    let error = response(&h)["error"].as_str().unwrap().to_owned();
    assert_eq!(
        error,
        "The user's decisions on the change could not be applied: hunk 7 does not exist: the change has 2 hunks."
    );
}

#[tokio::test]
async fn write_file_on_an_existing_file_takes_picked_lines_and_the_users_edit() {
    let state = tempfile::tempdir().unwrap();
    let call = json!({"name": "write_file", "args": {
        "file_path": "two.txt",
        "content": lf(&lines(true)),
    }});
    let mut h = Harness::start_with_policy(
        edit_then_answer(call),
        |_| {},
        interactive_policy(state.path()),
    );
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(false))).unwrap();
    // The user edited the right pane (line 22 now reads differently) and
    // then took only the added line of hunk 1, keeping line 2 as well.
    let mut edited = lines(true);
    edited[21] = "line 22 by the user".into();
    let (events, _) = answer_with_hunks(
        &mut h,
        ConfirmationOutcome::ModifyWithEditor,
        Some(&lf(&edited)),
        vec![
            decide(0, HunkChoice::Lines { lines: vec![1] }),
            decide(1, HunkChoice::Accept),
        ],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let mut expected = lines(false);
    expected.insert(2, "line 2 changed".into());
    expected[22] = "line 22 by the user".into();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&expected));
    let output = response(&h)["output"].as_str().unwrap().to_owned();
    assert!(
        output.contains(gd_core::scheduler::MODIFIED_NOTE),
        "{output}"
    );
    assert!(
        output.contains("The user applied 1 of 2 proposed changes to two.txt and part of 1 more"),
        "{output}"
    );
    assert!(
        output.contains(
            "Applied:\n+ line 2 changed\nNot applied (rejected by the user):\n- line 2\n"
        ),
        "{output}"
    );
    // And what the user changed by hand, against the model's own proposal.
    assert!(
        output.contains(
            "The user edited your proposal for two.txt by hand in 1 place before it was applied"
        ) && output.contains(
            "Change 1 (line 22 of their version):\n- line 22 changed\n+ line 22 by the user\n"
        ),
        "{output}"
    );
}

/// Also a `replace` whose path the model gave relative to the workspace: the
/// user's version is written there (it once failed with "cannot be modified").
#[tokio::test]
async fn a_hand_edit_alone_is_described_to_the_model() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        edit_then_answer(replace_call()),
        |_| {},
        interactive_policy(state.path()),
    );
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(false))).unwrap();
    let mut mine = lines(true);
    mine[1] = "line 2 the user's way".into();
    let (events, _) = answer_with_hunks(
        &mut h,
        ConfirmationOutcome::ModifyWithEditor,
        Some(&lf(&mine)),
        Vec::new(),
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&mine));
    let output = response(&h)["output"].as_str().unwrap().to_owned();
    assert!(
        output.contains(gd_core::scheduler::MODIFIED_NOTE),
        "{output}"
    );
    assert!(
        output.contains(
            "Change 1 (line 2 of their version):\n- line 2 changed\n+ line 2 the user's way\n"
        ),
        "{output}"
    );
    assert!(
        !output.contains("Change 2"),
        "only one place differs: {output}"
    );
}

#[tokio::test]
async fn hunk_decisions_on_a_call_that_is_no_edit_are_refused() {
    let state = tempfile::tempdir().unwrap();
    let call = json!({"name": "run_shell_command", "args": {
        "command": "touch ran.txt", "description": "make a file"
    }});
    let mut h = Harness::start_with_policy(
        edit_then_answer(call),
        |_| {},
        interactive_policy(state.path()),
    );
    answer_with_hunks(
        &mut h,
        ConfirmationOutcome::ProceedOnce,
        None,
        vec![decide(0, HunkChoice::Accept)],
    )
    .await;
    assert!(
        !h.workspace.join("ran.txt").exists(),
        "the command did not run"
    );
    let error = response(&h)["error"].as_str().unwrap().to_owned();
    assert_eq!(
        error,
        "The user decided on hunks, but run_shell_command proposes no file edit."
    );
}
