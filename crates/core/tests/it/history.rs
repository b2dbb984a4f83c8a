//! Recording sessions into the history store, resuming them and rewinding
//! the conversation, against the fake Gemini server.

use crate::common;

use std::time::Duration;

use common::*;
use gd_core::history::HistoryRecorder;
use gd_core::tools::ToolRegistry;
use gd_core::{Session, SessionConfig, SessionHandle};
use gd_fake_gemini::FakeGemini;
use gd_protocol::{Event, Op, TurnStatus};
use gd_store::{MessageKind, PageQuery, Store};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

struct Recorded {
    fake: FakeGemini,
    handle: SessionHandle,
    events: UnboundedReceiver<Event>,
    store: Store,
    session_id: String,
    _dir: tempfile::TempDir,
    _ws_dir: tempfile::TempDir,
}

impl Recorded {
    async fn start(scenario: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("h.sqlite3")).unwrap();
        Self::start_in(scenario, store, dir, None).await
    }

    async fn start_in(
        scenario: Value,
        store: Store,
        dir: tempfile::TempDir,
        resume: Option<&str>,
    ) -> Self {
        let (ws_dir, ws) = workspace();
        let fake = FakeGemini::start_with_vars(scenario, &[("WORKSPACE", ws.to_str().unwrap())]);
        let mut config = SessionConfig::new(MODEL, ws.clone(), SYSTEM_PROMPT.into());
        config.temp_dir = ws_dir.path().join("tmp");
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
        let session_id = config.session_id.clone();
        let client = client_for(&fake, fast_retry(1));
        let (handle, events) = Session::spawn_recorded(
            config,
            client,
            ToolRegistry::with_builtins(),
            std::sync::Arc::new(gd_core::approval::AllowAll),
            Some(recorder),
        );
        Self {
            fake,
            handle,
            events,
            store,
            session_id,
            _dir: dir,
            _ws_dir: ws_dir,
        }
    }

    async fn next_event(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(30), self.events.recv())
            .await
            .expect("no event within 30 s")
            .expect("session ended")
    }

    async fn turn(&mut self, prompt: &str) -> Vec<Event> {
        self.handle.submit(Op::user_text(prompt)).unwrap();
        let mut events = Vec::new();
        loop {
            let e = self.next_event().await;
            let done = matches!(e, Event::TurnComplete { .. });
            events.push(e);
            if done {
                return events;
            }
        }
    }

    async fn wait_for(&mut self, pick: impl Fn(&Event) -> bool) -> Event {
        loop {
            let e = self.next_event().await;
            if pick(&e) {
                return e;
            }
        }
    }

    fn bodies(&self) -> Vec<Value> {
        self.fake.main_requests().into_iter().map(body).collect()
    }
}

