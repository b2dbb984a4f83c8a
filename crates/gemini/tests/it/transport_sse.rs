//! SSE framing over real HTTP (`raw_sse` bodies with odd line endings and
//! chunking) and faithful decoding of unusual but valid answers (blocked
//! prompts, empty candidates, abnormal finish reasons, signatures).

use crate::common;

use common::*;
use gd_fake_gemini::FakeGemini;
use gd_gemini::sse::SseError;
use gd_gemini::{FinishReason, GeminiError};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A scenario whose first main request is answered with exactly `body`.
fn raw(body: &str, split_every: Option<usize>) -> Value {
    let mut fault = json!({"request": 1, "kind": "raw_sse", "body": body});
    if let Some(n) = split_every {
        fault["split_every"] = json!(n);
    }
    json!({"steps": [{"text": "second attempt"}], "faults": [fault]})
}

fn chunk(text: &str) -> String {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}]})
        .to_string()
}

fn last_chunk(text: &str) -> String {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                           "finishReason": "STOP", "index": 0}],
           "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}})
    .to_string()
}

/// Streams against `raw(body)` with one attempt and returns the result.
async fn stream_raw(body: &str, split_every: Option<usize>) -> (FakeGemini, Collected) {
    let fake = FakeGemini::start(raw(body, split_every));
    let collected = stream_main(&api_key_client(&fake, 1), "hi").await;
    (fake, collected)
}

#[tokio::test]
async fn crlf_and_lf_framing_decode_the_same() {
    let lf = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk("Hello, "),
        last_chunk("world")
    );
    let crlf = lf.replace('\n', "\r\n");
    let cr = lf.replace('\n', "\r");
    for body in [lf, crlf, cr] {
        let (_fake, collected) = stream_raw(&body, None).await;
        let texts: Vec<String> = collected.chunks().iter().map(|c| c.text()).collect();
        assert_eq!(texts, vec!["Hello, ", "world"], "body {body:?}");
        assert_eq!(
            collected.chunks()[1]
                .usage_metadata
                .map(|u| u.total_token_count),
            Some(5)
        );
        collected.ok();
    }
}

#[tokio::test]
async fn multi_line_data_is_joined() {
    // One JSON object spread over three `data:` lines (joined with "\n",
    // which is JSON whitespace), then a normal event.
    let body = format!(
        "data: {{\"candidates\": [{{\"content\":\r\ndata: {{\"role\": \"model\", \"parts\": [{{\"text\": \"multi\"}}]}},\r\ndata:\"index\": 0}}]}}\r\n\r\ndata: {}\r\n\r\n",
        last_chunk("-line")
    );
    let (_fake, collected) = stream_raw(&body, None).await;
    assert_eq!(collected.text(), "multi-line");
    assert_eq!(collected.chunks().len(), 2);
    collected.ok();
}

#[tokio::test]
async fn every_byte_in_its_own_http_chunk() {
    // Multi-byte UTF-8 characters and CRLFs are split across network chunks.
    let body = format!(
        "data: {}\r\n\r\n: keep-alive\r\n\r\ndata: {}\r\n\r\n",
        chunk("héllo "),
        last_chunk("wörld ✓ 🦀")
    );
    let (_fake, collected) = stream_raw(&body, Some(1)).await;
    assert_eq!(collected.text(), "héllo wörld ✓ 🦀");
    assert_eq!(collected.chunks().len(), 2);
    collected.ok();
}

#[tokio::test]
async fn every_split_size_decodes_the_same() {
    let body = format!(
        "data: {}\r\n\r\ndata: {}\n\ndata: {}",
        chunk("a"),
        chunk("é"),
        last_chunk("z")
    );
    for split in [2, 3, 7, 64] {
        let (_fake, collected) = stream_raw(&body, Some(split)).await;
        assert_eq!(collected.text(), "aéz", "split every {split}");
        collected.ok();
    }
}

#[tokio::test]
async fn trailing_event_without_blank_line_is_delivered() {
    for tail in ["", "\n", "\r\n"] {
        let body = format!(
            "data: {}\n\ndata: {}{tail}",
            chunk("first "),
            last_chunk("last")
        );
        let (_fake, collected) = stream_raw(&body, None).await;
        assert_eq!(collected.text(), "first last", "tail {tail:?}");
        assert_eq!(
            collected.chunks()[1].finish_reason(),
            Some(&FinishReason::Stop)
        );
        collected.ok();
    }
}

