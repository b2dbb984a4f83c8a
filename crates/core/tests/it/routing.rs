//! `auto` routing and quota fallback against the fake Gemini server: the
//! classifier request compared field for field with what Gemini CLI 0.61
//! sent (auto_routing_req01..03), the routed main requests, a classifier
//! that fails, and the fallback prompt answered (app) or absent (headless).

use crate::common;

use common::*;
use gd_core::routing::CLASSIFIER_SYSTEM_PROMPT;
use gd_fake_gemini::fixtures::{gemini_cli_fixture, scenario};
use gd_protocol::{ErrorKind, Event, FallbackChoice, Op, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::time::Duration;

fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

/// The fixture's session context with the CLI's own wording lines and
/// machine-specific values replaced by ours (as wire_shape.rs does).
fn expected_session_context(fixture_text: &str, ours: &str, ws: &str) -> String {
    let ours_lines: Vec<&str> = ours.lines().collect();
    fixture_text
        .replace("{{WORKSPACE}}", ws)
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if line.starts_with("This is the Gemini CLI")
                || line.starts_with("Today's date is")
                || line.starts_with("The project's temporary directory is")
            {
                ours_lines[i].to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `description` string as the fixtures write it: `<redacted: N chars>`.
fn redact_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(text) if key == "description" => {
                        *v = Value::String(format!("<redacted: {} chars>", text.chars().count()));
                    }
                    _ => redact_descriptions(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_descriptions),
        _ => {}
    }
}

fn auto(config: &mut gd_core::SessionConfig) {
    config.model = "auto".into();
}

fn interactive_auto(config: &mut gd_core::SessionConfig) {
    config.model = "auto".into();
    config.interactive = true;
}

fn routed(events: &[Event]) -> Vec<(String, String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ModelRouted {
                model,
                source,
                reason,
                ..
            } => Some((model.clone(), source.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

fn usage_models(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Usage { model, .. } => Some(model.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn auto_routing_requests_match_gemini_cli() {
    let mut h = Harness::start_with(scenario("b_list_dir"), auto);
    let events = h.turn("List the files here").await;
    assert_eq!(status(&events), TurnStatus::Completed);

    // One classifier call for the prompt, none for the tool results.
    let requests = h.fake.requests();
    assert_eq!(
        requests.len(),
        3,
        "{:?}",
        requests.iter().map(|r| &r.path).collect::<Vec<_>>()
    );

    let fixture = gemini_cli_fixture("auto_routing_req01_utility_generateContent.json");
    let utility = &requests[0];
    assert_eq!(utility.path, fixture["path"]);
    assert_eq!(utility.credential_kind.as_deref(), Some("api-key"));
    let body = utility.body.clone().unwrap();
    let expected = &fixture["body"];
    assert_eq!(keys(&body), keys(expected), "no tools, nothing else");
    // The fixture redacts the schema's descriptions to their length.
    let mut config = body["generationConfig"].clone();
    redact_descriptions(&mut config);
    assert_eq!(config, expected["generationConfig"]);
    assert_eq!(
        keys(&body["systemInstruction"]),
        keys(&expected["systemInstruction"])
    );
    assert_eq!(body["systemInstruction"]["role"], "user");
    assert_eq!(
        body["systemInstruction"]["parts"][0]["text"],
        CLASSIFIER_SYSTEM_PROMPT
    );
    assert_eq!(
        body["systemInstruction"]["parts"].as_array().unwrap().len(),
        1
    );
    let contents = body["contents"].as_array().unwrap();
    let theirs = expected["contents"].as_array().unwrap();
    assert_eq!(contents.len(), theirs.len());
    assert_eq!(contents[1], theirs[1]);
    assert_eq!(keys(&contents[0]), keys(&theirs[0]));
    assert_eq!(contents[0]["role"], "user");
    let ours = contents[0]["parts"][0]["text"].as_str().unwrap();
    let theirs_text = theirs[0]["parts"][0]["text"].as_str().unwrap();
    assert_eq!(ours, expected_session_context(theirs_text, ours, &h.ws()));

    // The main requests go to the routed model with its generation config.
    let mains = h.fake.main_requests();
    assert_eq!(mains.len(), 2);
    for (request, name) in mains.iter().zip([
        "auto_routing_req02_main_streamGenerateContent.json",
        "auto_routing_req03_main_streamGenerateContent.json",
    ]) {
        let fixture = gemini_cli_fixture(name);
        assert_eq!(request.path, fixture["path"], "{name}");
        assert_eq!(request.query["alt"], vec!["sse".to_string()]);
        let body = request.body.clone().unwrap();
        assert_eq!(keys(&body), keys(&fixture["body"]), "{name}");
        assert_eq!(
            body["generationConfig"], fixture["body"]["generationConfig"],
            "{name}"
        );
    }
    // req02's contents: the fixture's, modulo the session context's own lines.
    let fixture = gemini_cli_fixture("auto_routing_req02_main_streamGenerateContent.json");
    let body = mains[0].body.clone().unwrap();
    let parts = body["contents"][0]["parts"].as_array().unwrap();
    let theirs = fixture["body"]["contents"][0]["parts"].as_array().unwrap();
    assert_eq!(body["contents"].as_array().unwrap().len(), 1);
    assert_eq!(parts.len(), theirs.len());
    assert_eq!(parts[1], theirs[1]);
    let ours = parts[0]["text"].as_str().unwrap();
    assert_eq!(
        ours,
        expected_session_context(theirs[0]["text"].as_str().unwrap(), ours, &h.ws())
    );

    // The decision and the classifier's usage are reported.
    let decisions = routed(&events);
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].0, "gemini-3.8-flash");
    assert_eq!(decisions[0].1, "agent-router/NumericalClassifier (Default)");
    assert!(
        decisions[0].2.starts_with("[Score: 10 / Threshold: 90]"),
        "{}",
        decisions[0].2
    );
    let models = usage_models(&events);
    assert_eq!(models[0], "gemini-3.5-flash-lite");
    assert!(
        models[1..].iter().all(|m| m == "gemini-3.8-flash"),
        "{models:?}"
    );
    let Some(Event::TurnComplete { usage, .. }) = events.last() else {
        panic!("no TurnComplete");
    };
    assert_eq!(usage.model, "gemini-3.8-flash");
}

#[tokio::test]
async fn a_high_score_routes_to_pro_and_each_prompt_is_routed() {
    let mut scenario = scenario("a_text");
    scenario["utility_defaults"] = json!({"complexity_score": 95});
    scenario["steps"] = json!([{"text": "one"}, {"text": "two"}]);
    let mut h = Harness::start_with(scenario, auto);
    let first = h.turn("Design a microservices backend").await;
    assert_eq!(status(&first), TurnStatus::Completed);
    let second = h.turn("And again").await;
    assert_eq!(status(&second), TurnStatus::Completed);
    let requests = h.fake.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v1beta/models/gemini-3.5-flash-lite:generateContent",
            "/v1beta/models/gemini-3.1-pro-preview-customtools:streamGenerateContent",
            "/v1beta/models/gemini-3.5-flash-lite:generateContent",
            "/v1beta/models/gemini-3.1-pro-preview-customtools:streamGenerateContent",
        ]
    );
    // The second classifier call sees the first exchange.
    let second_classifier = requests[2].body.clone().unwrap();
    let contents = second_classifier["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3, "{contents:#?}");
    assert_eq!(contents[2]["parts"][0]["text"], "And again");
}

#[tokio::test]
async fn a_failed_classifier_falls_back_to_the_default_model() {
    for answer in [
        json!({"match": "complexity_score", "text": "pro, obviously"}),
        json!({"match": "complexity_score", "json": {"complexity_reasoning": "x", "complexity_score": 500}}),
    ] {
        let mut scenario = scenario("a_text");
        scenario["utility"] = json!([answer]);
        let mut h = Harness::start_with(scenario, auto);
        let events = h.turn("What is 2+2?").await;
        assert_eq!(status(&events), TurnStatus::Completed, "{answer}");
        assert_eq!(text(&events), "Hello from the fake model. 2+2=4.");
        let decisions = routed(&events);
        assert_eq!(
            decisions,
            [(
                "gemini-3.1-pro-preview".to_owned(),
                "agent-router/default".to_owned(),
                "Routing to default model: gemini-3.1-pro-preview".to_owned()
            )]
        );
        let mains = h.fake.main_requests();
        assert_eq!(
            mains[0].path,
            "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent"
        );
        assert_eq!(
            mains[0].body.as_ref().unwrap()["generationConfig"]["thinkingConfig"],
            json!({"includeThoughts": true, "thinkingLevel": "HIGH"})
        );
    }
}

#[tokio::test]
async fn a_pinned_model_is_not_routed() {
    let mut h = Harness::start(scenario("a_text"));
    let events = h.turn("What is 2+2?").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert!(routed(&events).is_empty());
    assert_eq!(h.fake.requests().len(), 1);
    assert_eq!(
        h.fake.main_requests()[0].body.as_ref().unwrap()["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingBudget": 8192})
    );
}

/// 0.61's `approval-mode` strategy: while planning, `auto` sends the
/// prompt to Pro without asking the classifier.
#[tokio::test]
async fn planning_routes_to_pro_without_the_classifier() {
    let mut h = Harness::start_with(scenario("a_text"), |config| {
        config.model = "auto".into();
        config.approval_mode = gd_protocol::ApprovalMode::Plan;
    });
    let events = h.turn("Plan the work").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let decisions = routed(&events);
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].0, "gemini-3.1-pro-preview-customtools");
    assert_eq!(decisions[0].1, "agent-router/approval-mode");
    let requests = h.fake.requests();
    assert_eq!(requests.len(), 1, "no classifier request while planning");
    assert!(
        requests[0]
            .path
            .contains("gemini-3.1-pro-preview-customtools:"),
        "{}",
        requests[0].path
    );
}

/// Quota exhausted on the first three main requests (the harness's client
/// tries three times), then answers.
fn quota_scenario() -> Value {
    let mut scenario = scenario("a_text");
    scenario["fail_first"] = json!({"status": 429, "times": 3, "message": "Quota exceeded for quota metric 'Generate Content API requests per minute'"});
    scenario
}

/// Runs a turn up to the fallback prompt, answers it, and returns every
/// event of the turn.
async fn turn_answering(h: &mut Harness, prompt: &str, choice: FallbackChoice) -> Vec<Event> {
    h.handle.submit(Op::user_text(prompt)).unwrap();
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("no fallback prompt within 30 s")
            .expect("session ended");
        let asked = matches!(event, Event::FallbackRequested { .. });
        let done = matches!(event, Event::TurnComplete { .. });
        events.push(event);
        assert!(
            !done,
            "the turn ended without a fallback prompt: {events:#?}"
        );
        if asked {
            break;
        }
    }
    h.handle.submit(Op::AnswerFallback { choice }).unwrap();
    events.extend(h.collect_turn().await);
    events
}