fn recorded(events: &[Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::MessageRecorded {
                message_id, kind, ..
            } => Some((message_id.clone(), kind.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn every_message_is_recorded_with_its_id_tools_thoughts_and_usage() {
    let mut s = Recorded::start(json!({"steps": [
        {"thought": "**Looking**\n\nlist it", "functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}}]},
        {"text": "Three things."}
    ]}))
    .await;
    let events = s.turn("what is in the pangolin folder?").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let ids = recorded(&events);
    let kinds: Vec<&str> = ids.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["prompt", "model", "tool_result", "model", "turn_end"]
    );
    // Each message was committed before the request that follows it: the
    // MessageRecorded event of the tool results precedes the second
    // request's text.
    let pos = |pick: &dyn Fn(&Event) -> bool| events.iter().position(pick).unwrap();
    assert!(
        pos(&|e| matches!(e, Event::MessageRecorded { kind, .. } if kind == "tool_result"))
            < pos(&|e| matches!(e, Event::ContentDelta { .. }))
    );
    let summary = s.store.session(&s.session_id).unwrap().unwrap();
    assert_eq!(summary.title, "what is in the pangolin folder?");
    assert_eq!(summary.message_count, 4);
    let page = s.store.page(&s.session_id, &PageQuery::default()).unwrap();
    assert_eq!(
        page.messages
            .iter()
            .map(|m| m.id.clone())
            .collect::<Vec<_>>(),
        ids.iter().map(|(i, _)| i.clone()).collect::<Vec<_>>()
    );
    assert_eq!(
        page.messages[0].text, "what is in the pangolin folder?",
        "not the session context"
    );
    assert_eq!(page.messages[1].thoughts[0].subject, "Looking");
    assert!(page.messages[1].usage.is_some());
    assert_eq!(page.messages[1].tool_calls[0].name, "list_directory");
    assert_eq!(
        page.messages[2].tool_calls[0].status.as_deref(),
        Some("success")
    );
    // The stored context is exactly what the model was sent.
    let ctx = gd_core::history::to_contents(s.store.load_context(&s.session_id).unwrap()).unwrap();
    let sent = s.bodies()[1]["contents"].clone();
    let mut stored = serde_json::to_value(&ctx[..3]).unwrap();
    // (The active-loop signature is added at send time.)
    stored[1]["parts"][0]["thoughtSignature"] = json!(gd_core::chat::SYNTHETIC_THOUGHT_SIGNATURE);
    assert_eq!(stored, sent);
}

/// A reopened session must show the tool cards as the live chat did: the
/// record of each result keeps what the card showed (display text, not the
/// `<untrusted_context>` text the model got) and the duration.
#[tokio::test]
async fn tool_results_record_what_the_card_showed() {
    let mut s = Recorded::start(json!({"steps": [
        {"functionCalls": [
            {"name": "write_file", "args": {"file_path": "okapi.txt", "content": "striped\n"}},
            {"name": "run_shell_command", "args": {"command": "echo pangolin"}}
        ]},
        {"text": "Done."}
    ]}))
    .await;
    let events = s.turn("write and run").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let live: Vec<(String, Option<String>)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResponse { name, display, .. } => Some((name.clone(), display.clone())),
            _ => None,
        })
        .collect();
    let page = s.store.page(&s.session_id, &PageQuery::default()).unwrap();
    let results = page
        .messages
        .iter()
        .find(|m| m.kind == MessageKind::ToolResult)
        .expect("a tool result message");
    let record = |name: &str| {
        results
            .tool_calls
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no record of {name}"))
    };
    let shell = record("run_shell_command");
    let shown = live
        .iter()
        .find(|(n, _)| n == "run_shell_command")
        .unwrap()
        .1
        .clone();
    assert_eq!(shell.display, shown, "the display text the card showed");
    assert!(shell.display.as_deref().unwrap().contains("pangolin"));
    assert!(
        !shell
            .display
            .as_deref()
            .unwrap()
            .contains("untrusted_context")
    );
    assert!(
        shell.summary.as_deref().unwrap().contains("PGID"),
        "the model's text stays the summary"
    );
    assert!(shell.duration_ms.is_some());
    // Search finds what people saw, and its snippets show no plumbing.
    assert!(results.text.contains("pangolin"), "{}", results.text);
    assert!(!results.text.contains("PGID"), "{}", results.text);
    // The rest of what the live card showed: the plain output and the exit code.
    let live_output = events.iter().find_map(|e| match e {
        Event::ToolCallResponse {
            name,
            output,
            exit_code,
            ..
        } if name == "run_shell_command" => Some((output.clone(), *exit_code)),
        _ => None,
    });
    assert_eq!(live_output, Some((shell.output.clone(), shell.exit_code)));
    assert_eq!(shell.exit_code, Some(0));
    assert!(!shell.declined);
    let write = record("write_file");
    // The applied edit's diff, to show again from the reopened card.
    assert_eq!(
        write.diff.as_ref().and_then(|d| d["type"].as_str()),
        Some("edit"),
        "{:?}",
        write.diff
    );
    assert_eq!(write.status.as_deref(), Some("success"));
    let shown = live
        .iter()
        .find(|(n, _)| n == "write_file")
        .unwrap()
        .1
        .clone();
    assert_eq!(write.display, shown);
    assert!(write.display.is_some());
    assert!(write.duration_ms.is_some());
    // The searchable text names the calls by their argument values, not JSON
    // (search snippets show it).
    let model = &page.messages[1];
    assert!(
        model.text.contains("write_file") && model.text.contains("okapi.txt"),
        "{}",
        model.text
    );
    assert!(!model.text.contains("{\"file_path\""), "{}", model.text);
}

#[tokio::test]
async fn a_failed_prompt_stays_in_the_transcript_but_not_in_the_context() {
    let mut s = Recorded::start(json!({
        "faults": [{"request": 1, "kind": "http_error", "status": 400, "message": "bad"}],
        "steps": [{"text": "fine"}]
    }))
    .await;
    let events = s.turn("this one fails").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    s.turn("this one works").await;
    let page = s.store.page(&s.session_id, &PageQuery::default()).unwrap();
    let rows: Vec<(String, bool)> = page
        .messages
        .iter()
        .map(|m| (m.text.clone(), m.in_context))
        .collect();
    assert_eq!(
        rows,
        [
            ("this one fails".into(), false),
            (
                "The turn failed: API error [400 INVALID_ARGUMENT] bad".into(),
                false
            ),
            ("this one works".into(), true),
            ("fine".into(), true),
            (String::new(), false)
        ]
    );
    let ctx = s.store.load_context(&s.session_id).unwrap();
    assert_eq!(ctx.len(), 2);
    assert_eq!(ctx[0].kind, MessageKind::Prompt);
    // The surviving first prompt carries the session context (as sent).
    assert!(ctx[0].parts.to_string().contains("session_context"));
}

#[tokio::test]
async fn a_resumed_session_sends_the_stored_history_first() {
    let mut first = Recorded::start(json!({"steps": [{"text": "The capital is Paris."}]})).await;
    first.turn("capital of France?").await;
    let id = first.session_id.clone();
    let sent_before = first.bodies()[0]["contents"].clone();
    first.handle.submit(Op::Shutdown).unwrap();
    let Recorded { store, _dir, .. } = first;

    let mut again = Recorded::start_in(
        json!({"steps": [{"text": "About 2 million."}]}),
        store,
        _dir,
        Some(&id),
    )
    .await;
    let e = again
        .wait_for(|e| matches!(e, Event::SessionResumed { .. }))
        .await;
    assert_eq!(
        e,
        Event::SessionResumed {
            session_id: id.clone(),
            messages: 2
        }
    );
    again.turn("and its population?").await;
    let contents = again.bodies()[0]["contents"].as_array().unwrap().clone();
    assert_eq!(contents.len(), 3);
    assert_eq!(
        contents[0], sent_before[0],
        "the first prompt, session context and all"
    );
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [{"text": "The capital is Paris."}]})
    );
    assert_eq!(
        contents[2]["parts"],
        json!([{"text": "and its population?"}]),
        "no second session context"
    );
    assert_eq!(again.store.session(&id).unwrap().unwrap().message_count, 4);
}

