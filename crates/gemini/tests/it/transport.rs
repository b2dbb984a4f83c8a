//! The transport against the fake Gemini server over real HTTP: what each
//! backend (Gemini API key, Code Assist, Vertex AI) puts on the wire, and
//! how the answers decode.

use crate::common;

use std::sync::Arc;

use common::*;
use gd_fake_gemini::{FakeGemini, credential_fingerprint};
use gd_gemini::{
    Backend, Content, CredentialSource, GeminiClient, GeminiError, Role, StreamEvent, UsageMetadata,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Checks the headers every model request carries.
fn assert_common_headers(rec: &gd_fake_gemini::RecordedRequest) {
    assert_eq!(rec.method, "POST");
    assert_eq!(rec.header("content-type"), Some("application/json"));
    let ua = rec.header("user-agent").expect("user-agent sent");
    assert!(ua.starts_with("GeminiDesktop/"), "user-agent: {ua}");
    assert!(
        ua.contains(MODEL) && ua.ends_with("; test)"),
        "user-agent: {ua}"
    );
    let api_client = rec.header("x-goog-api-client").expect("x-goog-api-client");
    assert!(api_client.starts_with("gemini-desktop/"), "{api_client}");
    // Secrets are never in the recorded headers (the fake drops them), but the
    // credential kind proves one was sent.
    assert!(rec.header("x-goog-api-key").is_none() && rec.header("authorization").is_none());
}

#[tokio::test]
async fn api_key_stream_sends_the_request_and_yields_chunks_in_order() {
    let fake = FakeGemini::start(json!({"steps": [{"text": TEXT, "chunk_chars": 5}]}));
    let client = api_key_client(&fake, 1);
    let request = main_request("hello");
    let collected = collect(client.stream(MODEL, &request, &meta())).await;
    let events = collected.ok();

    // 26 characters in pieces of 5: six chunks, in order, no retries.
    let chunks: Vec<_> = events
        .iter()
        .map(|e| match e {
            StreamEvent::Chunk(c) => c,
            StreamEvent::Retry(r) => panic!("unexpected retry {r:?}"),
        })
        .collect();
    let pieces: Vec<String> = chunks.iter().map(|c| c.text()).collect();
    assert_eq!(
        pieces,
        vec!["The q", "uick ", "brown", " fox ", "jumps", "."]
    );
    assert_eq!(pieces.concat(), TEXT);
    for chunk in &chunks {
        let content = chunk.content().expect("content");
        assert_eq!(content.role, Some(Role::Model));
        assert_eq!(chunk.model_version.as_deref(), Some(MODEL));
    }
    // All chunks of one reply share the response id.
    let id = chunks[0].response_id.clone().expect("responseId");
    assert!(chunks.iter().all(|c| c.response_id.as_ref() == Some(&id)));
    // Only the last chunk finishes and carries usage.
    let (last, rest) = chunks.split_last().unwrap();
    assert!(
        rest.iter()
            .all(|c| c.finish_reason().is_none() && c.usage_metadata.is_none())
    );
    assert_eq!(last.finish_reason(), Some(&gd_gemini::FinishReason::Stop));
    let usage = last.usage_metadata.expect("usage on the last chunk");
    assert_eq!(usage.candidates_token_count, (TEXT.len() / 4) as u64);
    assert!(usage.prompt_token_count > 0);
    assert_eq!(
        usage.total_token_count,
        usage.prompt_token_count + usage.candidates_token_count
    );

    let recs = fake.requests();
    assert_eq!(recs.len(), 1);
    let rec = &recs[0];
    assert_eq!(rec.kind, "main");
    assert_eq!(rec.api_style, "gemini");
    assert_eq!(
        rec.path,
        format!("/v1beta/models/{MODEL}:streamGenerateContent")
    );
    assert_eq!(rec.query.get("alt"), Some(&vec!["sse".to_string()]));
    assert_eq!(
        rec.query.len(),
        1,
        "no other query parameters (no ?key=): {:?}",
        rec.query
    );
    assert_eq!(rec.credential_kind.as_deref(), Some("api-key"));
    assert_eq!(
        rec.credential_sha256_12.as_deref(),
        Some(credential_fingerprint(API_KEY).as_str())
    );
    assert_common_headers(rec);
    assert_eq!(rec.sse_chunks, Some(6));
    // The body is exactly the request, and decodes back to it.
    let body = rec.body.clone().expect("JSON body");
    assert_eq!(body, serde_json::to_value(&request).unwrap());
    assert_eq!(
        body["generationConfig"],
        json!({"temperature": 1, "topP": 0.95})
    );
    assert_eq!(
        serde_json::from_value::<gd_gemini::GenerateContentRequest>(body).unwrap(),
        request
    );
}

#[tokio::test]
async fn api_key_generate_returns_the_whole_reply() {
    let fake = FakeGemini::start(json!({"steps": [{"text": TEXT, "thought": "pondering"}]}));
    let client = api_key_client(&fake, 1);
    let request = main_request("hello");
    let response = client
        .generate(MODEL, &request, &meta())
        .await
        .expect("generate");
    assert_eq!(response.text(), TEXT, "thought text is not part of text()");
    let parts = &response.content().unwrap().parts;
    assert_eq!(parts.len(), 2);
    assert!(parts[0].is_thought());
    assert_eq!(parts[0].text.as_deref(), Some("pondering"));
    assert_eq!(
        response.finish_reason(),
        Some(&gd_gemini::FinishReason::Stop)
    );
    assert!(response.usage_metadata.is_some());

    let recs = fake.requests();
    assert_eq!(recs.len(), 1);
    assert_eq!(
        recs[0].path,
        format!("/v1beta/models/{MODEL}:generateContent")
    );
    assert!(recs[0].query.is_empty(), "no alt=sse for generateContent");
    assert_eq!(recs[0].credential_kind.as_deref(), Some("api-key"));
    assert_common_headers(&recs[0]);
    assert_eq!(recs[0].body, Some(serde_json::to_value(&request).unwrap()));
}

#[tokio::test]
async fn api_version_override_changes_the_path() {
    let fake = FakeGemini::start(json!({"steps": [{"text": "v1alpha ok"}]}));
    let backend = Backend::from_env(
        env(&[
            ("GEMINI_API_KEY", API_KEY),
            ("GOOGLE_GEMINI_BASE_URL", &format!("{}/", fake.base_url())),
            ("GOOGLE_GENAI_API_VERSION", "v1alpha"),
        ]),
        None,
    )
    .unwrap();
    let client = GeminiClient::new(backend, options(1)).unwrap();
    let collected = stream_main(&client, "hi").await;
    assert_eq!(collected.text(), "v1alpha ok");
    let count = client
        .count_tokens(MODEL, &[Content::user_text("x")])
        .await
        .unwrap();
    assert!(count >= 1);
    let paths: Vec<_> = fake.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        vec![
            format!("/v1alpha/models/{MODEL}:streamGenerateContent"),
            format!("/v1alpha/models/{MODEL}:countTokens"),
        ]
    );
}

