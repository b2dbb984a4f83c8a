//! The built-in commands the core carries out (`/clear`, `/compress`,
//! `/stats` as `Op::Clear`, `Op::Compress`, `Op::Stats`) and MCP prompts run
//! as slash commands, against the fake Gemini server and the real python
//! MCP fixture server.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_core::history::HistoryRecorder;
use gd_core::tools::ToolRegistry;
use gd_core::{Session, SessionConfig};
use gd_fake_gemini::FakeGemini;
use gd_protocol::{
    CompressionSkipReason, ErrorKind, Event, Op, SessionStats, SlashCommandSource, TurnStatus,
};
use gd_store::Store;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// The next event that `pick` selects, skipping others (within 60 s).
async fn next<T>(h: &mut Harness, mut pick: impl FnMut(Event) -> Option<T>) -> T {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .expect("an answer within 60 s")
            .expect("the session is alive");
        if let Some(found) = pick(event) {
            return found;
        }
    }
}

/// The user's texts in the last message of the `index`-th request.
fn last_user_texts(h: &Harness, index: usize) -> Vec<String> {
    let body = &h.bodies()[index];
    let last = body["contents"].as_array().unwrap().len() - 1;
    user_texts(body, last)
}

/// A completed turn; fails with the turn's errors otherwise.
fn completed(events: &[Event]) {
    assert_eq!(
        status(events),
        TurnStatus::Completed,
        "{:?}",
        errors(events)
    );
}

async fn stats(h: &mut Harness) -> SessionStats {
    h.handle.submit(Op::Stats).unwrap();
    next(h, |e| match e {
        Event::SessionStats { stats } => Some(stats),
        _ => None,
    })
    .await
}