#[tokio::test]
async fn resuming_after_a_kill_during_a_tool_call_answers_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("h.sqlite3")).unwrap();
    store
        .create_session(&gd_store::NewSession {
            id: "killed".into(),
            workspace: "/w".into(),
            title: "t".into(),
            model: None,
            created_ms: 1,
            source: gd_store::SOURCE_DESKTOP.into(),
            origin: None,
        })
        .unwrap();
    let prompt = gd_store::NewMessage::new(
        gd_store::Role::User,
        MessageKind::Prompt,
        json!([{"text": "run it"}]),
        "run it",
    );
    let call = gd_store::NewMessage::new(
        gd_store::Role::Model,
        MessageKind::Model,
        json!([{"functionCall": {"id": "c1", "name": "run_shell_command", "args": {"command": "sleep 100"}}}]),
        "",
    );
    store.append_messages("killed", &[prompt, call]).unwrap();
    let mut again = Recorded::start_in(
        json!({"steps": [{"text": "ok"}]}),
        store,
        dir,
        Some("killed"),
    )
    .await;
    again.turn("what happened?").await;
    let contents = again.bodies()[0]["contents"].as_array().unwrap().clone();
    assert_eq!(contents.len(), 4);
    assert_eq!(contents[2]["parts"][0]["functionResponse"]["id"], "c1");
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["response"]["error"],
        gd_core::history::INTERRUPTED_CALL
    );
    let page = again.store.page("killed", &PageQuery::default()).unwrap();
    assert_eq!(
        page.messages[2].tool_calls[0].status.as_deref(),
        Some("cancelled")
    );
}

