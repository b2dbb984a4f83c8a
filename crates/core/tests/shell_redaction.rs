//! `security.environmentVariableRedaction` applied by the shell tool to a
//! real command. A test binary of its own: it sets variables in the
//! process environment, which no other thread may be reading meanwhile (so it
//! stays out of `tests/it`, where every other test of this crate runs).
#![cfg(unix)]

use std::sync::Arc;
use std::time::Duration;

use gd_core::env_redaction::EnvRedaction;
use gd_core::tools::shell::{self, BackgroundProcesses};
use gd_core::tools::{LlmContent, ShellSettings, ToolContext, ToolServices};
use serde_json::json;

async fn run(shell: ShellSettings, command: &str) -> String {
    run_with(shell, json!({"command": command}), None).await
}

/// Runs the tool with `params`; its text, or with `wait_for`, what the
/// command wrote to that file (the session's background processes end
/// when the tools are dropped here, so the wait is inside).
async fn run_with(
    shell: ShellSettings,
    params: serde_json::Value,
    wait_for: Option<&str>,
) -> String {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut ctx = ToolContext::new(vec![root.clone()]);
    ctx.services = Arc::new(ToolServices {
        temp_dir: root.join("tmp"),
        shell,
        ..Default::default()
    });
    let [run, _, _] = shell::tools(Arc::new(BackgroundProcesses::new()));
    let result = tokio::time::timeout(Duration::from_secs(20), run.execute(params, &ctx))
        .await
        .expect("the tool did not finish in time");
    let text = match result.llm_content {
        LlmContent::Text(t) => t,
        LlmContent::Parts(_) => panic!("expected text"),
    };
    let Some(name) = wait_for else {
        return text;
    };
    // The command writes `.tmp` and renames it: the rename says it is
    // complete. A background process sends no event to wait for.
    let path = root.join(name);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the background command wrote nothing: {text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(run);
    std::fs::read_to_string(path).unwrap()
}

/// Redaction on, with one variable allowed and one blocked by name.
fn redacting() -> ShellSettings {
    ShellSettings {
        redaction: Some(EnvRedaction::new(
            &["GD_REDACT_TEST_ALLOWED_KEY".to_owned()],
            &["GD_REDACT_TEST_PLAIN".to_owned()],
        )),
        ..ShellSettings::default()
    }
}

#[test]
fn redaction_keeps_secrets_from_commands() {
    // SAFETY: the only test of this binary, before its runtime (and any
    // other thread) starts.
    unsafe {
        std::env::set_var("GD_REDACT_TEST_TOKEN", "s3cret");
        std::env::set_var("GD_REDACT_TEST_PLAIN", "visible");
        std::env::set_var("GD_REDACT_TEST_ALLOWED_KEY", "ok");
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let probe =
        "echo \"[$GD_REDACT_TEST_TOKEN][$GD_REDACT_TEST_PLAIN][$GD_REDACT_TEST_ALLOWED_KEY]\"";
    let open = runtime.block_on(run(ShellSettings::default(), probe));
    assert!(open.contains("[s3cret][visible][ok]"), "{open}");
    let redacted = runtime.block_on(run(redacting(), probe));
    assert!(redacted.contains("[][][ok]"), "{redacted}");

    // A command started in the background gets the same environment.
    let written = runtime.block_on(run_with(
        redacting(),
        json!({"command": format!("{probe} > bg.tmp && mv bg.tmp bg.txt"), "is_background": true}),
        Some("bg.txt"),
    ));
    assert_eq!(written, "[][][ok]\n");
}
