//! Headless runs with a real MCP server (the python fixture server over
//! stdio) configured in the workspace's `.gemini/settings.json`: the model
//! calls an MCP tool and its result reaches the next request; policy rules
//! with `mcpName` and `server__*` wildcards decide untrusted servers' calls;
//! the model lists and reads a server's resources (the paged server, whose
//! slow resources/list does not keep the resource tools out of the first
//! request).
//!
//! The server needs the python `mcp` package: `GD_TEST_MCP_PYTHON` names the
//! interpreter, by default the venv scripts/install-mcp-test-deps.sh
//! installs into target/test-deps.

use crate::common;

use std::path::PathBuf;

use common::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn declared(run: &Run, request: usize) -> Vec<Value> {
    run.bodies()[request]["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .clone()
}

/// The `functionResponse`s in the last content of a request.
fn function_responses(run: &Run, request: usize) -> Vec<Value> {
    let body = &run.bodies()[request];
    body["contents"].as_array().unwrap().last().unwrap()["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["functionResponse"].clone())
        .collect()
}

#[test]
fn the_model_calls_a_trusted_stdio_mcp_tool_and_gets_its_result() {
    let (python, script) = fixture_server();
    let run = Run::new(json!({"steps": [
        {"functionCalls": [
            {"name": "@mcp:fixture:add", "args": {"a": 2, "b": 40}},
            {"name": "@mcp:fixture:echo", "args": {"text": "héllo"}}
        ]},
        {"text": "42 and héllo."}
    ]}));
    workspace_settings(&run, &python, &script, true);
    // Default approval mode: a trusted server's tools run without asking.
    let out = run.run(&["-p", "add and echo", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["response"], "42 and héllo.");

    // The first request already declares the server's tools (discovery
    // completes before it), under Gemini CLI's names, with the server's
    // input schema as parametersJsonSchema.
    let tools = declared(&run, 0);
    let add = tools
        .iter()
        .find(|d| d["name"] == "mcp_fixture_add")
        .unwrap_or_else(|| panic!("mcp_fixture_add not declared: {tools:#?}"));
    assert_eq!(add["description"], "Add two integers.");
    assert_eq!(
        add["parametersJsonSchema"]["properties"]["a"]["type"],
        "integer"
    );
    assert!(
        !tools.iter().any(|d| d["name"] == "mcp_fixture_untyped"),
        "a tool whose schema lacks types must be skipped"
    );

    // Both results reach the second request, in call order, as Gemini CLI
    // sends them (../shared/fixtures/gemini-cli-0.61/d_mcp_tiny_req02).
    let responses = function_responses(&run, 1);
    assert_eq!(responses.len(), 2, "{responses:#?}");
    assert_eq!(responses[0]["name"], "mcp_fixture_add");
    assert_eq!(
        responses[0]["response"],
        json!({"output": "<untrusted_context>\n42\n</untrusted_context>"})
    );
    assert_eq!(responses[1]["name"], "mcp_fixture_echo");
    assert_eq!(
        responses[1]["response"],
        json!({"output": "<untrusted_context>\nhéllo\n</untrusted_context>"})
    );

    let stats = &stdout_json(&out)["stats"]["tools"];
    assert_eq!(stats["totalCalls"], 2);
    assert_eq!(stats["totalSuccess"], 2);
}

#[test]
fn an_mcp_tool_error_goes_back_to_the_model_as_an_error() {
    let (python, script) = fixture_server();
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "@mcp:fixture:fail", "args": {"message": "out of cheese"}}]},
        {"text": "It failed."}
    ]}));
    workspace_settings(&run, &python, &script, true);
    let out = run.run(&["-p", "fail", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let response = &function_responses(&run, 1)[0]["response"];
    let error = response["error"]
        .as_str()
        .unwrap_or_else(|| panic!("an isError result must be sent as an error: {response:#}"));
    assert!(error.contains("out of cheese"), "{error}");
    assert_eq!(stdout_json(&out)["stats"]["tools"]["totalFail"], 1);
}

/// Runs a call of the untrusted fixture server's `add` with a policy file,
/// in `--yolo` when `yolo`; returns the run (for its requests) and the
/// functionResponse's `response`.
fn untrusted_add_with_policy(policy: &str, yolo: bool) -> (Run, Value) {
    let (python, script) = fixture_server();
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "@mcp:fixture:add", "args": {"a": 1, "b": 2}}]},
        {"text": "done"}
    ]}));
    workspace_settings(&run, &python, &script, false);
    run.write_settings(&run.home.join(".gemini/policies/mcp.toml"), policy);
    let mut args = vec!["-p", "add", "-o", "json"];
    if yolo {
        args.push("--yolo");
    }
    let out = run.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["response"], "done");
    let response = function_responses(&run, 1)[0]["response"].clone();
    (run, response)
}

