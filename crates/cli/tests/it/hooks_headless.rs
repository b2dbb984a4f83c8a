//! Hooks from real settings files in a headless run (a real process, a
//! temporary HOME, the fake server): what reaches the model, what is
//! printed (0.61's lines, tests/fixtures/hooks), and that an untrusted
//! folder's hooks never run.

use crate::common;

use common::{Run, stderr, stderr_json, stdout_json};
use serde_json::json;

fn write_scenario() -> serde_json::Value {
    json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "{{WORKSPACE}}/out.txt", "content": "hi\n"}}]},
        {"text": "done"}
    ]})
}

fn hook_script(run: &Run, name: &str, body: &str) -> String {
    let path = run.home.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn a_workspace_before_tool_hook_blocks_the_write_as_061_prints_it() {
    let run = Run::new(write_scenario());
    let block = hook_script(
        &run,
        "block.sh",
        "cat >/dev/null; echo 'writes are blocked by policy' >&2; exit 2",
    );
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        &json!({"hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [
            {"type": "command", "name": "no-writes", "command": block}
        ]}]}})
        .to_string(),
    );
    let out = run.run(&["-p", "write the file", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!run.ws.join("out.txt").exists());
    let err = stderr(&out);
    // The lines of tests/fixtures/hooks/gemini-cli-0.61/block.stderr.txt.
    assert!(
        err.contains(
            "Hook execution for BeforeTool: 0 succeeded, 1 failed (no-writes), total duration: "
        ),
        "{err}"
    );
    assert!(
        err.contains("[WARNING] Hook(s) [no-writes] failed for event BeforeTool."),
        "{err}"
    );
    let bodies = run.bodies();
    let response = &bodies[1]["contents"].as_array().unwrap().last().unwrap()["parts"][0]["functionResponse"]
        ["response"];
    assert_eq!(
        response,
        &json!({"error": "Tool execution blocked: writes are blocked by policy"})
    );
}

#[test]
fn an_untrusted_folders_hooks_never_run_and_the_users_do() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let marker = run.home.join("ran");
    let ws_hook = hook_script(
        &run,
        "ws.sh",
        &format!(
            "cat >/dev/null; touch '{}-workspace'; echo '{{}}'",
            marker.display()
        ),
    );
    let user_hook = hook_script(
        &run,
        "user.sh",
        &format!(
            "cat >/dev/null; touch '{}-user'; echo '{{}}'",
            marker.display()
        ),
    );
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        &json!({"hooks": {"BeforeAgent": [{"hooks": [{"command": ws_hook}]}]}}).to_string(),
    );
    run.write_settings(
        &run.user_settings(),
        &json!({
            "security": {"folderTrust": {"enabled": false}},
            "hooks": {"BeforeAgent": [{"hooks": [{"command": user_hook}]}]}
        })
        .to_string(),
    );
    // Restricted mode: the folder is not trusted, the run goes on.
    let out = run
        .command(&["-p", "hello"])
        .env("GEMINI_CLI_TRUST_WORKSPACE", "false")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !run.home.join("ran-workspace").exists(),
        "an untrusted folder's hook ran"
    );
    assert!(
        run.home.join("ran-user").exists(),
        "the user's hook did not run"
    );

    // Trusted, the workspace's hook runs too.
    let out = run.run(&["-p", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(run.home.join("ran-workspace").exists());
}

#[test]
fn a_system_message_is_printed_and_hooks_can_be_turned_off() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let say = hook_script(
        &run,
        "say.sh",
        r#"cat >/dev/null; echo '{"systemMessage":"remember the release freeze"}'"#,
    );
    let settings = |enabled: bool| {
        json!({
            "hooksConfig": {"enabled": enabled},
            "hooks": {"BeforeAgent": [{"hooks": [{"command": say, "name": "freeze"}]}]}
        })
        .to_string()
    };
    run.write_settings(&run.user_settings(), &settings(true));
    let out = run.run(&["-p", "hello"]);
    assert!(
        stderr(&out).contains("Hook system message: remember the release freeze"),
        "{}",
        stderr(&out)
    );
    run.write_settings(&run.user_settings(), &settings(false));
    let out = run.run(&["-p", "hello"]);
    assert!(!stderr(&out).contains("release freeze"), "{}", stderr(&out));
}

#[test]
fn a_broken_hook_definition_is_reported_and_the_others_run() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let marker = run.home.join("ran");
    let good = hook_script(
        &run,
        "good.sh",
        &format!("cat >/dev/null; touch '{}'; echo '{{}}'", marker.display()),
    );
    run.write_settings(
        &run.user_settings(),
        &json!({"hooks": {
            "BeforeEverything": [],
            "BeforeAgent": [{"hooks": [{"type": "command"}, {"command": good}]}]
        }})
        .to_string(),
    );
    let out = run.run(&["-p", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("hooks.BeforeEverything: unknown hook event"),
        "{err}"
    );
    assert!(
        err.contains("hooks.BeforeAgent[0].hooks[0]: a command hook needs a `command`"),
        "{err}"
    );
    assert!(marker.exists());
}

