//! The `gemini-desktop-cli` binary run as a user runs it: a real process
//! against the fake Gemini server over loopback, in a temporary HOME and
//! workspace, checked against Gemini CLI 0.61's outputs.

use crate::common;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::*;
use gd_fake_gemini::fixtures::{gemini_cli_fixture, scenario};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

#[test]
fn a_text_json_output_has_gemini_cli_shape() {
    let run = Run::new(scenario("a_text"));
    let out = run.run(&["-p", "What is 2+2?", "-o", "json", "-m", "gemini-2.5-flash"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = stdout_json(&out);
    assert_eq!(json["response"], "Hello from the fake model. 2+2=4.");
    let id = json["session_id"].as_str().unwrap();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let reference = gemini_cli_fixture("a_text_json_stdout.json");
    assert_eq!(shape(&json), shape(&reference));
    assert_eq!(
        json["stats"]["models"]["gemini-2.5-flash"]["api"]["totalRequests"],
        1
    );
    let tokens = &json["stats"]["models"]["gemini-2.5-flash"]["tokens"];
    assert!(tokens["prompt"].as_u64().unwrap() > 100);
    assert_eq!(
        tokens["total"].as_u64(),
        Some(tokens["prompt"].as_u64().unwrap() + tokens["candidates"].as_u64().unwrap())
    );
}

#[test]
fn b_list_dir_json_output_and_tool_stats() {
    let run = Run::new(scenario("b_list_dir"));
    let out = run.run(&[
        "-p",
        "List the files here",
        "-o",
        "json",
        "-m",
        "gemini-2.5-flash",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = stdout_json(&out);
    assert_eq!(
        json["response"],
        "The directory contains hello.txt, README.md and src/."
    );
    let tools = &json["stats"]["tools"];
    assert_eq!(tools["totalCalls"], 1);
    assert_eq!(tools["totalSuccess"], 1);
    assert_eq!(tools["byName"]["list_directory"]["decisions"]["accept"], 1);
    let reference = gemini_cli_fixture("c_shell_json_stdout.json");
    assert_eq!(
        shape(&tools["totalDecisions"]),
        shape(&reference["stats"]["tools"]["totalDecisions"])
    );
    let bodies = run.bodies();
    assert_eq!(bodies.len(), 2);
    let output = &bodies[1]["contents"][2]["parts"][0]["functionResponse"]["response"]["output"];
    assert_eq!(
        output.as_str().unwrap(),
        format!(
            "Directory listing for {}:\n[DIR] src\nhello.txt (6 bytes)\nREADME.md (7 bytes)",
            run.ws.display()
        )
    );
}

#[test]
fn stream_json_events_follow_gemini_cli() {
    let run = Run::new(scenario("b_list_dir"));
    let out = run.run(&[
        "-p",
        "List the files here",
        "-o",
        "stream-json",
        "-m",
        "gemini-2.5-flash",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "init",
            "message",
            "tool_use",
            "tool_result",
            "message",
            "result"
        ]
    );
    let reference: Vec<Value> = std::fs::read_to_string(
        gd_fake_gemini::fixtures::gemini_cli_fixtures_dir()
            .join("c_shell_stream-json_stdout.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    // Gemini CLI's fields, exactly; beyond them only our documented additions
    // to `tool_result` (README "The headless CLI"): what decided the call,
    // and for an edit the hunks it wrote.
    const OUR_ADDITIONS: [&str; 3] = ["decided_by", "hunks", "modified"];
    for (ours, theirs) in events.iter().zip(&reference) {
        let mut a: Vec<&String> = ours
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| ours["type"] != "tool_result" || !OUR_ADDITIONS.contains(&k.as_str()))
            .collect();
        let mut b: Vec<&String> = theirs.as_object().unwrap().keys().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b, "fields of {}", ours["type"]);
    }
    assert!(
        events[3]["decided_by"].is_object(),
        "the tool_result says what decided the call: {}",
        events[3]
    );
    assert_eq!(
        shape(&events[5]["stats"]).as_object().unwrap().len(),
        shape(&reference[5]["stats"]).as_object().unwrap().len()
    );
    let tool_id = events[2]["tool_id"].as_str().unwrap();
    assert!(
        tool_id.starts_with("list_directory__list_directory_"),
        "{tool_id}"
    );
    assert_eq!(events[3]["tool_id"], tool_id);
    assert_eq!(events[3]["status"], "success");
    assert_eq!(events[1]["content"], "List the files here");
    assert_eq!(events[4]["role"], "assistant");
    assert_eq!(events[4]["delta"], true);
    assert_eq!(events[5]["status"], "success");
    assert_eq!(events[5]["stats"]["tool_calls"], 1);
    assert_eq!(events[0]["model"], "gemini-2.5-flash");
}

#[test]
fn text_output_streams_the_answer() {
    let run = Run::new(json!({"chunk_chars": 4, "steps": [{"text": "streamed answer"}]}));
    let out = run.run(&["-p", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "streamed answer\n");
}

#[test]
fn prompt_from_stdin_and_flag_are_combined() {
    let run = Run::new(scenario("a_text"));
    let mut child = run
        .command(&["-p", "Summarise the above.", "-o", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"line one\nline two\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = &run.bodies()[0];
    assert_eq!(
        body["contents"][0]["parts"][1]["text"],
        "line one\nline two\n\nSummarise the above."
    );
}

#[test]
fn missing_prompt_is_an_input_error() {
    let run = Run::new(scenario("a_text"));
    let out = run.run(&["-o", "json"]);
    assert_eq!(out.status.code(), Some(42));
    let err = stderr_json(&out);
    assert_eq!(err["error"]["type"], "FatalInputError");
    assert_eq!(err["error"]["code"], 42);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("No input")
    );
    assert!(run.fake.requests().is_empty());
    let out = run.run(&["-p", "x", "--yolo", "--approval-mode", "default"]);
    assert_eq!(out.status.code(), Some(42));
    assert!(stderr(&out).contains("--approval-mode=yolo"));
    let out = run.run(&["--no-such-flag"]);
    assert_eq!(out.status.code(), Some(42));
}

#[test]
fn auth_problems_exit_41() {
    let run = Run::new(json!({"api_keys": ["the-real-key"], "steps": [{"text": "x"}]}));
    let out = run
        .command(&["-p", "hi", "-o", "json"])
        .env_remove("GEMINI_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(41));
    assert_eq!(
        stderr_json(&out)["error"]["type"],
        "FatalAuthenticationError"
    );
    assert!(stderr(&out).contains("GEMINI_API_KEY"));

    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(
        out.status.code(),
        Some(41),
        "a rejected key: {}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("API key"), "{}", stderr(&out));

    run.write_settings(
        &run.user_settings(),
        r#"{"security": {"auth": {"selectedType": "oauth-personal"}}}"#,
    );
    let out = run.run(&["-p", "hi"]);
    assert_eq!(out.status.code(), Some(41));
    assert!(stderr(&out).contains("oauth-personal"));
}

#[test]
fn broken_settings_exit_52_naming_file_and_line() {
    let run = Run::new(scenario("a_text"));
    let file = run.ws.join(".gemini/settings.json");
    run.write_settings(&file, "{\n  // comments are fine\n  \"model\": {\"name\": \"gemini-2.5-flash\"},\n  \"oops\"\n}\n");
    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(52));
    let err = stderr_json(&out);
    assert_eq!(err["error"]["type"], "FatalConfigError");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{}:5:", file.display())),
        "{message}"
    );
    assert!(message.contains("invalid JSON"), "{message}");
    assert!(run.fake.requests().is_empty());
}

#[test]
fn peer_bench_settings_with_unknown_keys_are_accepted() {
    let run = Run::new(scenario("a_text"));
    // The settings the peer-bench kit gives Gemini CLI: keys we do not use.
    let home_settings = r#"{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false}, "ide": {"enabled": false, "hasSeenNudge": true}}"#;
    run.write_settings(&run.user_settings(), home_settings);
    let out = run.run(&["-p", "What is 2+2?", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn turn_limit_exits_53() {
    let run = Run::new(scenario("b_list_dir"));
    run.write_settings(&run.user_settings(), r#"{"model": {"maxSessionTurns": 1}}"#);
    let out = run.run(&["-p", "List the files here", "-o", "json"]);
    assert_eq!(out.status.code(), Some(53), "{}", stderr(&out));
    assert_eq!(stderr_json(&out)["error"]["type"], "FatalTurnLimitedError");
}

#[test]
fn api_failure_exits_1_with_the_error() {
    let run = Run::new(
        json!({"fail_always": {"status": 500, "message": "backend exploded"}, "steps": []}),
    );
    let out = run
        .command(&["-p", "hi", "-o", "json"])
        .env("GEMINI_DESKTOP_MAX_ATTEMPTS", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_json(&out);
    assert_eq!(err["error"]["type"], "ApiError");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("backend exploded")
    );
    assert_eq!(run.fake.main_requests().len(), 2);
}

/// A 429 asking for a wait of `99999999999999999999` seconds (more than a
/// `Duration` holds) once panicked inside the session; the run now ends
/// with the server's error, at once, as any other API failure.
#[test]
fn an_absurd_retry_after_ends_the_run_with_the_error_not_a_panic() {
    const HUGE: &str = "99999999999999999999";
    let cases = [
        json!({"status": 429, "retry_after": HUGE, "message": "slow down"}),
        json!({"status": 503, "retry_delay": format!("{HUGE}s"), "message": "slow down"}),
    ];
    for fail in cases {
        let run = Run::new(json!({"fail_always": fail, "steps": []}));
        let out = run.run(&["-p", "hi", "-o", "json"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{fail}: {err}");
        assert_eq!(out.status.code(), Some(1), "{fail}: {err}");
        let err = stderr_json(&out);
        assert_eq!(err["error"]["type"], "ApiError", "{fail}: {err}");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains("slow down"), "{fail}: {message}");
        assert_eq!(run.fake.main_requests().len(), 1, "{fail}");
    }
}

#[test]
fn sigint_exits_130() {
    let run =
        Run::new(json!({"faults": [{"request": 1, "kind": "hang"}], "steps": [{"text": "x"}]}));
    let child = run
        .command(&["-p", "hang", "-o", "stream-json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(run.fake.wait_for_requests(1, Duration::from_secs(10)));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let last: Value = serde_json::from_str(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["status"], "error");
    assert_eq!(last["error"]["type"], "FatalCancellationError");
}

#[test]
fn model_precedence_flag_env_settings() {
    let run = Run::new(json!({"steps": [{"text": "x"}]}));
    let model_of = |out: &Output, run: &Run| {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        run.fake
            .main_requests()
            .last()
            .unwrap()
            .model
            .clone()
            .unwrap()
    };
    run.write_settings(
        &run.user_settings(),
        r#"{"model": {"name": "from-settings"}}"#,
    );
    assert_eq!(model_of(&run.run(&["-p", "x"]), &run), "from-settings");
    let out = run
        .command(&["-p", "x"])
        .env("GEMINI_MODEL", "from-env")
        .output()
        .unwrap();
    assert_eq!(model_of(&out, &run), "from-env");
    let out = run
        .command(&["-p", "x", "-m", "from-flag"])
        .env("GEMINI_MODEL", "from-env")
        .output()
        .unwrap();
    assert_eq!(model_of(&out, &run), "from-flag");
}

#[test]
fn api_key_from_dot_env_file() {
    let run = Run::new(json!({"steps": [{"text": "x"}]}));
    std::fs::create_dir_all(run.ws.join(".gemini")).unwrap();
    std::fs::write(
        run.ws.join(".gemini/.env"),
        "GEMINI_API_KEY=key-from-dotenv\n",
    )
    .unwrap();
    let out = run
        .command(&["-p", "x"])
        .env_remove("GEMINI_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let request = &run.fake.main_requests()[0];
    assert_eq!(
        request.credential_sha256_12.as_deref(),
        Some(gd_fake_gemini::credential_fingerprint("key-from-dotenv").as_str())
    );
}

#[test]
fn include_directories_and_custom_system_prompt() {
    let run = Run::new(json!({"steps": [{"text": "x"}]}));
    let extra = run.ws.parent().unwrap().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(extra.join("notes.md"), "n").unwrap();
    std::fs::create_dir_all(run.ws.join(".gemini")).unwrap();
    std::fs::write(run.ws.join(".gemini/system.md"), "Custom system prompt.").unwrap();
    let out = run
        .command(&["-p", "x", "--include-directories", extra.to_str().unwrap()])
        .env("GEMINI_SYSTEM_MD", "true")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = &run.bodies()[0];
    assert_eq!(
        body["systemInstruction"]["parts"][0]["text"],
        "Custom system prompt."
    );
    let context = body["contents"][0]["parts"][0]["text"].as_str().unwrap();
    let extra = extra.canonicalize().unwrap();
    assert!(
        context.contains(&format!("  - {}\n", extra.display())),
        "{context}"
    );
    assert!(context.contains("└───notes.md"), "{context}");

    let out = run
        .command(&["-p", "x"])
        .env("GEMINI_SYSTEM_MD", "/does/not/exist.md")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(52));
    assert!(stderr(&out).contains("/does/not/exist.md"));
}

/// The json `stats` carry exactly the fake server's `usageMetadata` (summed
/// over the run's requests, under the `main` role) and the lines the edits
/// changed, in every key of 0.61's `stats` with the same types.
#[test]
fn json_stats_carry_usage_metadata_roles_and_lines_changed() {
    let usage = |prompt: u64, cached: u64, out: u64, thoughts: u64, tool: u64| {
        json!({"promptTokenCount": prompt, "cachedContentTokenCount": cached,
               "candidatesTokenCount": out, "thoughtsTokenCount": thoughts,
               "toolUsePromptTokenCount": tool,
               "totalTokenCount": prompt + out + thoughts + tool})
    };
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {
            "file_path": "notes.md", "content": "one\ntwo\nthree\n"}}],
         "usage": usage(1000, 200, 10, 5, 3)},
        {"functionCalls": [{"name": "replace", "args": {
            "file_path": "{{WORKSPACE}}/notes.md", "instruction": "shorten",
            "old_string": "two\nthree\n", "new_string": "2\n"}}],
         "usage": usage(1100, 300, 20, 0, 0)},
        {"text": "Done.", "usage": usage(1200, 0, 7, 1, 0)}
    ]}));
    let out = run.run(&[
        "-p",
        "write notes",
        "-o",
        "json",
        "--yolo",
        "-m",
        "gemini-2.5-flash",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = stdout_json(&out);
    let stats = &json["stats"];
    let reference = gemini_cli_fixture("c_shell_json_stdout.json");
    let model = &stats["models"]["gemini-2.5-flash"];
    assert_eq!(
        shape(model),
        shape(&reference["stats"]["models"]["gemini-2.5-flash"])
    );
    assert_eq!(shape(&stats["files"]), shape(&reference["stats"]["files"]));
    let tokens = json!({"input": 3300 - 500, "prompt": 3300, "candidates": 37,
        "total": 3300 + 37 + 6 + 3, "cached": 500, "thoughts": 6, "tool": 3});
    assert_eq!(model["tokens"], tokens);
    assert_eq!(model["roles"]["main"]["tokens"], tokens);
    assert_eq!(model["roles"]["main"]["totalRequests"], 3);
    assert_eq!(model["api"]["totalRequests"], 3);
    // write_file added 3 lines; replace removed 2 and added 1.
    assert_eq!(
        stats["files"],
        json!({"totalLinesAdded": 4, "totalLinesRemoved": 2})
    );
    assert_eq!(stats["tools"]["totalCalls"], 2);
    assert_eq!(
        stats["tools"]["byName"]["replace"]["decisions"]["accept"],
        1
    );
}