#[tokio::test]
async fn count_tokens_returns_the_servers_number() {
    let fake = FakeGemini::start(json!({}));
    let client = api_key_client(&fake, 1);
    let contents = vec![Content::user_text("count me please")];
    // `models/` prefixes are stripped from the path.
    let n = client
        .count_tokens(&format!("models/{MODEL}"), &contents)
        .await
        .unwrap();
    // The fake answers a quarter of the length of the body written like
    // Python's json.dumps.
    let python_body = r#"{"contents": [{"parts": [{"text": "count me please"}], "role": "user"}]}"#;
    assert_eq!(n, (python_body.len() / 4) as u64);
    let recs = fake.requests();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].kind, "countTokens");
    assert_eq!(recs[0].path, format!("/v1beta/models/{MODEL}:countTokens"));
    assert_eq!(
        recs[0].body,
        Some(serde_json::from_str::<Value>(python_body).unwrap())
    );
    assert_eq!(recs[0].credential_kind.as_deref(), Some("api-key"));
}

#[tokio::test]
async fn list_models_works_and_a_bad_key_is_an_auth_error() {
    let fake = FakeGemini::start(json!({"api_keys": [API_KEY]}));
    let models = api_key_client(&fake, 1).list_models().await.unwrap();
    let names: Vec<_> = models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "models/gemini-2.5-flash",
            "models/gemini-2.5-pro",
            "models/gemini-2.5-flash-lite"
        ]
    );
    assert_eq!(models[0].display_name.as_deref(), Some("Gemini 2.5 Flash"));
    assert_eq!(models[0].input_token_limit, Some(1_048_576));
    assert_eq!(models[0].output_token_limit, Some(65_536));
    let rec = &fake.requests()[0];
    assert_eq!(
        (rec.method.as_str(), rec.path.as_str()),
        ("GET", "/v1beta/models")
    );
    assert_eq!(rec.kind, "list_models");
    assert_eq!(rec.credential_kind.as_deref(), Some("api-key"));
    assert!(
        rec.header("user-agent")
            .unwrap()
            .starts_with("GeminiDesktop/")
    );

    let wrong = Backend::from_env(
        env(&[
            ("GEMINI_API_KEY", "AIza-wrong"),
            ("GOOGLE_GEMINI_BASE_URL", &fake.base_url()),
        ]),
        None,
    )
    .unwrap();
    let error = GeminiClient::new(wrong, options(3))
        .unwrap()
        .list_models()
        .await
        .unwrap_err();
    assert!(error.is_auth(), "{error}");
    assert_eq!(error.api_status(), Some(400));
    assert_eq!(fake.requests().len(), 2);

    // list_models needs the Gemini API backend.
    let vertex = Backend::from_env(
        env(&[
            ("GOOGLE_GENAI_USE_VERTEXAI", "true"),
            ("GOOGLE_API_KEY", "k"),
        ]),
        None,
    )
    .unwrap();
    let error = GeminiClient::new(vertex, options(1))
        .unwrap()
        .list_models()
        .await
        .unwrap_err();
    assert!(matches!(error, GeminiError::Config(_)), "{error}");
}

