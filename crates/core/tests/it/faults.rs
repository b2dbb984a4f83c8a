//! Model-side failures seen by a session: every fault ends with a clear
//! event and a history that is still valid for the next turn.

use crate::common;

use common::*;
use gd_protocol::{ErrorKind, Event, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn retries(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::Retrying { .. }))
        .count()
}

/// After a failed turn, a new prompt must be sent on a clean history.
async fn next_turn_is_clean(h: &mut Harness, expected_len: usize) -> Vec<Value> {
    h.reset(json!({"steps": [{"text": "recovered"}]}));
    let events = h.turn("are you there?").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let contents = h.bodies()[0]["contents"].as_array().unwrap().clone();
    assert_valid_history(&contents);
    assert_eq!(contents.len(), expected_len, "{contents:#?}");
    assert_eq!(
        contents.last().unwrap()["parts"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["text"],
        "are you there?"
    );
    contents
}

#[tokio::test]
async fn rate_limit_then_success() {
    let mut h = Harness::start(json!({
        "fail_first": {"status": 429, "times": 1, "retry_delay": "0.01s"},
        "steps": [{"text": "made it"}]
    }));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(text(&events), "made it");
    assert_eq!(retries(&events), 1);
    assert_eq!(h.fake.main_requests().len(), 2);
}

#[tokio::test]
async fn server_error_forever_fails_the_turn_after_all_attempts() {
    let mut h =
        Harness::start(json!({"fail_always": {"status": 500}, "steps": [{"text": "never"}]}));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    assert_eq!(
        h.fake.main_requests().len(),
        3,
        "the harness allows 3 attempts"
    );
    let errs = errors(&events);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].0, ErrorKind::Api);
    assert!(errs[0].1.contains("500"), "{}", errs[0].1);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Error {
            status: Some(500),
            fatal: true,
            ..
        }
    )));
    let contents = next_turn_is_clean(&mut h, 1).await;
    assert!(
        contents[0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("<session_context>")
    );
}

#[tokio::test]
async fn stream_cut_before_content_is_retried() {
    let mut h = Harness::start(json!({
        "faults": [{"request": 1, "kind": "cut_stream", "after_chunks": 0}],
        "steps": [{"text": "second time lucky"}]
    }));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(text(&events), "second time lucky");
    assert_eq!(retries(&events), 1);
}

#[tokio::test]
async fn stream_cut_mid_content_reports_and_keeps_history_valid() {
    let mut h = Harness::start(json!({
        "faults": [{"request": 1, "kind": "cut_stream", "after_chunks": 2, "chunk_chars": 5}],
        "steps": [{"text": "This answer will be cut off in the middle."}]
    }));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    assert_eq!(
        text(&events),
        "This answe",
        "the two chunks before the cut were shown"
    );
    let errs = errors(&events);
    assert_eq!(errs[0].0, ErrorKind::StreamInterrupted);
    assert!(errs[0].1.contains("interrupted"), "{}", errs[0].1);
    assert_eq!(
        h.fake.main_requests().len(),
        1,
        "partial output is not retried"
    );
    // Neither the failed prompt nor the partial answer reach the model.
    let contents = next_turn_is_clean(&mut h, 1).await;
    assert!(
        !contents
            .to_vec()
            .iter()
            .any(|c| c.to_string().contains("This answer"))
    );
}

