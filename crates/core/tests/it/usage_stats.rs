//! `/stats` counted by the core from a real exchange with the fake server:
//! each request's `usageMetadata` under the model and the `main` role, the
//! lines the applied edits changed (a declined edit changes none), and each
//! tool's decisions (asked and approved, asked and declined, run without
//! asking).

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{
    ConfirmationOutcome, Event, FileStats, Op, RequestRole, SessionStats, ToolDecisions, TurnStatus,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn usage(prompt: u64, cached: u64, output: u64, thoughts: u64) -> Value {
    json!({"promptTokenCount": prompt, "cachedContentTokenCount": cached,
           "candidatesTokenCount": output, "thoughtsTokenCount": thoughts,
           "totalTokenCount": prompt + output + thoughts})
}

/// Runs a turn, answering the confirmations in order; returns its status.
async fn turn_answering(h: &mut Harness, answers: &[ConfirmationOutcome]) -> TurnStatus {
    h.handle.submit(Op::user_text("edit the files")).unwrap();
    let mut answers = answers.iter();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("the turn goes on")
            .expect("the session is alive");
        match event {
            Event::ToolConfirmationRequest { call_id, .. } => {
                let outcome = *answers.next().expect("an answer for every confirmation");
                h.handle
                    .submit(Op::ConfirmTool {
                        call_id,
                        outcome,
                        content: None,
                        hunks: None,
                    })
                    .unwrap();
            }
            Event::TurnComplete { status, .. } => return status,
            _ => {}
        }
    }
}

async fn stats(h: &mut Harness) -> SessionStats {
    h.handle.submit(Op::Stats).unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("an answer")
            .expect("the session is alive");
        if let Event::SessionStats { stats } = event {
            return stats;
        }
    }
}

#[tokio::test]
async fn stats_count_usage_roles_lines_changed_and_decisions_per_tool() {
    let state = tempfile::tempdir().unwrap();
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        Some(state.path().join("auto-saved.toml")),
    ));
    let mut h = Harness::start_with_policy(
        json!({"steps": [
            // A new file of three lines (approved), read back (runs without asking),
            // then an edit of it (declined), then the answer.
            {"functionCalls": [{"name": "write_file", "args": {
                "file_path": "notes.md", "content": "one\ntwo\nthree\n"}}],
             "usage": usage(1_000, 100, 10, 5)},
            {"functionCalls": [{"name": "read_file", "args": {"file_path": "notes.md"}}],
             "usage": usage(1_100, 200, 20, 0)},
            {"functionCalls": [{"name": "replace", "args": {
                "file_path": "notes.md", "instruction": "drop two",
                "old_string": "two\n", "new_string": ""}}],
             "usage": usage(1_200, 300, 30, 0)},
            {"text": "Done.", "usage": usage(1_300, 0, 40, 7)}
        ]}),
        |_| {},
        policy,
    );
    let status = turn_answering(
        &mut h,
        &[
            ConfirmationOutcome::ProceedOnce,
            ConfirmationOutcome::Cancel,
        ],
    )
    .await;
    assert!(
        matches!(status, TurnStatus::Completed | TurnStatus::Declined),
        "{status:?}"
    );
    let s = stats(&mut h).await;

    // Every request the server answered, under the session's model and `main`.
    let requests = h.fake.main_requests().len() as u32;
    assert_eq!(s.models.len(), 1);
    let m = &s.models[0];
    assert_eq!(m.model, MODEL);
    assert_eq!(m.requests, requests);
    let (prompt, cached, output, thoughts) = [
        (1_000, 100, 10, 5),
        (1_100, 200, 20, 0),
        (1_200, 300, 30, 0),
        (1_300, 0, 40, 7),
    ][..requests as usize]
        .iter()
        .fold((0, 0, 0, 0), |a, u| {
            (a.0 + u.0, a.1 + u.1, a.2 + u.2, a.3 + u.3)
        });
    assert_eq!(
        (
            m.prompt_tokens,
            m.cached_tokens,
            m.output_tokens,
            m.thoughts_tokens
        ),
        (prompt, cached, output, thoughts)
    );
    assert_eq!(m.total_tokens, prompt + output + thoughts);
    assert_eq!(m.roles.len(), 1);
    assert_eq!(m.roles[0].role, RequestRole::Main);
    assert_eq!(
        (m.roles[0].requests, m.roles[0].prompt_tokens),
        (requests, prompt)
    );

    // Only the approved write changed lines.
    assert_eq!(
        s.files,
        FileStats {
            lines_added: 3,
            lines_removed: 0
        }
    );
    let decisions = |name: &str| {
        s.tools
            .by_name
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} in {:?}", s.tools.by_name))
            .decisions
    };
    let one = |accept, reject, auto_accept| ToolDecisions {
        accept,
        reject,
        modify: 0,
        auto_accept,
    };
    assert_eq!(decisions("write_file"), one(1, 0, 0));
    assert_eq!(decisions("read_file"), one(0, 0, 1));
    assert_eq!(decisions("replace"), one(0, 1, 0));
    assert_eq!(s.tools.decisions, one(1, 1, 1));
    assert!(
        std::fs::read_to_string(h.workspace.join("notes.md"))
            .unwrap()
            .contains("two")
    );
}

#[tokio::test]
async fn the_compression_request_counts_under_utility_compressor() {
    let long = "Please look at this carefully. ".repeat(200);
    let mut h = Harness::start(json!({
        "steps": [{"text": "Noted.", "usage": usage(2_000, 0, 3, 0)}],
        "utility": [{"match": "state_snapshot", "text": "<state_snapshot>short</state_snapshot>"}]
    }));
    assert_eq!(status(&h.turn(&long).await), TurnStatus::Completed);
    h.handle.submit(Op::Compress).unwrap();
    let role = loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("compressed in time")
            .expect("the session is alive");
        match event {
            Event::Usage { role, usage, .. } => {
                assert!(usage.prompt_tokens > 0, "{usage:?}");
                break role;
            }
            Event::CompressionSkipped { message, .. } => panic!("not compressed: {message}"),
            _ => {}
        }
    };
    assert_eq!(role, RequestRole::UtilityCompressor);
    let s = stats(&mut h).await;
    let m = &s.models[0];
    let roles: Vec<_> = m.roles.iter().map(|r| (r.role, r.requests)).collect();
    assert_eq!(
        roles,
        [(RequestRole::Main, 1), (RequestRole::UtilityCompressor, 1)]
    );
    assert_eq!(m.requests, 2);
    assert_eq!(m.roles[0].prompt_tokens, 2_000);
}
