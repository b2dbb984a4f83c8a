//! Memory the Gemini CLI 0.61 way: no `save_memory` tool; the model edits
//! a GEMINI.md file with the ordinary edit tools, under the usual
//! confirmation. Like 0.61 (its memory is reloaded on `/memory refresh`,
//! a reset or new MCP servers, never after a tool's edit), the system
//! instruction keeps the memory it was loaded with until the memory is
//! refreshed; the model has its own edit in the conversation meanwhile.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_core::ApprovalMode;
use gd_core::config::FileFiltering;
use gd_core::memory::DiscoveryOptions;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{ConfirmationOutcome, Event, Op, TurnStatus};
use serde_json::json;

fn system_text(body: &serde_json::Value) -> String {
    body["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn the_model_edits_gemini_md_with_replace_under_confirmation() {
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "replace", "args": {
            "file_path": "GEMINI.md",
            "instruction": "Remember that the user prefers short answers.",
            "old_string": "Use tabs.\n",
            "new_string": "Use tabs.\nPrefer short answers.\n"
        }}]},
        {"text": "Noted in GEMINI.md."}
    ]});
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        None,
    ));
    let mut h = Harness::start_with_policy(
        scenario,
        move |config| {
            // The project's memory file exists before the session loads it.
            std::fs::write(config.workspace_dirs[0].join("GEMINI.md"), "Use tabs.\n").unwrap();
            config.memory = Some(DiscoveryOptions {
                workspace: config.workspace_dirs[0].clone(),
                home: Some(home_path),
                file_names: vec!["GEMINI.md".into()],
                max_dirs: 200,
                filtering: FileFiltering::default(),
                workspace_files: true,
                boundary_markers: None,
                include_directories: false,
            });
        },
        policy,
    );
    h.handle
        .submit(Op::user_text("remember: short answers"))
        .unwrap();
    let mut asked = 0;
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::ToolConfirmationRequest { call_id, name, .. } = &event {
            assert_eq!(name, "replace");
            asked += 1;
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
            break;
        }
    }
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(asked, 1, "the edit is confirmed like any other");
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("GEMINI.md")).unwrap(),
        "Use tabs.\nPrefer short answers.\n"
    );

    let first = h.bodies().remove(0);
    let names: Vec<&str> = first["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"save_memory"), "{names:?}");
    assert!(names.contains(&"replace"));
    assert!(system_text(&first).contains("Use tabs."));

    // The next request: the memory as loaded (0.61 does not reload it
    // after an edit), the edit itself in the conversation.
    // (The fake server's steps restart with each prompt.)
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("next").await;
    let next = h.bodies().pop().unwrap();
    assert!(!system_text(&next).contains("Prefer short answers."));
    assert!(
        next["contents"]
            .to_string()
            .contains("Prefer short answers.")
    );

    // `/memory refresh` (Op::RefreshMemory) brings the edit into the
    // system instruction of the following request.
    h.handle.submit(Op::RefreshMemory).unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(event, Event::MemoryLoaded { .. }) {
            break;
        }
    }
    h.turn("again").await;
    let last = h.bodies().pop().unwrap();
    assert!(
        system_text(&last).contains("Use tabs.\nPrefer short answers."),
        "{}",
        system_text(&last)
    );
}
