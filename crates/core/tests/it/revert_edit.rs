//! Reverting an applied edit after the fact (`Op::RevertEdit`) through the
//! session API, with real files and the fake Gemini server: the inverse is
//! written only over exactly what the edit wrote; a file changed since gets
//! a three-way view and nothing written; the user's resolution is written
//! only if the disk did not move again; a created file is deleted; and the
//! next request tells the model what was reverted.

use crate::common;

use std::time::Duration;

use common::*;
use gd_protocol::{EditRevert, Event, Op, RevertConflict};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// 25 numbered lines; `changed` lines read "line N changed".
fn lines(changed: &[usize]) -> Vec<String> {
    (1..=25)
        .map(|i| {
            if changed.contains(&i) {
                format!("line {i} changed")
            } else {
                format!("line {i}")
            }
        })
        .collect()
}

fn lf(lines: &[String]) -> String {
    lines.join("\n") + "\n"
}

fn crlf(lines: &[String]) -> String {
    lines.join("\r\n") + "\r\n"
}

/// The model edits lines 2 and 22 of two.txt (two hunks), then answers.
fn replace_scenario() -> Value {
    json!({"steps": [
        {"functionCalls": [{"name": "replace", "args": {
            "file_path": "two.txt",
            "instruction": "change two lines",
            "old_string": lf(&lines(&[])),
            "new_string": lf(&lines(&[2, 22])),
        }}]},
        {"text": "Done."}
    ]})
}

/// The model creates new.txt, then answers.
fn create_scenario() -> Value {
    json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {
            "file_path": "new.txt",
            "content": "fresh\ncontent\n",
        }}]},
        {"text": "Done."}
    ]})
}

/// Runs the editing turn; returns the edit's call id. Later turns get a
/// plain answer.
async fn edit(h: &mut Harness) -> String {
    let events = h.turn("edit it").await;
    h.reset(json!({"steps": [{"text": "OK"}]}));
    events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallResponse {
                call_id,
                diff: Some(_),
                ..
            } => Some(call_id.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no applied edit in {:?}", event_types(&events)))
}

enum Answer {
    Reverted(EditRevert),
    Conflict(RevertConflict),
    Failed(String),
}

async fn revert(
    h: &mut Harness,
    call_id: &str,
    hunks: Option<Vec<u32>>,
    resolved: Option<&str>,
) -> Answer {
    h.handle
        .submit(Op::RevertEdit {
            call_id: call_id.to_owned(),
            hunks,
            resolved: resolved.map(str::to_owned),
        })
        .unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("no answer to the revert within 30 s")
            .expect("session ended");
        match event {
            Event::EditReverted { reverted } => return Answer::Reverted(reverted),
            Event::RevertConflict { conflict } => return Answer::Conflict(conflict),
            Event::RevertFailed {
                call_id: id,
                message,
            } => {
                assert_eq!(id, call_id);
                return Answer::Failed(message);
            }
            _ => {}
        }
    }
}

fn reverted(answer: Answer) -> EditRevert {
    match answer {
        Answer::Reverted(r) => r,
        Answer::Conflict(c) => panic!("expected a revert, got a conflict: {c:?}"),
        Answer::Failed(m) => panic!("expected a revert, got a failure: {m}"),
    }
}

fn conflict(answer: Answer) -> RevertConflict {
    match answer {
        Answer::Conflict(c) => c,
        Answer::Reverted(r) => panic!("expected a conflict, got a revert: {r:?}"),
        Answer::Failed(m) => panic!("expected a conflict, got a failure: {m}"),
    }
}

fn failed(answer: Answer) -> String {
    match answer {
        Answer::Failed(m) => m,
        Answer::Reverted(r) => panic!("expected a failure, got a revert: {r:?}"),
        Answer::Conflict(c) => panic!("expected a failure, got a conflict: {c:?}"),
    }
}

