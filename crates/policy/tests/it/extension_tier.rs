//! An enabled extension's `policies/` load at the Extension tier (2),
//! between the built-in defaults and the workspace, and may only make the
//! agent more careful: `allow` rules and rules naming yolo mode are dropped
//! with a message at their line (Gemini CLI 0.61's rule).

use std::fs;
use std::path::Path;

use gd_policy::{Decision, ExtensionPolicies, Mode, PolicyEngine, PolicySources, Tier, ToolCall};
use serde_json::json;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn shell(engine: &PolicyEngine, command: &str, mode: Mode) -> Decision {
    let args = json!({ "command": command });
    engine.decide(
        &ToolCall {
            name: "run_shell_command",
            args: &args,
            mcp_server: None,
            subagent: None,
        },
        mode,
        true,
    )
}

const EXTENSION_RULES: &str = r#"
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git status"
decision = "deny"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandPrefix = "echo"
decision = "allow"
priority = 900

[[rule]]
toolName = "run_shell_command"
commandPrefix = "ls"
decision = "ask_user"
priority = 100
modes = ["yolo", "default"]
"#;

fn load(tmp: &Path, workspace_rules: Option<&str>) -> (PolicyEngine, Vec<gd_policy::PolicyError>) {
    let dir = tmp.join("home/.gemini/extensions/guard/policies");
    write(&dir.join("guard.toml"), EXTENSION_RULES);
    let workspace = tmp.join("ws/.gemini/policies");
    if let Some(text) = workspace_rules {
        write(&workspace.join("ws.toml"), text);
    }
    PolicyEngine::load(&PolicySources {
        workspace_dir: Some(workspace),
        extensions: vec![ExtensionPolicies {
            name: "guard".into(),
            dir,
        }],
        ..PolicySources::default()
    })
}

#[test]
fn an_extension_can_deny_and_ask_but_never_allow() {
    let tmp = tempfile::tempdir().unwrap();
    let (engine, errors) = load(tmp.path(), None);

    // Its deny rule beats the built-in rules (tier 2 over tier 1).
    assert!(matches!(
        shell(&engine, "git status", Mode::Default),
        Decision::Deny { .. }
    ));
    // Its allow rule is gone: `echo` is asked as before.
    assert_eq!(shell(&engine, "echo hi", Mode::Default), Decision::AskUser);
    // A rule naming yolo is dropped whole, so yolo still allows `ls`.
    assert_eq!(shell(&engine, "ls", Mode::Yolo), Decision::Allow);

    let kept: Vec<_> = engine
        .rules()
        .iter()
        .filter(|r| r.tier == Tier::Extension)
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let messages: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("guard.toml:8:1:"), "{messages:?}");
    assert!(messages[0].contains("extension \"guard\" attempted to contribute an ALLOW rule"));
    assert!(messages[1].contains("guard.toml:14:1:"), "{messages:?}");
    assert!(messages[1].contains("a rule for YOLO mode"));
}

#[test]
fn the_workspace_outranks_an_extension() {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = r#"
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git status"
decision = "allow"
priority = 1
"#;
    let (engine, errors) = load(tmp.path(), Some(workspace));
    assert_eq!(errors.len(), 2);
    // Tier 3 + 0.001 beats tier 2 + 0.100.
    assert_eq!(shell(&engine, "git status", Mode::Default), Decision::Allow);
}
