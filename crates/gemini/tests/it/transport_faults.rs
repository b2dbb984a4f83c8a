//! Retries and failures against the fake server's injected faults: HTTP
//! errors, server-requested delays, cut and malformed streams, refused
//! connections, hangs and cancellation.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use futures::StreamExt;
use gd_fake_gemini::FakeGemini;
use gd_gemini::{ClientOptions, GeminiError, RetryPolicy, StreamEvent};
use pretty_assertions::assert_eq;
use serde_json::json;

fn api_status(error: &GeminiError) -> u16 {
    match error {
        GeminiError::Api(e) => e.status,
        other => panic!("expected an Api error, got {other:?}"),
    }
}

#[tokio::test]
async fn rate_limit_then_success_yields_one_retry_notice() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": TEXT, "chunk_chars": 8}],
        "fail_first": {"status": 429, "times": 1, "message": "Resource has been exhausted"}
    }));
    let collected = stream_main(&api_key_client(&fake, 3), "hi").await;
    let events = collected.ok();
    let StreamEvent::Retry(notice) = &events[0] else {
        panic!("first event should be the retry notice: {events:?}");
    };
    assert_eq!(notice.attempt, 2);
    assert_eq!(notice.max_attempts, 3);
    // No server delay: the policy's first backoff (2 ms, no jitter).
    assert_eq!(notice.delay, Duration::from_millis(2));
    assert!(notice.reason.contains("429"), "{}", notice.reason);
    assert!(
        notice.reason.contains("Resource has been exhausted"),
        "{}",
        notice.reason
    );
    let rest = &events[1..];
    assert!(
        rest.iter().all(|e| matches!(e, StreamEvent::Chunk(_))),
        "{rest:?}"
    );
    let text: String = rest
        .iter()
        .map(|e| match e {
            StreamEvent::Chunk(c) => c.text(),
            StreamEvent::Retry(_) => unreachable!(),
        })
        .collect();
    assert_eq!(text, TEXT);
    let recs = fake.main_requests();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].fault.as_deref(), Some("http_error:429"));
    assert_eq!(recs[1].fault, None);
    // The retry sends the same body.
    assert_eq!(recs[0].body, recs[1].body);
}

#[tokio::test]
async fn retry_info_delay_is_honoured_exactly_without_jitter() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "ok"}],
        "fail_first": {"status": 429, "retry_delay": "0.2s"}
    }));
    let mut opts = options(3);
    // Lots of jitter and a tiny cap: neither applies to a server delay.
    opts.retry.jitter = 0.9;
    opts.retry.max_delay = Duration::from_millis(1);
    let client = client_at(&fake.base_url(), opts);
    let started = Instant::now();
    let collected = stream_main(&client, "hi").await;
    let elapsed = started.elapsed();
    let retries = collected.retries();
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0].delay, Duration::from_millis(200));
    assert_eq!(collected.text(), "ok");
    assert!(
        elapsed >= Duration::from_millis(200),
        "waited only {elapsed:?}"
    );
    assert_eq!(fake.main_requests().len(), 2);
}

#[tokio::test]
async fn retry_after_header_is_honoured_exactly() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "ok"}],
        "fail_first": {"status": 503, "retry_after": "0.15"}
    }));
    let mut opts = options(2);
    opts.retry.jitter = 0.9;
    let client = client_at(&fake.base_url(), opts);
    let collected = stream_main(&client, "hi").await;
    let retries = collected.retries();
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0].delay, Duration::from_millis(150));
    assert_eq!(collected.text(), "ok");

    // generate() honours it too (it has no notices, so measure the wait).
    fake.reset(
        json!({"steps": [{"text": "ok"}], "fail_first": {"status": 503, "retry_after": "0.15"}}),
        &[],
    );
    let started = Instant::now();
    let response = client
        .generate(MODEL, &main_request("hi"), &meta())
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(response.text(), "ok");
    assert_eq!(fake.main_requests().len(), 2);
}