/// The text of the last request's last user message.
fn last_prompt(h: &Harness) -> String {
    let bodies = h.bodies();
    let contents = bodies.last().unwrap()["contents"]
        .as_array()
        .unwrap()
        .clone();
    let last = contents.last().unwrap();
    assert_eq!(last["role"], "user");
    last["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_clean_revert_restores_the_original_and_the_model_hears_it() {
    let mut h = Harness::start(replace_scenario());
    let path = h.workspace.join("two.txt");
    // CRLF: the revert is written with the file's own line endings.
    std::fs::write(&path, crlf(&lines(&[]))).unwrap();
    let call_id = edit(&mut h).await;
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        crlf(&lines(&[2, 22]))
    );

    let done = reverted(revert(&mut h, &call_id, None, None).await);
    assert_eq!(done.hunks, None);
    assert!(!done.deleted && !done.resolved);
    assert_eq!(done.remaining, None);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), crlf(&lines(&[])));

    // Once is enough.
    let again = failed(revert(&mut h, &call_id, None, None).await);
    assert_eq!(again, "This edit was already reverted.");

    h.turn("what now?").await;
    let prompt = last_prompt(&h);
    assert!(
        prompt.contains(&format!(
            "You changed two.txt in call {call_id}; the user reverted that whole edit"
        )),
        "{prompt}"
    );
    assert!(
        prompt.contains("(removed again) line 22 changed"),
        "{prompt}"
    );
    assert!(prompt.contains("22: line 22\n"), "{prompt}");
    assert!(prompt.ends_with("what now?"), "{prompt}");
    // The note is given once.
    h.turn("and now?").await;
    assert!(!last_prompt(&h).contains("reverted"), "{}", last_prompt(&h));
}

#[tokio::test]
async fn reverting_one_hunk_keeps_the_other_and_leaves_it_revertible() {
    let mut h = Harness::start(replace_scenario());
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(&[]))).unwrap();
    let call_id = edit(&mut h).await;

    let done = reverted(revert(&mut h, &call_id, Some(vec![1]), None).await);
    assert_eq!(done.hunks, Some(vec![1]));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&lines(&[2])));
    // What is left: one hunk, renumbered from 0.
    let Some(gd_protocol::ConfirmationDetails::Edit {
        proposed,
        side_by_side,
        ..
    }) = &done.remaining
    else {
        panic!("expected the remaining diff, got {:?}", done.remaining);
    };
    assert_eq!(proposed, &lf(&lines(&[2])));
    assert_eq!(side_by_side.hunks.len(), 1);

    // A hunk that does not exist is refused, nothing written.
    let bad = failed(revert(&mut h, &call_id, Some(vec![3]), None).await);
    assert_eq!(bad, "The edit has 1 hunks; there is no hunk 4.");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&lines(&[2])));

    // The rest, later.
    reverted(revert(&mut h, &call_id, Some(vec![0]), None).await);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&lines(&[])));

    h.turn("next").await;
    let prompt = last_prompt(&h);
    assert!(
        prompt.contains(&format!(
            "You changed two.txt in call {call_id}; the user reverted hunk 2 of that edit (the rest stays applied)"
        )),
        "{prompt}"
    );
    assert!(prompt.contains("(restored) line 22\n"), "{prompt}");
    // Both notes, in order; the second reverts what was hunk 1.
    let second = prompt
        .rfind("the user reverted that whole edit")
        .expect(&prompt);
    assert!(second > prompt.find("hunk 2 of that edit").unwrap());
}

#[tokio::test]
async fn a_file_changed_since_gets_a_three_way_view_and_nothing_written() {
    let mut h = Harness::start(replace_scenario());
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(&[]))).unwrap();
    let call_id = edit(&mut h).await;
    // The user changes line 10 after the edit.
    let mut mine = lines(&[2, 22]);
    mine[9] = "line 10 mine".into();
    std::fs::write(&path, lf(&mine)).unwrap();

    let view = conflict(revert(&mut h, &call_id, None, None).await);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        lf(&mine),
        "nothing written"
    );
    assert_eq!(view.base, lf(&lines(&[2, 22])));
    assert_eq!(view.current, lf(&mine));
    assert_eq!(view.reverted, lf(&lines(&[])));
    let mut merged = lines(&[]);
    merged[9] = "line 10 mine".into();
    assert_eq!(view.merged, lf(&merged));
    assert_eq!(view.conflicts, 0);

    // The user confirms the merge: written, since the disk did not move.
    let done = reverted(revert(&mut h, &call_id, None, Some(&view.merged)).await);
    assert!(done.resolved);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&merged));

    h.turn("next").await;
    let prompt = last_prompt(&h);
    assert!(
        prompt.contains("the user reverted that edit by hand"),
        "{prompt}"
    );
    assert!(prompt.contains("10: line 10 mine\n"), "{prompt}");
}

