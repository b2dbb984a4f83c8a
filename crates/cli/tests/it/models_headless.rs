//! `auto` headless, as Gemini CLI 0.61 does it: stream-json's `init` names
//! the configured model (`auto`), the prompt is routed, and the stats list
//! each model under its own name (the routed one and the classifier's);
//! a quota error ends the run with the error (no one to ask about a
//! fallback model).

use crate::common;

use common::*;
use gd_fake_gemini::fixtures::scenario;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

#[test]
fn auto_is_the_default_and_routes_each_prompt() {
    let run = Run::new(scenario("b_list_dir"));
    let out = run.run(&["-p", "List the files here", "-o", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = lines(&out);
    assert_eq!(events[0]["type"], "init");
    assert_eq!(events[0]["model"], "auto");
    let requests = run.fake.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v1beta/models/gemini-3.5-flash-lite:generateContent",
            "/v1beta/models/gemini-3.8-flash:streamGenerateContent",
            "/v1beta/models/gemini-3.8-flash:streamGenerateContent",
        ]
    );
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result");
    let models = result["stats"]["models"].as_object().unwrap();
    let mut names: Vec<&String> = models.keys().collect();
    names.sort();
    assert_eq!(names, ["gemini-3.5-flash-lite", "gemini-3.8-flash"]);
}

#[test]
fn json_stats_are_per_routed_model() {
    let run = Run::new(scenario("a_text"));
    let out = run.run(&["-p", "What is 2+2?", "-o", "json", "-m", "auto"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = stdout_json(&out);
    let models = &json["stats"]["models"];
    assert_eq!(models["gemini-3.8-flash"]["api"]["totalRequests"], 1);
    assert_eq!(models["gemini-3.5-flash-lite"]["api"]["totalRequests"], 1);
}

#[test]
fn quota_exhaustion_ends_the_run_without_switching() {
    let mut scenario = scenario("a_text");
    scenario["fail_always"] = json!({"status": 429, "message": "Quota exceeded"});
    let run = Run::new(scenario);
    let out = run
        .command(&["-p", "What is 2+2?", "-o", "json"])
        .env("GEMINI_DESKTOP_MAX_ATTEMPTS", "2")
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    // A failure goes to standard error as Gemini CLI's JSON error object.
    let stderr_text = String::from_utf8(out.stderr.clone()).unwrap();
    let json: Value = stderr_text
        .find("{\n")
        .and_then(|start| serde_json::from_str(&stderr_text[start..]).ok())
        .unwrap_or_else(|| panic!("no JSON error on stderr: {stderr_text}"));
    assert!(
        json["error"]["message"].as_str().unwrap().contains("429"),
        "{json}"
    );
    let mains = run.fake.main_requests();
    assert_eq!(mains.len(), 2, "two attempts, then the error");
    assert!(
        mains
            .iter()
            .all(|r| r.model.as_deref() == Some("gemini-3.8-flash"))
    );
}
