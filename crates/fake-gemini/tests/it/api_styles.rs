//! The three API surfaces (API key, Vertex, Code Assist) and the auxiliary
//! endpoints (countTokens, embeddings, list models, unknown paths).

use crate::common;

use common::*;
use gd_fake_gemini::FakeGemini;
use serde_json::json;

fn text_scenario() -> serde_json::Value {
    json!({"steps": [{"text": "hello there"}]})
}

#[test]
fn vertex_paths_behave_like_the_gemini_api() {
    let fake = FakeGemini::start(text_scenario());
    for path in [
        "/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
        "/v1beta1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    ] {
        let resp = raw_post(fake.port(), path, &main_body("hi"));
        assert_eq!(resp.status, 200, "{path}");
        let events = resp.sse();
        assert_eq!(all_parts(&events), vec![json!({"text": "hello there"})]);
        assert_eq!(events[0]["modelVersion"], "gemini-2.5-pro");
    }
    let recs = fake.main_requests();
    assert_eq!(recs.len(), 2);
    assert!(
        recs.iter()
            .all(|r| r.api_style == "vertex" && r.model.as_deref() == Some("gemini-2.5-pro"))
    );
    let count = raw_post(
        fake.port(),
        "/v1/projects/p/locations/l/publishers/google/models/m:countTokens",
        &json!({"contents": []}),
    );
    assert_eq!(count.json(), json!({"totalTokens": 4}));
}

fn code_assist_body(request: serde_json::Value) -> serde_json::Value {
    json!({"model": "gemini-2.5-flash", "project": "proj-1", "user_prompt_id": "p-1", "request": request})
}

#[test]
fn code_assist_wraps_every_response_object() {
    let fake = FakeGemini::start(json!({"steps": [{"text": "0123456789"}], "chunk_chars": 4}));
    let mut request = main_body("hi");
    request["session_id"] = json!("s-1");
    let resp = raw_post(
        fake.port(),
        "/v1internal:streamGenerateContent?alt=sse",
        &code_assist_body(request.clone()),
    );
    assert_eq!(resp.status, 200);
    let events = resp.sse();
    assert_eq!(events.len(), 3);
    for ev in &events {
        assert!(
            ev["traceId"].as_str().is_some_and(|t| !t.is_empty()),
            "{ev}"
        );
        assert_eq!(
            ev.as_object().unwrap().len(),
            2,
            "only response + traceId: {ev}"
        );
        assert_eq!(ev["response"]["candidates"][0]["content"]["role"], "model");
    }
    let inner: Vec<_> = events.iter().map(|e| e["response"].clone()).collect();
    assert_eq!(
        all_parts(&inner),
        vec![
            json!({"text": "0123"}),
            json!({"text": "4567"}),
            json!({"text": "89"})
        ]
    );
    assert_eq!(inner[2]["candidates"][0]["finishReason"], "STOP");
    assert_eq!(inner[2]["modelVersion"], "gemini-2.5-flash");

    let generated = raw_post(
        fake.port(),
        "/v1internal:generateContent",
        &code_assist_body(request),
    )
    .json();
    assert_eq!(
        generated["response"]["candidates"][0]["content"]["parts"],
        json!([{"text": "0123456789"}])
    );
    assert!(generated["traceId"].is_string());

    let count = raw_post(
        fake.port(),
        "/v1internal:countTokens",
        &json!({"request": {"model": "models/gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": "hello"}]}]}}),
    );
    let count = count.json();
    assert!(count["totalTokens"].as_u64().unwrap() >= 1);
    assert!(
        count.get("response").is_none(),
        "countTokens is not wrapped"
    );

    let recs = fake.requests();
    assert!(recs.iter().all(|r| r.api_style == "code_assist"));
    assert_eq!(recs[0].kind, "main");
    assert_eq!(recs[0].model.as_deref(), Some("gemini-2.5-flash"));
    assert_eq!(
        recs[0].body.as_ref().unwrap()["project"],
        "proj-1",
        "the wrapped body is recorded"
    );
    assert_eq!(recs[2].kind, "countTokens");
    assert_eq!(recs[2].model.as_deref(), Some("gemini-2.5-flash"));
}

