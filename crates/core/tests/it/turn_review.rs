//! Whole-turn review ("Review at end of turn") through the session API,
//! with the fake Gemini server and real files: a turn's edits are staged
//! (reads see them, the disk does not change), one `Event::TurnReview`
//! shows them when the turn ends, `Op::ApplyTurnReview` writes what the
//! user accepted and the next request tells the model what was not applied;
//! a file changed on disk meanwhile is refused; a pending review survives a
//! restart of the session.

use crate::common;

use std::time::Duration;

use common::*;
use gd_core::{Session, SessionConfig};
use gd_protocol::{
    Event, HunkChoice, HunkDecision, NotAppliedReason, Op, ReviewAccept, ReviewDecision,
    ReviewFile, ReviewNotApplied, TurnStatus,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const SESSION: &str = "11111111-2222-3333-4444-555555555555";

/// 25 numbered lines; `changed` changes lines 2 and 22: two hunks.
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

fn replace(path: &str, old: &str, new: &str) -> Value {
    json!({"name": "replace", "args": {
        "file_path": path, "instruction": "edit", "old_string": old, "new_string": new,
    }})
}

fn write_file(path: &str, content: &str) -> Value {
    json!({"name": "write_file", "args": {"file_path": path, "content": content}})
}

fn read_file(path: &str) -> Value {
    json!({"name": "read_file", "args": {"file_path": path}})
}

/// Waits for the first event `pick` accepts.
async fn next<T>(h: &mut Harness, pick: impl Fn(&Event) -> Option<T>) -> T {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("no event within 30 s")
            .expect("session ended");
        if let Some(found) = pick(&event) {
            return found;
        }
    }
}

async fn review_mode_on(h: &mut Harness) {
    h.handle
        .submit(Op::OverrideTurnContext {
            approval_mode: None,
            model: None,
            review_mode: Some(true),
        })
        .unwrap();
    next(h, |e| match e {
        Event::TurnContext {
            review_mode: true, ..
        } => Some(()),
        _ => None,
    })
    .await;
}

fn review_of(events: &[Event]) -> Vec<ReviewFile> {
    events
        .iter()
        .find_map(|e| match e {
            Event::TurnReview { files, .. } => Some(files.clone()),
            _ => None,
        })
        .expect("the turn ended with a review")
}

async fn apply(
    h: &mut Harness,
    decisions: Vec<ReviewDecision>,
) -> (Vec<String>, Vec<ReviewNotApplied>) {
    h.handle.submit(Op::ApplyTurnReview { decisions }).unwrap();
    next(h, |e| match e {
        Event::TurnReviewApplied {
            written,
            not_applied,
        } => Some((written.clone(), not_applied.clone())),
        _ => None,
    })
    .await
}

fn decision(path: &std::path::Path, accept: ReviewAccept) -> ReviewDecision {
    ReviewDecision {
        path: path.display().to_string(),
        accept,
        edited: None,
    }
}