#[test]
fn an_mcp_name_allow_rule_lets_an_untrusted_server_run_headless() {
    let (_run, response) = untrusted_add_with_policy(
        "[[rule]]\nmcpName = \"fixture\"\ndecision = \"allow\"\npriority = 500\n",
        false,
    );
    assert_eq!(
        response,
        json!({"output": "<untrusted_context>\n3\n</untrusted_context>"})
    );
}

#[test]
fn an_untrusted_server_without_rules_cannot_run_headless() {
    // An empty policy file: the default rules ask for untrusted MCP tools,
    // and a headless run cannot ask.
    let (_run, response) = untrusted_add_with_policy("", false);
    assert!(
        response.get("output").is_none() && response["error"].is_string(),
        "an untrusted call must not run without approval: {response:#}"
    );
}

#[test]
fn a_server_wildcard_deny_rule_hides_its_tools_even_in_yolo_mode() {
    let (run, response) = untrusted_add_with_policy(
        "[[rule]]\ntoolName = \"fixture__*\"\ndecision = \"deny\"\npriority = 500\ndenyMessage = \"No fixture tools.\"\n",
        true,
    );
    // A tool denied whatever its arguments is not declared (as in Gemini
    // CLI), so the model's call of it is refused as unknown.
    let names: Vec<Value> = declared(&run, 0)
        .iter()
        .map(|d| d["name"].clone())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("mcp_fixture_")),
        "{names:?}"
    );
    assert!(names.contains(&json!("read_file")), "{names:?}");
    let error = response["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("Tool \"mcp_fixture_add\" not found."),
        "{response:#}"
    );
}

/// The paged server (tools and resources in pages, resources/list slow).
fn paged_settings(run: &Run, python: &str) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/mcp/paged_server.py")
        .to_str()
        .unwrap()
        .to_owned();
    let settings = json!({
        "mcpServers": {
            "paged": {
                "command": python,
                "args": [script],
                "trust": true,
                "timeout": 30000,
                // Each resources/list page takes 0.5 s: the first request
                // goes out before the resources are known.
                "env": {"PAGED_RESOURCES_DELAY": "0.5"}
            }
        }
    });
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        &serde_json::to_string_pretty(&settings).unwrap(),
    );
}

#[test]
fn the_model_lists_and_reads_mcp_resources() {
    let (python, _) = fixture_server();
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "list_mcp_resources", "args": {}}]},
        {"functionCalls": [{"name": "read_mcp_resource", "args": {"uri": "paged:paged://doc/3"}}]},
        {"text": "Doc 3 read."}
    ]}));
    paged_settings(&run, &python);
    let out = run.run(&["-p", "read the docs", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["response"], "Doc 3 read.");

    // The server declared the resources capability: the resource tools are
    // in the first request although its resources/list had not answered.
    let names: Vec<String> = declared(&run, 0)
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect();
    for tool in [
        "read_mcp_resource",
        "list_mcp_resources",
        "mcp_paged_tool_24",
    ] {
        assert!(names.iter().any(|n| n == tool), "{tool} not in {names:?}");
    }

    // The listing waited for every page of the list.
    let listed = &function_responses(&run, 1)[0];
    assert_eq!(listed["name"], "list_mcp_resources");
    let output = listed["response"]["output"].as_str().unwrap();
    assert!(output.starts_with("Available MCP Resources:\n"), "{output}");
    for i in 0..5 {
        assert!(
            output.contains(&format!(
                "- paged:paged://doc/{i} | doc {i} | A paged document\n"
            )),
            "{output}"
        );
    }

    let read = &function_responses(&run, 2)[0];
    assert_eq!(read["name"], "read_mcp_resource");
    assert_eq!(
        read["response"],
        json!({"output": "contents of doc 3\n"}),
        "{read:#}"
    );
    assert_eq!(stdout_json(&out)["stats"]["tools"]["totalSuccess"], 2);
}

/// `mcp list` (Gemini CLI's `gemini mcp list`, the text form of `/mcp`):
/// every configured server with its state, target, tools and prompts.
#[test]
fn mcp_list_shows_servers_with_state_tools_and_prompts() {
    let (python, script) = fixture_server();
    let run = Run::new(json!({"steps": []}));
    let settings = json!({"mcpServers": {
        "fixture": {"command": python, "args": [script, "stdio"], "timeout": 30000},
        "broken": {"command": "/nonexistent/mcp-server"}
    }});
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        &serde_json::to_string_pretty(&settings).unwrap(),
    );
    let out = run.run(&["mcp", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "Configured MCP servers:");
    assert_eq!(
        lines[2],
        format!("✓ fixture: {python} {script} stdio (stdio) - Connected")
    );
    assert!(
        lines[3].starts_with("    Tools: add, echo, image"),
        "{stdout}"
    );
    assert_eq!(lines[4], "    Prompts: greet, review");
    assert!(
        lines[5].starts_with("✗ broken: /nonexistent/mcp-server  (stdio) - Error: "),
        "{stdout}"
    );
    assert!(run.bodies().is_empty(), "no model request");

    let run = Run::new(json!({"steps": []}));
    let out = run.run(&["mcp", "list"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "No MCP servers configured.\n"
    );
}
