//! `extensions install` asking for an extension's settings on a real
//! terminal (a pty driven by Python): each setting is asked with 0.61's
//! prompt, a sensitive one is not echoed, and it is kept in the secret
//! store (here gd-auth's 0600 file: no keyring in this test), never in the
//! extension's `.env`. A launch gives the values to the extension's
//! programs: its stdio servers and command hooks find them in their
//! environment, as in 0.61.

use crate::common;

use std::process::Command;

use common::*;
use serde_json::json;

/// Runs `cli` under a pseudo-terminal, answering each prompt (ending in
/// "› " or "(y/N) ") with the next answer; prints what the terminal showed, exits with
/// the CLI's code.
const PTY_DRIVER: &str = r#"
import os, pty, signal, sys
signal.alarm(30)  # a prompt that never comes fails the test instead of hanging it
answers = sys.argv[1].split("\x1f")
args = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(args[0], args)
shown = b""
def more():
    global shown
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        return False
    shown += chunk
    return bool(chunk)
def prompts():
    return shown.count("› ".encode()) + shown.count(b"(y/N) ")
for i, answer in enumerate(answers):
    while prompts() <= i and more():
        pass
    os.write(fd, answer.encode() + b"\r")
while more():
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write(shown.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;

/// Runs the CLI with `args` under a pty answering `answers`; (exit code,
/// what the terminal showed).
fn on_terminal(run: &Run, args: &[&str], answers: &[&str]) -> (Option<i32>, String) {
    let cli = run.command(args);
    let mut py = Command::new("python3");
    py.arg("-c")
        .arg(PTY_DRIVER)
        .arg(answers.join("\x1f"))
        .arg(cli.get_program())
        .args(cli.get_args())
        .current_dir(cli.get_current_dir().unwrap())
        .env_clear();
    for (key, value) in cli.get_envs() {
        if let Some(value) = value {
            py.env(key, value);
        }
    }
    // No keyring here: a secret goes to gd-auth's 0600 file.
    py.env("GEMINI_DESKTOP_SECRET_STORE", "file");
    let out = py.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// An extension folder asking for a plain and a sensitive setting.
fn needs_settings(run: &Run) -> std::path::PathBuf {
    let src = run.home.parent().unwrap().join("needs-settings");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        json!({"name": "needs-settings", "version": "1.0.0", "settings": [
            {"name": "Region", "description": "Where the service runs", "envVar": "SVC_REGION"},
            {"name": "Token", "description": "Your API token", "envVar": "SVC_TOKEN", "sensitive": true}
        ]})
        .to_string(),
    )
    .unwrap();
    src
}

#[test]
fn install_asks_for_each_setting_and_a_secret_is_neither_echoed_nor_in_a_file() {
    let run = Run::new(json!({"steps": []}));
    let src = needs_settings(&run);
    let secret = "pty-secret-7d1c";
    let (code, shown) = on_terminal(
        &run,
        &["extensions", "install", src.to_str().unwrap(), "--consent"],
        &["eu-west", secret],
    );
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("? Region\r\nWhere the service runs › "),
        "{shown}"
    );
    assert!(shown.contains("? Token\r\nYour API token › "), "{shown}");
    assert!(
        shown.contains("eu-west"),
        "a plain answer is echoed: {shown}"
    );
    assert!(!shown.contains(secret), "the secret was echoed: {shown}");
    assert!(!shown.contains("has missing settings"), "{shown}");
    assert!(
        shown.contains("Extension \"needs-settings\" installed successfully and enabled."),
        "{shown}"
    );

    let ext = run.home.join(".gemini/extensions/needs-settings");
    let env = std::fs::read_to_string(ext.join(".env")).unwrap();
    assert_eq!(env, "SVC_REGION=\"eu-west\"\n");
    let secrets = run.home.join(".gemini/gemini-desktop/secrets.json");
    let kept = std::fs::read_to_string(&secrets).unwrap();
    assert!(kept.contains(secret), "the secret is kept in the store");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&secrets).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // `list -o json` reports both set.
    let list = run.run(&["extensions", "list", "-o", "json"]);
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let settings = &list[0]["contributes"]["settings"];
    assert_eq!(settings[0]["is_set"], true, "{settings}");
    assert_eq!(settings[1]["is_set"], true, "{settings}");
}

