//! Request recording, credentials, waiting, resets, shutdown and scenario errors.

use crate::common;

use common::*;
use gd_fake_gemini::{FakeGemini, credential_fingerprint};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

#[test]
fn credentials_are_fingerprinted_never_stored() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.jsonl");
    let fake = FakeGemini::start(json!({"steps": [{"text": "ok"}]}));
    fake.set_log(Some(log.clone()));
    let body = serde_json::to_vec(&main_body("x")).unwrap();
    let secret_key = "AIzaSECRET-api-key";
    let secret_token = "ya29.SECRET-token";
    let secret_query = "SECRET-query-key";
    raw_request(
        fake.port(),
        "POST",
        STREAM_PATH,
        &[
            ("X-Goog-Api-Key", secret_key),
            ("User-Agent", "GeminiCLI/test"),
            ("x-goog-api-client", "gl-rust/1"),
        ],
        &body,
    );
    let bearer = format!("Bearer {secret_token}");
    raw_request(
        fake.port(),
        "POST",
        GENERATE_PATH,
        &[("Authorization", &bearer)],
        &body,
    );
    raw_request(
        fake.port(),
        "GET",
        &format!("/v1beta/models?key={secret_query}&pageSize=5"),
        &[],
        b"",
    );

    let recs = fake.requests();
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0].credential_kind.as_deref(), Some("api-key"));
    assert_eq!(
        recs[0].credential_sha256_12,
        Some(credential_fingerprint(secret_key))
    );
    assert_eq!(recs[0].header("user-agent"), Some("GeminiCLI/test"));
    assert_eq!(recs[0].header("X-Goog-Api-Client"), Some("gl-rust/1"));
    assert!(recs[0].headers.keys().all(|k| *k == k.to_ascii_lowercase()));
    assert_eq!(recs[0].header("x-goog-api-key"), None);
    assert_eq!(recs[1].credential_kind.as_deref(), Some("bearer"));
    // Same fingerprint rule as the reference: over the whole header value.
    assert_eq!(
        recs[1].credential_sha256_12,
        Some(credential_fingerprint(&bearer))
    );
    assert_eq!(recs[1].header("authorization"), None);
    assert_eq!(recs[2].credential_kind.as_deref(), Some("api-key-query"));
    assert_eq!(
        recs[2].credential_sha256_12,
        Some(credential_fingerprint(secret_query))
    );
    assert_eq!(recs[2].query.get("pageSize"), Some(&vec!["5".to_string()]));
    assert!(!recs[2].query.contains_key("key"));

    let everything =
        serde_json::to_string(&recs).unwrap() + &std::fs::read_to_string(&log).unwrap();
    for secret in [secret_key, secret_token, secret_query] {
        assert!(!everything.contains(secret), "{secret} leaked");
    }
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);
}