#[tokio::test]
async fn server_delay_above_the_limit_is_not_waited_out() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "never"}],
        "fail_always": {"status": 429, "retry_delay": "3600s", "message": "Quota exceeded for the day"}
    }));
    let client = api_key_client(&fake, 5);
    let started = Instant::now();
    let collected = stream_main(&client, "hi").await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(
        collected.events.is_empty(),
        "no retry notice: {:?}",
        collected.events
    );
    let error = collected.err();
    // First attempt, so not wrapped in Exhausted.
    let GeminiError::Api(api) = error else {
        panic!("expected Api error, got {error:?}");
    };
    assert_eq!(api.status, 429);
    assert_eq!(api.retry_delay, Some(Duration::from_secs(3600)));
    assert_eq!(api.status_text.as_deref(), Some("RESOURCE_EXHAUSTED"));
    assert_eq!(api.message, "Quota exceeded for the day");
    assert_eq!(fake.main_requests().len(), 1);

    // The same for generate().
    let started = Instant::now();
    let error = client
        .generate(MODEL, &main_request("hi"), &meta())
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(api_status(&error), 429);
    assert_eq!(fake.main_requests().len(), 2);
}

/// A 429 or 503 asking for more seconds than a `Duration` holds (a broken
/// proxy's `Retry-After`, or a `RetryInfo.retryDelay`) once panicked the
/// client ("cannot convert float seconds to Duration") and so ended the
/// session. It is capped, and, being beyond what the real policy waits
/// out, reported at once as the server's error.
#[tokio::test]
async fn an_absurd_server_delay_is_reported_without_panicking_or_waiting() {
    const HUGE: &str = "99999999999999999999";
    let cases = [
        json!({"status": 429, "retry_after": HUGE}),
        json!({"status": 503, "retry_after": HUGE}),
        json!({"status": 429, "retry_delay": format!("{HUGE}s")}),
        json!({"status": 503, "retry_delay": format!("{HUGE}s")}),
    ];
    for fail in cases {
        let status = fail["status"].as_u64().unwrap() as u16;
        let fake = FakeGemini::start(json!({"steps": [{"text": "never"}], "fail_always": fail}));
        let mut opts = options(5);
        opts.retry.max_server_delay = RetryPolicy::default().max_server_delay;
        let client = client_at(&fake.base_url(), opts);
        let started = Instant::now();
        let collected = stream_main(&client, "hi").await;
        assert!(started.elapsed() < Duration::from_secs(2), "{fail}");
        assert!(
            collected.events.is_empty(),
            "{fail}: {:?}",
            collected.events
        );
        let GeminiError::Api(api) = collected.err() else {
            panic!(
                "{fail}: expected the server's error, got {:?}",
                collected.err()
            );
        };
        assert_eq!(api.status, status, "{fail}");
        assert_eq!(api.retry_delay, Some(gd_gemini::MAX_RETRY_DELAY), "{fail}");
        assert_eq!(fake.main_requests().len(), 1, "{fail}");

        let error = client
            .generate(MODEL, &main_request("hi"), &meta())
            .await
            .unwrap_err();
        assert_eq!(api_status(&error), status, "{fail}");
        assert_eq!(fake.main_requests().len(), 2, "{fail}");
    }
}