/// The text of the user message the last request ended with.
fn last_user_text(h: &Harness) -> String {
    let bodies = h.bodies();
    let contents = bodies.last().unwrap()["contents"]
        .as_array()
        .unwrap()
        .clone();
    contents.last().unwrap()["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `functionResponse.response.output` of request `n`'s last message.
fn tool_output(h: &Harness, n: usize, part: usize) -> String {
    let bodies = h.bodies();
    let contents = bodies[n]["contents"].as_array().unwrap();
    contents.last().unwrap()["parts"][part]["functionResponse"]["response"]["output"]
        .as_str()
        .unwrap_or_else(|| panic!("no output in {}", contents.last().unwrap()))
        .to_owned()
}

#[tokio::test]
async fn staged_edits_are_read_back_and_written_only_when_applied() {
    let scenario = json!({"steps": [
        {"functionCalls": [
            replace("a.txt", "alpha\n", "alpha staged\n"),
            write_file("new/b.txt", "brand new\n"),
        ]},
        {"functionCalls": [
            read_file("a.txt"),
            read_file("new/b.txt"),
            {"name": "read_many_files", "args": {"paths": ["a.txt"]}},
        ]},
        // Only the staged text has "alpha staged": this edit builds on it.
        {"functionCalls": [replace("a.txt", "alpha staged\n", "alpha twice\n")]},
        {"text": "Done."}
    ]});
    // `read_many_files` is a legacy tool (setting `tools.legacy`).
    let mut h = Harness::start_with_tools(
        scenario,
        |c| c.session_id = SESSION.into(),
        std::sync::Arc::new(gd_core::approval::AllowAll),
        |_| gd_core::tools::ToolRegistry::with_all_builtins().into(),
    );
    let a = h.workspace.join("a.txt");
    let b = h.workspace.join("new/b.txt");
    std::fs::write(&a, "alpha\nbeta\n").unwrap();
    review_mode_on(&mut h).await;
    let events = h.turn("edit").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    // No confirmation was asked (the edits were staged) and the disk is
    // as it was.
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ToolConfirmationRequest { .. })),
        "{events:?}"
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "alpha\nbeta\n");
    assert!(!b.exists());
    // The model heard the tools' usual answers...
    assert!(
        tool_output(&h, 1, 0).starts_with("Successfully modified file:"),
        "{}",
        tool_output(&h, 1, 0)
    );
    assert!(tool_output(&h, 1, 1).starts_with("Successfully created and wrote to new file:"));
    // ...and its reads saw the staged content.
    assert_eq!(tool_output(&h, 2, 0), "alpha staged\nbeta\n");
    assert_eq!(tool_output(&h, 2, 1), "brand new\n");
    let many = tool_output(&h, 2, 2);
    assert!(many.contains("alpha staged\nbeta\n"), "{many}");
    assert!(tool_output(&h, 3, 0).starts_with("Successfully modified file:"));

    let files = review_of(&events);
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].path, a.display().to_string());
    assert_eq!(files[0].shown_path, "a.txt");
    assert_eq!(files[0].original.as_deref(), Some("alpha\nbeta\n"));
    assert_eq!(files[0].staged, "alpha twice\nbeta\n");
    assert_eq!((files[0].added, files[0].removed), (1, 1));
    assert!(!files[0].new_file && !files[0].changed_on_disk);
    assert_eq!(files[1].original, None);
    assert!(files[1].new_file);
    assert_eq!(files[1].side_by_side.hunks.len(), 1);
    // The pending review is on disk, private.
    let store = h._dir.path().join(format!("tmp/reviews/{SESSION}.json"));
    assert!(store.exists());

    let (written, not_applied) = apply(
        &mut h,
        vec![
            decision(&a, ReviewAccept::All),
            decision(&b, ReviewAccept::All),
        ],
    )
    .await;
    assert_eq!(
        written,
        vec![a.display().to_string(), b.display().to_string()]
    );
    assert_eq!(not_applied, Vec::new());
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "alpha twice\nbeta\n");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "brand new\n");
    assert!(!store.exists(), "an applied review is forgotten");

    // Everything was applied: the next message carries no note.
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("next").await;
    let text = last_user_text(&h);
    assert!(!text.contains("NOT applied"), "{text}");
    // And reads see the disk again.
    assert_eq!(text.trim_end(), "next");
}

#[tokio::test]
async fn rejected_files_and_hunks_stay_out_and_the_model_hears_exactly_that() {
    let scenario = json!({"steps": [
        {"functionCalls": [
            replace("two.txt", &lf(&lines(false)), &lf(&lines(true))),
            write_file("other.txt", "other staged\n"),
        ]},
        {"text": "Done."}
    ]});
    let mut h = Harness::start(scenario);
    let two = h.workspace.join("two.txt");
    let other = h.workspace.join("other.txt");
    // A CRLF file keeps its line endings.
    std::fs::write(&two, crlf(&lines(false))).unwrap();
    std::fs::write(&other, "other\n").unwrap();
    review_mode_on(&mut h).await;
    let events = h.turn("edit").await;
    let files = review_of(&events);
    assert_eq!(files[0].side_by_side.hunks.len(), 2);

    let (written, not_applied) = apply(
        &mut h,
        vec![
            decision(
                &two,
                ReviewAccept::Hunks {
                    hunks: vec![
                        HunkDecision {
                            hunk: 0,
                            choice: HunkChoice::Accept,
                        },
                        HunkDecision {
                            hunk: 1,
                            choice: HunkChoice::Reject,
                        },
                    ],
                },
            ),
            decision(&other, ReviewAccept::None),
        ],
    )
    .await;
    assert_eq!(written, vec![two.display().to_string()]);
    assert_eq!(
        not_applied
            .iter()
            .map(|n| (n.path.clone(), n.reason))
            .collect::<Vec<_>>(),
        vec![
            (two.display().to_string(), NotAppliedReason::PartlyApplied),
            (other.display().to_string(), NotAppliedReason::Rejected),
        ]
    );
    let mut expected = lines(false);
    expected[1] = "line 2 changed".into();
    assert_eq!(std::fs::read_to_string(&two).unwrap(), crlf(&expected));
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "other\n");

    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("next").await;
    let text = last_user_text(&h);
    assert!(
        text.contains("End-of-turn review: The user applied 1 of 2 proposed changes to two.txt"),
        "{text}"
    );
    assert!(
        text.contains("hunk 2, lines 19\u{2013}25 of the file, which still reads as before:\n- line 22\n+ line 22 changed\n"),
        "{text}"
    );
    assert!(
        text.contains("Your staged changes to other.txt were NOT applied: the user rejected them"),
        "{text}"
    );
    // Given once.
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("again").await;
    assert!(!last_user_text(&h).contains("NOT applied"));
}