#[test]
fn config_sets_one_setting_or_all_asking_before_overwriting() {
    let run = Run::new(json!({"steps": []}));
    let src = needs_settings(&run);
    let out = run.run(&[
        "extensions",
        "install",
        src.to_str().unwrap(),
        "--consent",
        "--skip-settings",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ext = run.home.join(".gemini/extensions/needs-settings");

    // One setting, by its env var.
    let (code, shown) = on_terminal(
        &run,
        &["extensions", "config", "needs-settings", "SVC_REGION"],
        &["us-east"],
    );
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("Setting \"SVC_REGION\" updated."), "{shown}");
    assert_eq!(
        std::fs::read_to_string(ext.join(".env")).unwrap(),
        "SVC_REGION=\"us-east\"\n"
    );

    // All of them: the set one is only replaced when confirmed.
    let (code, shown) = on_terminal(
        &run,
        &["extensions", "config", "needs-settings"],
        &["n", "tok-42"],
    );
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("Configuring settings for \"needs-settings\"..."),
        "{shown}"
    );
    assert!(
        shown.contains("Setting \"Region\" (SVC_REGION) is already set. Overwrite? (y/N) "),
        "{shown}"
    );
    assert!(!shown.contains("tok-42"), "the secret was echoed: {shown}");
    assert_eq!(
        std::fs::read_to_string(ext.join(".env")).unwrap(),
        "SVC_REGION=\"us-east\"\n"
    );
    let list = run.run(&["extensions", "list", "-o", "json"]);
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list[0]["contributes"]["settings"][1]["is_set"], true);

    // The workspace scope writes the workspace's own .env.
    let (code, shown) = on_terminal(
        &run,
        &[
            "extensions",
            "config",
            "needs-settings",
            "Region",
            "--scope",
            "workspace",
        ],
        &["ap-south"],
    );
    assert_eq!(code, Some(0), "{shown}");
    assert_eq!(
        std::fs::read_to_string(run.ws.join(".env")).unwrap(),
        "SVC_REGION=\"ap-south\"\n"
    );

    let bad = run.run(&["extensions", "config", "../x"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("Invalid extension name."),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn setting_values_are_in_the_environment_of_the_extensions_server_and_hooks() {
    let (python, script) = fixture_server();
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "@mcp:fixture:env", "args": {"name": "SVC_REGION"}}]},
        {"text": "done"}
    ]}));
    let ext = run.home.join(".gemini/extensions/env-demo");
    let marker = run.home.join("hook-saw");
    run.write_settings(
        &ext.join("gemini-extension.json"),
        &json!({"name": "env-demo", "version": "1.0.0",
            "settings": [{"name": "Region", "description": "Where", "envVar": "SVC_REGION"}],
            // The entry does not mention SVC_REGION: the server reads it itself.
            "mcpServers": {"fixture": {"command": python, "args": [script]}}})
        .to_string(),
    );
    run.write_settings(
        &ext.join("hooks/hooks.json"),
        &json!({"hooks": {"BeforeAgent": [{"hooks": [{"name": "region-log",
            "command": format!("cat >/dev/null; printf %s \"$SVC_REGION\" > '{}'; echo '{{}}'", marker.display())}]}]}})
        .to_string(),
    );
    std::fs::write(ext.join(".env"), "SVC_REGION=\"eu-west\"\n").unwrap();

    let out = run.run(&["-p", "which region?", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "eu-west");
    let body = &run.bodies()[1];
    let response = &body["contents"].as_array().unwrap().last().unwrap()["parts"][0]["functionResponse"]
        ["response"]["output"];
    assert!(
        response.as_str().unwrap().contains("eu-west"),
        "the server saw: {response}"
    );

    // `experimental.extensionConfig: false`: the programs get no values.
    run.write_settings(
        &run.user_settings(),
        &json!({"experimental": {"extensionConfig": false}}).to_string(),
    );
    let out = run.run(&["-p", "which region?", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "");
}

#[test]
fn settings_left_unset_are_named_and_extension_config_off_turns_them_off() {
    let run = Run::new(json!({"steps": []}));
    let src = needs_settings(&run);
    // No terminal: nothing is asked, and 0.61's warning says what to run.
    let out = run.run(&["extensions", "install", src.to_str().unwrap(), "--consent"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "Extension \"needs-settings\" has missing settings: Region, Token. Please run \"gemini-desktop-cli extensions config needs-settings [setting-name]\" to configure them."
        ),
        "{}",
        stderr(&out)
    );

    run.write_settings(
        &run.user_settings(),
        &json!({"experimental": {"extensionConfig": false}}).to_string(),
    );
    let out = run.run(&["extensions", "config", "needs-settings", "Region"]);
    assert_eq!(out.status.code(), Some(0), "0.61 exits 0 here");
    assert!(
        stderr(&out).contains(
            "Extension configuration is currently disabled. Enable it by setting \"experimental.extensionConfig\" to true."
        ),
        "{}",
        stderr(&out)
    );
    // Nothing was asked or written.
    assert!(
        !run.home
            .join(".gemini/extensions/needs-settings/.env")
            .exists()
    );
    // An install with the switch off says nothing about settings.
    let out = run.run(&["extensions", "uninstall", "needs-settings"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run.run(&["extensions", "install", src.to_str().unwrap(), "--consent"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("missing settings"),
        "{}",
        stderr(&out)
    );
}