#[tokio::test]
async fn server_errors_forever_exhaust_exactly_max_attempts() {
    let fake =
        FakeGemini::start(json!({"fail_always": {"status": 500, "message": "internal boom"}}));
    let client = api_key_client(&fake, 4);
    let collected = stream_main(&client, "hi").await;
    let attempts: Vec<u32> = collected.retries().iter().map(|r| r.attempt).collect();
    assert_eq!(attempts, vec![2, 3, 4]);
    // Exponential backoff from 2 ms, capped at 10 ms, no jitter.
    let delays: Vec<Duration> = collected.retries().iter().map(|r| r.delay).collect();
    assert_eq!(
        delays,
        vec![
            Duration::from_millis(2),
            Duration::from_millis(4),
            Duration::from_millis(8)
        ]
    );
    match collected.err() {
        GeminiError::Exhausted { attempts, source } => {
            assert_eq!(*attempts, 4);
            let GeminiError::Api(api) = &**source else {
                panic!("source should be Api: {source:?}");
            };
            assert_eq!(api.status, 500);
            assert_eq!(api.message, "internal boom");
        }
        other => panic!("expected Exhausted, got {other:?}"),
    }
    assert_eq!(collected.err().api_status(), Some(500));
    assert!(!collected.err().is_auth());
    assert_eq!(fake.main_requests().len(), 4);

    fake.reset(json!({"fail_always": {"status": 500}}), &[]);
    let error = client
        .generate(MODEL, &main_request("hi"), &meta())
        .await
        .unwrap_err();
    assert!(
        matches!(error, GeminiError::Exhausted { attempts: 4, .. }),
        "{error:?}"
    );
    assert_eq!(fake.main_requests().len(), 4);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    for (status, message) in [
        (400, "Invalid JSON payload received."),
        (404, "models/nope is not found"),
    ] {
        let fake =
            FakeGemini::start(json!({"fail_always": {"status": status, "message": message}}));
        let client = api_key_client(&fake, 5);
        let collected = stream_main(&client, "hi").await;
        assert!(collected.events.is_empty(), "{:?}", collected.events);
        let GeminiError::Api(api) = collected.err() else {
            panic!("expected Api error, got {:?}", collected.err());
        };
        assert_eq!(api.status, status);
        assert_eq!(api.message, message);
        assert!(!collected.err().is_auth());
        assert_eq!(fake.main_requests().len(), 1);

        let error = client
            .generate(MODEL, &main_request("hi"), &meta())
            .await
            .unwrap_err();
        assert_eq!(api_status(&error), status);
        assert_eq!(fake.main_requests().len(), 2);
    }
}

#[tokio::test]
async fn invalid_api_key_is_an_auth_error_and_not_retried() {
    let fake = FakeGemini::start(json!({"api_keys": ["the-right-key"], "steps": [{"text": "ok"}]}));
    let collected = stream_main(&api_key_client(&fake, 5), "hi").await;
    let error = collected.err();
    assert!(error.is_auth(), "{error}");
    let GeminiError::Api(api) = error else {
        panic!("expected Api error, got {error:?}");
    };
    assert_eq!(api.status, 400);
    assert_eq!(api.reason.as_deref(), Some("API_KEY_INVALID"));
    assert!(api.message.contains("API key not valid"));
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(fake.requests()[0].fault.as_deref(), Some("invalid_api_key"));
}

#[tokio::test]
async fn non_json_error_body_keeps_the_text() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "ok"}],
        "faults": [{"request": 1, "kind": "http_error", "status": 502, "body": "<html>502 Bad Gateway</html>"}]
    }));
    let collected = stream_main(&api_key_client(&fake, 1), "hi").await;
    let GeminiError::Api(api) = collected.err() else {
        panic!("expected Api error, got {:?}", collected.err());
    };
    assert_eq!(api.status, 502);
    assert!(api.message.contains("502 Bad Gateway"), "{}", api.message);
    assert_eq!(api.status_text, None);
}

#[tokio::test]
async fn stream_cut_before_content_is_retried_without_duplicates() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": TEXT, "chunk_chars": 5}],
        "faults": [{"request": 1, "kind": "cut_stream", "after_chunks": 0, "partial_bytes": 30}]
    }));
    let collected = stream_main(&api_key_client(&fake, 3), "hi").await;
    let events = collected.ok();
    let StreamEvent::Retry(notice) = &events[0] else {
        panic!("the cut attempt must show only as a retry: {events:?}");
    };
    assert_eq!(notice.attempt, 2);
    assert!(notice.reason.contains("network error"), "{}", notice.reason);
    let pieces: Vec<String> = events[1..]
        .iter()
        .map(|e| match e {
            StreamEvent::Chunk(c) => c.text(),
            StreamEvent::Retry(r) => panic!("second retry {r:?}"),
        })
        .collect();
    assert_eq!(pieces.len(), 6);
    assert_eq!(pieces.concat(), TEXT, "each piece exactly once");
    let recs = fake.main_requests();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].fault.as_deref(), Some("cut_stream"));
}

