//! Slash commands in `-p` prompts, as Gemini CLI's non-interactive mode
//! treats them (checked against Gemini CLI 0.61 run the same way): MCP
//! prompts are fetched and their text sent, `/restore` stops the run with
//! an input error (42), and the other built-in commands and unknown `/words`
//! are sent to the model as typed.

use crate::common;

use common::*;
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn mcp_prompts_run_with_p() {
    let (python, script) = fixture_server();
    let run = Run::new(json!({"steps": [{"text": "Hello, Ada!"}]}));
    workspace_settings(&run, &python, &script, false);
    let out = run.run(&["-p", "/greet Ada", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["response"], "Hello, Ada!");
    assert_eq!(prompt_texts(&run.bodies()[0]), ["Please greet Ada warmly."]);

    // A required argument missing: an input error, nothing sent.
    let run = Run::new(json!({"steps": [{"text": "never"}]}));
    workspace_settings(&run, &python, &script, false);
    let out = run.run(&["-p", "/review only-a-file.rs", "-o", "json"]);
    assert_eq!(out.status.code(), Some(42), "{}", stderr(&out));
    let error = stderr_json(&out);
    assert_eq!(error["error"]["type"], "FatalInputError");
    assert_eq!(
        error["error"]["message"],
        "Missing required argument(s): --focus"
    );
    assert!(run.bodies().is_empty());
}

#[test]
fn restore_needs_the_interactive_ui() {
    let run = Run::new(json!({"steps": [{"text": "never"}]}));
    run.write_settings(
        &run.user_settings(),
        r#"{"general": {"checkpointing": {"enabled": true}}}"#,
    );
    let out = run.run(&["-p", "/restore"]);
    assert_eq!(out.status.code(), Some(42));
    assert!(
        stderr(&out).contains(
            "Exiting due to command result that is not supported in non-interactive mode."
        ),
        "{}",
        stderr(&out)
    );
    assert!(run.bodies().is_empty());
}

#[test]
fn other_built_ins_and_unknown_words_are_sent_as_typed() {
    for prompt in [
        "/stats",
        "/clear",
        "/compress",
        "/mcp",
        "/restore",
        "/nosuch thing",
    ] {
        let run = Run::new(json!({"steps": [{"text": "ok"}]}));
        let out = run.run(&["-p", prompt]);
        assert_eq!(out.status.code(), Some(0), "{prompt}: {}", stderr(&out));
        assert_eq!(prompt_texts(&run.bodies()[0]), [prompt], "{prompt}");
    }
}
