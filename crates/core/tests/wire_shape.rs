//! The requests the core sends, compared field for field with what Gemini
//! CLI 0.61 sent in the same scenarios (tests/fixtures/gemini-cli-0.61).

mod common;

use common::*;
use gd_fake_gemini::fixtures::{gemini_cli_fixture, scenario};
use gd_protocol::{Event, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

/// The fixture's session context, with the CLI's own wording lines and
/// machine-specific values replaced by ours.
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

#[tokio::test]
async fn a_text_request_matches_gemini_cli() {
    let mut h = Harness::start(scenario("a_text"));
    let events = h.turn("What is 2+2?").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(text(&events), "Hello from the fake model. 2+2=4.");

    let fixture = gemini_cli_fixture("a_text_req01_main_streamGenerateContent.json");
    let request = &h.fake.main_requests()[0];
    assert_eq!(request.path, fixture["path"]);
    assert_eq!(request.query["alt"], vec!["sse".to_string()]);
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.credential_kind.as_deref(), Some("api-key"));

    let body = request.body.clone().unwrap();
    let expected = &fixture["body"];
    assert_eq!(keys(&body), keys(expected));
    assert_eq!(body["generationConfig"], expected["generationConfig"]);
    assert_eq!(
        keys(&body["systemInstruction"]),
        keys(&expected["systemInstruction"])
    );
    assert_eq!(body["systemInstruction"]["role"], "user");
    assert_eq!(body["systemInstruction"]["parts"][0]["text"], SYSTEM_PROMPT);

    let contents = body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 1);
    assert_eq!(contents[0]["role"], "user");
    let parts = contents[0]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[1], json!({"text": "What is 2+2?"}));
    let ours = parts[0]["text"].as_str().unwrap();
    let theirs = expected["contents"][0]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(ours, expected_session_context(theirs, ours, &h.ws()));
}

#[tokio::test]
async fn tool_declarations_use_gemini_cli_parameter_schemas() {
    let mut h = Harness::start(scenario("a_text"));
    h.turn("hi").await;
    let body = h.bodies().remove(0);
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "one tools entry holding all declarations");
    let declarations = tools[0]["functionDeclarations"].as_array().unwrap();
    // Read-only tools are in the default set, edit tools only in yolo's.
    let mut reference = gemini_cli_fixture("tools_default.json")
        .as_array()
        .unwrap()
        .clone();
    reference.extend(
        gemini_cli_fixture("tools_yolo.json")
            .as_array()
            .unwrap()
            .iter()
            .cloned(),
    );
    for declaration in declarations {
        assert_eq!(
            keys(declaration),
            ["description", "name", "parametersJsonSchema"]
        );
        assert!(declaration["description"].as_str().unwrap().len() > 40);
        let name = declaration["name"].as_str().unwrap();
        // Gemini CLI 0.61 has read_many_files but does not declare it to
        // the model; its schema follows the CLI's source.
        if name == "read_many_files" {
            continue;
        }
        let mut theirs = reference
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not a Gemini CLI tool"))["parametersJsonSchema"]
            .clone();
        let mut ours = declaration["parametersJsonSchema"].clone();
        strip_descriptions(&mut theirs);
        strip_descriptions(&mut ours);
        assert_eq!(ours, theirs, "schema of {name}");
    }
}

#[tokio::test]
async fn b_list_dir_round_trip_matches_gemini_cli() {
    let mut h = Harness::start(scenario("b_list_dir"));
    let events = h.turn("List the files here").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(
        text(&events),
        "The directory contains hello.txt, README.md and src/."
    );

    let bodies = h.bodies();
    assert_eq!(bodies.len(), 2);
    let contents = bodies[1]["contents"].as_array().unwrap().clone();
    let fixture = gemini_cli_fixture("b_list_dir_req02_main_streamGenerateContent.json");
    let expected = with_workspace(&fixture["body"]["contents"], &h.ws());
    let expected = expected.as_array().unwrap();
    assert_eq!(contents.len(), expected.len());

    // The model's call, echoed with a generated id and the synthetic signature.
    let call_part = &contents[1]["parts"][0];
    let id = call_part["functionCall"]["id"].as_str().unwrap().to_owned();
    let suffix = id
        .strip_prefix("list_directory_")
        .and_then(|rest| rest.strip_suffix("_0"))
        .unwrap();
    assert!(
        suffix.len() >= 13 && suffix.chars().all(|c| c.is_ascii_digit()),
        "{id}"
    );
    let fixture_id = expected[1]["parts"][0]["functionCall"]["id"]
        .as_str()
        .unwrap();
    let normalise = |v: &Value| with_id(v, &id, fixture_id);
    assert_eq!(normalise(&contents[1]), expected[1]);
    assert_eq!(normalise(&contents[2]), expected[2]);
    assert_valid_history(&contents);

    let kinds = event_types(&events);
    let request_at = kinds.iter().position(|k| k == "tool_call_request").unwrap();
    let response_at = kinds
        .iter()
        .position(|k| k == "tool_call_response")
        .unwrap();
    assert!(request_at < response_at);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolCallRequest { call_id, .. } if *call_id == id))
    );
}

fn with_id(value: &Value, ours: &str, theirs: &str) -> Value {
    serde_json::from_str(&value.to_string().replace(ours, theirs)).unwrap()
}

#[tokio::test]
async fn parallel_calls_answered_in_one_message_in_call_order() {
    let scenario = json!({"steps": [
        {"functionCalls": [
            {"name": "list_directory", "args": {"dir_path": "{{WORKSPACE}}/src"}},
            {"name": "list_directory", "args": {"dir_path": "{{WORKSPACE}}"}},
            {"name": "list_directory", "args": {"dir_path": "missing"}}
        ]},
        {"text": "done"}
    ]});
    let mut h = Harness::start(scenario);
    let events = h.turn("look around").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let contents = h.bodies()[1]["contents"].as_array().unwrap().clone();
    assert_eq!(contents.len(), 3);
    let responses: Vec<&Value> = contents[2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["functionResponse"])
        .collect();
    assert_eq!(responses.len(), 3);
    let ids: Vec<String> = responses
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    for (i, id) in ids.iter().enumerate() {
        assert!(
            id.starts_with("list_directory_") && id.ends_with(&format!("_{i}")),
            "{id}"
        );
    }
    assert!(
        responses[0]["response"]["output"]
            .as_str()
            .unwrap()
            .contains("main.rs")
    );
    assert!(
        responses[1]["response"]["output"]
            .as_str()
            .unwrap()
            .contains("[DIR] src")
    );
    assert!(
        responses[2]["response"]["error"]
            .as_str()
            .unwrap()
            .contains("not found")
    );
    // Only the first call of the model message carries the synthetic signature.
    let parts = contents[1]["parts"].as_array().unwrap();
    assert_eq!(
        parts[0]["thoughtSignature"],
        "skip_thought_signature_validator"
    );
    assert!(parts[1].get("thoughtSignature").is_none());
}
