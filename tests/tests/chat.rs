//! Chatting with the agent through the real app: the UI sends a prompt over
//! IPC, the core talks to the fake Gemini server over real HTTP, and the
//! events stream back into the webview through the session's Channel.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use fantoccini::Locator;
use fantoccini::key::Key;
use gd_e2e::{App, testid};
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::{copy_peer_workspace, scenario};
use serde_json::json;

/// A copy of the peer-bench workspace.
fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    Ok(copy_peer_workspace(temp.path()))
}

async fn launch_connected(name: &str, ws: &Path, fake: &FakeGemini) -> Result<App> {
    let base = fake.base_url();
    let app = App::launch_with_env(
        name,
        &[ws],
        &[
            ("GEMINI_API_KEY", "e2e-key"),
            ("GOOGLE_GEMINI_BASE_URL", &base),
            ("GEMINI_MODEL", "gemini-2.5-flash"),
        ],
    )
    .await?;
    app.wait_for_text("connection-text", "showed the model", |t| {
        t == "gemini-2.5-flash"
    })
    .await?;
    Ok(app)
}

async fn type_prompt(app: &App, text: &str) -> Result<()> {
    let input = app
        .client()
        .find(Locator::Css(&testid("prompt-input")))
        .await?;
    input.send_keys(text).await?;
    input
        .send_keys(&String::from(char::from(Key::Enter)))
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_the_answer_and_shows_the_tool_call() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let fake = FakeGemini::start_with_vars(
        scenario("b_list_dir"),
        &[("WORKSPACE", ws.to_str().context("UTF-8 path")?)],
    );
    let app = launch_connected("chat_round_trip", &ws, &fake).await?;

    type_prompt(&app, "List the files here").await?;
    app.wait_for_text("user-message", "showed the prompt", |t| {
        t == "List the files here"
    })
    .await?;
    app.wait_for_text("assistant-text", "showed the answer", |t| {
        t == "The directory contains hello.txt, README.md and src/."
    })
    .await?;
    let card = app
        .client()
        .find(Locator::Css(&testid("tool-card")))
        .await?;
    assert_eq!(
        card.attr("data-tool").await?.as_deref(),
        Some("list_directory")
    );
    assert_eq!(card.attr("data-status").await?.as_deref(), Some("success"));
    app.wait_for_text("tool-result", "showed the tool result", |t| {
        t == "Listed 3 item(s)."
    })
    .await?;
    app.wait_for_text("turn-footer", "showed the usage footer", |t| {
        t.contains("tokens")
    })
    .await?;

    // What the model was sent: the session context of this workspace, then the tool result.
    let requests = fake.main_requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].body.clone().context("JSON body")?;
    let context = first["contents"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        context.contains(&format!("{}/\n├───hello.txt", ws.display())),
        "{context}"
    );
    assert!(
        requests[0]
            .header("user-agent")
            .unwrap_or_default()
            .ends_with("desktop)"),
        "the desktop surface is named in the User-Agent"
    );
    let second = requests[1].body.clone().context("JSON body")?;
    assert_eq!(
        second["contents"][2]["parts"][0]["functionResponse"]["name"],
        json!("list_directory")
    );

    // The composer is ready for the next prompt.
    let send = app
        .client()
        .find(Locator::Css(&testid("send-button")))
        .await?;
    assert!(send.is_enabled().await?);
    let shot = app.screenshot("chat").await?;
    eprintln!("screenshot: {}", shot.display());
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_cancels_a_running_turn() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let fake = FakeGemini::start(json!({
        "faults": [{"request": 1, "kind": "hang"}],
        "steps": [{"text": "too late"}]
    }));
    let app = launch_connected("chat_cancel", &ws, &fake).await?;
    type_prompt(&app, "take your time").await?;
    app.wait_for_script(
        "const b = document.querySelector('[data-testid=\"cancel-button\"]'); return !!b && !b.hidden;",
        "the Stop button appears while the turn runs",
    )
    .await?;
    app.client()
        .find(Locator::Css(&testid("cancel-button")))
        .await?
        .click()
        .await?;
    app.wait_for_text("notice", "reported the cancellation", |t| t == "Cancelled.")
        .await?;
    let send = app
        .client()
        .find(Locator::Css(&testid("send-button")))
        .await?;
    assert!(send.is_enabled().await?, "Send is available again");
    assert_eq!(fake.main_requests().len(), 1);
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_credentials_the_reason_is_shown() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let app = App::launch("chat_no_key", &[&ws]).await?;
    let notice = app
        .wait_for_text("notice", "explained the missing key", |t| {
            t.contains("GEMINI_API_KEY")
        })
        .await?;
    assert!(notice.contains("not configured"), "{notice}");
    app.wait_for_text("composer-hint", "repeated the reason", |t| {
        t.contains("not configured")
    })
    .await?;
    let send = app
        .client()
        .find(Locator::Css(&testid("send-button")))
        .await?;
    assert!(!send.is_enabled().await?);
    assert!(
        send.attr("title")
            .await?
            .unwrap_or_default()
            .contains("not connected")
    );
    app.close().await
}
