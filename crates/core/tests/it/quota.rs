//! The quota a session reports ([`Event::Quota`]) against the fake server
//! over real HTTP: Code Assist's `retrieveUserQuota` buckets at session
//! start and after turns (at most once a minute), and an honest "unknown"
//! on an API key until a rate-limit answer says something.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_core::events::EventSink;
use gd_core::quota::QuotaWatcher;
use gd_core::{Session, SessionConfig};
use gd_fake_gemini::FakeGemini;
use gd_gemini::{Backend, ClientOptions, GeminiClient, SecretString, StaticToken};
use gd_protocol::{Event, Op, QuotaBucket, QuotaReport, QuotaSource, TurnStatus, TurnUsage};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

fn code_assist_client(fake: &FakeGemini) -> GeminiClient {
    let backend = Backend::CodeAssist {
        endpoint: fake.base_url(),
        api_version: "v1internal".into(),
        project: Some("quota-project".into()),
        credentials: Arc::new(StaticToken(SecretString::new("ya29.test"))),
    };
    GeminiClient::new(backend, ClientOptions::default()).unwrap()
}

async fn next_quota(events: &mut UnboundedReceiver<Event>) -> QuotaReport {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("a quota report within 30 s")
            .expect("stream open");
        if let Event::Quota { quota } = event {
            return quota;
        }
    }
}

fn quota_requests(fake: &FakeGemini) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.kind == "code_assist_quota")
        .count()
}

fn scripted() -> serde_json::Value {
    json!({"steps": [{"text": "hi"}], "code_assist": {"quota": {"buckets": [
        {"modelId": "gemini-2.5-pro", "tokenType": "REQUESTS", "remainingFraction": 0.4,
         "remainingAmount": "40", "resetTime": "2031-02-03T04:05:06Z"}
    ]}}})
}

#[tokio::test]
async fn code_assist_session_reports_buckets_at_start_then_at_most_once_a_minute() {
    let (dir, ws) = workspace();
    let fake = FakeGemini::start(scripted());
    let mut config = SessionConfig::new(MODEL, ws, SYSTEM_PROMPT.into());
    config.temp_dir = dir.path().join("tmp");
    let (handle, mut events) = Session::spawn(
        config,
        code_assist_client(&fake),
        gd_core::tools::ToolRegistry::with_builtins(),
        Arc::new(gd_core::approval::AllowAll),
    );
    let quota = next_quota(&mut events).await;
    assert_eq!(quota.source, QuotaSource::CodeAssist);
    assert_eq!(quota.note, None);
    assert_eq!(
        quota.buckets,
        vec![QuotaBucket {
            model: "gemini-2.5-pro".into(),
            remaining_fraction: 0.4,
            remaining_amount: Some(40),
            reset_time: Some("2031-02-03T04:05:06Z".into()),
            token_type: Some("REQUESTS".into()),
        }]
    );
    let rec = fake
        .requests()
        .into_iter()
        .find(|r| r.kind == "code_assist_quota")
        .unwrap();
    assert_eq!(rec.body, Some(json!({"project": "quota-project"})));

    // A turn within the minute does not ask again: the check happens as
    // the turn's end is emitted, before this test sees it.
    handle.submit(Op::user_text("hello")).unwrap();
    loop {
        match events.recv().await.expect("stream open") {
            Event::TurnComplete { status, .. } => {
                assert_eq!(status, TurnStatus::Completed);
                break;
            }
            Event::Quota { .. } => panic!("asked again within the minute"),
            _ => {}
        }
    }
    assert_eq!(quota_requests(&fake), 1);
}

fn turn_complete() -> Event {
    Event::TurnComplete {
        turn_id: "t".into(),
        status: TurnStatus::Completed,
        usage: TurnUsage::default(),
    }
}

#[tokio::test]
async fn a_finished_turn_refreshes_stale_figures_and_errors_are_reported() {
    let fake = FakeGemini::start(scripted());
    let (sink, mut events) = EventSink::new();
    let watcher = QuotaWatcher::new(code_assist_client(&fake), sink.downgrade())
        .with_interval(Duration::ZERO);
    watcher.start();
    assert_eq!(next_quota(&mut events).await.buckets.len(), 1);
    fake.reset(json!({"steps": [], "code_assist": {"quota": {"buckets": [
        {"modelId": "gemini-2.5-flash", "remainingFraction": 0.0, "resetTime": "2031-01-01T00:00:00Z"}
    ]}}}), &[]);
    watcher.observe(&turn_complete());
    let quota = next_quota(&mut events).await;
    assert_eq!(
        (
            quota.buckets[0].model.as_str(),
            quota.buckets[0].remaining_fraction
        ),
        ("gemini-2.5-flash", 0.0)
    );
    fake.reset(
        json!({"steps": [], "code_assist": {
        "quota_error": {"status": 500, "message": "backend down"}}}),
        &[],
    );
    watcher.observe(&turn_complete());
    let quota = next_quota(&mut events).await;
    assert!(quota.buckets.is_empty());
    let note = quota.note.unwrap();
    assert!(
        note.starts_with("The quota could not be read") && note.contains("backend down"),
        "{note}"
    );
    drop(sink);
}

#[tokio::test]
async fn api_key_quota_is_unknown_until_a_rate_limit_answer() {
    let mut h = Harness::start_with(
        json!({"steps": [{"text": "later"}],
               "faults": [{"request": 1, "kind": "http_error", "status": 429,
                           "message": "Quota exceeded for quota metric 'Generate Content requests per minute'"}]}),
        |_| {},
    );
    let first = next_quota(&mut h.events).await;
    assert_eq!(first.source, QuotaSource::GeminiApi);
    assert!(first.buckets.is_empty());
    assert!(first.note.unwrap().contains("does not report"));
    let events = h.turn("hello").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let limited = events
        .iter()
        .find_map(|e| match e {
            Event::Quota { quota } => Some(quota.clone()),
            _ => None,
        })
        .expect("a rate-limit report");
    let note = limited.note.unwrap();
    assert!(note.starts_with("Rate limit reached (429)"), "{note}");
    assert!(
        h.fake
            .requests()
            .iter()
            .all(|r| r.kind != "code_assist_quota")
    );
}