#[test]
fn code_assist_errors_are_not_wrapped_and_utility_works() {
    let fake = FakeGemini::start(json!({"fail_first": {"status": 429, "retry_delay": "3s"}}));
    let err = raw_post(
        fake.port(),
        "/v1internal:streamGenerateContent?alt=sse",
        &code_assist_body(main_body("x")),
    );
    assert_eq!(err.status, 429);
    assert_eq!(err.json()["error"]["code"], 429);
    assert_eq!(err.json()["error"]["details"][0]["retryDelay"], "3s");

    let util_request = json!({
        "contents": [{"role": "user", "parts": [{"text": "who speaks next?"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
            "type": "object", "properties": {"next_speaker": {"type": "string", "enum": ["user", "model"]}}}}
    });
    let util = raw_post(
        fake.port(),
        "/v1internal:generateContent",
        &code_assist_body(util_request),
    )
    .json();
    assert_eq!(
        util["response"]["candidates"][0]["content"]["parts"],
        json!([{"text": "{\"next_speaker\": \"user\"}"}])
    );
    assert_eq!(fake.requests()[1].kind, "utility");
}

#[test]
fn count_tokens_and_embeddings() {
    let fake = FakeGemini::start(text_scenario());
    // len(json.dumps(body)) = 52 → 52 // 4 = 13, as the reference computes it
    let count = raw_post(
        fake.port(),
        "/v1beta/models/gemini-2.5-flash:countTokens",
        &json!({"contents": [{"parts": [{"text": "hello world"}]}]}),
    );
    assert_eq!(count.json(), json!({"totalTokens": 13}));
    let one = raw_post(
        fake.port(),
        "/v1beta/models/text-embedding-004:embedContent",
        &json!({"content": {}}),
    );
    assert_eq!(
        one.json()["embedding"]["values"].as_array().unwrap().len(),
        8
    );
    let batch = raw_post(
        fake.port(),
        "/v1beta/models/text-embedding-004:batchEmbedContents",
        &json!({"requests": [{}, {}, {}]}),
    );
    assert_eq!(batch.json()["embeddings"].as_array().unwrap().len(), 3);
    let kinds: Vec<String> = fake.requests().into_iter().map(|r| r.kind).collect();
    assert_eq!(kinds, ["countTokens", "embed", "embed"]);
}

#[test]
fn list_models_returns_a_few_models() {
    let fake = FakeGemini::start(text_scenario());
    let resp = raw_request(
        fake.port(),
        "GET",
        "/v1beta/models",
        &[("x-goog-api-key", "k")],
        b"",
    );
    assert_eq!(resp.status, 200);
    let models = resp.json()["models"].as_array().unwrap().clone();
    assert!(models.len() >= 2);
    assert!(
        models
            .iter()
            .any(|m| m["name"] == "models/gemini-2.5-flash")
    );
    let rec = &fake.requests()[0];
    assert_eq!(
        (rec.kind.as_str(), rec.method.as_str()),
        ("list_models", "GET")
    );
}

#[test]
fn unknown_paths_get_404_json_and_are_recorded() {
    let fake = FakeGemini::start(text_scenario());
    let cases = [
        ("POST", "/v1beta/models/gemini-2.5-flash:doSomething"),
        ("POST", "/v2/models/m:generateContent"),
        ("GET", "/favicon.ico"),
        ("POST", "/v1internal:listExperiments"),
    ];
    for (method, path) in cases {
        let resp = raw_request(
            fake.port(),
            method,
            path,
            &[("Content-Type", "application/json")],
            b"{}",
        );
        assert_eq!(resp.status, 404, "{method} {path}");
        assert_eq!(resp.json()["error"]["status"], "NOT_FOUND");
    }
    // A model path with a body that is not JSON is unhandled too (raw text kept).
    let resp = raw_request(fake.port(), "POST", GENERATE_PATH, &[], b"not json");
    assert_eq!(resp.status, 404);
    let recs = fake.requests();
    assert_eq!(recs.len(), 5);
    assert!(recs.iter().all(|r| r.kind == "unhandled"));
    assert_eq!(recs[0].api_method.as_deref(), Some("doSomething"));
    assert_eq!(recs[3].api_style, "code_assist");
    assert_eq!(recs[4].raw.as_deref(), Some("not json"));
}

#[test]
fn code_assist_setup_routes_answer_from_the_scenario() {
    let fake = FakeGemini::start(serde_json::json!({"code_assist": {
        "load": {"allowedTiers": [{"id": "standard-tier", "isDefault": true}]},
        "onboard": {"polls": 2, "project": "p-1"}
    }}));
    let load = raw_request(
        fake.port(),
        "POST",
        "/v1internal:loadCodeAssist",
        &[],
        b"{}",
    );
    assert_eq!(load.status, 200);
    assert_eq!(load.json()["allowedTiers"][0]["id"], "standard-tier");
    let op = raw_request(fake.port(), "POST", "/v1internal:onboardUser", &[], b"{}");
    assert_eq!(op.json()["done"], false);
    let name = op.json()["name"].as_str().unwrap().to_owned();
    let path = format!("/v1internal/{name}");
    let first = raw_request(fake.port(), "GET", &path, &[], b"");
    assert_eq!(first.json()["done"], false);
    let second = raw_request(fake.port(), "GET", &path, &[], b"");
    assert_eq!(second.json()["done"], true);
    assert_eq!(
        second.json()["response"]["cloudaicompanionProject"]["id"],
        "p-1"
    );
    let unknown = raw_request(fake.port(), "GET", "/v1internal/operations/nope", &[], b"");
    assert_eq!(unknown.status, 404);
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.kind == "code_assist_setup" && r.api_style == "code_assist")
    );
}
