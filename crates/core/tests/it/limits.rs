//! Everything that stops or reshapes a turn: cancellation, the session turn
//! limit, loop detection and chat compression.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use gd_protocol::{ErrorKind, Event, LoopKind, Op, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::json;

// Multi-threaded: `wait_for_requests` blocks its thread while the session works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_aborts_a_hanging_request_and_keeps_history_valid() {
    let mut h = Harness::start(json!({
        "faults": [{"request": 1, "kind": "hang"}],
        "steps": [{"text": "never seen"}]
    }));
    h.handle.submit(Op::user_text("wait forever")).unwrap();
    assert!(h.fake.wait_for_requests(1, Duration::from_secs(10)));
    let started = Instant::now();
    h.handle.submit(Op::Interrupt).unwrap();
    let events = h.collect_turn().await;
    assert_eq!(status(&events), TurnStatus::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "cancel took {:?}",
        started.elapsed()
    );

    h.reset(json!({"steps": [{"text": "hello again"}]}));
    let events = h.turn("new question").await;
    assert_eq!(text(&events), "hello again");
    let contents = h.bodies()[0]["contents"].as_array().unwrap().clone();
    assert_eq!(
        contents.len(),
        1,
        "the cancelled prompt is not kept: {contents:#?}"
    );
    assert!(!contents[0].to_string().contains("wait forever"));
}

#[tokio::test]
async fn interrupt_after_tools_ran_keeps_their_results() {
    let mut h = Harness::start(json!({
        "faults": [{"request": 2, "kind": "hang_after_chunks", "hang_after_chunks": 1, "chunk_chars": 3}],
        "steps": [
            {"functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}}]},
            {"text": "This text stalls after the first chunk."}
        ]
    }));
    h.handle.submit(Op::user_text("list then talk")).unwrap();
    // Wait until the first chunk of the second answer has been shown.
    let mut events = Vec::new();
    loop {
        let event = h.events.recv().await.unwrap();
        let shown = matches!(event, Event::ContentDelta { .. });
        events.push(event);
        if shown {
            break;
        }
    }
    h.handle.interrupt();
    events.extend(h.collect_turn().await);
    assert_eq!(status(&events), TurnStatus::Cancelled);

    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("next").await;
    let contents = h.bodies()[0]["contents"].as_array().unwrap().clone();
    assert_valid_history(&contents);
    assert_eq!(contents.len(), 4, "prompt, call, tool results, new prompt");
}

#[tokio::test]
async fn max_session_turns_stops_the_agent() {
    let mut h = Harness::start_with(gd_fake_gemini::fixtures::scenario("b_list_dir"), |config| {
        config.max_session_turns = Some(1);
    });
    let events = h.turn("List the files here").await;
    assert_eq!(status(&events), TurnStatus::TurnLimitReached);
    assert_eq!(h.fake.main_requests().len(), 1);
    let errs = errors(&events);
    assert_eq!(errs[0].0, ErrorKind::TurnLimit);
    assert!(errs[0].1.contains("maxSessionTurns"));
    // The tool ran; its result is in history even though it was never sent.
    let again = h.turn("more").await;
    assert_eq!(
        status(&again),
        TurnStatus::TurnLimitReached,
        "the limit is per session"
    );
}

#[tokio::test]
async fn repeated_identical_tool_calls_are_stopped() {
    let call = json!({"functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}}]});
    let mut h = Harness::start(json!({"steps": [], "after_steps": call}));
    let events = h.turn("loop please").await;
    assert_eq!(status(&events), TurnStatus::LoopDetected);
    assert_eq!(h.fake.main_requests().len(), 5);
    let detected = events.iter().find_map(|e| match e {
        Event::LoopDetected { kind, .. } => Some(*kind),
        _ => None,
    });
    assert_eq!(detected, Some(LoopKind::RepeatedToolCall));
    let executed = events
        .iter()
        .filter(|e| matches!(e, Event::ToolCallResponse { .. }))
        .count();
    assert_eq!(executed, 4, "the fifth call is not executed");

    h.reset(json!({"steps": [{"text": "stopped"}]}));
    h.turn("ok, stop").await;
    let contents = h.bodies()[0]["contents"].as_array().unwrap().clone();
    assert_valid_history(&contents);
}

#[tokio::test]
async fn repeated_text_is_stopped() {
    let looping = "I am going to check the file again to be sure. ".repeat(30);
    let mut h = Harness::start(json!({"chunk_chars": 20, "steps": [{"text": looping}]}));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::LoopDetected);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::LoopDetected {
            kind: LoopKind::RepeatedContent,
            ..
        }
    )));
    assert!(
        text(&events).len() < looping.len(),
        "the stream was cut short"
    );
}

#[tokio::test]
async fn loop_detection_can_be_turned_off() {
    let call = json!({"functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}}]});
    let mut steps = vec![call; 6];
    steps.push(json!({"text": "finally"}));
    let mut h = Harness::start_with(json!({"steps": steps}), |config| {
        config.loop_detection = false
    });
    // The fake's step index counts tool rounds, so this is 6 rounds then text.
    let events = h.turn("go").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(text(&events), "finally");
}

#[tokio::test]
async fn history_is_compressed_near_the_limit() {
    let scenario = json!({
        "steps": [{"text": "An answer with some detail to make the history longer than the summary will be."}],
        "utility": [{"match": "state_snapshot", "text": "<state_snapshot>user asked two things</state_snapshot>"}]
    });
    let mut h = Harness::start_with(scenario, |config| config.compression_threshold = 1e-9);
    h.turn("first question with enough words to be worth summarising later on")
        .await;
    h.turn("second question, also long enough to matter for the estimate")
        .await;
    let events = h.turn("third").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let compressed = events.iter().find_map(|e| match e {
        Event::ChatCompressed {
            original_tokens,
            new_tokens,
        } => Some((*original_tokens, *new_tokens)),
        _ => None,
    });
    let (before, after) = compressed.expect("a ChatCompressed event");
    assert!(after < before, "{after} < {before}");

    let utility: Vec<_> = h
        .fake
        .requests()
        .into_iter()
        .filter(|r| r.kind == "utility")
        .collect();
    assert!(!utility.is_empty(), "a summary request was made");
    let summary_request = utility.last().unwrap().body.clone().unwrap();
    assert!(summary_request.get("tools").is_none());
    let contents = h.bodies().last().unwrap()["contents"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        contents[0]["parts"][0]["text"],
        "<state_snapshot>user asked two things</state_snapshot>"
    );
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(contents.last().unwrap()["parts"][0]["text"], "third");
    assert_valid_history(&contents);
}