#[tokio::test]
async fn sse_comments_are_ignored() {
    let body = format!(
        ": hello\n\ndata: {}\n:ping\n\n: bye\n\n",
        last_chunk("commented")
    );
    let (_fake, collected) = stream_raw(&body, None).await;
    assert_eq!(collected.text(), "commented");
    assert_eq!(collected.chunks().len(), 1);
    collected.ok();
}

#[tokio::test]
async fn unexpected_line_is_an_sse_error_retried_before_content() {
    let body = format!("event: x\ndata: {}\n\n", last_chunk("never"));
    // One attempt: the error itself.
    let (fake, collected) = stream_raw(&body, None).await;
    assert!(collected.events.is_empty());
    assert!(
        matches!(collected.err(), GeminiError::Sse(SseError::UnexpectedLine(line)) if line == "event: x"),
        "{:?}",
        collected.err()
    );
    assert_eq!(fake.main_requests().len(), 1);

    // With retries it is retried, and the next attempt succeeds.
    let fake = FakeGemini::start(raw(&body, None));
    let collected = stream_main(&api_key_client(&fake, 2), "hi").await;
    assert_eq!(collected.retries().len(), 1);
    assert!(
        collected.retries()[0]
            .reason
            .contains("Unexpected line format in response: event: x")
    );
    assert_eq!(collected.text(), "second attempt");
    collected.ok();
    assert_eq!(fake.main_requests().len(), 2);
}

#[tokio::test]
async fn unexpected_line_after_content_interrupts_whatever_the_chunking() {
    // The good event and the bad line in one HTTP chunk, or byte by byte:
    // either way the event is delivered, then the stream is interrupted.
    let body = format!("data: {}\n\n<html>oops</html>\n", chunk("partial"));
    for split in [None, Some(1), Some(10)] {
        let fake = FakeGemini::start(raw(&body, split));
        let collected = stream_main(&api_key_client(&fake, 3), "hi").await;
        assert_eq!(collected.text(), "partial", "split {split:?}");
        assert!(
            collected.retries().is_empty(),
            "split {split:?}: {:?}",
            collected.events
        );
        let GeminiError::StreamInterrupted(message) = collected.err() else {
            panic!(
                "split {split:?}: expected StreamInterrupted, got {:?}",
                collected.err()
            );
        };
        assert!(message.contains("<html>oops</html>"), "{message}");
        assert_eq!(fake.main_requests().len(), 1);
    }
}

#[tokio::test]
async fn bad_event_then_bad_line_in_one_chunk_retries_cleanly() {
    // A retryable error on an event, with a malformed line later in the
    // same network chunk: one retry, and the stale line does not count
    // against the next attempt.
    let body = "data: {not json}\n\nevent: x\n\n";
    let fake = FakeGemini::start(raw(body, None));
    let collected = stream_main(&api_key_client(&fake, 2), "hi").await;
    assert_eq!(collected.retries().len(), 1, "{:?}", collected.events);
    assert!(collected.retries()[0].reason.contains("could not decode"));
    assert_eq!(collected.text(), "second attempt");
    collected.ok();
    assert_eq!(fake.main_requests().len(), 2);
}

#[tokio::test]
async fn in_stream_error_object_is_an_api_error() {
    let error_event = json!({"error": {"code": 400, "message": "Request contains an invalid argument.",
                                       "status": "INVALID_ARGUMENT"}});
    let body = format!("data: {error_event}\n\n");
    let (fake, collected) = stream_raw(&body, None).await;
    let GeminiError::Api(api) = collected.err() else {
        panic!("expected Api error, got {:?}", collected.err());
    };
    assert_eq!(api.status, 400);
    assert_eq!(api.status_text.as_deref(), Some("INVALID_ARGUMENT"));
    assert_eq!(api.message, "Request contains an invalid argument.");
    assert_eq!(fake.main_requests().len(), 1);

    // A retryable in-stream error (503) before content is retried.
    let error_event = json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}});
    let fake = FakeGemini::start(raw(&format!("data: {error_event}\n\n"), None));
    let collected = stream_main(&api_key_client(&fake, 2), "hi").await;
    assert_eq!(collected.retries().len(), 1);
    assert!(collected.retries()[0].reason.contains("overloaded"));
    assert_eq!(collected.text(), "second attempt");

    // After content, it interrupts the stream.
    let body = format!("data: {}\n\ndata: {error_event}\n\n", chunk("so far"));
    let fake = FakeGemini::start(raw(&body, None));
    let collected = stream_main(&api_key_client(&fake, 3), "hi").await;
    assert_eq!(collected.text(), "so far");
    let GeminiError::StreamInterrupted(message) = collected.err() else {
        panic!("expected StreamInterrupted, got {:?}", collected.err());
    };
    assert!(message.contains("overloaded"), "{message}");
    assert_eq!(fake.main_requests().len(), 1);
}

