//! Every fault kind, checked on the wire.

use crate::common;

use common::*;
use futures::StreamExt;
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn long_text_scenario(extra: Value) -> Value {
    let mut s =
        json!({"steps": [{"text": "abcdefghijklmnopqrstuvwxyz0123456789"}], "chunk_chars": 10});
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    s
}

#[test]
fn fail_first_sends_error_then_recovers() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "ok"}],
        "fail_first": {"status": 429, "times": 2, "retry_delay": "1s", "retry_after": 2, "message": "slow down"}
    }));
    for _ in 0..2 {
        let resp = raw_post(fake.port(), STREAM_PATH, &main_body("hi"));
        assert_eq!(resp.status, 429);
        assert_eq!(resp.header("retry-after"), Some("2"));
        assert_eq!(
            resp.header("content-type"),
            Some("application/json; charset=UTF-8")
        );
        assert_eq!(
            resp.json(),
            json!({"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED",
                "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}]}})
        );
    }
    let ok = raw_post(fake.port(), STREAM_PATH, &main_body("hi"));
    assert_eq!(ok.status, 200);
    assert_eq!(all_parts(&ok.sse()), vec![json!({"text": "ok"})]);
    let recs = fake.main_requests();
    assert_eq!(recs[0].fault.as_deref(), Some("http_error:429"));
    assert_eq!(recs[0].fault_status, Some(429));
    assert_eq!(recs[0].source.as_deref(), Some("fault"));
    assert_eq!(recs[2].fault, None);
    // Utility requests are never faulted.
    let util = raw_post(fake.port(), GENERATE_PATH, &json!({"contents": []}));
    assert_eq!(util.status, 200);
}

#[test]
fn fail_always_fails_every_main_request() {
    let fake = FakeGemini::start(json!({"fail_always": {"status": 503}}));
    for _ in 0..3 {
        let resp = raw_post(fake.port(), GENERATE_PATH, &main_body("hi"));
        assert_eq!(resp.status, 503);
        assert_eq!(resp.json()["error"]["status"], "UNAVAILABLE");
        assert_eq!(resp.json()["error"]["message"], "fake error 503");
        assert!(resp.json()["error"].get("details").is_none());
    }
}

#[test]
fn faults_target_the_nth_main_request_counting_faulted_ones() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "fine"}],
        "faults": [
            {"request": 2, "kind": "http_error", "status": 500, "body": "<html>oops</html>"},
            {"request": [3, 5], "kind": "http_error", "status": 400, "status_text": "FAILED_PRECONDITION"}
        ]
    }));
    let statuses: Vec<u16> = (0..5)
        .map(|_| raw_post(fake.port(), GENERATE_PATH, &main_body("x")).status)
        .collect();
    assert_eq!(statuses, vec![200, 500, 400, 200, 400]);
    let reset = raw_post(fake.port(), "/__admin/reset", &json!({}));
    assert_eq!(reset.status, 200);
    // After a reset the count starts again: request 2 gets the raw body.
    raw_post(fake.port(), GENERATE_PATH, &main_body("x"));
    let second = raw_post(fake.port(), GENERATE_PATH, &main_body("x"));
    assert_eq!(second.status, 500);
    assert_eq!(second.text(), "<html>oops</html>");
    let third = raw_post(fake.port(), GENERATE_PATH, &main_body("x"));
    assert_eq!(third.json()["error"]["status"], "FAILED_PRECONDITION");
    assert_eq!(fake.requests()[1].source.as_deref(), Some("fault"));
}