#[test]
fn an_enabled_extensions_hooks_run_and_a_disabled_ones_do_not() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let ext = run.home.join(".gemini/extensions/guard");
    let marker = run.home.join("ext-hook-ran");
    run.write_settings(
        &ext.join("gemini-extension.json"),
        &json!({"name": "guard", "version": "1.0.0"}).to_string(),
    );
    run.write_settings(
        &ext.join("hooks/hooks.json"),
        &json!({"hooks": {"BeforeAgent": [{"hooks": [
            {"name": "guard-log", "command": format!("cat > '{}'; echo '{{}}'", marker.display())}
        ]}]}})
        .to_string(),
    );
    let out = run.run(&["-p", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&marker).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "BeforeAgent");
    assert_eq!(input["prompt"], "hello");

    std::fs::remove_file(&marker).unwrap();
    // The workspace is not under HOME here, so the user scope (0.61's `$HOME/*`) would not
    // reach it: turn it off for this workspace.
    let out = run.run(&["extensions", "disable", "guard", "--scope", "workspace"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run.run(&["-p", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!marker.exists(), "a disabled extension's hook ran");
}

#[test]
fn a_trusted_workspaces_new_hooks_are_named_once() {
    let (run, heading) = workspace_with_a_new_hook(json!({"steps": [{"text": "ok"}]}));
    let first = stderr(&run.run(&["-p", "hello"]));
    assert!(first.contains(heading), "{first}");
    assert!(first.contains("  - audit-log\n"), "{first}");
    // Remembered in 0.61's file: the next run says nothing.
    assert!(run.home.join(".gemini/trusted_hooks.json").exists());
    let second = stderr(&run.run(&["-p", "hello"]));
    assert!(!second.contains(heading), "{second}");
}

/// A workspace with one project hook not seen before; the warning's heading.
fn workspace_with_a_new_hook(scenario: serde_json::Value) -> (Run, &'static str) {
    let run = Run::new(scenario);
    let log = hook_script(&run, "log.sh", "cat >/dev/null; echo '{}'");
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        &json!({"hooks": {"BeforeAgent": [{"hooks": [
            {"type": "command", "name": "audit-log", "command": log}
        ]}]}})
        .to_string(),
    );
    (
        run,
        "The following project-level hooks have been detected in this workspace:",
    )
}

fn the_warning_in(value: &serde_json::Value, heading: &str) -> bool {
    value["warnings"].as_array().is_some_and(|warnings| {
        warnings.iter().any(|w| {
            w.as_str()
                .is_some_and(|w| w.contains(heading) && w.contains("  - audit-log"))
        })
    })
}

/// `-o json` prints nothing until its one object, so the warning goes in
/// it (`warnings`, beside the answer or the error), and the hooks count as
/// seen only once that object is written.
#[test]
fn in_json_output_the_new_hooks_warning_is_in_the_answer_and_then_remembered() {
    let (run, heading) = workspace_with_a_new_hook(json!({"steps": [{"text": "ok"}]}));
    let seen = run.home.join(".gemini/trusted_hooks.json");
    let out = run.run(&["-p", "hello", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = stdout_json(&out);
    assert!(
        the_warning_in(&answer, heading),
        "the json run did not show the hooks warning: {answer:#}"
    );
    assert_eq!(answer["response"], "ok");
    assert!(seen.exists(), "shown but not remembered");
    // Shown once: the next run, in text, says nothing.
    let second = stderr(&run.run(&["-p", "hello"]));
    assert!(!second.contains(heading), "{second}");

    // A failed run carries it in its error object (stderr stays one JSON object).
    let (run, heading) = workspace_with_a_new_hook(
        json!({"fail_always": {"status": 400, "message": "bad request"}, "steps": []}),
    );
    let out = run.run(&["-p", "hello", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let error = stderr_json(&out);
    assert_eq!(error["error"]["type"], "ApiError", "{error:#}");
    assert!(the_warning_in(&error, heading), "{error:#}");
    assert!(run.home.join(".gemini/trusted_hooks.json").exists());
}

/// A run that ends without showing its warnings (an `/agents` listing)
/// must not count the hooks as seen: the next run still names them, here
/// in stream-json's warning event.
#[test]
fn hooks_are_remembered_only_by_a_run_that_showed_the_warning() {
    let (run, heading) = workspace_with_a_new_hook(json!({"steps": [{"text": "ok"}]}));
    let seen = run.home.join(".gemini/trusted_hooks.json");
    let out = run.run(&["-p", "/agents", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !seen.exists(),
        "the /agents run remembered the hooks without showing the warning: {}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );

    let out = run.run(&["-p", "hello", "-o", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let warning = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|event| event["severity"] == "warning")
        .unwrap_or_else(|| panic!("no warning event: {stdout}"));
    let message = warning["message"].as_str().unwrap();
    assert!(message.contains(heading), "{message}");
    assert!(message.contains("  - audit-log"), "{message}");
    assert!(seen.exists(), "shown but not remembered");
    let again = stderr(&run.run(&["-p", "hello"]));
    assert!(!again.contains(heading), "{again}");
}
