//! "Why was this allowed?": every tool call's events say what decided it —
//! a rule of a real policy file (with file and line), the approval mode, an
//! "always allow" of this session, or the user's click — and the history
//! keeps it for a reopened conversation. Real policy files, the real policy
//! engine and the fake Gemini server.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_core::ApprovalMode;
use gd_core::history::HistoryRecorder;
use gd_core::policy::PolicyApproval;
use gd_core::tools::ToolRegistry;
use gd_core::{Session, SessionConfig};
use gd_fake_gemini::FakeGemini;
use gd_policy::{PolicyEngine, PolicySources, default_rules};
use gd_protocol::{
    ConfirmationOutcome, DecidedBy, Event, Op, PolicyOutcome, TurnStatus, UserDecision,
};
use gd_store::{MessageKind, PageQuery, Store};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

const USER_RULES: &str = "# the user's own rules\n\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"echo\"\ndecision = \"allow\"\npriority = 100\n\n[[rule]]\ntoolName = \"write_file\"\ndecision = \"deny\"\npriority = 200\ndeny_message = \"No writes here.\"\n";

/// The engine as a session loads it: the built-in rules and the user's
/// policy directory.
fn policy_from(user_dir: &Path, mode: ApprovalMode) -> Arc<PolicyApproval> {
    let (engine, errors) = PolicyEngine::load(&PolicySources {
        user_dir: Some(user_dir.to_owned()),
        workspace_dir: None,
        admin_dir: None,
        extensions: Vec::new(),
    });
    assert!(errors.is_empty(), "{errors:?}");
    Arc::new(PolicyApproval::new(
        engine,
        mode,
        true,
        Some(user_dir.join("auto-saved.toml")),
    ))
}

fn defaults(mode: ApprovalMode, dir: &Path) -> Arc<PolicyApproval> {
    Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        mode,
        true,
        Some(dir.join("auto-saved.toml")),
    ))
}

/// Runs a turn, answering confirmations in order; returns the events.
async fn turn_answering(
    events_rx: &mut UnboundedReceiver<Event>,
    handle: &gd_core::SessionHandle,
    prompt: &str,
    answers: &[ConfirmationOutcome],
) -> Vec<Event> {
    handle.submit(Op::user_text(prompt)).unwrap();
    let mut answers = answers.iter();
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events_rx.recv())
            .await
            .expect("an event within 30 s")
            .expect("the session runs");
        if let Event::ToolConfirmationRequest { call_id, .. } = &event {
            let outcome = *answers.next().expect("an answer for every confirmation");
            handle
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
            return events;
        }
    }
}

/// Every `ToolCallDecided`, in order, as (tool name, what decided it).
fn decisions(events: &[Event]) -> Vec<(String, DecidedBy)> {
    let mut names = HashMap::new();
    let mut out = Vec::new();
    for e in events {
        match e {
            Event::ToolCallRequest { call_id, name, .. } => {
                names.insert(call_id.clone(), name.clone());
            }
            Event::ToolCallDecided {
                call_id,
                decided_by,
            } => out.push((names[call_id].clone(), (**decided_by).clone())),
            _ => {}
        }
    }
    out
}