#[tokio::test]
async fn open_for_launch_starts_a_new_recording_or_resumes_a_stored_one() {
    use gd_core::history::{LaunchHistoryError, open_for_launch};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("h.sqlite3")).unwrap();
    let mut config = SessionConfig::new(MODEL, dir.path().to_path_buf(), "p".into());
    config.session_id = "fresh".into();
    open_for_launch(store.clone(), &mut config, "/w", None)
        .await
        .unwrap();
    let created = store.session("fresh").unwrap().unwrap();
    assert_eq!(created.workspace, "/w");

    let mut later = SessionConfig::new(MODEL, dir.path().to_path_buf(), "p".into());
    open_for_launch(store.clone(), &mut later, "/w", Some("fresh"))
        .await
        .unwrap();
    assert_eq!(later.session_id, "fresh", "the resumed session's id");

    let error = open_for_launch(store, &mut later, "/w", Some("missing"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, LaunchHistoryError::Resume { .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("Cannot resume session missing: "),
        "{error}"
    );
}

/// The stored turn ends of a session, oldest first.
fn turn_ends(store: &Store, session_id: &str) -> Vec<gd_protocol::TurnEndRecord> {
    store
        .usage_records(session_id)
        .unwrap()
        .into_iter()
        .filter_map(|r| r.turn_end)
        .map(|v| serde_json::from_value(v).unwrap())
        .collect()
}

async fn stats_of(s: &mut Recorded) -> gd_protocol::SessionStats {
    s.handle.submit(Op::Stats).unwrap();
    match s
        .wait_for(|e| matches!(e, Event::SessionStats { .. }))
        .await
    {
        Event::SessionStats { stats } => stats,
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn an_answer_stopped_mid_stream_is_kept_with_its_turn_end() {
    let long = "Part of a long answer that the user stops. ".repeat(40);
    let mut s = Recorded::start(json!({"steps": [{"text": "Short first answer."}]})).await;
    s.turn("first").await;
    s.fake.reset(
        json!({"chunk_chars": 20, "chunk_delay_ms": 50, "steps": [{"text": long}]}),
        &[],
    );
    s.handle
        .submit(Op::user_text("tell me everything"))
        .unwrap();
    let mut events = vec![
        s.wait_for(|e| matches!(e, Event::ContentDelta { .. }))
            .await,
    ];
    s.handle.submit(Op::Interrupt).unwrap();
    loop {
        let e = s.next_event().await;
        let done = matches!(e, Event::TurnComplete { .. });
        events.push(e);
        if done {
            break;
        }
    }
    assert_eq!(status(&events), TurnStatus::Cancelled);
    let shown = text(&events);
    assert!(
        !shown.is_empty() && shown.len() < long.len(),
        "stopped mid-stream"
    );

    let page = s.store.page(&s.session_id, &PageQuery::default()).unwrap();
    let rows: Vec<(MessageKind, String, bool)> = page
        .messages
        .iter()
        .map(|m| (m.kind, m.text.clone(), m.in_context))
        .collect();
    assert_eq!(
        rows,
        [
            (MessageKind::Prompt, "first".into(), true),
            (MessageKind::Model, "Short first answer.".into(), true),
            (MessageKind::TurnEnd, String::new(), false),
            (MessageKind::Prompt, "tell me everything".into(), false),
            (MessageKind::Model, shown.clone(), false),
            (MessageKind::TurnEnd, "Cancelled.".into(), false),
        ],
        "the unfinished answer as shown, out of the model's context"
    );
    let ends = turn_ends(&s.store, &s.session_id);
    assert_eq!(
        ends.iter().map(|e| e.status).collect::<Vec<_>>(),
        [TurnStatus::Completed, TurnStatus::Cancelled]
    );
    assert_eq!(ends[0].usage.requests, 1);
    assert_eq!(
        s.store
            .session(&s.session_id)
            .unwrap()
            .unwrap()
            .message_count,
        4,
        "a turn end is not a message"
    );
    // The model never hears the stopped answer.
    let ctx = s.store.load_context(&s.session_id).unwrap();
    assert_eq!(ctx.len(), 2);
}

#[tokio::test]
async fn a_loop_detected_turn_keeps_its_notice() {
    let looping = "I am going to check the file again to be sure. ".repeat(30);
    let mut s = Recorded::start(json!({"chunk_chars": 20, "steps": [{"text": looping}]})).await;
    let events = s.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::LoopDetected);
    let ends = turn_ends(&s.store, &s.session_id);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].status, TurnStatus::LoopDetected);
    let shown: Vec<&Event> = events.iter().filter(|e| e.is_turn_notice()).collect();
    assert!(!shown.is_empty());
    assert_eq!(
        ends[0].notices.iter().map(|n| &n.event).collect::<Vec<_>>(),
        shown,
        "the notices as shown"
    );
    // Shown below the text that streamed before the loop was caught: after that message.
    let page = s.store.page(&s.session_id, &PageQuery::default()).unwrap();
    let answer = page
        .messages
        .iter()
        .find(|m| m.kind == MessageKind::Model)
        .expect("the text shown is recorded");
    assert!(
        ends[0]
            .notices
            .iter()
            .all(|n| n.after_seq == Some(answer.seq))
    );
}