#[test]
fn wait_for_requests_wakes_on_arrival_and_times_out_otherwise() {
    let fake = FakeGemini::start(json!(null));
    assert!(!fake.wait_for_requests(1, Duration::from_millis(50)));
    let port = fake.port();
    let sender = std::thread::spawn(move || {
        for _ in 0..2 {
            raw_post(port, GENERATE_PATH, &main_body("hi"));
        }
    });
    assert!(fake.wait_for_requests(2, Duration::from_secs(20)));
    sender.join().unwrap();
    assert_eq!(
        fake.requests().iter().map(|r| r.seq).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert!(!fake.wait_for_requests(3, Duration::from_millis(50)));
    // The default scenario answers "OK".
    assert_eq!(
        fake.requests()[0].reply_parts,
        Some(json!([{"text": "OK"}]))
    );
}

#[test]
fn requests_are_recorded_before_a_delayed_answer() {
    let fake = FakeGemini::start(json!({"steps": [{"text": "late", "delay_ms": 60000}]}));
    let mut stream = TcpStream::connect(("127.0.0.1", fake.port())).unwrap();
    let body = serde_json::to_string(&main_body("x")).unwrap();
    write!(
        stream,
        "POST {GENERATE_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    assert!(fake.wait_for_requests(1, Duration::from_secs(20)));
    assert_eq!(
        fake.main_requests()[0].reply_parts,
        Some(json!([{"text": "late"}]))
    );
    // Dropping the server with that request still pending must not block:
    // the connection is closed without an answer.
    drop(fake);
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = Vec::new();
    let _ = stream.read_to_end(&mut buf);
    assert!(
        buf.is_empty(),
        "no answer expected, got {:?}",
        String::from_utf8_lossy(&buf)
    );
}

#[test]
fn drop_stops_the_server() {
    let fake = FakeGemini::start(json!(null));
    let port = fake.port();
    assert_eq!(fake.base_url(), format!("http://127.0.0.1:{port}"));
    assert_eq!(
        raw_request(port, "GET", "/__admin/health", &[], b"").status,
        200
    );
    drop(fake);
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn reset_clears_journal_and_switches_scenario() {
    let fake = FakeGemini::start(json!({"steps": [{"text": "one"}]}));
    raw_post(fake.port(), GENERATE_PATH, &main_body("x"));
    fake.reset(
        json!({"name": "two", "steps": [{"text": "{{WHO}} two"}]}),
        &[("WHO", "step")],
    );
    assert!(fake.requests().is_empty());
    let resp = raw_post(fake.port(), GENERATE_PATH, &main_body("x")).json();
    assert_eq!(
        resp["candidates"][0]["content"]["parts"],
        json!([{"text": "step two"}])
    );
    assert_eq!(fake.requests()[0].seq, 1);
}

#[test]
fn bad_scenarios_are_clear_errors() {
    let fake = FakeGemini::start(json!({"name": "good", "steps": [{"text": "fine"}]}));
    let err = fake
        .try_reset(json!({"steps": [{"text": 5}]}), &[])
        .unwrap_err();
    assert!(format!("{err:#}").contains("steps"), "{err:#}");
    let err = fake
        .try_reset(
            json!({"faults": [{"request": 1, "kind": "cut_stream", "after_chunk": 1}]}),
            &[],
        )
        .unwrap_err();
    assert!(format!("{err:#}").contains("after_chunk"), "{err:#}");

    let resp = raw_post(
        fake.port(),
        "/__admin/reset",
        &json!({"scenario": {"steps": 3}}),
    );
    assert_eq!(resp.status, 400);
    assert_eq!(resp.json()["ok"], false);
    let resp = raw_post(
        fake.port(),
        "/__admin/reset",
        &json!({"scenario": "/nonexistent/scenario.json"}),
    );
    assert_eq!(resp.status, 400);
    assert!(
        resp.json()["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/scenario.json")
    );
    let resp = raw_request(fake.port(), "POST", "/__admin/reset", &[], b"{not json");
    assert_eq!(resp.status, 400);
    // The previous scenario is still in force.
    let health = raw_request(fake.port(), "GET", "/__admin/health", &[], b"").json();
    assert_eq!(health["scenario"], "good");

    let dir = tempfile::tempdir().unwrap();
    let bad_json = dir.path().join("bad.json");
    std::fs::write(&bad_json, "{ nope").unwrap();
    let err = gd_fake_gemini::scenario_from_file(&bad_json).unwrap_err();
    assert!(format!("{err:#}").contains("bad.json"), "{err:#}");
    let err = gd_fake_gemini::scenario_from_file(dir.path().join("missing.json")).unwrap_err();
    assert!(format!("{err:#}").contains("missing.json"), "{err:#}");
    assert!(FakeGemini::try_start(json!(42), &[]).is_err());
}

#[test]
fn admin_requests_lists_the_journal() {
    let fake = FakeGemini::start(json!(null));
    raw_post(fake.port(), GENERATE_PATH, &main_body("x"));
    let listed = raw_request(fake.port(), "GET", "/__admin/requests", &[], b"").json();
    let listed = listed["requests"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["kind"], "main");
    assert_eq!(listed[0]["body"], main_body("x"));
}