#[tokio::test]
async fn a_file_changed_on_disk_since_it_was_staged_is_refused() {
    let scenario = json!({"steps": [
        {"functionCalls": [replace("a.txt", "one\n", "one staged\n")]},
        {"text": "Done."}
    ]});
    let mut h = Harness::start(scenario);
    let a = h.workspace.join("a.txt");
    std::fs::write(&a, "one\n").unwrap();
    review_mode_on(&mut h).await;
    h.turn("edit").await;
    std::fs::write(&a, "someone else\n").unwrap();
    let (written, not_applied) = apply(&mut h, vec![decision(&a, ReviewAccept::All)]).await;
    assert_eq!(written, Vec::<String>::new());
    assert_eq!(not_applied[0].reason, NotAppliedReason::ChangedOnDisk);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "someone else\n");
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("next").await;
    let text = last_user_text(&h);
    assert!(
        text.contains("Your staged changes to a.txt were NOT applied: the file changed on disk"),
        "{text}"
    );
}

#[tokio::test]
async fn a_pending_review_is_offered_again_after_a_restart() {
    let scenario = json!({"steps": [
        {"functionCalls": [
            replace("a.txt", "one\n", "one staged\n"),
            replace("b.txt", "bee\n", "bee staged\n"),
        ]},
        {"text": "Done."}
    ]});
    let mut h = Harness::start_with(scenario, |c| c.session_id = SESSION.into());
    let (a, b) = (h.workspace.join("a.txt"), h.workspace.join("b.txt"));
    std::fs::write(&a, "one\n").unwrap();
    std::fs::write(&b, "bee\n").unwrap();
    review_mode_on(&mut h).await;
    h.turn("edit").await;
    // The app goes away before the user decides...
    h.handle.submit(Op::Shutdown).unwrap();
    h.handle.closed().await;
    // ...and b.txt changes meanwhile.
    std::fs::write(&b, "bee by hand\n").unwrap();

    let mut config = SessionConfig::new(MODEL, h.workspace.clone(), SYSTEM_PROMPT.into());
    config.temp_dir = h._dir.path().join("tmp");
    config.session_id = SESSION.into();
    let client = client_for(&h.fake, fast_retry(3));
    let (handle, events) = Session::spawn(
        config,
        client,
        gd_core::tools::ToolRegistry::with_builtins(),
        std::sync::Arc::new(gd_core::approval::AllowAll),
    );
    h.handle = handle;
    h.events = events;
    let files = next(&mut h, |e| match e {
        Event::TurnReview {
            files,
            restored: true,
            ..
        } => Some(files.clone()),
        _ => None,
    })
    .await;
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].staged, "one staged\n");
    assert!(!files[0].changed_on_disk);
    assert!(files[1].changed_on_disk, "b.txt was changed by hand");
    // The restored review still reads as staged (review mode is off now).
    h.reset(json!({"steps": [{"functionCalls": [read_file("a.txt")]}, {"text": "ok"}]}));
    h.turn("look").await;
    assert_eq!(tool_output(&h, 1, 0), "one staged\n");

    let (written, not_applied) = apply(
        &mut h,
        vec![
            decision(&a, ReviewAccept::All),
            decision(&b, ReviewAccept::All),
        ],
    )
    .await;
    assert_eq!(written, vec![a.display().to_string()]);
    assert_eq!(not_applied[0].reason, NotAppliedReason::ChangedOnDisk);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one staged\n");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "bee by hand\n");
}

/// Asks for everything, denies `write_file`.
struct AskButNoWrites;

impl gd_core::approval::ApprovalPolicy for AskButNoWrites {
    fn decide(&self, tool: &dyn gd_core::tools::Tool, _args: &Value) -> gd_core::approval::Verdict {
        match tool.name() {
            "write_file" => gd_core::approval::Verdict::Deny(Some("No writes here.".into())),
            _ => gd_core::approval::Verdict::Ask,
        }
    }
}