#[tokio::test]
async fn stream_cut_after_content_is_interrupted_not_retried() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": TEXT, "chunk_chars": 5}],
        "faults": [{"request": 1, "kind": "cut_stream", "after_chunks": 2}]
    }));
    let collected = stream_main(&api_key_client(&fake, 5), "hi").await;
    assert!(collected.retries().is_empty(), "{:?}", collected.events);
    let pieces: Vec<String> = collected.chunks().iter().map(|c| c.text()).collect();
    assert_eq!(pieces, vec!["The q", "uick "]);
    let error = collected.err();
    let GeminiError::StreamInterrupted(message) = error else {
        panic!("expected StreamInterrupted, got {error:?}");
    };
    assert!(message.contains("network error"), "{message}");
    assert!(!error.is_retryable());
    assert_eq!(fake.main_requests().len(), 1);
}

#[tokio::test]
async fn malformed_chunk_after_content_interrupts_the_stream() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": TEXT, "chunk_chars": 5}],
        "faults": [{"request": 1, "kind": "malformed_chunk", "after_chunks": 3}]
    }));
    let collected = stream_main(&api_key_client(&fake, 5), "hi").await;
    assert_eq!(collected.text(), "The quick brown");
    assert!(collected.retries().is_empty());
    let GeminiError::StreamInterrupted(message) = collected.err() else {
        panic!("expected StreamInterrupted, got {:?}", collected.err());
    };
    assert!(message.contains("could not decode"), "{message}");
    assert!(
        message.contains("not json at all"),
        "the snippet is shown: {message}"
    );
    assert_eq!(fake.main_requests().len(), 1);
}

#[tokio::test]
async fn malformed_first_chunk_is_retried() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": TEXT}],
        "faults": [{"request": 1, "kind": "malformed_chunk", "after_chunks": 0}]
    }));
    let collected = stream_main(&api_key_client(&fake, 3), "hi").await;
    let retries = collected.retries();
    assert_eq!(retries.len(), 1);
    assert!(
        retries[0].reason.contains("could not decode"),
        "{}",
        retries[0].reason
    );
    assert_eq!(collected.ok().len(), 2);
    assert_eq!(fake.main_requests().len(), 2);
}

#[tokio::test]
async fn generate_retries_cut_and_malformed_bodies() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": TEXT}],
        "faults": [
            {"request": 1, "kind": "cut_stream", "partial_bytes": 40},
            {"request": 2, "kind": "malformed_chunk"}
        ]
    }));
    let client = api_key_client(&fake, 3);
    let response = client
        .generate(MODEL, &main_request("hi"), &meta())
        .await
        .unwrap();
    assert_eq!(response.text(), TEXT);
    let faults: Vec<_> = fake.main_requests().into_iter().map(|r| r.fault).collect();
    assert_eq!(
        faults,
        vec![
            Some("cut_stream".to_string()),
            Some("malformed_chunk".to_string()),
            None
        ]
    );

    // With no attempts left, the decode failure itself is reported.
    fake.reset(
        json!({"steps": [{"text": TEXT}], "faults": [{"request": 1, "kind": "malformed_chunk"}]}),
        &[],
    );
    let error = api_key_client(&fake, 1)
        .generate(MODEL, &main_request("hi"), &meta())
        .await
        .unwrap_err();
    assert!(matches!(error, GeminiError::Decode { .. }), "{error:?}");
}