#[tokio::test]
async fn code_assist_wraps_requests_and_unwraps_responses() {
    let fake = FakeGemini::start(json!({"steps": [{"text": TEXT, "chunk_chars": 10}]}));
    let backend = Backend::code_assist_from_env(
        env(&[("CODE_ASSIST_ENDPOINT", &fake.base_url())]),
        Some("my-project".into()),
        static_token("ya29.token"),
    );
    let client = GeminiClient::new(backend, options(1)).unwrap();
    let request = main_request("hello");
    let collected = collect(client.stream(MODEL, &request, &meta())).await;
    assert_eq!(collected.text(), TEXT);
    let chunks = collected.chunks();
    assert_eq!(chunks.len(), 3);
    for chunk in &chunks {
        // The `{"response": ..., "traceId": ...}` envelope is gone.
        assert!(!chunk.extra.contains_key("response") && !chunk.extra.contains_key("traceId"));
        assert_eq!(chunk.candidates.len(), 1);
        assert!(
            chunk
                .response_id
                .as_deref()
                .is_some_and(|id| id.starts_with("fake"))
        );
    }
    assert!(chunks[2].usage_metadata.is_some());
    assert_eq!(
        chunks[2].finish_reason(),
        Some(&gd_gemini::FinishReason::Stop)
    );

    let recs = fake.requests();
    assert_eq!(recs.len(), 1);
    let rec = &recs[0];
    assert_eq!(rec.path, "/v1internal:streamGenerateContent");
    assert_eq!(rec.query.get("alt"), Some(&vec!["sse".to_string()]));
    assert_eq!(rec.api_style, "code_assist");
    assert_eq!(rec.kind, "main");
    assert_eq!(rec.model.as_deref(), Some(MODEL));
    assert_eq!(rec.credential_kind.as_deref(), Some("bearer"));
    assert_eq!(
        rec.credential_sha256_12.as_deref(),
        Some(credential_fingerprint("Bearer ya29.token").as_str())
    );
    assert_common_headers(rec);
    let mut inner = serde_json::to_value(&request).unwrap();
    inner["session_id"] = json!("session-1");
    assert_eq!(
        rec.body,
        Some(json!({
            "model": MODEL,
            "project": "my-project",
            "user_prompt_id": "session-1########0",
            "request": inner,
        }))
    );
    // Key order of the envelope and of the inner request (preserve_order).
    let body = rec.body.as_ref().unwrap();
    let keys: Vec<_> = body.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, vec!["model", "project", "user_prompt_id", "request"]);
    let inner_keys: Vec<_> = body["request"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        inner_keys,
        vec![
            "contents",
            "systemInstruction",
            "tools",
            "generationConfig",
            "session_id"
        ]
    );

    // Non-streaming generate and countTokens go through the same envelope.
    let response = client.generate(MODEL, &request, &meta()).await.unwrap();
    assert_eq!(response.text(), TEXT);
    assert!(!response.extra.contains_key("traceId"));
    let n = client
        .count_tokens(MODEL, &[Content::user_text("count me please")])
        .await
        .unwrap();
    assert!(n >= 1);
    let recs = fake.requests();
    assert_eq!(recs[1].path, "/v1internal:generateContent");
    assert!(recs[1].query.is_empty());
    assert_eq!(recs[2].path, "/v1internal:countTokens");
    assert_eq!(recs[2].kind, "countTokens");
    assert_eq!(recs[2].model.as_deref(), Some(MODEL));
    assert_eq!(
        recs[2].body.as_ref().unwrap()["request"]["model"],
        format!("models/{MODEL}")
    );
}