#[test]
fn cut_stream_drops_the_connection_mid_event() {
    let fake = FakeGemini::start(long_text_scenario(json!({
        "faults": [{"request": 1, "kind": "cut_stream", "after_chunks": 2, "partial_bytes": 15}]
    })));
    let resp = raw_post(fake.port(), STREAM_PATH, &main_body("hi"));
    assert_eq!(resp.status, 200);
    let chunked = resp.chunked();
    assert!(
        !chunked.terminated,
        "the final zero-length chunk must not be sent"
    );
    assert!(!resp.raw_body.ends_with(b"0\r\n\r\n"));
    assert_eq!(
        chunked.chunks.len(),
        3,
        "two whole events and the partial one"
    );
    let events = sse_events(&String::from_utf8(chunked.chunks[..2].concat()).unwrap());
    assert_eq!(
        all_parts(&events),
        vec![json!({"text": "abcdefghij"}), json!({"text": "klmnopqrst"})]
    );
    assert_eq!(
        chunked.chunks[2],
        b"data: {\"candida".to_vec(),
        "exactly partial_bytes = 15 bytes"
    );
    assert_eq!(fake.requests()[0].fault.as_deref(), Some("cut_stream"));
    assert_eq!(fake.requests()[0].sse_chunks, Some(4));
}

#[tokio::test]
async fn cut_stream_is_a_body_error_for_an_http_client() {
    let fake = FakeGemini::start(long_text_scenario(json!({
        "faults": [{"request": 1, "kind": "cut_stream", "after_chunks": 1}]
    })));
    let resp = client()
        .post(format!("{}{STREAM_PATH}", fake.base_url()))
        .json(&main_body("hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut stream = resp.bytes_stream();
    let mut received = Vec::new();
    let mut error = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(bytes) => received.extend_from_slice(&bytes),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    assert!(
        error.is_some(),
        "expected a body error, got a clean end after {received:?}"
    );
    let text = String::from_utf8(received).unwrap();
    assert!(text.starts_with("data: {"), "{text}");
    // One whole event plus the 20 default partial bytes of the next.
    let whole = text.find("\r\n\r\n").unwrap() + 4;
    assert_eq!(text.len() - whole, 20);
}

#[test]
fn cut_stream_on_generate_content_sends_less_than_announced() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "a non-streamed answer"}],
        "faults": [{"request": 1, "kind": "cut_stream", "partial_bytes": 30}]
    }));
    let resp = raw_post(fake.port(), GENERATE_PATH, &main_body("hi"));
    assert_eq!(resp.status, 200);
    let announced: usize = resp.header("content-length").unwrap().parse().unwrap();
    assert_eq!(resp.raw_body.len(), 30);
    assert!(announced > 30);
}

#[test]
fn malformed_chunk_sends_invalid_json_then_ends_cleanly() {
    let fake = FakeGemini::start(long_text_scenario(json!({
        "faults": [{"request": 1, "kind": "malformed_chunk", "after_chunks": 1, "garbage": "!!garbage"}]
    })));
    let resp = raw_post(fake.port(), STREAM_PATH, &main_body("hi"));
    let chunked = resp.chunked();
    assert!(chunked.terminated, "stream must end normally");
    assert_eq!(chunked.chunks.len(), 2);
    let good = String::from_utf8(chunked.chunks[0].clone()).unwrap();
    assert_eq!(
        all_parts(&sse_events(&good)),
        vec![json!({"text": "abcdefghij"})]
    );
    assert_eq!(
        chunked.chunks[1],
        b"data: {\"candidates\": [!!garbage\r\n\r\n".to_vec()
    );
    let payload = &chunked.chunks[1][6..];
    assert!(serde_json::from_slice::<Value>(payload).is_err());
}

#[test]
fn raw_sse_sends_exact_bytes_in_small_chunks() {
    let body =
        "data: {\"a\": 1}\n\n: comment\nevent: x\ndata: {\"b\":\ndata: 2}\r\n\r\ndata: {\"c\": 3}";
    let fake = FakeGemini::start(json!({
        "faults": [{"request": 1, "kind": "raw_sse", "body": body, "split_every": 7}]
    }));
    let resp = raw_post(fake.port(), STREAM_PATH, &main_body("hi"));
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    let chunked = resp.chunked();
    assert!(chunked.terminated);
    assert_eq!(chunked.chunks.concat(), body.as_bytes());
    assert!(chunked.chunks.iter().all(|c| c.len() <= 7));
    assert_eq!(chunked.chunks.len(), body.len().div_ceil(7));
    let rec = &fake.requests()[0];
    assert_eq!(
        (rec.fault.as_deref(), rec.source.as_deref()),
        (Some("raw_sse"), Some("fault"))
    );
}

