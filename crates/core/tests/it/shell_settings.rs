//! `tools.shell.*` applied by the shell tool to real processes: the pager
//! commands see, and the inactivity timeout (the clock restarts with every
//! output; a silent command is stopped with Gemini CLI 0.61's message).
#![cfg(unix)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use gd_core::tools::shell::{self, BackgroundProcesses};
use gd_core::tools::{
    LlmContent, ShellSettings, Tool, ToolContext, ToolErrorKind, ToolResult, ToolServices,
};
use serde_json::json;

struct Setup {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
    run: Arc<dyn Tool>,
}

fn setup(shell: ShellSettings) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut ctx = ToolContext::new(vec![root.clone()]);
    ctx.services = Arc::new(ToolServices {
        temp_dir: root.join("tmp"),
        shell,
        ..Default::default()
    });
    let [run, _, _] = shell::tools(Arc::new(BackgroundProcesses::new()));
    Setup {
        _dir: dir,
        ctx,
        run,
    }
}

async fn exec(setup: &Setup, command: &str) -> ToolResult {
    tokio::time::timeout(
        Duration::from_secs(20),
        setup.run.execute(json!({"command": command}), &setup.ctx),
    )
    .await
    .expect("the tool did not finish in time")
}

fn text(result: &ToolResult) -> &str {
    match &result.llm_content {
        LlmContent::Text(t) => t,
        LlmContent::Parts(_) => panic!("expected text"),
    }
}

#[tokio::test]
async fn commands_get_the_configured_pager() {
    let setup = setup(ShellSettings {
        pager: "less -R".into(),
        ..ShellSettings::default()
    });
    let result = exec(&setup, "echo \"[$PAGER] [$GIT_PAGER]\"").await;
    assert!(
        text(&result).contains("Output: [less -R] [less -R]"),
        "{}",
        text(&result)
    );
    let default = setup_default();
    let result = exec(&default, "echo \"[$PAGER]\"").await;
    assert!(text(&result).contains("Output: [cat]"), "{}", text(&result));
}

fn setup_default() -> Setup {
    setup(ShellSettings::default())
}

#[tokio::test]
async fn a_silent_command_is_stopped_after_the_inactivity_timeout() {
    let setup = setup(ShellSettings {
        inactivity_timeout: Some(Duration::from_millis(800)),
        ..ShellSettings::default()
    });
    let started = Instant::now();
    let result = exec(&setup, "echo first; sleep 30; echo never").await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let error = result.error.as_ref().expect("a timeout is an error");
    assert_eq!(error.kind, ToolErrorKind::Execution);
    let llm = text(&result);
    assert!(
        llm.contains("Command was automatically cancelled because it exceeded the timeout of 0.0 minutes without output. Below is the output before it was cancelled:\nfirst"),
        "{llm}"
    );
    assert!(!llm.contains("never"), "{llm}");
}

#[tokio::test]
async fn output_restarts_the_inactivity_clock() {
    let setup = setup(ShellSettings {
        inactivity_timeout: Some(Duration::from_millis(1500)),
        ..ShellSettings::default()
    });
    // 2.4 s in all, but never 1.5 s without output.
    let result = exec(
        &setup,
        "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.4; done; echo done",
    )
    .await;
    assert!(result.error.is_none(), "{}", text(&result));
    assert!(text(&result).contains("tick 6\ndone"), "{}", text(&result));
}

#[tokio::test]
async fn no_timeout_waits() {
    let setup = setup(ShellSettings {
        inactivity_timeout: None,
        ..ShellSettings::default()
    });
    let result = exec(&setup, "sleep 1; echo late").await;
    assert!(result.error.is_none(), "{}", text(&result));
    assert!(text(&result).contains("Output: late"), "{}", text(&result));
}
