//! Headless runs that use the tools: read → edit → shell → search with
//! `--yolo`, the default mode (writes not offered), deny rules from policy
//! files, and cancelling a running shell command.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

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

#[test]
fn yolo_reads_edits_runs_and_searches() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "read_file", "args": {"file_path": "hello.txt"}}]},
        {"functionCalls": [{"name": "replace", "args": {
            "file_path": "{{WORKSPACE}}/hello.txt", "instruction": "greet differently",
            "old_string": "hello", "new_string": "goodbye"}}]},
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "notes/todo.md", "content": "# Todo\n- ship it\n"}}]},
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "cat hello.txt notes/todo.md", "description": "show"}}]},
        {"functionCalls": [{"name": "grep_search", "args": {"pattern": "ship"}}]},
        {"text": "All done."}
    ]}));
    let out = run.run(&["-p", "tidy up", "-o", "json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["response"], "All done.");

    assert_eq!(
        std::fs::read_to_string(run.ws.join("hello.txt")).unwrap(),
        "goodbye\n"
    );
    assert_eq!(
        std::fs::read_to_string(run.ws.join("notes/todo.md")).unwrap(),
        "# Todo\n- ship it\n"
    );

    assert_eq!(responses(&run, 1)[0], json!({"output": "hello\n"}));
    let replaced = responses(&run, 2)[0]["output"].as_str().unwrap().to_owned();
    assert!(
        replaced.starts_with("Successfully modified file:")
            && replaced.contains("(1 replacements)"),
        "{replaced}"
    );
    let written = responses(&run, 3)[0]["output"].as_str().unwrap().to_owned();
    assert!(
        written.starts_with("Successfully created and wrote to new file:"),
        "{written}"
    );
    let shell = responses(&run, 4)[0]["output"].as_str().unwrap().to_owned();
    assert!(
        shell.starts_with(
            "<untrusted_context>\nOutput: goodbye\n# Todo\n- ship it\nProcess Group PGID: "
        ),
        "{shell}"
    );
    let grep = responses(&run, 5)[0]["output"].as_str().unwrap().to_owned();
    assert!(
        grep.contains("File: notes/todo.md\nL2: - ship it"),
        "{grep}"
    );

    let stats = &stdout_json(&out)["stats"]["tools"];
    assert_eq!(stats["totalCalls"], 5);
    assert_eq!(stats["totalSuccess"], 5);
}

#[test]
fn default_mode_offers_only_read_only_tools_and_refuses_writes() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "x.txt", "content": "x"}}]},
        {"text": "Could not write."}
    ]}));
    let out = run.run(&["-p", "write x", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let names = declared(&run);
    for read_only in [
        "list_directory",
        "read_file",
        "glob",
        "grep_search",
        "google_web_search",
    ] {
        assert!(
            names.contains(&read_only.to_string()),
            "{read_only} missing from {names:?}"
        );
    }
    for writer in [
        "write_file",
        "replace",
        "run_shell_command",
        "web_fetch",
        "save_memory",
    ] {
        assert!(
            !names.contains(&writer.to_string()),
            "{writer} must not be offered: {names:?}"
        );
    }
    let error = responses(&run, 1)[0]["error"].as_str().unwrap().to_owned();
    assert!(
        error.starts_with("Tool \"write_file\" not found."),
        "{error}"
    );
    assert!(!run.ws.join("x.txt").exists());
}

#[test]
fn deny_rules_hold_even_in_yolo_mode() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [
            {"name": "run_shell_command", "args": {"command": "ls && rm hello.txt"}},
            {"name": "run_shell_command", "args": {"command": "echo still here"}}
        ]},
        {"text": "ok"}
    ]}));
    run.write_settings(
        &run.home.join(".gemini/policies/safety.toml"),
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 500\ndenyMessage = \"Deleting files is not allowed.\"\n",
    );
    let out = run.run(&["-p", "clean", "-o", "json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answers = responses(&run, 1);
    assert_eq!(
        answers[0],
        json!({"error": "Tool execution denied by policy. Deleting files is not allowed."})
    );
    assert!(
        answers[1]["output"]
            .as_str()
            .unwrap()
            .contains("Output: still here")
    );
    assert!(
        run.ws.join("hello.txt").exists(),
        "the denied command did not run"
    );
}

#[test]
fn a_broken_policy_file_is_reported_and_the_others_still_apply() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "rm hello.txt"}}]},
        {"text": "ok"}
    ]}));
    let policies = run.home.join(".gemini/policies");
    run.write_settings(
        &policies.join("broken.toml"),
        "[[rule]]\ntoolName = \"x\"\ndecision = \"perhaps\"\npriority = 1\n",
    );
    run.write_settings(
        &policies.join("good.toml"),
        "[[rule]]\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 10\n",
    );
    let out = run.run(&["-p", "x", "-o", "stream-json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    // (YOLO without the sandbox warns too.)
    let warning = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| {
            e["type"] == "error"
                && e["severity"] == "warning"
                && e["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("broken.toml")
        })
        .expect("a warning event");
    let message = warning["message"].as_str().unwrap();
    assert!(message.contains("broken.toml:3:"), "{message}");
    assert!(run.ws.join("hello.txt").exists());
}

#[test]
fn stream_json_reports_the_hunks_each_edit_wrote() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "list.txt",
            "content": "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"}}]},
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "list.txt",
            "content": "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n"}}]},
        {"text": "ok"}
    ]}));
    let out = run.run(&["-p", "x", "-o", "stream-json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2);
    // The new file: one hunk, all added.
    let created = results[0]["hunks"]
        .as_array()
        .expect("hunks of the new file");
    assert_eq!(created.len(), 1);
    assert_eq!(created[0]["added"], 10);
    assert_eq!(created[0]["status"], "applied");
    // The rewrite: the first line and the appended one are two hunks.
    let rewritten = results[1]["hunks"]
        .as_array()
        .expect("hunks of the rewrite");
    assert_eq!(rewritten.len(), 2, "{rewritten:?}");
    assert_eq!(
        (&rewritten[0]["added"], &rewritten[0]["removed"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(
        (&rewritten[1]["added"], &rewritten[1]["removed"]),
        (&json!(1), &json!(0))
    );
    assert!(
        rewritten[0]["file_path"]
            .as_str()
            .unwrap()
            .ends_with("list.txt")
    );
    assert_eq!(results[1]["modified"], false);
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(marker))
                .unwrap_or(false)
        })
        .collect()
}

#[test]
fn interrupting_a_running_command_kills_it_and_exits_130() {
    let marker = format!("gd-test-marker-{}", std::process::id());
    let run = Run::new(json!({"steps": [
        // Two commands, so bash stays the parent and keeps the marker in its command line.
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": format!("sleep 300; echo {marker}")}}]},
        {"text": "never"}
    ]}));
    let child = run
        .command(&["-p", "wait", "--yolo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while processes_with(&marker).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !processes_with(&marker).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "left running: {:?}",
            processes_with(&marker)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// stream-json's `tool_result` says what decided each call (additive `decided_by`): here the
/// user's policy file's deny rule, with its file and line, and yolo mode for the other call.
#[test]
fn stream_json_says_which_rule_decided_each_call() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [
            {"name": "run_shell_command", "args": {"command": "rm hello.txt"}},
            {"name": "run_shell_command", "args": {"command": "echo still here"}}
        ]},
        {"text": "ok"}
    ]}));
    let file = run.home.join(".gemini/policies/safety.toml");
    run.write_settings(
        &file,
        "# no deleting\n[[rule]]\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 10\n",
    );
    let out = run.run(&["-p", "x", "-o", "stream-json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2);
    let rm = &results[0]["decided_by"];
    assert_eq!(rm["kind"], "policy", "{rm}");
    assert_eq!(rm["outcome"], "deny");
    assert_eq!(rm["rule"]["path"], file.display().to_string());
    assert_eq!(rm["rule"]["line"], 2);
    assert_eq!(rm["rule"]["tier"], "user");
    assert_eq!(
        rm["rule"]["text"],
        "[[rule]]\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 10\n"
    );
    let echo = &results[1]["decided_by"];
    assert_eq!(echo["kind"], "approval_mode", "{echo}");
    assert_eq!(echo["mode"], "yolo");
    assert!(run.ws.join("hello.txt").exists());
}

/// Gemini CLI 0.61's default-mode set, `update_topic` first; the topic
/// runs without asking and shows in stream-json as any tool does (0.61
/// renders it as a `tool_use` / `tool_result` pair, the result being its
/// display text).
#[test]
fn default_mode_declares_gemini_clis_set_and_runs_update_topic() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "update_topic", "args": {
            "title": "Survey", "summary": "Nothing done yet.", "strategic_intent": "Read the README."
        }}]},
        {"text": "Surveyed."}
    ]}));
    let out = run.run(&["-p", "look", "-o", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        declared(&run),
        [
            "update_topic",
            "list_directory",
            "read_file",
            "grep_search",
            "glob",
            "google_web_search",
            "enter_plan_mode",
            "invoke_agent"
        ]
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tool_use = lines.iter().find(|l| l["type"] == "tool_use").unwrap();
    assert_eq!(tool_use["tool_name"], "update_topic");
    assert_eq!(tool_use["parameters"]["title"], "Survey");
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["status"], "success");
    assert_eq!(
        result["output"],
        "## 📂 Topic: **Survey**\n\n**Summary:**\nNothing done yet.\n\n> [!STRATEGY]\n> **Intent:** Read the README."
    );
}

/// `tools.legacy` declares the seeds' tools 0.61 dropped.
#[test]
fn legacy_setting_brings_back_read_many_files() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    run.write_settings(
        &run.user_settings(),
        r#"{"tools": {"legacy": ["read_many_files"]}}"#,
    );
    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let names = declared(&run);
    assert_eq!(names.last().map(String::as_str), Some("read_many_files"));
    assert!(!names.contains(&"save_memory".to_owned()));
}