#[tokio::test]
async fn a_conflict_is_marked_and_a_resolution_over_a_moved_disk_is_refused() {
    let mut h = Harness::start(replace_scenario());
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(&[]))).unwrap();
    let call_id = edit(&mut h).await;
    // The user rewrote the edited line 2 since.
    let mut mine = lines(&[22]);
    mine[1] = "line 2 mine".into();
    std::fs::write(&path, lf(&mine)).unwrap();

    let view = conflict(revert(&mut h, &call_id, None, None).await);
    assert_eq!(view.conflicts, 1);
    assert!(
        view.merged
            .contains("<<<<<<< on disk\nline 2 mine\n=======\nline 2\n>>>>>>> reverted\n"),
        "{}",
        view.merged
    );
    // The disk moves again while the user resolves.
    let mut moved = mine.clone();
    moved[5] = "line 6 moved".into();
    std::fs::write(&path, lf(&moved)).unwrap();
    let refused = failed(revert(&mut h, &call_id, None, Some("whatever\n")).await);
    assert!(refused.starts_with("two.txt changed again"), "{refused}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&moved));

    // A resolution without a view is refused too.
    let mut h2 = Harness::start(replace_scenario());
    std::fs::write(h2.workspace.join("two.txt"), lf(&lines(&[]))).unwrap();
    let id2 = edit(&mut h2).await;
    let refused = failed(revert(&mut h2, &id2, None, Some("x\n")).await);
    assert!(
        refused.starts_with("There is no open three-way view"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_to_string(h2.workspace.join("two.txt")).unwrap(),
        lf(&lines(&[2, 22]))
    );
}

#[tokio::test]
async fn a_created_file_is_deleted_only_while_unchanged() {
    let mut h = Harness::start(create_scenario());
    let path = h.workspace.join("new.txt");
    let call_id = edit(&mut h).await;
    assert!(path.exists());
    let done = reverted(revert(&mut h, &call_id, None, None).await);
    assert!(done.deleted);
    assert!(!path.exists());
    h.turn("next").await;
    let prompt = last_prompt(&h);
    assert!(
        prompt.contains(&format!(
            "You created new.txt in call {call_id}; the user reverted that edit, so new.txt was deleted"
        )),
        "{prompt}"
    );

    // Changed since: not deleted, a three-way view instead.
    let mut h = Harness::start(create_scenario());
    let path = h.workspace.join("new.txt");
    let call_id = edit(&mut h).await;
    std::fs::write(&path, "fresh\ncontent\nmine\n").unwrap();
    let view = conflict(revert(&mut h, &call_id, None, None).await);
    assert_eq!(view.reverted, "");
    assert!(path.exists());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "fresh\ncontent\nmine\n"
    );
}

#[tokio::test]
async fn unknown_calls_and_missing_files_are_clear_errors() {
    let mut h = Harness::start(replace_scenario());
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(&[]))).unwrap();
    let message = failed(revert(&mut h, "nope", None, None).await);
    assert_eq!(
        message,
        "There is no applied edit with call id nope in this conversation, so there is nothing to revert."
    );
    let call_id = edit(&mut h).await;
    std::fs::remove_file(&path).unwrap();
    let message = failed(revert(&mut h, &call_id, None, None).await);
    assert_eq!(
        message,
        "two.txt no longer exists, so there is nothing to revert; nothing was written."
    );
    assert!(!path.exists());
}

/// A recorded session in `ws`, new or resuming `resume`.
async fn recorded(
    scenario: Value,
    ws: &std::path::Path,
    store: &gd_store::Store,
    resume: Option<&str>,
) -> (Harness, String) {
    use gd_core::history::HistoryRecorder;
    let fake = gd_fake_gemini::FakeGemini::start_with_vars(
        scenario,
        &[("WORKSPACE", ws.to_str().unwrap())],
    );
    let mut config = gd_core::SessionConfig::new(MODEL, ws.to_path_buf(), SYSTEM_PROMPT.into());
    config.temp_dir = ws.join(".tmp");
    let recorder = match resume {
        Some(id) => {
            config.session_id = id.to_owned();
            HistoryRecorder::resume(store.clone(), id).await.unwrap()
        }
        None => HistoryRecorder::start(
            store.clone(),
            &config.session_id,
            &ws.display().to_string(),
            MODEL,
        )
        .await
        .unwrap(),
    };
    let id = config.session_id.clone();
    let client = client_for(&fake, fast_retry(1));
    let (handle, events) = gd_core::Session::spawn_recorded(
        config,
        client,
        gd_core::tools::ToolRegistry::with_builtins(),
        std::sync::Arc::new(gd_core::approval::AllowAll),
        Some(recorder),
    );
    let dir = tempfile::tempdir().unwrap();
    (
        Harness {
            fake,
            workspace: ws.to_path_buf(),
            handle,
            events,
            _dir: dir,
        },
        id,
    )
}