#[tokio::test]
async fn stream_cut_after_a_tool_round_keeps_the_tool_results() {
    let mut h = Harness::start(json!({
        "faults": [{"request": 2, "kind": "cut_stream", "after_chunks": 1, "chunk_chars": 4}],
        "steps": [
            {"functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}}]},
            {"text": "The listing shows three entries."}
        ]
    }));
    let events = h.turn("list").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    // prompt, call, responses (kept: the tool ran) + the new prompt.
    let contents = next_turn_is_clean(&mut h, 4).await;
    assert!(contents[2]["parts"][0].get("functionResponse").is_some());
}

#[tokio::test]
async fn malformed_json_chunk_after_content_is_an_error() {
    let mut h = Harness::start(json!({
        "faults": [{"request": 1, "kind": "malformed_chunk", "after_chunks": 1, "chunk_chars": 6}],
        "steps": [{"text": "Some text then garbage."}]
    }));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    let errs = errors(&events);
    assert_eq!(errs[0].0, ErrorKind::StreamInterrupted);
    assert!(errs[0].1.contains("decode"), "{}", errs[0].1);
    next_turn_is_clean(&mut h, 1).await;
}

#[tokio::test]
async fn malformed_json_as_first_chunk_is_retried() {
    let mut h = Harness::start(json!({
        "faults": [{"request": 1, "kind": "malformed_chunk", "after_chunks": 0}],
        "steps": [{"text": "clean"}]
    }));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(text(&events), "clean");
}

#[tokio::test]
async fn empty_candidates_are_asked_again_then_reported() {
    let mut h = Harness::start(json!({"steps": [{"empty_candidates": true}]}));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    assert_eq!(
        h.fake.main_requests().len(),
        2,
        "one retry for an empty response"
    );
    let errs = errors(&events);
    assert_eq!(errs[0].0, ErrorKind::InvalidResponse);
    next_turn_is_clean(&mut h, 1).await;
}

#[tokio::test]
async fn empty_then_valid_response_recovers() {
    let mut h = Harness::start(json!({
        "faults": [{"request": 1, "kind": "raw_sse", "body": "data: {\"candidates\": []}\r\n\r\n"}],
        "steps": [{"text": "second try"}]
    }));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(text(&events), "second try");
}

#[tokio::test]
async fn blocked_prompt_is_reported_and_forgotten() {
    let mut h = Harness::start(json!({"steps": [{"block_reason": "SAFETY"}]}));
    let events = h.turn("something bad").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    let errs = errors(&events);
    assert_eq!(errs[0].0, ErrorKind::Blocked);
    assert!(errs[0].1.contains("SAFETY"), "{}", errs[0].1);
    assert_eq!(h.fake.main_requests().len(), 1, "a block is not retried");
    let contents = next_turn_is_clean(&mut h, 1).await;
    assert!(!contents[0].to_string().contains("something bad"));
}

#[tokio::test]
async fn malformed_function_call_is_retried_once_then_reported() {
    let mut h = Harness::start(
        json!({"steps": [{"text": "", "finish_reason": "MALFORMED_FUNCTION_CALL"}]}),
    );
    let events = h.turn("call a tool").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    assert_eq!(h.fake.main_requests().len(), 2);
    let errs = errors(&events);
    assert_eq!(errs[0].0, ErrorKind::InvalidResponse);
    assert!(
        errs[0].1.contains("malformed function call"),
        "{}",
        errs[0].1
    );
    next_turn_is_clean(&mut h, 1).await;
}

#[tokio::test]
async fn safety_and_max_tokens_finishes_are_explained() {
    for (reason, needle) in [("SAFETY", "safety"), ("MAX_TOKENS", "token limits")] {
        let mut h =
            Harness::start(json!({"steps": [{"text": "partial", "finish_reason": reason}]}));
        let events = h.turn("hi").await;
        assert_eq!(status(&events), TurnStatus::Completed);
        let finished = events.iter().find_map(|e| match e {
            Event::Finished { reason, message } => Some((reason.clone(), message.clone())),
            _ => None,
        });
        let (got, message) = finished.expect("a Finished event");
        assert_eq!(got, reason);
        assert!(message.unwrap().contains(needle));
        assert!(events.iter().any(|e| matches!(e, Event::Warning { .. })));
    }
}

#[tokio::test]
async fn invalid_api_key_is_an_auth_error() {
    let mut h = Harness::start(json!({"api_keys": ["the-right-key"], "steps": [{"text": "x"}]}));
    let events = h.turn("hi").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    assert_eq!(errors(&events)[0].0, ErrorKind::Auth);
    assert_eq!(
        h.fake.main_requests().len(),
        1,
        "auth errors are not retried"
    );
}