/// What each finished call's `ToolCallResponse` carried, by tool name.
fn responses(events: &[Event]) -> HashMap<String, Option<DecidedBy>> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResponse {
                name, decided_by, ..
            } => Some((name.clone(), decided_by.as_deref().cloned())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_policy_file_rule_is_named_with_file_and_line_and_kept_in_the_history() {
    let policies = tempfile::tempdir().unwrap();
    std::fs::write(policies.path().join("dev.toml"), USER_RULES).unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let store = Store::open(store_dir.path().join("h.sqlite3")).unwrap();
    let (_ws_dir, ws) = workspace();
    let fake = FakeGemini::start_with_vars(
        json!({"steps": [
            {"functionCalls": [
                {"name": "run_shell_command", "args": {"command": "echo pangolin"}},
                {"name": "write_file", "args": {"file_path": "okapi.txt", "content": "x\n"}}
            ]},
            {"text": "Done."}
        ]}),
        &[("WORKSPACE", ws.to_str().unwrap())],
    );
    let mut config = SessionConfig::new(MODEL, ws.clone(), SYSTEM_PROMPT.into());
    config.temp_dir = _ws_dir.path().join("tmp");
    let recorder = HistoryRecorder::start(
        store.clone(),
        &config.session_id,
        &ws.display().to_string(),
        MODEL,
    )
    .await
    .unwrap();
    let session_id = config.session_id.clone();
    let (handle, mut events_rx) = Session::spawn_recorded(
        config,
        client_for(&fake, fast_retry(1)),
        ToolRegistry::with_builtins(),
        policy_from(policies.path(), ApprovalMode::Default),
        Some(recorder),
    );
    let events = turn_answering(&mut events_rx, &handle, "echo and write", &[]).await;
    assert_eq!(status(&events), TurnStatus::Completed);

    let decided = decisions(&events);
    let file = policies.path().join("dev.toml").display().to_string();
    let (name, echo) = &decided[0];
    assert_eq!(name, "run_shell_command");
    let DecidedBy::Policy {
        outcome: PolicyOutcome::Allow,
        rule,
        downgrade: None,
    } = echo
    else {
        panic!("{echo:?}")
    };
    assert_eq!(rule.path.as_deref(), Some(file.as_str()));
    assert_eq!(rule.line, Some(3));
    assert_eq!(rule.tier, "user");
    assert_eq!((rule.priority, rule.effective_priority), (100, 4100));
    assert!(
        rule.text
            .starts_with("[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"echo\"")
    );

    let (name, write) = &decided[1];
    assert_eq!(name, "write_file");
    let DecidedBy::Policy {
        outcome: PolicyOutcome::Deny,
        rule,
        ..
    } = write
    else {
        panic!("{write:?}")
    };
    assert_eq!(rule.line, Some(9));
    assert!(rule.text.contains("deny_message = \"No writes here.\""));
    assert!(!ws.join("okapi.txt").exists(), "the deny held");

    // The finished calls carry the same, and so does the history.
    let live = responses(&events);
    assert_eq!(live["run_shell_command"].as_ref(), Some(echo));
    assert_eq!(live["write_file"].as_ref(), Some(write));
    let page = store.page(&session_id, &PageQuery::default()).unwrap();
    let results = page
        .messages
        .iter()
        .find(|m| m.kind == MessageKind::ToolResult)
        .expect("a tool result message");
    for (name, live) in [("run_shell_command", echo), ("write_file", write)] {
        let record = results.tool_calls.iter().find(|c| c.name == name).unwrap();
        let stored: DecidedBy =
            serde_json::from_value(record.decided_by.clone().expect("recorded")).unwrap();
        assert_eq!(&stored, live, "{name}");
    }
}

#[tokio::test]
async fn a_click_and_then_this_sessions_always_allow_decide() {
    let state = tempfile::tempdir().unwrap();
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "ls -a"}}]},
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "ls -l"}}]},
        {"text": "done"}
    ]});
    let mut h = Harness::start_with_policy(
        scenario,
        |_| {},
        defaults(ApprovalMode::Default, state.path()),
    );
    let events = turn_answering(
        &mut h.events,
        &h.handle,
        "list twice",
        &[ConfirmationOutcome::ProceedAlways],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let decided: Vec<DecidedBy> = decisions(&events).into_iter().map(|(_, d)| d).collect();
    assert_eq!(decided.len(), 3, "{decided:#?}");
    // First the built-in rule asks…
    let DecidedBy::Policy {
        outcome: PolicyOutcome::Ask,
        rule,
        ..
    } = &decided[0]
    else {
        panic!("{:?}", decided[0])
    };
    assert_eq!(rule.origin, "default policy (write.toml)");
    // …then the click decides…
    assert_eq!(
        decided[1],
        DecidedBy::User {
            outcome: UserDecision::Always
        }
    );
    // …and the second call is this session's "always allow".
    let DecidedBy::SessionAllow { rule } = &decided[2] else {
        panic!("{:?}", decided[2])
    };
    assert_eq!(rule.origin, "this session's Always allow");
    assert!(
        rule.text.contains("commandPrefix = \"ls\""),
        "{}",
        rule.text
    );
    assert_eq!(rule.path, None);
}

#[tokio::test]
async fn a_rejection_is_the_users_and_yolo_is_the_mode() {
    let state = tempfile::tempdir().unwrap();
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "hello.txt", "content": "no\n"}}]},
        {"text": "ok"}
    ]});
    let mut h = Harness::start_with_policy(
        scenario.clone(),
        |_| {},
        defaults(ApprovalMode::Default, state.path()),
    );
    let events = turn_answering(
        &mut h.events,
        &h.handle,
        "write",
        &[ConfirmationOutcome::Cancel],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Declined);
    let rejected = DecidedBy::User {
        outcome: UserDecision::Rejected,
    };
    assert_eq!(decisions(&events).last().unwrap().1, rejected);
    assert_eq!(responses(&events)["write_file"], Some(rejected));

    let mut h =
        Harness::start_with_policy(scenario, |_| {}, defaults(ApprovalMode::Yolo, state.path()));
    let events = turn_answering(&mut h.events, &h.handle, "write", &[]).await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let decided = decisions(&events);
    assert_eq!(decided.len(), 1);
    let DecidedBy::ApprovalMode {
        outcome: PolicyOutcome::Allow,
        mode,
        rule,
    } = &decided[0].1
    else {
        panic!("{:?}", decided[0])
    };
    assert_eq!(mode, "yolo");
    assert_eq!(rule.origin, "default policy (yolo.toml)");
}
