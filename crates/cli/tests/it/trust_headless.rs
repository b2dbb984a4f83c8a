//! Trusted folders in the headless CLI, with Gemini CLI 0.61's behaviour
//! (checked by running it): an untrusted folder ends the run with exit code
//! 55 before anything of the workspace is used; `--skip-trust`,
//! `GEMINI_CLI_TRUST_WORKSPACE=true`, a rule in `trustedFolders.json` or
//! `security.folderTrust.enabled: false` in the user's settings let it run;
//! a run in restricted mode (trust turned off by the environment) leaves the
//! workspace's settings, commands, context files and every MCP server out
//! and keeps the default approval mode.

use crate::common;

use common::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A workspace whose `.gemini` would change what is sent: a model, a custom
/// command, an MCP server that leaves a marker file when started, a
/// context file and an attempt to turn trust off.
fn workspace_with_everything(run: &Run) -> std::path::PathBuf {
    let marker = run.home.join("mcp-started");
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        &serde_json::to_string_pretty(&json!({
            "model": {"name": "gemini-from-workspace"},
            "security": {"folderTrust": {"enabled": false}},
            "mcpServers": {"spy": {
                "command": "sh",
                "args": ["-c", format!("touch '{}'; sleep 30", marker.display())],
                "trust": true
            }}
        }))
        .unwrap(),
    );
    run.write_settings(
        &run.ws.join(".gemini/commands/wscmd.toml"),
        "prompt = \"expanded from the workspace command\"\n",
    );
    run.write_settings(&run.ws.join("GEMINI.md"), "WORKSPACE MEMORY MARKER");
    marker
}

/// The user's prompt (after the session context part).
fn user_text(body: &Value) -> String {
    body["contents"][0]["parts"].as_array().unwrap()[1..]
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

#[test]
fn an_untrusted_folder_exits_55_before_using_anything_of_it() {
    let run = Run::new(json!({"steps": [{"text": "never"}]}));
    let marker = workspace_with_everything(&run);
    run.untrust();
    let out = run.run(&["-p", "/wscmd"]);
    assert_eq!(out.status.code(), Some(55), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("not running in a trusted directory"), "{err}");
    assert!(
        err.contains("--skip-trust") && err.contains("GEMINI_CLI_TRUST_WORKSPACE=true"),
        "{err}"
    );
    assert!(run.fake.requests().is_empty());
    assert!(!marker.exists(), "the workspace's MCP server was started");

    // The JSON error names Gemini CLI's error type.
    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(55));
    let error = &stderr_json(&out)["error"];
    assert_eq!(error["type"], "FatalUntrustedWorkspaceError");
    assert_eq!(error["code"], 55);

    // A DO_NOT_TRUST rule: the same.
    run.write_settings(
        &run.trusted_folders(),
        &json!({run.ws.to_str().unwrap(): "DO_NOT_TRUST"}).to_string(),
    );
    assert_eq!(run.run(&["-p", "hi"]).status.code(), Some(55));
    // A distrusted parent too.
    run.write_settings(
        &run.trusted_folders(),
        &json!({run.ws.parent().unwrap().to_str().unwrap(): "DO_NOT_TRUST"}).to_string(),
    );
    assert_eq!(run.run(&["-p", "hi"]).status.code(), Some(55));
    assert!(run.fake.requests().is_empty());
}

#[test]
fn trusting_the_folder_or_skipping_the_check_loads_the_workspace() {
    let run = Run::new(
        json!({"steps": [{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "four"}]}),
    );
    workspace_with_everything(&run);
    std::fs::remove_file(run.ws.join(".gemini/settings.json")).unwrap();
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        r#"{"model": {"name": "gemini-from-workspace"}}"#,
    );
    // The rule Run::new wrote: trusted.
    let out = run.run(&["-p", "/wscmd"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A TRUST_PARENT rule on a sibling trusts the parent and so this folder.
    let sibling = run.ws.parent().unwrap().join("sibling");
    run.write_settings(
        &run.trusted_folders(),
        &json!({sibling.to_str().unwrap(): "TRUST_PARENT"}).to_string(),
    );
    let out = run.run(&["-p", "/wscmd"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    run.untrust();
    let out = run.run(&["--skip-trust", "-p", "/wscmd"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run
        .command(&["-p", "/wscmd"])
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let requests = run.fake.main_requests();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        assert_eq!(request.model.as_deref(), Some("gemini-from-workspace"));
        let body = request.body.as_ref().unwrap();
        assert_eq!(user_text(body), "expanded from the workspace command");
        let system = body["systemInstruction"].to_string();
        assert!(system.contains("WORKSPACE MEMORY MARKER"), "{system}");
    }
}

#[test]
fn with_folder_trust_off_in_user_settings_every_folder_runs() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    run.untrust();
    run.write_settings(
        &run.user_settings(),
        r#"{"security": {"folderTrust": {"enabled": false}}}"#,
    );
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        r#"{"model": {"name": "gemini-ws"}}"#,
    );
    let out = run.run(&["-p", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        run.fake.main_requests()[0].model.as_deref(),
        Some("gemini-ws")
    );
}

#[test]
fn restricted_mode_leaves_out_the_workspace_mcp_and_privileged_modes() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let marker = workspace_with_everything(&run);
    // Folder trust off, but the environment says the folder is not trusted:
    // the run goes on in restricted mode (as Gemini CLI's does).
    run.write_settings(
        &run.user_settings(),
        &json!({
            "security": {"folderTrust": {"enabled": false}},
            "mcpServers": {"userspy": {
                "command": "sh",
                "args": ["-c", format!("touch '{}-user'; sleep 30", marker.display())],
                "trust": true
            }}
        })
        .to_string(),
    );
    let out = run
        .command(&["-p", "/wscmd", "--yolo"])
        .env("GEMINI_CLI_TRUST_WORKSPACE", "false")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = run.fake.main_requests();
    // The default model is `auto`: the prompt was routed (the fake's
    // classifier answers a low score, so Flash).
    assert_eq!(gd_core::launch::DEFAULT_MODEL, "auto");
    assert_eq!(requests[0].model.as_deref(), Some("gemini-3.8-flash"));
    let body = requests[0].body.as_ref().unwrap();
    assert_eq!(
        user_text(body),
        "/wscmd",
        "the workspace command was expanded"
    );
    assert!(
        !body["systemInstruction"]
            .to_string()
            .contains("WORKSPACE MEMORY MARKER")
    );
    // --yolo was overridden to default: nothing that would ask is offered.
    let tools: Vec<String> = body["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(tools.contains(&"read_file".to_owned()), "{tools:?}");
    assert!(
        !tools.contains(&"run_shell_command".to_owned()),
        "{tools:?}"
    );
    assert!(!tools.contains(&"write_file".to_owned()), "{tools:?}");
    assert!(!marker.exists(), "the workspace's MCP server was started");
    assert!(
        !marker.with_file_name("mcp-started-user").exists(),
        "no MCP server starts in an untrusted folder"
    );
}

#[test]
fn a_broken_trusted_folders_file_is_a_config_error_naming_its_line() {
    let run = Run::new(json!({"steps": [{"text": "never"}]}));
    run.write_settings(
        &run.trusted_folders(),
        &format!("{{\n  \"{}\": \"TRUST_FOLDR\"\n}}\n", run.ws.display()),
    );
    let out = run.run(&["-p", "hi"]);
    assert_eq!(out.status.code(), Some(52), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}:2:", run.trusted_folders().display())),
        "{err}"
    );
    assert!(err.contains("TRUST_FOLDR"), "{err}");
}
