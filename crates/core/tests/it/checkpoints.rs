//! Checkpoints through the session API: the scheduler snapshots the
//! workspace right before an approved edit runs, and `Op::RestoreCheckpoint`
//! puts the files back. Real git, real files, the fake Gemini server.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use gd_checkpoint::CheckpointConfig;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{
    CheckpointScope, ConfirmationOutcome, Event, Op, RestoreAction, RestoredFile, ToolCallState,
    TurnStatus,
};
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

/// The model replaces text in hello.txt, then creates a new file.
fn replace_then_create() -> serde_json::Value {
    json!({"steps": [
        {"functionCalls": [{"name": "replace", "args": {
            "file_path": "hello.txt", "old_string": "hello", "new_string": "goodbye",
            "instruction": "say goodbye"}}]},
        {"functionCalls": [{"name": "write_file", "args": {
            "file_path": "notes/new.txt", "content": "created by the agent\n"}}]},
        {"text": "Done."}
    ]})
}

/// Checkpointing on, the shadow repositories inside the test's directory.
fn with_checkpoints(budget: Duration) -> impl FnOnce(&mut gd_core::SessionConfig) {
    move |config| {
        let mut checkpoints = CheckpointConfig::new(config.temp_dir.join("checkpoints"));
        checkpoints.budget = budget;
        config.checkpointing = Some(checkpoints);
    }
}

/// Runs a turn approving every confirmation once.
async fn turn_approving(h: &mut Harness, prompt: &str) -> Vec<Event> {
    h.handle.submit(Op::user_text(prompt)).unwrap();
    let mut events = Vec::new();
    loop {
        let event = next(h).await;
        if let Event::ToolConfirmationRequest { call_id, .. } = &event {
            h.handle
                .submit(Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome: ConfirmationOutcome::ProceedOnce,
                    content: None,
                    hunks: None,
                })
                .unwrap();
        }
        let done = matches!(event, Event::TurnComplete { .. });
        events.push(event);
        if done {
            return events;
        }
    }
}

async fn next(h: &mut Harness) -> Event {
    tokio::time::timeout(Duration::from_secs(60), h.events.recv())
        .await
        .expect("an event within 60 s")
        .expect("session open")
}

/// Skips events until one `pick` accepts.
async fn wait_for<T>(h: &mut Harness, pick: impl Fn(&Event) -> Option<T>) -> T {
    loop {
        let event = next(h).await;
        if let Some(found) = pick(&event) {
            return found;
        }
    }
}

fn created(events: &[Event]) -> Vec<(String, String, CheckpointScope, Vec<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::CheckpointCreated {
                call_id,
                checkpoint_id,
                scope,
                files,
            } => Some((
                call_id.clone(),
                checkpoint_id.clone(),
                *scope,
                files.clone(),
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_approved_replace_is_checkpointed_and_restored() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        replace_then_create(),
        with_checkpoints(Duration::from_secs(30)),
        interactive_policy(state.path()),
    );
    let events = turn_approving(&mut h, "change hello").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap(),
        "goodbye\n"
    );
    assert!(h.workspace.join("notes/new.txt").exists());

    let checkpoints = created(&events);
    assert_eq!(checkpoints.len(), 2, "{events:#?}");
    let (call_id, first, scope, files) = checkpoints[0].clone();
    assert_eq!(scope, CheckpointScope::Full);
    assert_eq!(files, vec!["hello.txt"]);
    assert_eq!(checkpoints[1].3, vec!["notes/new.txt"]);
    // The checkpoint is taken after the approval, right before the edit runs.
    let position = |wanted: &dyn Fn(&Event) -> bool| events.iter().position(wanted).unwrap();
    let approved = position(
        &|e| matches!(e, Event::ToolConfirmationRequest { call_id: c, .. } if *c == call_id),
    );
    let checkpointed =
        position(&|e| matches!(e, Event::CheckpointCreated { call_id: c, .. } if *c == call_id));
    let executing = position(
        &|e| matches!(e, Event::ToolCallState { call_id: c, state: ToolCallState::Executing } if *c == call_id),
    );
    assert!(approved < checkpointed && checkpointed < executing);

    // Listed with its links.
    h.handle.submit(Op::ListCheckpoints).unwrap();
    let list = wait_for(&mut h, |e| match e {
        Event::Checkpoints { checkpoints } => Some(checkpoints.clone()),
        _ => None,
    })
    .await;
    assert_eq!(list.len(), 2);
    assert_eq!(list[1].checkpoint_id, first);
    assert_eq!(list[1].call_id.as_deref(), Some(call_id.as_str()));
    assert_eq!(list[1].tool.as_deref(), Some("replace"));
    // The session is not recorded: there is no stored message to link to.
    assert_eq!(list[1].message_id, None);
    assert!(list[1].session_id.is_some());

    // Restore the code to before the replace: hello.txt back, the file
    // created afterwards gone.
    h.handle
        .submit(Op::RestoreCheckpoint {
            checkpoint_id: first.clone(),
            code: true,
            conversation: false,
        })
        .unwrap();
    let (files, undo) = wait_for(&mut h, |e| match e {
        Event::CheckpointRestored {
            files,
            undo_checkpoint_id,
            ..
        } => Some((files.clone(), undo_checkpoint_id.clone())),
        Event::CheckpointError { message, .. } => panic!("{message}"),
        _ => None,
    })
    .await;
    assert_eq!(
        files,
        vec![
            RestoredFile {
                path: "hello.txt".into(),
                action: RestoreAction::Reverted
            },
            RestoredFile {
                path: "notes/new.txt".into(),
                action: RestoreAction::Removed
            },
        ]
    );
    assert!(undo.is_some());
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap(),
        "hello\n"
    );
    assert!(!h.workspace.join("notes/new.txt").exists());
}