#[tokio::test]
async fn a_resumed_session_counts_on_from_its_stored_usage() {
    let mut first = Recorded::start(json!({"steps": [
        {"functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}}]},
        {"text": "Listed."},
        {"text": "Second answer."}
    ]}))
    .await;
    first.turn("list it").await;
    first.turn("again").await;
    let before = stats_of(&mut first).await;
    assert_eq!(before.turn_rows.len(), 2);
    assert!(before.models.iter().map(|m| m.total_tokens).sum::<u64>() > 0);
    let id = first.session_id.clone();
    first.handle.submit(Op::Shutdown).unwrap();
    let Recorded { store, _dir, .. } = first;

    let mut again = Recorded::start_in(
        json!({"steps": [{"text": "Third."}]}),
        store,
        _dir,
        Some(&id),
    )
    .await;
    let after = stats_of(&mut again).await;
    assert_eq!(after.turn_rows, before.turn_rows, "the usage panel's rows");
    assert_eq!(after.models, before.models, "the meter's figures");
    assert_eq!(after.tools, before.tools);
    assert_eq!(after.turns, before.turns);
    assert_eq!(after.started_ms, before.started_ms);

    again.turn("one more").await;
    let more = stats_of(&mut again).await;
    assert_eq!(more.turn_rows.len(), 3);
    assert_eq!(more.turns, 3);
    assert_eq!(
        more.models[0].requests,
        before.models[0].requests + 1,
        "counting on"
    );
}
