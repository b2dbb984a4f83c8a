//! Subagents headless: the model hands a task to the codebase investigator,
//! whose read-only calls run and whose report comes back as the
//! `invoke_agent` result; a generalist's write is refused in default mode
//! (nobody can be asked) and the parent hears it. Text output shows the
//! agent's steps on stderr; stream-json marks them with `parent_tool_id`.

use crate::common;

use common::*;
use serde_json::{Value, json};

fn investigator_script() -> Value {
    json!({
        "steps": [
            {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "codebase_investigator", "prompt": "Where is the greeting?"}}]},
            {"match_tool": "invoke_agent", "text": "It is in hello.txt."}
        ],
        "branches": [{
            "system_contains": "Codebase Investigator",
            "steps": [
                {"functionCalls": [{"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/hello.txt"}}]},
                {"functionCalls": [{"name": "complete_task", "args": {"report": {
                    "SummaryOfFindings": "hello.txt holds the greeting.",
                    "ExplorationTrace": ["read hello.txt"],
                    "RelevantLocations": []
                }}}]}
            ]
        }]
    })
}

fn invoke_output(body: &Value) -> String {
    body["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["functionResponse"]["name"] == "invoke_agent")
        .map(|p| p["functionResponse"]["response"].to_string())
        .next_back()
        .expect("invoke_agent answered")
}

#[test]
fn the_investigator_runs_headless_and_its_report_reaches_the_model() {
    let run = Run::new(investigator_script());
    let out = run.run(&["-p", "find the greeting"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "It is in hello.txt."
    );
    let err = stderr(&out);
    assert!(err.contains("↳ codebase_investigator: read_file"), "{err}");
    assert!(
        err.contains("↳ codebase_investigator: finished (2 requests"),
        "{err}"
    );

    let bodies = run.bodies();
    assert_eq!(bodies.len(), 4, "parent, agent x2, parent");
    // invoke_agent is declared headless in default mode, as 0.61 does.
    let declared: Vec<&str> = bodies[0]["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(declared.contains(&"invoke_agent"), "{declared:?}");
    let output = invoke_output(&bodies[3]);
    assert!(output.contains("Termination Reason: GOAL"), "{output}");
    assert!(output.contains("hello.txt holds the greeting."), "{output}");
}

#[test]
fn stream_json_marks_the_agents_tool_calls_with_their_parent() {
    let run = Run::new(investigator_script());
    let out = run.run(&["-p", "find the greeting", "-o", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let parent = lines
        .iter()
        .find(|l| l["type"] == "tool_use" && l["tool_name"] == "invoke_agent")
        .expect("the invoke_agent call");
    let nested = lines
        .iter()
        .find(|l| l["type"] == "tool_use" && l["tool_name"] == "read_file")
        .expect("the agent's call");
    assert_eq!(nested["parent_tool_id"], parent["tool_id"]);
    assert_eq!(nested["agent"], "codebase_investigator");
    assert!(parent.get("parent_tool_id").is_none());
    // The agent's own text is not part of the answer.
    let answer: String = lines
        .iter()
        .filter(|l| l["type"] == "message" && l["role"] == "assistant")
        .map(|l| l["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(answer, "It is in hello.txt.");
}

#[test]
fn a_subagents_write_is_refused_headless_in_default_mode() {
    let run = Run::new(json!({
        "steps": [
            {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "generalist", "prompt": "Change the greeting"}}]},
            {"match_tool": "invoke_agent", "text": "The agent could not write."}
        ],
        "branches": [{
            "system_contains": "general-purpose software engineering agent",
            "steps": [
                {"functionCalls": [{"name": "write_file", "args": {"file_path": "{{WORKSPACE}}/hello.txt", "content": "changed\n"}}]},
                {"functionCalls": [{"name": "complete_task", "args": {"result": "Writing was not allowed."}}]}
            ]
        }]
    }));
    let before = std::fs::read(run.ws.join("hello.txt")).unwrap();
    let out = run.run(&["-p", "change the greeting"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read(run.ws.join("hello.txt")).unwrap(), before);
    let bodies = run.bodies();
    // The generalist inherits the session's tools: headless default mode
    // declares no write tool, so the call is refused as unknown to it.
    let refused = bodies[2]["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .find(|p| p["functionResponse"]["name"] == "write_file")
        .expect("write_file answered")["functionResponse"]["response"]
        .clone();
    assert!(refused.get("error").is_some(), "{refused}");
    let output = invoke_output(bodies.last().unwrap());
    assert!(output.contains("Writing was not allowed."), "{output}");
}