#[tokio::test]
async fn shell_commands_still_ask_and_see_the_disk_and_a_denied_edit_stays_denied() {
    let scenario = json!({"steps": [
        {"functionCalls": [
            replace("a.txt", "one\n", "one staged\n"),
            write_file("b.txt", "nope\n"),
            {"name": "run_shell_command", "args": {"command": "cat a.txt"}},
        ]},
        {"text": "Done."}
    ]});
    let mut h = Harness::start_with_policy(scenario, |_| {}, std::sync::Arc::new(AskButNoWrites));
    let a = h.workspace.join("a.txt");
    std::fs::write(&a, "one\n").unwrap();
    review_mode_on(&mut h).await;
    h.handle.submit(Op::user_text("edit and look")).unwrap();
    let mut asked = Vec::new();
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::ToolConfirmationRequest { call_id, name, .. } = &event {
            asked.push(name.clone());
            h.handle
                .submit(Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome: gd_protocol::ConfirmationOutcome::ProceedOnce,
                    content: None,
                    hunks: None,
                })
                .unwrap();
        }
        let done = matches!(event, Event::TurnComplete { .. });
        events.push(event);
        if done {
            break;
        }
    }
    // Only the shell command was asked; the edit was staged without a question, and its card
    // says so.
    assert_eq!(asked, vec!["run_shell_command".to_owned()]);
    let staged_by_review = events.iter().any(|e| {
        matches!(e, Event::ToolCallDecided { decided_by, .. }
            if **decided_by == gd_protocol::DecidedBy::ReviewMode)
    });
    assert!(staged_by_review, "{events:?}");
    // The command ran on the real file, not the staged copy.
    let shell = tool_output(&h, 1, 2);
    assert!(
        shell.contains("one") && !shell.contains("staged"),
        "{shell}"
    );
    // The denied write stayed denied.
    let bodies = h.bodies();
    let denied = &bodies[1]["contents"].as_array().unwrap().last().unwrap()["parts"][1]["functionResponse"]
        ["response"]["error"];
    assert!(
        denied
            .as_str()
            .is_some_and(|e| e.contains("denied by policy")),
        "{denied}"
    );
    assert!(!h.workspace.join("b.txt").exists());
    let files = review_of(&events);
    assert_eq!(
        files
            .iter()
            .map(|f| f.shown_path.as_str())
            .collect::<Vec<_>>(),
        vec!["a.txt"]
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\n");
}

#[tokio::test]
async fn the_review_checkpoints_once_before_writing_and_staging_never_does() {
    let scenario = json!({"steps": [
        {"functionCalls": [replace("a.txt", "one\n", "one staged\n")]},
        {"text": "Done."}
    ]});
    let mut h = Harness::start_with(scenario, |config| {
        let mut checkpoints =
            gd_checkpoint::CheckpointConfig::new(config.temp_dir.join("checkpoints"));
        checkpoints.budget = Duration::from_secs(60);
        config.checkpointing = Some(checkpoints);
    });
    let a = h.workspace.join("a.txt");
    std::fs::write(&a, "one\n").unwrap();
    review_mode_on(&mut h).await;
    let events = h.turn("edit").await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::CheckpointCreated { .. })),
        "staging writes nothing, so it needs no checkpoint"
    );
    h.handle
        .submit(Op::ApplyTurnReview {
            decisions: vec![decision(&a, ReviewAccept::All)],
        })
        .unwrap();
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            Event::CheckpointCreated { call_id, .. } => seen.push(call_id),
            Event::TurnReviewApplied { .. } => {
                seen.push("applied".into());
                break;
            }
            _ => {}
        }
    }
    assert_eq!(seen, vec!["turn-review".to_owned(), "applied".to_owned()]);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one staged\n");
}

#[tokio::test]
async fn a_file_the_user_edited_is_written_as_edited_and_the_model_hears_their_lines() {
    let scenario = json!({"steps": [
        {"functionCalls": [replace("a.txt", "one\n", "one staged\n")]},
        {"text": "Done."}
    ]});
    let mut h = Harness::start(scenario);
    let a = h.workspace.join("a.txt");
    std::fs::write(&a, "one\n").unwrap();
    review_mode_on(&mut h).await;
    h.turn("edit").await;
    let (written, _) = apply(
        &mut h,
        vec![ReviewDecision {
            path: a.display().to_string(),
            accept: ReviewAccept::All,
            edited: Some("one by the user\n".into()),
        }],
    )
    .await;
    assert_eq!(written, vec![a.display().to_string()]);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one by the user\n");
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("next").await;
    let text = last_user_text(&h);
    assert!(
        text.contains("End-of-turn review: The user edited your proposal for a.txt by hand")
            && text.contains("- one staged\n+ one by the user\n"),
        "{text}"
    );
}