#[tokio::test]
async fn an_edit_of_a_resumed_conversation_is_reverted_from_the_stored_diff() {
    let (_ws_dir, ws) = workspace();
    let store_dir = tempfile::tempdir().unwrap();
    let store = gd_store::Store::open(store_dir.path().join("h.sqlite3")).unwrap();
    let path = ws.join("two.txt");
    std::fs::write(&path, lf(&lines(&[]))).unwrap();
    let (mut first, id) = recorded(replace_scenario(), &ws, &store, None).await;
    let call_id = edit(&mut first).await;
    first.handle.submit(Op::Shutdown).unwrap();
    while first.events.recv().await.is_some() {}

    // The app restarts and the conversation is resumed: the card's diff
    // comes from the history, and so does the revert's.
    let (mut again, _) = recorded(json!({"steps": [{"text": "OK"}]}), &ws, &store, Some(&id)).await;
    let done = reverted(revert(&mut again, &call_id, Some(vec![0]), None).await);
    assert_eq!(done.hunks, Some(vec![0]));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&lines(&[22])));
    again.turn("next").await;
    assert!(last_prompt(&again).contains("the user reverted hunk 1 of that edit"));
}

#[tokio::test]
async fn a_partly_applied_edit_shows_and_reverts_what_was_really_written() {
    use gd_core::policy::PolicyApproval;
    use gd_protocol::{ConfirmationDetails, ConfirmationOutcome, HunkChoice, HunkDecision};
    let state = tempfile::tempdir().unwrap();
    let policy = std::sync::Arc::new(PolicyApproval::new(
        gd_policy::PolicyEngine::new(gd_policy::default_rules()),
        gd_core::ApprovalMode::Default,
        true,
        Some(state.path().join("auto-saved.toml")),
    ));
    let mut h = Harness::start_with_policy(replace_scenario(), |_| {}, policy);
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(&[]))).unwrap();
    h.handle.submit(Op::user_text("edit it")).unwrap();
    let mut diff = None;
    let mut call = None;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        match &event {
            Event::ToolConfirmationRequest { call_id, .. } => h
                .handle
                .submit(Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome: ConfirmationOutcome::ProceedOnce,
                    content: None,
                    hunks: Some(vec![
                        HunkDecision {
                            hunk: 0,
                            choice: HunkChoice::Reject,
                        },
                        HunkDecision {
                            hunk: 1,
                            choice: HunkChoice::Accept,
                        },
                    ]),
                })
                .unwrap(),
            Event::ToolCallResponse {
                call_id, diff: d, ..
            } => {
                call = Some(call_id.clone());
                diff = d.clone();
            }
            Event::TurnComplete { .. } => break,
            _ => {}
        }
    }
    h.reset(json!({"steps": [{"text": "OK"}]}));
    // The card's diff is what reached the disk: original → only hunk 2.
    let Some(ConfirmationDetails::Edit {
        proposed,
        side_by_side,
        ..
    }) = diff
    else {
        panic!("no diff on the card: {diff:?}");
    };
    assert_eq!(proposed, lf(&lines(&[22])));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), proposed);
    assert_eq!(side_by_side.hunks.len(), 1);
    reverted(revert(&mut h, &call.unwrap(), None, None).await);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&lines(&[])));
}

#[tokio::test]
async fn a_checkpoint_is_taken_before_the_revert_writes() {
    let mut h = Harness::start_with(replace_scenario(), |config| {
        config.checkpointing = Some(gd_checkpoint::CheckpointConfig::new(
            config.temp_dir.join("checkpoints"),
        ));
    });
    let path = h.workspace.join("two.txt");
    std::fs::write(&path, lf(&lines(&[]))).unwrap();
    let call_id = edit(&mut h).await;
    h.handle
        .submit(Op::RevertEdit {
            call_id: call_id.clone(),
            hunks: None,
            resolved: None,
        })
        .unwrap();
    let mut checkpoint = None;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            Event::CheckpointCreated {
                call_id: id,
                checkpoint_id,
                files,
                ..
            } => checkpoint = Some((id, checkpoint_id, files)),
            Event::EditReverted { .. } => break,
            other @ (Event::RevertFailed { .. } | Event::RevertConflict { .. }) => {
                panic!("{other:?}")
            }
            _ => {}
        }
    }
    let (id, checkpoint_id, files) = checkpoint.expect("a checkpoint before the revert");
    assert_eq!(id, format!("{call_id}-revert"));
    assert_eq!(files, vec!["two.txt".to_owned()]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lf(&lines(&[])));
    // The revert can be undone: its checkpoint holds the file as the edit left it.
    h.handle
        .submit(Op::RestoreCheckpoint {
            checkpoint_id,
            code: true,
            conversation: false,
        })
        .unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            Event::CheckpointRestored { .. } => break,
            Event::CheckpointError { message, .. } => panic!("{message}"),
            _ => {}
        }
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        lf(&lines(&[2, 22]))
    );
}