#[tokio::test]
async fn accepting_the_fallback_switches_the_conversation_to_it() {
    let mut h = Harness::start_with(quota_scenario(), interactive_auto);
    let events = turn_answering(&mut h, "What is 2+2?", FallbackChoice::Switch).await;
    let asked = events
        .iter()
        .find_map(|e| match e {
            Event::FallbackRequested {
                failed_model,
                fallback_model,
                message,
                keep_trying,
            } => Some((
                failed_model.clone(),
                fallback_model.clone(),
                message.clone(),
                *keep_trying,
            )),
            _ => None,
        })
        .unwrap();
    assert_eq!(asked.0, "gemini-3.8-flash");
    assert_eq!(asked.1, "gemini-3.1-pro-preview");
    assert!(
        asked.3,
        "a per-minute quota may reset: keep trying is offered"
    );
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    assert_eq!(text(&events), "Hello from the fake model. 2+2=4.");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::TurnContext { model, .. } if model == "gemini-3.1-pro-preview"
    )));
    let paths: Vec<String> = h
        .fake
        .main_requests()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(paths.len(), 4);
    assert!(
        paths[..3].iter().all(|p| p.contains("gemini-3.8-flash")),
        "{paths:?}"
    );
    assert_eq!(
        paths[3],
        "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent"
    );
    // The prompt went out once more, not twice.
    let body = h.fake.main_requests()[3].body.clone().unwrap();
    assert_eq!(body["contents"].as_array().unwrap().len(), 1);

    // The rest of the conversation stays on the fallback model, unrouted.
    h.reset(scenario("a_text"));
    let next = h.turn("Again").await;
    assert_eq!(status(&next), TurnStatus::Completed);
    assert!(routed(&next).is_empty());
    let requests = h.fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].path,
        "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent"
    );
    let contents = requests[0].body.as_ref().unwrap()["contents"].clone();
    assert_valid_history(contents.as_array().unwrap());
    assert_eq!(contents.as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn declining_the_fallback_ends_the_turn_with_the_error() {
    let mut h = Harness::start_with(quota_scenario(), interactive_auto);
    let events = turn_answering(&mut h, "What is 2+2?", FallbackChoice::Stop).await;
    assert_eq!(status(&events), TurnStatus::Failed);
    let errors = errors(&events);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].0, ErrorKind::Api);
    assert!(errors[0].1.contains("429"), "{}", errors[0].1);
    assert_eq!(h.fake.main_requests().len(), 3, "nothing sent after Stop");
}

