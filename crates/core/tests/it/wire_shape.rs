//! The requests the core sends, compared field for field with what Gemini
//! CLI 0.61 sent in the same scenarios (tests/fixtures/gemini-cli-0.61).

use crate::common;

use common::*;
use gd_fake_gemini::fixtures::{gemini_cli_fixture, scenario};
use std::sync::Arc;

use gd_core::ApprovalMode;
use gd_core::launch::declared_tools;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{Event, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

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

/// Tools these declaration checks leave out (none: `activate_skill`'s enum
/// is the built-in skills, the same two 0.61 ships).
const NOT_YET: &[&str] = &[];

/// The declarations a session sends in `mode`, built the way `launch`
/// builds them (default settings, the built-in policies, the built-in
/// skills only: no home folder, an untrusted workspace).
async fn declared_in(mode: ApprovalMode, interactive: bool) -> Vec<Value> {
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        mode,
        interactive,
        None,
    ));
    let settings = gd_settings::Settings::default();
    let skills = Arc::new(gd_core::skills::load(
        &settings,
        None,
        std::path::Path::new("/"),
        false,
    ));
    let mut h = Harness::start_with_tools(
        scenario("a_text"),
        |c| {
            c.approval_mode = mode;
            c.interactive = interactive;
            c.skills = skills.clone();
        },
        policy.clone(),
        |ws| {
            let mut tools = declared_tools(&settings, &policy, ws, &mut Vec::new());
            gd_core::skills::register(&mut tools, &skills, &settings, &policy);
            tools.into()
        },
    );
    h.turn("hi").await;
    let body = h.bodies().remove(0);
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "one tools entry holding all declarations");
    assert_eq!(keys(&tools[0]), ["functionDeclarations"]);
    tools[0]["functionDeclarations"].as_array().unwrap().clone()
}

/// The whole declared set against a fixture: names in order (minus
/// [`NOT_YET`] and what `keep` leaves out), every schema field for field,
/// the declarations' own keys.
fn assert_declares(ours: &[Value], fixture: &str, keep: impl Fn(&str) -> bool) {
    let reference = gemini_cli_fixture(fixture);
    let theirs: Vec<&Value> = reference
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            let name = t["name"].as_str().unwrap();
            !NOT_YET.contains(&name) && keep(name)
        })
        .collect();
    let names = |list: &mut dyn Iterator<Item = &Value>| -> Vec<String> {
        list.map(|d| d["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&mut ours.iter()),
        names(&mut theirs.iter().copied()),
        "declared tools (in order) vs {fixture}"
    );
    for (mine, their) in ours.iter().zip(theirs) {
        let name = their["name"].as_str().unwrap();
        assert_eq!(keys(mine), keys(their), "declaration keys of {name}");
        assert!(
            mine["description"].as_str().unwrap().len() > 40,
            "description of {name}"
        );
        assert_same_schema(
            &mine["parametersJsonSchema"],
            &their["parametersJsonSchema"],
            name,
        );
    }
}

#[tokio::test]
async fn headless_default_mode_declares_gemini_clis_default_set() {
    let ours = declared_in(ApprovalMode::Default, false).await;
    assert_declares(&ours, "tools_default.json", |_| true);
}

#[tokio::test]
async fn headless_yolo_mode_declares_gemini_clis_yolo_set() {
    let ours = declared_in(ApprovalMode::Yolo, false).await;
    assert_declares(&ours, "tools_yolo.json", |_| true);
}

/// Interactive sessions can ask, so every tool is declared, as in 0.61
/// (whose interactive set adds `ask_user`, a terminal prompt tool the app
/// has no use for: the model asks in its answer).
#[tokio::test]
async fn interactive_default_and_auto_edit_declare_the_whole_set() {
    for mode in [ApprovalMode::Default, ApprovalMode::AutoEdit] {
        let ours = declared_in(mode, true).await;
        assert_declares(&ours, "tools_yolo.json", |_| true);
    }
}

/// Headless `auto_edit`: 0.61's write policy allows the file edits and
/// `web_fetch` in autoEdit mode; the shell (and the tools that need it)
/// still cannot be asked about.
#[tokio::test]
async fn headless_auto_edit_adds_the_edit_tools() {
    let ours = declared_in(ApprovalMode::AutoEdit, false).await;
    let default_set: Vec<String> = gemini_cli_fixture("tools_default.json")
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_declares(&ours, "tools_yolo.json", |name| {
        default_set.iter().any(|n| n == name)
            || ["replace", "write_file", "web_fetch"].contains(&name)
    });
}

/// `tools.legacy` brings the seeds' `read_many_files` and `save_memory`
/// back, after 0.61's tools.
#[tokio::test]
async fn legacy_tools_are_declared_only_when_the_setting_names_them() {
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        None,
    ));
    let settings: gd_settings::Settings =
        serde_json::from_value(json!({"tools": {"legacy": ["save_memory", "read_many_files"]}}))
            .unwrap();
    let mut warnings = Vec::new();
    let tools = declared_tools(&settings, &policy, std::path::Path::new("."), &mut warnings);
    let names = tools.names();
    assert_eq!(names[names.len() - 2..], ["read_many_files", "save_memory"]);
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// `general.topicUpdateNarration: false` (0.61's key) leaves `update_topic`
/// out.
#[test]
fn topic_narration_off_leaves_update_topic_out() {
    let policy = PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        None,
    );
    let off: gd_settings::Settings =
        serde_json::from_value(json!({"general": {"topicUpdateNarration": false}})).unwrap();
    let on = gd_settings::Settings::default();
    let path = std::path::Path::new(".");
    let names = |s| declared_tools(s, &policy, path, &mut Vec::new()).names();
    assert!(!names(&off).contains(&"update_topic".to_owned()));
    assert_eq!(names(&on)[0], "update_topic");
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

#[tokio::test]
async fn c_shell_round_trip_matches_gemini_cli() {
    let mut h = Harness::start(scenario("c_shell"));
    let events = h.turn("Run echo hi").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(text(&events), "The command printed: hi");

    let bodies = h.bodies();
    assert_eq!(bodies.len(), 2);
    let contents = bodies[1]["contents"].as_array().unwrap().clone();
    let fixture = gemini_cli_fixture("c_shell_req02_main_streamGenerateContent.json");
    let expected = with_workspace(&fixture["body"]["contents"], &h.ws());
    let expected = expected.as_array().unwrap();
    assert_eq!(contents.len(), expected.len());
    let id = contents[1]["parts"][0]["functionCall"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        id.starts_with("run_shell_command_") && id.ends_with("_0"),
        "{id}"
    );
    let fixture_id = expected[1]["parts"][0]["functionCall"]["id"]
        .as_str()
        .unwrap();
    assert_eq!(with_id(&contents[1], &id, fixture_id), expected[1]);

    // The result differs only in the process group id.
    let pgid_of = |v: &Value| -> String {
        let output = v["parts"][0]["functionResponse"]["response"]["output"]
            .as_str()
            .unwrap()
            .to_owned();
        output
            .split("Process Group PGID: ")
            .nth(1)
            .unwrap()
            .split('\n')
            .next()
            .unwrap()
            .to_owned()
    };
    let ours = with_id(&contents[2], &id, fixture_id).to_string();
    let ours = ours.replace(
        &format!("PGID: {}", pgid_of(&contents[2])),
        &format!("PGID: {}", pgid_of(&expected[2])),
    );
    assert_eq!(serde_json::from_str::<Value>(&ours).unwrap(), expected[2]);
    // The live and final display of the call is the plain output.
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ToolCallResponse { display: Some(d), .. } if d == "hi"
    )));
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
