//! `update_topic` end to end against the fake Gemini server: the event a
//! frontend shows as a chapter, the result the model reads, the call
//! recorded with the conversation, and history search finding the
//! conversation by its topic.

use crate::common;

use std::time::Duration;

use common::*;
use gd_core::history::HistoryRecorder;
use gd_core::tools::ToolRegistry;
use gd_core::{Session, SessionConfig};
use gd_fake_gemini::FakeGemini;
use gd_protocol::{Event, Op, TurnStatus};
use gd_store::{SearchQuery, Store};
use pretty_assertions::assert_eq;
use serde_json::json;

/// A summary longer than the 500 characters other calls' arguments are
/// indexed with, its telling word at the end.
fn long_summary() -> String {
    format!(
        "{} Next we rewrite the zanzibarparser module.",
        "We read the lexer and its tests to learn how tokens flow. ".repeat(10)
    )
}

#[tokio::test]
async fn a_topic_is_shown_recorded_and_found_by_history_search() {
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "update_topic", "args": {
            "title": "Parser rewrite",
            "summary": long_summary(),
            "strategic_intent": "Replace the hand-written parser."
        }}]},
        {"functionCalls": [{"name": "update_topic", "args": {
            "strategic_intent": "Start with the expression grammar."
        }}]},
        {"text": "Done."}
    ]});
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("h.sqlite3")).unwrap();
    let (ws_dir, ws) = workspace();
    let fake = FakeGemini::start_with_vars(scenario, &[("WORKSPACE", ws.to_str().unwrap())]);
    let mut config = SessionConfig::new(MODEL, ws.clone(), SYSTEM_PROMPT.into());
    config.temp_dir = ws_dir.path().join("tmp");
    let session_id = config.session_id.clone();
    let recorder =
        HistoryRecorder::start(store.clone(), &session_id, &ws.display().to_string(), MODEL)
            .await
            .unwrap();
    let (handle, mut events) = Session::spawn_recorded(
        config,
        client_for(&fake, fast_retry(1)),
        ToolRegistry::with_builtins(),
        std::sync::Arc::new(gd_core::approval::AllowAll),
        Some(recorder),
    );
    handle.submit(Op::user_text("rewrite the parser")).unwrap();
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("turn did not complete within 30 s")
            .expect("session ended");
        let done = matches!(event, Event::TurnComplete { .. });
        seen.push(event);
        if done {
            break;
        }
    }
    assert_eq!(status(&seen), TurnStatus::Completed);

    // Two events: the chapter, then an intent update within it.
    let topics: Vec<&Event> = seen
        .iter()
        .filter(|e| matches!(e, Event::TopicChanged { .. }))
        .collect();
    assert_eq!(topics.len(), 2, "{topics:?}");
    let Event::TopicChanged {
        call_id,
        title,
        summary,
        strategic_intent,
        new_chapter,
    } = topics[0]
    else {
        unreachable!()
    };
    assert!(call_id.starts_with("update_topic_"), "{call_id}");
    assert_eq!(title.as_deref(), Some("Parser rewrite"));
    assert_eq!(summary.as_deref(), Some(long_summary().trim()));
    assert_eq!(strategic_intent, "Replace the hand-written parser.");
    assert!(new_chapter);
    assert!(matches!(
        topics[1],
        Event::TopicChanged { title: Some(t), new_chapter: false, strategic_intent, .. }
            if t == "Parser rewrite" && strategic_intent == "Start with the expression grammar."
    ));
    // It never asks, and the model reads 0.61's wording.
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, Event::ToolConfirmationRequest { .. }))
    );
    let bodies: Vec<serde_json::Value> = fake.main_requests().into_iter().map(body).collect();
    let contents = bodies[1]["contents"].as_array().unwrap();
    let output = contents.last().unwrap()["parts"][0]["functionResponse"]["response"]["output"]
        .as_str()
        .unwrap();
    assert!(
        output.starts_with("Current topic: \"Parser rewrite\"\nTopic summary: We read"),
        "{output}"
    );
    assert!(output.ends_with("\n\nStrategic Intent: Replace the hand-written parser."));
    let contents = bodies[2]["contents"].as_array().unwrap();
    assert_eq!(
        contents.last().unwrap()["parts"][0]["functionResponse"]["response"]["output"],
        "Strategic Intent: Start with the expression grammar."
    );

    // History search finds the conversation by its topic, even by a word
    // deep in the summary.
    for words in ["zanzibarparser", "Parser rewrite", "expression grammar"] {
        let hits = store
            .search(&SearchQuery {
                text: words.into(),
                ..SearchQuery::default()
            })
            .unwrap();
        assert!(
            hits.iter().any(|h| h.session_id == session_id),
            "{words}: {hits:?}"
        );
    }
    drop(handle);
    drop(events);

    // Resumed, the conversation continues in its last chapter: the same
    // title again is no new chapter.
    fake.reset(
        json!({"steps": [
            {"functionCalls": [{"name": "update_topic", "args": {
                "title": "Parser rewrite", "strategic_intent": "Finish the grammar."
            }}]},
            {"text": "Resumed."}
        ]}),
        &[("WORKSPACE", ws.to_str().unwrap())],
    );
    let mut config = SessionConfig::new(MODEL, ws.clone(), SYSTEM_PROMPT.into());
    config.temp_dir = ws_dir.path().join("tmp");
    config.session_id = session_id.clone();
    let recorder = HistoryRecorder::resume(store.clone(), &session_id)
        .await
        .unwrap();
    let (handle, mut events) = Session::spawn_recorded(
        config,
        client_for(&fake, fast_retry(1)),
        ToolRegistry::with_builtins(),
        std::sync::Arc::new(gd_core::approval::AllowAll),
        Some(recorder),
    );
    handle.submit(Op::user_text("go on")).unwrap();
    let topic = loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("no topic event within 30 s")
            .expect("session ended");
        if let Event::TopicChanged { new_chapter, .. } = event {
            break new_chapter;
        }
    };
    assert!(
        !topic,
        "the resumed conversation is still in \"Parser rewrite\""
    );
}