#[tokio::test]
async fn blocked_prompt_decodes_without_error() {
    let fake = FakeGemini::start(json!({"steps": [{"block_reason": "PROHIBITED_CONTENT"}]}));
    let collected = stream_main(&api_key_client(&fake, 3), "hi").await;
    let chunks = collected.chunks();
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].block_reason(), Some("PROHIBITED_CONTENT"));
    assert!(chunks[0].candidates.is_empty());
    assert!(!chunks[0].has_parts());
    assert!(chunks[0].usage_metadata.is_some());
    collected.ok();
    assert_eq!(fake.main_requests().len(), 1, "not retried");
}

#[tokio::test]
async fn empty_candidates_decode_without_error() {
    let fake = FakeGemini::start(json!({"steps": [{"text": "x", "empty_candidates": true}]}));
    let collected = stream_main(&api_key_client(&fake, 3), "hi").await;
    let chunks = collected.chunks();
    assert_eq!(chunks.len(), 1);
    assert!(chunks[0].candidates.is_empty());
    assert_eq!(chunks[0].block_reason(), None);
    assert_eq!(chunks[0].finish_reason(), None);
    assert_eq!(chunks[0].text(), "");
    collected.ok();
    assert_eq!(fake.main_requests().len(), 1);
}

#[tokio::test]
async fn abnormal_finish_reasons_are_decoded_faithfully() {
    let cases = [
        (
            "MALFORMED_FUNCTION_CALL",
            FinishReason::MalformedFunctionCall,
        ),
        ("SAFETY", FinishReason::Safety),
        ("MAX_TOKENS", FinishReason::MaxTokens),
        ("SOMETHING_NEW", FinishReason::Other("SOMETHING_NEW".into())),
    ];
    for (wire, expected) in cases {
        let fake = FakeGemini::start(
            json!({"steps": [{"text": "partial answer", "chunk_chars": 8, "finish_reason": wire}]}),
        );
        let client = api_key_client(&fake, 3);
        let collected = stream_main(&client, "hi").await;
        let chunks = collected.chunks();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].finish_reason(), None);
        assert_eq!(chunks[1].finish_reason(), Some(&expected), "{wire}");
        assert_eq!(collected.text(), "partial answer");
        collected.ok();

        let response = client
            .generate(MODEL, &main_request("hi"), &meta())
            .await
            .unwrap();
        assert_eq!(response.finish_reason(), Some(&expected));
        assert_eq!(fake.main_requests().len(), 2, "{wire}: nothing retried");
    }
}

#[tokio::test]
async fn function_calls_keep_missing_ids_and_signatures() {
    let fake = FakeGemini::start(json!({"steps": [{
        "text": "Let me look.",
        "chunk_chars": 4,
        "functionCalls": [
            {"name": "list_directory", "args": {"dir_path": "/tmp/x"}, "thoughtSignature": "c2lnbmF0dXJl"},
            {"name": "read_file", "args": {"path": "a.txt"}, "id": "call-7"}
        ]
    }]}));
    let collected = stream_main(&api_key_client(&fake, 1), "hi").await;
    assert_eq!(collected.text(), "Let me look.");
    let chunks = collected.chunks();
    assert_eq!(chunks.len(), 3);
    // The calls ride in the last chunk, after its text piece.
    let last = chunks[2];
    let parts = &last.content().unwrap().parts;
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0].text.as_deref(), Some("ook."));
    let calls = last.function_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].name, "list_directory");
    assert_eq!(calls[0].id, None);
    assert_eq!(calls[0].args, Some(json!({"dir_path": "/tmp/x"})));
    assert_eq!(parts[1].thought_signature.as_deref(), Some("c2lnbmF0dXJl"));
    assert_eq!(calls[1].name, "read_file");
    assert_eq!(calls[1].id.as_deref(), Some("call-7"));
    assert_eq!(parts[2].thought_signature, None);
    // Re-encoding the part gives back exactly what the server sent.
    assert_eq!(
        serde_json::to_value(&parts[1]).unwrap(),
        json!({"functionCall": {"name": "list_directory", "args": {"dir_path": "/tmp/x"}},
               "thoughtSignature": "c2lnbmF0dXJl"})
    );
    collected.ok();
}

#[tokio::test]
async fn empty_stream_ends_without_chunks() {
    // A 200 with no events at all: the transport reports nothing (deciding
    // that an empty answer is invalid is up to the caller).
    let (fake, collected) = stream_raw("", None).await;
    assert!(collected.ok().is_empty());
    assert_eq!(fake.main_requests().len(), 1);
}