#[tokio::test]
async fn hang_never_answers_but_is_recorded() {
    let fake = FakeGemini::start(json!({"faults": [{"request": 1, "kind": "hang"}]}));
    let result = client()
        .post(format!("{}{STREAM_PATH}", fake.base_url()))
        .timeout(Duration::from_millis(300))
        .json(&main_body("hi"))
        .send()
        .await;
    let err = result.expect_err("a hung request cannot succeed");
    assert!(err.is_timeout(), "{err:?}");
    assert!(fake.wait_for_requests(1, Duration::from_secs(5)));
    assert_eq!(fake.requests()[0].fault.as_deref(), Some("hang"));
    // The server is still fine for the next request.
    let ok = client()
        .post(format!("{}{STREAM_PATH}", fake.base_url()))
        .json(&main_body("hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test]
async fn hang_after_chunks_stalls_mid_stream() {
    let fake = FakeGemini::start(long_text_scenario(json!({
        "faults": [{"request": 1, "kind": "hang", "hang_after_chunks": 2}]
    })));
    let resp = client()
        .post(format!("{}{STREAM_PATH}", fake.base_url()))
        .json(&main_body("hi"))
        .send()
        .await
        .unwrap();
    let mut stream = resp.bytes_stream();
    let mut received = Vec::new();
    while received.windows(4).filter(|w| w == b"\r\n\r\n").count() < 2 {
        let chunk = stream.next().await.expect("more data").expect("no error");
        received.extend_from_slice(&chunk);
    }
    let events = sse_events(&String::from_utf8(received).unwrap());
    assert_eq!(events.len(), 2);
    let next = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
    assert!(
        next.is_err(),
        "nothing may arrive after the stall point: {next:?}"
    );
    assert_eq!(
        fake.requests()[0].fault.as_deref(),
        Some("hang_after_chunks:2")
    );
}

#[test]
fn delays_apply_before_the_answer() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "slow", "delay_ms": 150}],
        "faults": [{"request": 2, "kind": "http_error", "status": 500, "delay_ms": 200}]
    }));
    let t = Instant::now();
    assert_eq!(
        raw_post(fake.port(), STREAM_PATH, &main_body("a")).status,
        200
    );
    assert!(
        t.elapsed() >= Duration::from_millis(150),
        "{:?}",
        t.elapsed()
    );
    let t = Instant::now();
    assert_eq!(
        raw_post(fake.port(), STREAM_PATH, &main_body("a")).status,
        500
    );
    assert!(
        t.elapsed() >= Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn step_extensions_shape_the_reply() {
    let fake = FakeGemini::start(json!({"steps": [{
        "thought": "thinking",
        "text": "0123456789abcdef",
        "functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}, "id": "c1", "thoughtSignature": "sig"}],
        "finish_reason": "MAX_TOKENS",
        "chunk_chars": 6,
        "usage": {"promptTokenCount": 1, "candidatesTokenCount": 2, "totalTokenCount": 3}
    }]}));
    let events = raw_post(fake.port(), STREAM_PATH, &main_body("x")).sse();
    assert_eq!(events.len(), 3);
    assert_eq!(
        events[0]["candidates"][0]["content"]["parts"],
        json!([{"text": "thinking", "thought": true}, {"text": "012345"}])
    );
    assert_eq!(
        events[1]["candidates"][0]["content"]["parts"],
        json!([{"text": "6789ab"}])
    );
    assert_eq!(
        events[2]["candidates"][0]["content"]["parts"],
        json!([{"text": "cdef"}, {"functionCall": {"name": "list_directory", "args": {"dir_path": "."}, "id": "c1"}, "thoughtSignature": "sig"}])
    );
    for ev in &events[..2] {
        assert!(ev.get("usageMetadata").is_none());
        assert!(ev["candidates"][0].get("finishReason").is_none());
    }
    assert_eq!(events[2]["candidates"][0]["finishReason"], "MAX_TOKENS");
    assert_eq!(
        events[2]["usageMetadata"],
        json!({"promptTokenCount": 1, "candidatesTokenCount": 2, "totalTokenCount": 3})
    );
    let ids: Vec<&Value> = events.iter().map(|e| &e["responseId"]).collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "one responseId per reply"
    );
}