/// The texts of the user's message in a request (after the session context
/// of a conversation's first message).
fn user_texts(body: &Value, index: usize) -> Vec<String> {
    let parts = body["contents"][index]["parts"].as_array().unwrap();
    parts
        .iter()
        .filter_map(|p| p["text"].as_str())
        .filter(|t| !t.starts_with("<session_context>"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn clear_starts_a_new_conversation_and_a_new_recorded_session() {
    let (ws_dir, ws) = workspace();
    let fake = FakeGemini::start(json!({"steps": [{"text": "one"}, {"text": "two"}]}));
    let store = Store::open(ws_dir.path().join("history.sqlite3")).unwrap();
    let mut config = SessionConfig::new(MODEL, ws.clone(), SYSTEM_PROMPT.into());
    config.temp_dir = ws_dir.path().join("tmp");
    let first_id = config.session_id.clone();
    let recorder =
        HistoryRecorder::start(store.clone(), &first_id, &ws.display().to_string(), MODEL)
            .await
            .unwrap();
    let (handle, events) = Session::spawn_recorded(
        config,
        client_for(&fake, fast_retry(1)),
        ToolRegistry::with_builtins(),
        Arc::new(gd_core::approval::AllowAll),
        Some(recorder),
    );
    let mut h = Harness {
        fake,
        workspace: ws,
        handle,
        events,
        _dir: ws_dir,
    };
    assert_eq!(
        status(&h.turn("remember the word tulip").await),
        TurnStatus::Completed
    );

    h.handle.submit(Op::Clear).unwrap();
    let new_id = next(&mut h, |e| match e {
        Event::ConversationCleared { session_id } => Some(session_id),
        _ => None,
    })
    .await;
    assert_ne!(new_id, first_id);
    assert_eq!(h.handle.session_id(), first_id, "the session keeps its id");
    let cleared = stats(&mut h).await;
    assert_eq!(
        (cleared.session_id.as_str(), cleared.turns),
        (new_id.as_str(), 0)
    );
    assert!(cleared.models.is_empty(), "statistics start again");

    assert_eq!(
        status(&h.turn("what was the word?").await),
        TurnStatus::Completed
    );
    let bodies = h.bodies();
    let contents = bodies[1]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 1, "no earlier turns: {contents:?}");
    let texts: Vec<&str> = contents[0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert!(
        texts[0].starts_with("<session_context>"),
        "a new conversation starts with the session context: {texts:?}"
    );
    assert_eq!(texts[1..], ["what was the word?"]);
    assert!(!contents[0].to_string().contains("tulip"));

    // The old conversation stays in the history; the new one is its own session.
    let old = store.session(&first_id).unwrap().expect("the old session");
    assert_eq!(old.message_count, 2);
    let new = store.session(&new_id).unwrap().expect("the new session");
    assert_eq!(new.message_count, 2);
    assert_eq!(new.workspace, old.workspace);
    assert_eq!(new.title, "what was the word?");
}

#[tokio::test]
async fn compress_summarises_now_and_the_next_request_carries_the_summary() {
    let long = "Please look at this carefully. ".repeat(200);
    let scenario = json!({
        "steps": [{"text": "Noted, a long request."}, {"text": "Continuing."}],
        "utility": [{"match": "state_snapshot", "text": "<state_snapshot>short summary</state_snapshot>"}]
    });
    let mut h = Harness::start(scenario);

    // Nothing to compress yet.
    h.handle.submit(Op::Compress).unwrap();
    let (reason, message) = next(&mut h, |e| match e {
        Event::CompressionSkipped {
            reason, message, ..
        } => Some((reason, message)),
        Event::ChatCompressed { .. } => panic!("an empty history was compressed"),
        _ => None,
    })
    .await;
    assert_eq!(reason, CompressionSkipReason::NothingToCompress);
    assert_eq!(message, "Nothing to compress.");

    assert_eq!(status(&h.turn(&long).await), TurnStatus::Completed);
    h.handle.submit(Op::Compress).unwrap();
    let (before, after) = next(&mut h, |e| match e {
        Event::ChatCompressed {
            original_tokens,
            new_tokens,
        } => Some((original_tokens, new_tokens)),
        Event::CompressionSkipped { message, .. } => panic!("not compressed: {message}"),
        _ => None,
    })
    .await;
    assert!(after < before, "{after} < {before}");

    let summary_requests = h
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.kind == "utility")
        .count();
    assert_eq!(summary_requests, 1, "one summary request");
    assert_eq!(status(&h.turn("and now?").await), TurnStatus::Completed);
    let bodies = h.bodies();
    let contents = bodies.last().unwrap()["contents"].as_array().unwrap();
    assert_eq!(
        contents[0]["parts"][0]["text"],
        "<state_snapshot>short summary</state_snapshot>"
    );
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(contents.last().unwrap()["parts"][0]["text"], "and now?");
    assert!(
        !bodies
            .last()
            .unwrap()
            .to_string()
            .contains("look at this carefully")
    );
    assert_valid_history(contents);
}

#[tokio::test]
async fn a_failed_summary_leaves_the_history_as_it_was() {
    let scenario = json!({
        "steps": [{"text": "ok"}, {"text": "still here"}],
        "utility": [{"match": "state_snapshot", "text": ""}]
    });
    let mut h = Harness::start(scenario);
    h.turn("first").await;
    h.handle.submit(Op::Compress).unwrap();
    let (reason, message) = next(&mut h, |e| match e {
        Event::CompressionSkipped {
            reason, message, ..
        } => Some((reason, message)),
        _ => None,
    })
    .await;
    assert_eq!(reason, CompressionSkipReason::Failed);
    assert!(message.contains("empty summary"), "{message}");
    h.turn("second").await;
    let contents = h.bodies()[1]["contents"].as_array().unwrap().clone();
    assert_eq!(contents.len(), 3, "first prompt, answer, second prompt");
}

#[tokio::test]
async fn stats_count_turns_tokens_and_tool_calls() {
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/hello.txt"}}]},
        {"functionCalls": [{"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/missing.txt"}}]},
        {"text": "done"}
    ]});
    let mut h = Harness::start(scenario);
    let started = stats(&mut h).await;
    assert_eq!((started.turns, started.tools.calls), (0, 0));
    assert_eq!(started.session_id, h.handle.session_id());

    assert_eq!(status(&h.turn("read it").await), TurnStatus::Completed);
    let s = stats(&mut h).await;
    assert_eq!(s.turns, 1);
    assert_eq!(s.models.len(), 1);
    let model = &s.models[0];
    assert_eq!(
        (model.model.as_str(), model.requests, model.errors),
        (MODEL, 3, 0)
    );
    assert!(
        model.prompt_tokens > 0 && model.output_tokens > 0,
        "{model:?}"
    );
    assert_eq!(
        model.total_tokens,
        model.prompt_tokens + model.output_tokens + model.thoughts_tokens + model.tool_tokens,
        "{model:?}"
    );
    assert_eq!((s.tools.calls, s.tools.success, s.tools.failed), (2, 1, 1));
    assert_eq!(s.tools.by_name[0].name, "read_file");
    assert_eq!(s.tools.decisions.auto_accept, 2);
    assert!(s.api_time_ms <= s.duration_ms, "{s:?}");
}