#[tokio::test]
async fn conversation_restore_needs_a_recorded_session_and_changes_nothing_without_one() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        replace_then_create(),
        with_checkpoints(Duration::from_secs(30)),
        interactive_policy(state.path()),
    );
    let events = turn_approving(&mut h, "change hello").await;
    let (_, first, _, _) = created(&events)[0].clone();
    h.handle
        .submit(Op::RestoreCheckpoint {
            checkpoint_id: first.clone(),
            code: true,
            conversation: true,
        })
        .unwrap();
    let (id, message) = wait_for(&mut h, |e| match e {
        Event::CheckpointError {
            checkpoint_id,
            message,
        } => Some((checkpoint_id.clone(), message.clone())),
        Event::CheckpointRestored { .. } => panic!("must not restore by halves"),
        _ => None,
    })
    .await;
    assert_eq!(id.as_deref(), Some(first.as_str()));
    assert!(message.contains("not recorded"), "{message}");
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap(),
        "goodbye\n",
        "nothing was restored"
    );
    // An unknown id is a clear error too.
    h.handle
        .submit(Op::RestoreCheckpoint {
            checkpoint_id: "../HEAD".into(),
            code: true,
            conversation: false,
        })
        .unwrap();
    let message = wait_for(&mut h, |e| match e {
        Event::CheckpointError { message, .. } => Some(message.clone()),
        _ => None,
    })
    .await;
    assert!(message.contains("invalid checkpoint id"), "{message}");
}

#[tokio::test]
async fn without_checkpointing_there_are_no_checkpoints() {
    let state = tempfile::tempdir().unwrap();
    let mut h = Harness::start_with_policy(
        replace_then_create(),
        |_| {},
        interactive_policy(state.path()),
    );
    let events = turn_approving(&mut h, "change hello").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert!(created(&events).is_empty());
    h.handle
        .submit(Op::RestoreCheckpoint {
            checkpoint_id: "20260101T000000000Z-00000000".into(),
            code: true,
            conversation: false,
        })
        .unwrap();
    let message = wait_for(&mut h, |e| match e {
        Event::CheckpointError { message, .. } => Some(message.clone()),
        _ => None,
    })
    .await;
    assert!(
        message.contains("general.checkpointing.enabled"),
        "{message}"
    );
}

#[tokio::test]
async fn a_big_workspace_does_not_hold_up_the_turn() {
    let state = tempfile::tempdir().unwrap();
    let budget = Duration::from_millis(100);
    let mut h = Harness::start_with_policy(
        json!({"steps": [
            {"functionCalls": [{"name": "replace", "args": {
                "file_path": "hello.txt", "old_string": "hello", "new_string": "goodbye",
                "instruction": "say goodbye"}}]},
            {"text": "Done."}
        ]}),
        |config| {
            // Thousands of files: the baseline that starts with the session
            // is still reading them when the edit comes.
            for i in 0..6000 {
                let dir = config
                    .primary_workspace()
                    .join(format!("gen/d{:02}", i % 60));
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(format!("f{i}.txt")), format!("{i}\n").repeat(300))
                    .unwrap();
            }
            with_checkpoints(budget)(config)
        },
        interactive_policy(state.path()),
    );
    let started = Instant::now();
    let events = turn_approving(&mut h, "change hello").await;
    let took = started.elapsed();
    assert_eq!(status(&events), TurnStatus::Completed);
    let checkpoints = created(&events);
    assert_eq!(checkpoints.len(), 1);
    assert_eq!(
        checkpoints[0].2,
        CheckpointScope::Partial,
        "the baseline was still running"
    );
    assert!(took < Duration::from_secs(5), "the turn took {took:?}");

    h.handle
        .submit(Op::RestoreCheckpoint {
            checkpoint_id: checkpoints[0].1.clone(),
            code: true,
            conversation: false,
        })
        .unwrap();
    wait_for(&mut h, |e| match e {
        Event::CheckpointRestored { .. } => Some(()),
        Event::CheckpointError { message, .. } => panic!("{message}"),
        _ => None,
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap(),
        "hello\n"
    );
}