#[tokio::test]
async fn code_assist_without_project_omits_it() {
    let fake = FakeGemini::start(json!({"steps": [{"text": "ok"}]}));
    let backend = Backend::code_assist_from_env(
        env(&[("CODE_ASSIST_ENDPOINT", &fake.base_url())]),
        None,
        static_token("t"),
    );
    let client = GeminiClient::new(backend, options(1)).unwrap();
    assert_eq!(stream_main(&client, "hi").await.text(), "ok");
    let body = fake.requests()[0].body.clone().unwrap();
    assert!(body.get("project").is_none(), "{body}");
    assert_eq!(body["model"], MODEL);
}

#[tokio::test]
async fn code_assist_rejected_token_is_refreshed_once_and_retried() {
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "after refresh"}],
        "faults": [{"request": 1, "kind": "http_error", "status": 401, "message": "Request had invalid authentication credentials."}]
    }));
    let creds = Arc::new(CountingCredentials::default());
    let backend = Backend::code_assist_from_env(
        env(&[("CODE_ASSIST_ENDPOINT", &fake.base_url())]),
        Some("p".into()),
        creds.clone() as Arc<dyn CredentialSource>,
    );
    // Retries of ordinary failures are off: the token refresh is separate.
    let client = GeminiClient::new(backend, options(1)).unwrap();
    let collected = stream_main(&client, "hi").await;
    assert_eq!(collected.text(), "after refresh");
    let retries = collected.retries();
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0].attempt, 2);
    assert_eq!(
        retries[0].delay,
        std::time::Duration::ZERO,
        "a refresh is immediate"
    );
    assert!(retries[0].reason.contains("401"), "{}", retries[0].reason);
    assert!(matches!(collected.events[0], StreamEvent::Retry(_)));
    assert_eq!(creds.invalidated(), 1);
    assert_eq!(creds.fetched(), 2);
    let recs = fake.main_requests();
    assert_eq!(recs.len(), 2);
    assert_eq!(
        recs[0].credential_sha256_12.as_deref(),
        Some(credential_fingerprint("Bearer tok-1").as_str())
    );
    assert_eq!(
        recs[1].credential_sha256_12.as_deref(),
        Some(credential_fingerprint("Bearer tok-2").as_str())
    );
}

#[tokio::test]
async fn code_assist_token_rejected_twice_is_an_auth_error() {
    let fake = FakeGemini::start(json!({"fail_always": {"status": 401}}));
    let creds = Arc::new(CountingCredentials::default());
    let backend = Backend::code_assist_from_env(
        env(&[("CODE_ASSIST_ENDPOINT", &fake.base_url())]),
        None,
        creds.clone() as Arc<dyn CredentialSource>,
    );
    let client = GeminiClient::new(backend, options(5)).unwrap();
    let collected = stream_main(&client, "hi").await;
    let error = collected.err();
    assert!(error.is_auth(), "{error}");
    assert_eq!(error.api_status(), Some(401));
    match error {
        GeminiError::Exhausted { attempts, source } => {
            assert_eq!(*attempts, 2);
            assert!(matches!(**source, GeminiError::Api(ref e) if e.status == 401));
        }
        other => panic!("expected Exhausted, got {other:?}"),
    }
    // One refresh only, even though max_attempts would allow more.
    assert_eq!(creds.invalidated(), 1);
    assert_eq!(fake.main_requests().len(), 2);
    assert!(collected.chunks().is_empty());

    // generate() refreshes the same way.
    fake.reset(
        json!({"steps": [{"text": "ok"}], "faults": [{"request": 1, "kind": "http_error", "status": 401}]}),
        &[],
    );
    let response = client
        .generate(MODEL, &main_request("hi"), &meta())
        .await
        .unwrap();
    assert_eq!(response.text(), "ok");
    assert_eq!(creds.invalidated(), 2);
    assert_eq!(fake.main_requests().len(), 2);
}