#[tokio::test]
async fn keep_trying_retries_on_the_same_model() {
    let mut h = Harness::start_with(quota_scenario(), interactive_auto);
    let events = turn_answering(&mut h, "What is 2+2?", FallbackChoice::KeepTrying).await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let mains = h.fake.main_requests();
    assert_eq!(mains.len(), 4);
    assert!(mains[3].path.contains("gemini-3.8-flash"));
}

#[tokio::test]
async fn headless_quota_errors_end_the_run_without_a_prompt() {
    let mut h = Harness::start_with(quota_scenario(), auto);
    let events = h.turn("What is 2+2?").await;
    assert_eq!(status(&events), TurnStatus::Failed);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::FallbackRequested { .. }))
    );
    assert!(errors(&events)[0].1.contains("429"));
    assert_eq!(h.fake.main_requests().len(), 3);
}

#[tokio::test]
async fn the_model_list_offers_auto_first() {
    let mut h = Harness::start(json!({"steps": []}));
    h.handle.submit(Op::ListModels).unwrap();
    let models = loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("no model list within 30 s")
            .expect("session ended");
        if let Event::Models { models } = event {
            break models;
        }
    };
    assert_eq!(models[0].name, "auto");
    assert_eq!(models[0].display_name, "Auto");
    let description = models[0].description.as_deref().unwrap();
    assert!(description.contains("gemini-3.8-flash"), "{description}");
    assert!(models[1..].iter().all(|m| m.description.is_none()));
    assert!(models[1..].iter().all(|m| m.name != "auto"));
}
