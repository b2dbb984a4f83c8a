//! `extensions new` and `extensions validate` through the real binary on a
//! temporary HOME: a template becomes an extension that works as created
//! (its MCP server answers a real tool call from a session against the fake
//! server; its hook's context reaches the model), and validation reports
//! what 0.61 reports.

use crate::common;

use common::*;
use serde_json::json;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ok(run: &Run, args: &[&str]) -> String {
    let out = run.run(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn the_mcp_server_template_answers_a_tool_call_once_linked() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "@mcp:words:word_count", "args": {"text": "one two three"}}]},
        {"text": "done"}
    ]}));
    let made = ok(&run, &["extensions", "new", "words", "mcp-server"]);
    assert!(
        made.contains("Successfully created new extension from template \"mcp-server\" at words."),
        "{made}"
    );
    let checked = ok(&run, &["extensions", "validate", "words"]);
    assert!(
        checked.contains("Extension words has been successfully validated."),
        "{checked}"
    );
    ok(&run, &["extensions", "link", "words", "--consent"]);
    let out = run.run(&["-p", "count the words", "--approval-mode", "yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = run.bodies();
    let answer =
        bodies[1]["contents"].as_array().unwrap().last().unwrap()["parts"][0]["functionResponse"]
            .to_string();
    assert!(
        answer.contains("3 words, 1 lines, 13 characters"),
        "{answer}"
    );
}

#[test]
fn the_hooks_template_tells_the_model_where_the_session_starts() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    ok(&run, &["extensions", "new", "branch-hook", "hooks"]);
    ok(&run, &["extensions", "link", "branch-hook", "--consent"]);
    let out = run.run(&["-p", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = run.bodies()[0].to_string();
    assert!(body.contains("The session started on branch"), "{body}");
}

#[test]
fn new_refuses_an_existing_path_and_an_unknown_template() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    ok(&run, &["extensions", "new", "mine"]);
    let manifest = std::fs::read_to_string(run.ws.join("mine/gemini-extension.json")).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&manifest).unwrap(),
        json!({"name": "mine", "version": "1.0.0"})
    );
    let again = run.run(&["extensions", "new", "mine"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("Path already exists: "),
        "{}",
        stderr(&again)
    );
    let unknown = run.run(&["extensions", "new", "other", "nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stderr(&unknown).contains("Unknown template \"nope\". Choose one of: custom-commands, exclude-tools, hooks, mcp-server, policies, skills, themes-example."), "{}", stderr(&unknown));
    assert!(!run.ws.join("other").exists());
}

#[test]
fn validate_reports_missing_context_files_and_a_loose_version() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let dir = run.ws.join("broken");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("gemini-extension.json"),
        r#"{"name": "broken", "version": "2", "contextFileName": "CONTEXT.md"}"#,
    )
    .unwrap();
    let out = run.run(&["extensions", "validate", "broken"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("Validation warnings:\n  - Warning: Version '2' does not appear to be standard semver (e.g., 1.0.0).\n"), "{err}");
    assert!(err.contains("Validation failed with the following errors:\n  - The following context files referenced in gemini-extension.json are missing: CONTEXT.md\n"), "{err}");
    std::fs::write(dir.join("CONTEXT.md"), "notes").unwrap();
    let fixed = run.run(&["extensions", "validate", "broken"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
}
