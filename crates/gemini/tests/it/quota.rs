//! Code Assist's `retrieveUserQuota` against the fake server over real HTTP:
//! the request 0.61 sends (`{"project"}`, bearer token) and the buckets it
//! gets back.

use crate::common;

use common::*;
use gd_fake_gemini::{FakeGemini, credential_fingerprint};
use gd_gemini::{Backend, GeminiClient, QuotaBucketWire};
use pretty_assertions::assert_eq;
use serde_json::json;

fn code_assist(fake: &FakeGemini, project: Option<&str>) -> GeminiClient {
    let backend = Backend::code_assist_from_env(
        env(&[("CODE_ASSIST_ENDPOINT", &fake.base_url())]),
        project.map(str::to_owned),
        static_token("ya29.token"),
    );
    GeminiClient::new(backend, options(1)).unwrap()
}

#[tokio::test]
async fn code_assist_quota_buckets_come_back_as_scripted() {
    let fake = FakeGemini::start(json!({"steps": [], "code_assist": {"quota": {"buckets": [
        {"modelId": "gemini-2.5-pro", "remainingFraction": 0.25, "remainingAmount": "25",
         "resetTime": "2030-05-01T00:00:00Z", "tokenType": "REQUESTS"},
        // Without a fraction: dropped, as Gemini CLI drops it.
        {"modelId": "gemini-2.5-flash"}
    ]}}}));
    let buckets = code_assist(&fake, Some("my-project"))
        .retrieve_user_quota()
        .await
        .unwrap()
        .expect("Code Assist has a quota");
    assert_eq!(
        buckets,
        vec![QuotaBucketWire {
            model_id: Some("gemini-2.5-pro".into()),
            remaining_fraction: Some(0.25),
            remaining_amount: Some("25".into()),
            reset_time: Some("2030-05-01T00:00:00Z".into()),
            token_type: Some("REQUESTS".into()),
        }]
    );
    let recs = fake.requests();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].path, "/v1internal:retrieveUserQuota");
    assert_eq!(recs[0].kind, "code_assist_quota");
    assert_eq!(recs[0].body, Some(json!({"project": "my-project"})));
    assert_eq!(
        recs[0].credential_sha256_12.as_deref(),
        Some(credential_fingerprint("Bearer ya29.token").as_str())
    );
}

#[tokio::test]
async fn no_quota_call_without_code_assist_or_project() {
    let fake = FakeGemini::start(json!({"steps": []}));
    assert_eq!(
        code_assist(&fake, None)
            .retrieve_user_quota()
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        api_key_client(&fake, 1)
            .retrieve_user_quota()
            .await
            .unwrap(),
        None
    );
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn quota_errors_are_api_errors() {
    let fake = FakeGemini::start(json!({"steps": [], "code_assist": {
        "quota_error": {"status": 403, "message": "quota not available"}}}));
    let error = code_assist(&fake, Some("p"))
        .retrieve_user_quota()
        .await
        .unwrap_err();
    assert_eq!(error.api_status(), Some(403), "{error}");
    assert!(error.to_string().contains("quota not available"), "{error}");
}
