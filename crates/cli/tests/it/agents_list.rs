//! `gemini-desktop-cli agents list` and `/agents` as a headless prompt: the
//! real binary in a temporary HOME and workspace with definition files.

use crate::common;

use common::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn agents_files(run: &Run) -> std::path::PathBuf {
    run.write_settings(
        &run.home.join(".gemini/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews changes.\nmax_turns: 7\n---\nYou review.\n",
    );
    run.write_settings(
        &run.ws.join(".gemini/agents/auditor.md"),
        "---\nname: auditor\ndescription: Audits.\nmodel: gemini-2.5-pro\ntools: [read_file]\n---\nAudit.\n",
    );
    run.write_settings(
        &run.ws.join(".gemini/agents/far.md"),
        "---\nkind: remote\nname: far\nagent_card_url: https://example.com/card\n---\n",
    );
    let bad = run.home.join(".gemini/agents/bad.md");
    run.write_settings(
        &bad,
        "---\nname: bad\ndescription: d\ntimeout_mins: -1\n---\n",
    );
    bad
}

fn file_agents(json: &Value) -> Vec<String> {
    json["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["source"] != "built_in")
        .map(|a| a["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn agents_list_as_json_and_text() {
    let run = Run::new(json!({"steps": []}));
    let bad = agents_files(&run);
    let out = run.run(&["agents", "list", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = stdout_json(&out);
    assert_eq!(file_agents(&listing), ["auditor", "far", "reviewer"]);
    let agents = listing["agents"].as_array().unwrap();
    let auditor = agents.iter().find(|a| a["name"] == "auditor").unwrap();
    assert_eq!(auditor["source"], "workspace");
    assert_eq!(auditor["model"], "gemini-2.5-pro");
    assert_eq!(auditor["tools"], json!(["read_file"]));
    assert_eq!(auditor["max_turns"], 30);
    assert_eq!(auditor["timeout_mins"], 10);
    assert_eq!(auditor["enabled"], true);
    let far = agents.iter().find(|a| a["name"] == "far").unwrap();
    assert_eq!(far["kind"], "remote");
    assert_eq!(far["enabled"], false);
    assert_eq!(far["note"], "remote (A2A) agents are not supported yet");
    assert_eq!(
        listing["errors"],
        json!([{
            "path": bad.display().to_string(),
            "line": 4,
            "message": "`timeout_mins` must be a positive whole number, not -1"
        }])
    );
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:4: ", bad.display())), "{err}");
    assert!(
        run.bodies().is_empty(),
        "listing sends nothing to the model"
    );

    let out = run.run(&["agents", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("NAME "), "{text}");
    let reviewer = text.lines().find(|l| l.starts_with("reviewer ")).unwrap();
    let cells: Vec<&str> = reviewer.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "reviewer", "user", "local", "inherit", "7", "10m", "enabled"
        ]
    );
    assert!(text.contains("    Reviews changes.\n"), "{text}");
    assert!(
        text.contains("    note: remote (A2A) agents are not supported yet\n"),
        "{text}"
    );
}

#[test]
fn an_untrusted_folder_lists_only_the_users_agents() {
    let run = Run::new(json!({"steps": []}));
    agents_files(&run);
    run.untrust();
    let out = run.run(&["agents", "list", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(file_agents(&stdout_json(&out)), ["reviewer"]);
    assert!(stderr(&out).contains("not trusted"), "{}", stderr(&out));
}

#[test]
fn the_agents_command_in_a_prompt_prints_the_sessions_agents() {
    let run = Run::new(json!({"steps": [{"text": "never"}]}));
    agents_files(&run);
    let out = run.run(&["-p", "/agents", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        file_agents(&stdout_json(&out)),
        ["auditor", "far", "reviewer"]
    );
    assert!(run.bodies().is_empty(), "/agents does not reach the model");
}

#[test]
fn an_agent_mention_in_a_headless_prompt_adds_the_note() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let bad = agents_files(&run);
    let out = run.run(&["-p", "@reviewer look at @hello.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The broken file is reported when the session starts.
    let err = stderr(&out);
    assert!(
        err.contains(&format!("Agent loading error: {}:4: ", bad.display())),
        "{err}"
    );
    let bodies = run.bodies();
    let texts = prompt_texts(&bodies[0]);
    assert_eq!(texts[0], "@reviewer look at @hello.txt");
    assert!(
        texts[1].starts_with("\n<system_note>\n") && texts[1].contains("'reviewer'"),
        "{texts:?}"
    );
    assert!(
        texts[2].contains("Content from referenced files"),
        "{texts:?}"
    );
    // A mention of a remote agent is not one of an agent the model can call.
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    agents_files(&run);
    let out = run.run(&["-p", "ask @far"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let texts = prompt_texts(&run.bodies()[0]);
    assert!(!texts.concat().contains("<system_note>"), "{texts:?}");
}

#[test]
fn an_enabled_extensions_agents_are_listed_and_a_disabled_ones_are_not() {
    let run = Run::new(json!({"steps": []}));
    let ext = run.home.join(".gemini/extensions/helpers");
    run.write_settings(
        &ext.join("gemini-extension.json"),
        &json!({"name": "helpers", "version": "1.0.0"}).to_string(),
    );
    run.write_settings(
        &ext.join("agents/tester.md"),
        "---\nname: tester\ndescription: Writes tests.\n---\nWrite tests.\n",
    );
    // A user agent of the same name as an extension's wins.
    run.write_settings(
        &ext.join("agents/reviewer.md"),
        "---\nname: reviewer\ndescription: The extension's reviewer.\n---\nReview.\n",
    );
    run.write_settings(
        &run.home.join(".gemini/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Mine.\n---\nYou review.\n",
    );
    let out = run.run(&["agents", "list", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = stdout_json(&out);
    let agents = listing["agents"].as_array().unwrap();
    let tester = agents.iter().find(|a| a["name"] == "tester").unwrap();
    assert_eq!(tester["source"], "extension");
    let reviewer = agents.iter().find(|a| a["name"] == "reviewer").unwrap();
    assert_eq!(reviewer["source"], "user");
    assert_eq!(reviewer["description"], "Mine.");

    let out = run.run(&["extensions", "disable", "helpers", "--scope", "workspace"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = stdout_json(&run.run(&["agents", "list", "-o", "json"]));
    assert!(
        !listing["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "tester"),
        "a disabled extension's agent is listed"
    );
}