#[tokio::test]
async fn mcp_prompts_are_commands_and_their_text_reaches_the_model() {
    let steps = json!({"steps": [{"text": "hello Ada"}, {"text": "reviewed"}, {"text": "again"}]});
    let mut h = Harness::start_with_tools(
        steps,
        |_| {},
        Arc::new(gd_core::approval::AllowAll),
        with_fixture_server,
    );
    // Typed before the server has even connected: the session waits for
    // its prompts rather than sending "/greet Ada" as text.
    completed(&h.turn("/greet Ada").await);
    assert_eq!(last_user_texts(&h, 0), ["Please greet Ada warmly."]);

    h.handle.submit(Op::ListCommands).unwrap();
    let commands = next(&mut h, |e| match e {
        Event::Commands { commands } => Some(commands),
        _ => None,
    })
    .await;
    let prompts: Vec<_> = commands
        .iter()
        .filter(|c| c.source == SlashCommandSource::McpPrompt)
        .collect();
    assert_eq!(
        prompts.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["greet", "review"]
    );
    assert_eq!(prompts[0].description, "Greet someone.");
    assert_eq!(prompts[0].server.as_deref(), Some("fixture"));
    let review_args: Vec<(&str, bool)> = prompts[1]
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(
        review_args,
        [("file", true), ("focus", true), ("tone", false)]
    );

    // Positional and named arguments, as Gemini CLI parses them.
    completed(
        &h.turn(r#"/review src/main.rs "error handling" --tone="dry""#)
            .await,
    );
    assert_eq!(
        last_user_texts(&h, 1),
        ["Review src/main.rs for error handling, in a dry tone."]
    );

    // A missing required argument: the turn fails and nothing is sent.
    let events = h.turn("/review only-a-file.rs").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    assert_eq!(
        errors(&events),
        [(
            ErrorKind::Input,
            "Missing required argument(s): --focus".to_owned()
        )]
    );
    assert_eq!(h.bodies().len(), 2);

    // The session API's explicit form.
    h.handle
        .submit(Op::McpRunPrompt {
            server: "fixture".into(),
            name: "greet".into(),
            arguments: [("name".to_owned(), "Grace".to_owned())].into(),
        })
        .unwrap();
    completed(&h.collect_turn().await);
    assert_eq!(last_user_texts(&h, 2), ["Please greet Grace warmly."]);

    // Not a command: sent as typed.
    completed(&h.turn("/usr/bin/env is missing").await);
    assert_eq!(last_user_texts(&h, 3), ["/usr/bin/env is missing"]);
}

#[tokio::test]
async fn an_unknown_mcp_server_fails_the_turn_with_a_reason() {
    let mut h = Harness::start(json!({"steps": [{"text": "never"}]}));
    h.handle
        .submit(Op::McpRunPrompt {
            server: "nowhere".into(),
            name: "greet".into(),
            arguments: Default::default(),
        })
        .unwrap();
    let events = h.collect_turn().await;
    assert_eq!(status(&events), TurnStatus::Failed);
    assert_eq!(
        errors(&events)[0].1,
        "MCP server 'nowhere' is not configured."
    );
    assert!(h.bodies().is_empty());
}
