//! The app shell end to end: the real binary in a real WebKit webview.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`,
//! then `cargo test -p gd-e2e`. See the `gd_e2e` crate docs for the tools it needs.

use std::process::Command;

use anyhow::{Context, Result};
use fantoccini::Locator;
use gd_e2e::{App, app_binary, testid};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_shows_version_and_workspace_from_ipc() -> Result<()> {
    // A workspace path with a space, to check it survives the command line and the IPC round trip.
    let temp = tempfile::tempdir()?;
    let workspace = temp.path().join("sample project");
    std::fs::create_dir(&workspace)?;
    let workspace = workspace.canonicalize()?;

    let app = App::launch("app_shell", &[&workspace]).await?;

    app.wait_for_text("app-title", "read \"Gemini Desktop\"", |text| {
        text == "Gemini Desktop"
    })
    .await?;

    // The version and workspace only appear once the `app_info` command has answered.
    let expected_version = format!("v{}", env!("CARGO_PKG_VERSION"));
    app.wait_for_text("app-version", "showed the app version", |text| {
        text == expected_version
    })
    .await?;
    let expected_workspace = workspace.to_str().context("temp path is UTF-8")?;
    app.wait_for_text("workspace-path", "showed the workspace path", |text| {
        text == expected_workspace
    })
    .await?;
    app.wait_for_script(
        "return document.body.dataset.ready === 'true';",
        "the page marks itself ready",
    )
    .await?;

    // The composer is there, but sending stays disabled until the agent is wired up.
    let send = app
        .client()
        .find(Locator::Css(&testid("send-button")))
        .await?;
    assert!(!send.is_enabled().await?, "Send must be disabled");
    let tooltip = send.attr("title").await?.unwrap_or_default();
    assert!(
        tooltip.contains("not connected"),
        "Send tooltip should say the agent is not connected, got {tooltip:?}"
    );
    let prompt = app
        .client()
        .find(Locator::Css(&testid("prompt-input")))
        .await?;
    assert!(
        prompt.is_displayed().await?,
        "the prompt textarea is visible"
    );
    app.client()
        .find(Locator::Css(&testid("message-list")))
        .await
        .context("the message list is present")?;

    let screenshot = app.screenshot("main-window").await?;
    eprintln!("screenshot: {}", screenshot.display());

    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webview_is_locked_down_by_capabilities_and_csp() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let app = App::launch("lockdown", &[temp.path()]).await?;
    app.wait_for_script(
        "return document.body.dataset.ready === 'true';",
        "the page marks itself ready (app_info is allowed)",
    )
    .await?;

    // Core plugin commands the UI does not use are not granted by the capability.
    let outcome = app
        .client()
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             window.__TAURI_INTERNALS__.invoke('plugin:window|title', { label: 'main' })\
               .then(() => done('allowed'), (error) => done('denied: ' + error));",
            vec![],
        )
        .await?;
    let outcome = outcome.as_str().unwrap_or_default().to_owned();
    assert!(
        outcome.starts_with("denied"),
        "plugin:window|title: {outcome}"
    );

    // The CSP has no 'unsafe-eval': string evaluation is refused.
    let eval = app
        .client()
        .execute(
            "try { new Function('return 1')(); return 'allowed'; } \
             catch (error) { return 'blocked: ' + error; }",
            vec![],
        )
        .await?;
    let eval = eval.as_str().unwrap_or_default().to_owned();
    assert!(eval.starts_with("blocked"), "eval: {eval}");

    app.close().await
}

#[test]
fn a_workspace_that_is_not_a_directory_is_rejected() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let file = temp.path().join("not-a-folder.txt");
    std::fs::write(&file, "hello")?;

    // The command line is checked before any window is created, so no display is needed.
    let output = Command::new(app_binary()?)
        .arg(&file)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .context("run the app")?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(2),
        "exit status; stderr:\n{stderr}"
    );
    assert!(stderr.contains("is not a directory"), "stderr:\n{stderr}");
    Ok(())
}