#[test]
fn block_reason_and_empty_candidates() {
    let fake = FakeGemini::start(json!({"steps": [{"block_reason": "SAFETY"}]}));
    let ev = raw_post(fake.port(), STREAM_PATH, &main_body("x")).sse();
    assert_eq!(ev.len(), 1);
    assert!(ev[0].get("candidates").is_none());
    assert_eq!(ev[0]["promptFeedback"], json!({"blockReason": "SAFETY"}));
    assert!(ev[0]["usageMetadata"]["promptTokenCount"].as_u64().unwrap() > 0);

    fake.reset(json!({"steps": [{"empty_candidates": true}]}), &[]);
    let resp = raw_post(fake.port(), GENERATE_PATH, &main_body("x")).json();
    assert_eq!(resp["candidates"], json!([]));
    assert!(resp.get("usageMetadata").is_some());
}

#[test]
fn api_keys_reject_wrong_keys_like_the_real_api() {
    let fake = FakeGemini::start(json!({"api_keys": ["good"]}));
    let post = |key: &str| {
        let body = serde_json::to_vec(&main_body("x")).unwrap();
        raw_request(
            fake.port(),
            "POST",
            GENERATE_PATH,
            &[("x-goog-api-key", key)],
            &body,
        )
    };
    let bad = post("bad");
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.json()["error"]["details"][0]["reason"],
        "API_KEY_INVALID"
    );
    assert_eq!(post("good").status, 200);
    let listed = raw_request(fake.port(), "GET", "/v1beta/models?key=good", &[], b"");
    assert_eq!(listed.status, 200);
    let unlisted = raw_request(fake.port(), "GET", "/v1beta/models", &[], b"");
    assert_eq!(unlisted.status, 400);
    let recs = fake.requests();
    assert_eq!(recs[0].fault.as_deref(), Some("invalid_api_key"));
    // A rejected request is not a main turn for fault numbering.
    assert_eq!(recs[1].step, Some(0));
}

#[test]
fn sub_millisecond_chunk_delays_keep_their_average_rate_and_the_end_is_recorded() {
    // 2,000 events 0.25 ms apart: 0.5 s on schedule. Without catching up on the timer's
    // millisecond ticks every pause would take at least 1 ms (2 s in all).
    let text = "x".repeat(2_000);
    let fake = FakeGemini::start(json!({
        "steps": [{"text": text}], "chunk_chars": 1, "chunk_delay_ms": 0.25
    }));
    let started = Instant::now();
    let resp = raw_post(fake.port(), STREAM_PATH, &main_body("hi"));
    let elapsed = started.elapsed();
    assert_eq!(resp.status, 200);
    let events = resp.sse();
    assert_eq!(events.len(), 2_000);
    assert!(
        elapsed < Duration::from_millis(1_500) && elapsed >= Duration::from_millis(450),
        "streamed in {elapsed:?}"
    );
    let rec = &fake.main_requests()[0];
    let end = rec
        .stream_end_ts
        .expect("the end of the stream is recorded");
    let span = end - rec.ts;
    assert!((0.45..1.5).contains(&span), "ts {} .. end {end}", rec.ts);
}

#[test]
fn streams_cut_by_a_fault_have_no_end_mark() {
    let fake = FakeGemini::start(long_text_scenario(
        json!({"faults": [{"request": 1, "kind": "cut_stream", "after_chunks": 1}]}),
    ));
    let _ = raw_post(fake.port(), STREAM_PATH, &main_body("hi"));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(fake.main_requests()[0].stream_end_ts, None);
}
