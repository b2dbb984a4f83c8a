//! Gemini CLI 0.61 settings keys, honoured by the headless CLI as a real
//! process against the fake Gemini server: each test writes the key into
//! `~/.gemini/settings.json` and watches what changes on the wire, in the
//! tool results or in the exit.

use crate::common;

use common::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn declared(run: &Run) -> Vec<String> {
    run.bodies()[0]["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect()
}

fn with_settings(scenario: Value, settings: Value) -> Run {
    let run = Run::new(scenario);
    run.write_settings(&run.user_settings(), &settings.to_string());
    run
}

#[test]
fn general_max_attempts_sets_the_attempts_per_request() {
    let run = with_settings(
        json!({"fail_always": {"status": 500, "message": "backend exploded"}, "steps": []}),
        json!({"general": {"maxAttempts": 3}}),
    );
    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(run.fake.main_requests().len(), 3);
}

#[test]
fn security_disable_yolo_mode_refuses_yolo_with_0_61s_message() {
    let run = with_settings(
        json!({"steps": [{"text": "never"}]}),
        json!({"security": {"disableYoloMode": true}}),
    );
    let out = run.run(&["-p", "hi", "-o", "json", "--yolo"]);
    assert_eq!(out.status.code(), Some(52), "{}", stderr(&out));
    let message = stderr_json(&out)["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.starts_with("YOLO mode is disabled by your administrator."),
        "{message}"
    );
    assert!(run.fake.main_requests().is_empty());
    // Without --yolo the run goes on.
    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn tools_allowed_runs_a_tool_headless_without_asking() {
    let run = with_settings(
        json!({"steps": [
            {"functionCalls": [{"name": "write_file", "args": {"file_path": "x.txt", "content": "x"}}]},
            {"text": "Written."}
        ]}),
        json!({"tools": {"allowed": ["write_file"]}}),
    );
    let out = run.run(&["-p", "write x", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(declared(&run).contains(&"write_file".to_owned()));
    assert!(
        !declared(&run).contains(&"replace".to_owned()),
        "only the allowed tool is added"
    );
    assert_eq!(std::fs::read_to_string(run.ws.join("x.txt")).unwrap(), "x");
}

#[test]
fn tools_core_restricts_the_tools_even_in_yolo_mode() {
    let run = with_settings(
        json!({"steps": [
            {"functionCalls": [{"name": "write_file", "args": {"file_path": "x.txt", "content": "x"}}]},
            {"text": "Could not."}
        ]}),
        json!({"tools": {"core": ["read_file", "glob"]}}),
    );
    let out = run.run(&["-p", "write x", "-o", "json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        declared(&run),
        ["read_file", "glob"].map(String::from).to_vec()
    );
    let error = responses(&run, 1)[0]["error"].as_str().unwrap().to_owned();
    assert!(error.contains("write_file"), "{error}");
    assert!(!run.ws.join("x.txt").exists());
}

#[test]
fn truncate_tool_output_threshold_cuts_what_the_model_gets() {
    let big: String = (0..2000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let run = with_settings(
        json!({"steps": [
            {"functionCalls": [{"name": "read_file", "args": {"file_path": "big.txt"}}]},
            {"text": "Read."}
        ]}),
        json!({"tools": {"truncateToolOutputThreshold": 300}}),
    );
    std::fs::write(run.ws.join("big.txt"), &big).unwrap();
    let out = run.run(&["-p", "read big.txt", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let output = responses(&run, 1)[0]["output"].as_str().unwrap().to_owned();
    assert!(
        output
            .contains("output truncated: showing the first 60 and the last 240 of 2000 characters"),
        "{output}"
    );
    assert!(output.len() < 1000, "{}", output.len());

    // 0: no limit.
    let run = with_settings(
        json!({"steps": [
            {"functionCalls": [{"name": "read_file", "args": {"file_path": "big.txt"}}]},
            {"text": "Read."}
        ]}),
        json!({"tools": {"truncateToolOutputThreshold": 0}}),
    );
    std::fs::write(run.ws.join("big.txt"), &big).unwrap();
    let out = run.run(&["-p", "read big.txt", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(responses(&run, 1)[0]["output"], json!(big));
}

#[test]
fn output_format_json_is_the_default_format() {
    let run = with_settings(
        json!({"steps": [{"text": "Hello."}]}),
        json!({"output": {"format": "json"}}),
    );
    let out = run.run(&["-p", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["response"], "Hello.");
    // -o still wins.
    let out = run.run(&["-p", "hi", "-o", "text"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Hello.");
}

#[test]
fn include_directory_tree_false_leaves_the_listing_out() {
    let first_text = |settings: Value| {
        let run = with_settings(json!({"steps": [{"text": "ok"}]}), settings);
        let out = run.run(&["-p", "hi", "-o", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        run.bodies()[0]["contents"][0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(first_text(json!({})).contains("Directory Structure"));
    let without = first_text(json!({"context": {"includeDirectoryTree": false}}));
    assert!(without.contains("<session_context>"), "{without}");
    assert!(!without.contains("Directory Structure"), "{without}");
    assert!(!without.contains("hello.txt"), "{without}");
}

#[test]
fn a_new_key_of_the_wrong_type_is_ignored_with_a_warning() {
    let run = with_settings(
        json!({"fail_always": {"status": 500, "message": "down"}, "steps": []}),
        json!({"general": {"maxAttempts": "ten"}}),
    );
    let out = run
        .command(&["-p", "hi"])
        .env("GEMINI_DESKTOP_MAX_ATTEMPTS", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains(r#"general.maxAttempts must be a whole number (found "ten"); ignored"#),
        "{}",
        stderr(&out)
    );
}

#[test]
fn security_auth_enforced_type_refuses_other_credentials() {
    let run = with_settings(
        json!({"steps": [{"text": "never"}]}),
        json!({"security": {"auth": {"enforcedType": "vertex-ai"}}}),
    );
    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(41), "{}", stderr(&out));
    assert_eq!(
        stderr_json(&out)["error"]["message"],
        "The enforced authentication type is 'vertex-ai', but the current type is 'gemini-api-key'. Please re-authenticate with the correct type."
    );
    assert!(run.fake.main_requests().is_empty());
    // The type in use: the run goes on.
    run.write_settings(
        &run.user_settings(),
        r#"{"security": {"auth": {"enforcedType": "gemini-api-key"}}}"#,
    );
    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn billing_vertex_ai_request_types_are_sent_to_vertex_ai() {
    let run = with_settings(
        json!({"steps": [{"text": "ok"}]}),
        json!({"billing": {"vertexAi": {"requestType": "shared", "sharedRequestType": "flex"}}}),
    );
    let out = run
        .command(&["-p", "hi", "-o", "json"])
        .env_remove("GEMINI_API_KEY")
        .env("GOOGLE_GENAI_USE_VERTEXAI", "true")
        .env("GOOGLE_API_KEY", "vertex-key")
        .env("GOOGLE_VERTEX_BASE_URL", run.fake.base_url())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let request = &run.fake.main_requests()[0];
    assert_eq!(request.api_style, "vertex");
    assert_eq!(
        request.header("x-vertex-ai-llm-request-type"),
        Some("shared")
    );
    assert_eq!(
        request.header("x-vertex-ai-llm-shared-request-type"),
        Some("flex")
    );

    // The Gemini API gets no such header.
    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let request = run.fake.main_requests().last().unwrap().clone();
    assert_eq!(request.api_style, "gemini");
    assert_eq!(request.header("x-vertex-ai-llm-request-type"), None);
}

#[test]
fn policy_paths_add_policy_files() {
    let run = with_settings(
        json!({"steps": [
            {"functionCalls": [
                {"name": "run_shell_command", "args": {"command": "rm hello.txt"}},
                {"name": "run_shell_command", "args": {"command": "echo still here"}}
            ]},
            {"text": "ok"}
        ]}),
        json!({"policyPaths": ["team-policies"]}),
    );
    run.write_settings(
        &run.ws.join("team-policies/no-rm.toml"),
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 500\ndenyMessage = \"No deleting.\"\n",
    );
    let out = run.run(&["-p", "clean", "-o", "json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answers = responses(&run, 1);
    assert_eq!(
        answers[0],
        json!({"error": "Tool execution denied by policy. No deleting."})
    );
    assert!(
        answers[1]["output"]
            .as_str()
            .unwrap()
            .contains("still here")
    );
    assert!(run.ws.join("hello.txt").exists());
}
