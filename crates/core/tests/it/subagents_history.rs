//! A subagent's transcript is recorded on the parent's `invoke_agent` tool
//! call and read back from the store after it is reopened.

use crate::common;

use std::sync::Arc;

use common::*;
use gd_core::history::HistoryRecorder;
use gd_core::subagents::{AgentCatalog, InvokeAgent, builtin};
use gd_core::tools::ToolRegistry;
use gd_core::{Session, SessionConfig};
use gd_fake_gemini::FakeGemini;
use gd_protocol::{Event, Op, SubagentStatus, SubagentTranscript, TurnStatus};
use gd_store::{PageQuery, Store};
use serde_json::json;

struct Recorded {
    handle: gd_core::SessionHandle,
    events: tokio::sync::mpsc::UnboundedReceiver<Event>,
    db: std::path::PathBuf,
    session_id: String,
    _fake: FakeGemini,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

impl Recorded {
    async fn next(&mut self) -> Event {
        tokio::time::timeout(std::time::Duration::from_secs(30), self.events.recv())
            .await
            .unwrap()
            .unwrap()
    }

    async fn until(&mut self, pick: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut seen = Vec::new();
        loop {
            let event = self.next().await;
            let done = pick(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    /// The transcript on the `invoke_agent` call, read from the store
    /// opened again.
    fn stored_transcript(&self) -> SubagentTranscript {
        let store = Store::open(&self.db).unwrap();
        let page = store.page(&self.session_id, &PageQuery::default()).unwrap();
        let record = page
            .messages
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .find(|c| c.name == "invoke_agent" && c.subagent.is_some())
            .expect("the invoke_agent call carries the transcript");
        serde_json::from_value(record.subagent.clone().unwrap()).unwrap()
    }
}

async fn start(scenario: serde_json::Value) -> Recorded {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite3");
    let store = Store::open(&db).unwrap();
    let (ws_dir, ws) = workspace();
    let fake = FakeGemini::start_with_vars(scenario, &[("WORKSPACE", ws.to_str().unwrap())]);
    let mut config = SessionConfig::new(MODEL, ws.clone(), SYSTEM_PROMPT.into());
    config.temp_dir = ws_dir.path().join("tmp");
    config.agents = Arc::new(AgentCatalog::new(builtin::agents(), Vec::new()));
    let session_id = config.session_id.clone();
    let recorder = HistoryRecorder::start(store, &session_id, &ws.display().to_string(), MODEL)
        .await
        .unwrap();
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(InvokeAgent::new()));
    let (handle, events) = Session::spawn_recorded(
        config,
        client_for(&fake, fast_retry(1)),
        tools,
        Arc::new(gd_core::approval::AllowAll),
        Some(recorder),
    );
    Recorded {
        handle,
        events,
        db,
        session_id,
        _fake: fake,
        _dirs: (dir, ws_dir),
    }
}

#[tokio::test]
async fn the_transcript_is_kept_under_the_parent_call_and_survives_a_reopen() {
    let mut r = start(json!({
            "steps": [
                {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "generalist", "prompt": "Read hello"}}]},
                {"match_tool": "invoke_agent", "text": "Done."}
            ],
            "branches": [{
                "system_contains": "general-purpose software engineering agent",
                "steps": [
                    {"text": "Reading it now.", "functionCalls": [{"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/hello.txt"}}]},
                    {"functionCalls": [{"name": "complete_task", "args": {"result": "It says hello."}}]}
                ]
            }]
        }))
    .await;
    r.handle.submit(Op::user_text("go")).unwrap();
    let seen = r.until(|e| matches!(e, Event::TurnComplete { .. })).await;
    assert_eq!(status(&seen), TurnStatus::Completed, "{seen:#?}");
    let transcript = r.stored_transcript();
    assert_eq!(transcript.agent_name, "generalist");
    assert_eq!(transcript.prompt, "Read hello");
    assert_eq!(transcript.status, SubagentStatus::Completed);
    assert_eq!(transcript.result.as_deref(), Some("It says hello."));
    assert_eq!(transcript.usage.requests, 2);
    // Its own events, text joined into one delta.
    let texts: Vec<&str> = transcript
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ContentDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["Reading it now."]);
    assert!(
        transcript
            .events
            .iter()
            .any(|e| matches!(e, Event::ToolCallResponse { name, .. } if name == "read_file"))
    );
}

#[tokio::test]
async fn an_interrupted_agents_transcript_is_kept_as_cancelled() {
    let mut r = start(json!({
        "steps": [
            {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "generalist", "prompt": "long"}}]},
            {"text": "never"}
        ],
        "branches": [{
            "system_contains": "general-purpose software engineering agent",
            "steps": [
                {"text": "Starting.", "functionCalls": [{"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/hello.txt"}}]},
                {"delay_ms": 20000, "text": "never"}
            ]
        }]
    }))
    .await;
    r.handle.submit(Op::user_text("go")).unwrap();
    // Once its first tool call is answered, the agent waits on its second
    // request: interrupt there.
    r.until(|e| matches!(e, Event::Subagent { event, .. } if matches!(**event, Event::ToolCallResponse { .. })))
        .await;
    r.handle.submit(Op::Interrupt).unwrap();
    let seen = r.until(|e| matches!(e, Event::TurnComplete { .. })).await;
    assert_eq!(status(&seen), TurnStatus::Cancelled);
    let transcript = r.stored_transcript();
    assert_eq!(transcript.status, SubagentStatus::Cancelled);
    assert_eq!(transcript.usage.requests, 1);
    assert!(
        transcript
            .events
            .iter()
            .any(|e| matches!(e, Event::ToolCallResponse { name, .. } if name == "read_file"))
    );
}