#[tokio::test]
async fn connection_refused_is_a_network_error_retried_max_attempts_times() {
    let base = format!("http://127.0.0.1:{}", closed_port());
    let client = client_at(&base, options(3));
    let started = Instant::now();
    let collected = stream_main(&client, "hi").await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let attempts: Vec<u32> = collected.retries().iter().map(|r| r.attempt).collect();
    assert_eq!(attempts, vec![2, 3]);
    assert!(collected.chunks().is_empty());
    match collected.err() {
        GeminiError::Exhausted {
            attempts: 3,
            source,
        } => {
            let GeminiError::Network(message) = &**source else {
                panic!("expected Network, got {source:?}");
            };
            // The cause chain is spelled out, not just "error sending request".
            assert!(
                message.to_lowercase().contains("refused"),
                "message should name the cause: {message}"
            );
        }
        other => panic!("expected Exhausted after 3 attempts, got {other:?}"),
    }

    let error = client
        .generate(MODEL, &main_request("hi"), &meta())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, GeminiError::Exhausted { attempts: 3, source } if matches!(**source, GeminiError::Network(_))),
        "{error:?}"
    );
    let error = client.count_tokens(MODEL, &[]).await.unwrap_err();
    assert!(
        matches!(error, GeminiError::Network(_)),
        "count_tokens is not retried: {error:?}"
    );
}

#[tokio::test]
async fn dropping_a_hung_stream_cancels_promptly() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "ok"}],
        "faults": [{"request": 1, "kind": "hang"}]
    }));
    let client = api_key_client(&fake, 3);
    let mut stream = Box::pin(client.stream(MODEL, &main_request("hi"), &meta()));
    let started = Instant::now();
    let waited = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
    assert!(waited.is_err(), "a hung server yields nothing: {waited:?}");
    drop(stream);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(fake.wait_for_requests(1, Duration::from_secs(5)));
    let recs = fake.main_requests();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].fault.as_deref(), Some("hang"));

    // The client is still usable: the next request is answered normally.
    assert_eq!(stream_main(&client, "hi").await.text(), "ok");
    assert_eq!(fake.main_requests().len(), 2);
}

#[tokio::test]
async fn dropping_a_stream_stalled_after_content_cancels_promptly() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": TEXT, "chunk_chars": 5}],
        "faults": [{"request": 1, "kind": "hang", "hang_after_chunks": 2}]
    }));
    let client = api_key_client(&fake, 3);
    let mut stream = Box::pin(client.stream(MODEL, &main_request("hi"), &meta()));
    let mut texts = Vec::new();
    for _ in 0..2 {
        match tokio::time::timeout(Duration::from_secs(5), stream.next()).await {
            Ok(Some(Ok(StreamEvent::Chunk(c)))) => texts.push(c.text()),
            other => panic!("expected a chunk, got {other:?}"),
        }
    }
    assert_eq!(texts, vec!["The q", "uick "]);
    let started = Instant::now();
    assert!(
        tokio::time::timeout(Duration::from_millis(200), stream.next())
            .await
            .is_err()
    );
    drop(stream);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn read_timeout_turns_a_stall_into_an_error() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": TEXT, "chunk_chars": 5}],
        "faults": [
            {"request": 1, "kind": "hang"},
            {"request": 3, "kind": "hang", "hang_after_chunks": 1}
        ]
    }));
    let opts = ClientOptions {
        read_timeout: Duration::from_millis(500),
        ..options(2)
    };
    let client = client_at(&fake.base_url(), opts);
    // No answer at all: the attempt times out and is retried.
    let collected = stream_main(&client, "hi").await;
    assert_eq!(collected.retries().len(), 1, "{:?}", collected.events);
    assert_eq!(collected.text(), TEXT);
    // A stall after content: interrupted, not retried.
    let collected = stream_main(&client, "hi").await;
    assert_eq!(collected.text(), "The q");
    assert!(collected.retries().is_empty());
    assert!(
        matches!(collected.err(), GeminiError::StreamInterrupted(_)),
        "{:?}",
        collected.err()
    );
    assert_eq!(fake.main_requests().len(), 3);
}

#[tokio::test]
async fn retry_policy_none_reports_the_first_failure_unwrapped() {
    let fake = FakeGemini::start(json!({"fail_always": {"status": 503}}));
    let opts = ClientOptions {
        retry: RetryPolicy::none(),
        ..options(1)
    };
    let collected = stream_main(&client_at(&fake.base_url(), opts), "hi").await;
    assert!(collected.events.is_empty());
    assert_eq!(api_status(collected.err()), 503);
    assert_eq!(fake.main_requests().len(), 1);
}