#[tokio::test]
async fn vertex_express_mode_uses_the_api_key_without_a_project() {
    let fake = FakeGemini::start(json!({"steps": [{"text": "vertex express"}]}));
    let backend = Backend::from_env(
        env(&[
            ("GOOGLE_GENAI_USE_VERTEXAI", "true"),
            ("GOOGLE_API_KEY", "vertex-key"),
            ("GOOGLE_VERTEX_BASE_URL", &fake.base_url()),
        ]),
        None,
    )
    .unwrap();
    let client = GeminiClient::new(backend, options(1)).unwrap();
    let request = main_request("hi");
    let collected = collect(client.stream(MODEL, &request, &meta())).await;
    assert_eq!(collected.text(), "vertex express");
    let rec = &fake.requests()[0];
    assert_eq!(
        rec.path,
        format!("/v1beta1/publishers/google/models/{MODEL}:streamGenerateContent")
    );
    assert_eq!(rec.query.get("alt"), Some(&vec!["sse".to_string()]));
    assert_eq!(rec.api_style, "vertex");
    assert_eq!(rec.credential_kind.as_deref(), Some("api-key"));
    assert_eq!(
        rec.credential_sha256_12.as_deref(),
        Some(credential_fingerprint("vertex-key").as_str())
    );
    assert_common_headers(rec);
    // Vertex takes the request unwrapped.
    assert_eq!(rec.body, Some(serde_json::to_value(&request).unwrap()));
}

#[tokio::test]
async fn vertex_project_mode_uses_a_bearer_token() {
    let fake = FakeGemini::start(json!({"steps": [{"text": "vertex project"}]}));
    let backend = Backend::from_env(
        env(&[
            ("GOOGLE_GENAI_USE_VERTEXAI", "true"),
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("GOOGLE_CLOUD_LOCATION", "l"),
            ("GOOGLE_VERTEX_BASE_URL", &fake.base_url()),
        ]),
        Some(static_token("adc-token")),
    )
    .unwrap();
    let client = GeminiClient::new(backend, options(1)).unwrap();
    let collected = stream_main(&client, "hi").await;
    assert_eq!(collected.text(), "vertex project");
    let response = client
        .generate(MODEL, &main_request("hi"), &meta())
        .await
        .unwrap();
    assert_eq!(response.text(), "vertex project");
    let recs = fake.requests();
    assert_eq!(
        recs[0].path,
        format!(
            "/v1beta1/projects/p/locations/l/publishers/google/models/{MODEL}:streamGenerateContent"
        )
    );
    assert_eq!(
        recs[1].path,
        format!("/v1beta1/projects/p/locations/l/publishers/google/models/{MODEL}:generateContent")
    );
    for rec in &recs {
        assert_eq!(rec.api_style, "vertex");
        assert_eq!(rec.credential_kind.as_deref(), Some("bearer"));
        assert_eq!(
            rec.credential_sha256_12.as_deref(),
            Some(credential_fingerprint("Bearer adc-token").as_str())
        );
    }
}

#[tokio::test]
async fn usage_metadata_from_the_scenario_decodes() {
    let usage = json!({"promptTokenCount": 11, "candidatesTokenCount": 3, "totalTokenCount": 20,
                       "cachedContentTokenCount": 4, "thoughtsTokenCount": 6});
    let fake =
        FakeGemini::start(json!({"steps": [{"text": TEXT, "chunk_chars": 13, "usage": usage}]}));
    let collected = stream_main(&api_key_client(&fake, 1), "hi").await;
    let chunks = collected.chunks();
    assert_eq!(chunks.len(), 2);
    assert_eq!(
        chunks[1].usage_metadata,
        Some(UsageMetadata {
            prompt_token_count: 11,
            candidates_token_count: 3,
            total_token_count: 20,
            cached_content_token_count: 4,
            thoughts_token_count: 6,
            tool_use_prompt_token_count: 0,
        })
    );
}

/// A credential source that cannot produce a token (signed out).
#[derive(Debug)]
struct SignedOut;

impl CredentialSource for SignedOut {
    fn access_token(
        &self,
    ) -> futures::future::BoxFuture<'_, Result<gd_gemini::SecretString, String>> {
        Box::pin(async { Err("not signed in".to_string()) })
    }
}

#[tokio::test]
async fn missing_credentials_fail_without_a_request() {
    let fake = FakeGemini::start(json!({"steps": [{"text": "never"}]}));
    let backend = Backend::code_assist_from_env(
        env(&[("CODE_ASSIST_ENDPOINT", &fake.base_url())]),
        None,
        Arc::new(SignedOut),
    );
    let client = GeminiClient::new(backend, options(3)).unwrap();
    let collected = stream_main(&client, "hi").await;
    assert!(
        collected.events.is_empty(),
        "not retried: {:?}",
        collected.events
    );
    let error = collected.err();
    assert!(
        matches!(error, GeminiError::Credentials(m) if m == "not signed in"),
        "{error:?}"
    );
    assert!(error.is_auth());
    let error = client
        .generate(MODEL, &main_request("hi"), &meta())
        .await
        .unwrap_err();
    assert!(matches!(error, GeminiError::Credentials(_)), "{error:?}");
    assert!(fake.requests().is_empty());
}
