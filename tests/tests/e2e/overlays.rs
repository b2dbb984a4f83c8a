//! The overlay rule in the real WebKit webview (ui/src/lib/overlays.ts): the focus goes back to
//! the prompt box when the file picker closes (Esc or Done), so Enter sends again; Esc closes
//! an open panel with the focus outside it; a panel opened from the keyboard gives the focus
//! back to its button; opening one panel closes the other.
//!
//! Test ids: `picker-open`, `picker`, `picker-search`, `picker-done`, `prompt-input`,
//! `message-model`, `settings-open`, `settings-panel`, `mcp-open`, `mcp-panel`,
//! `history-open`, `history-panel`, `data-overlay` (on every overlay's root).
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Context, Result};
use fantoccini::key::Key;
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::json;

fn key(k: Key) -> String {
    String::from(char::from(k))
}

/// Sends keys to whatever has the focus (as a user typing would).
async fn press(app: &App, keys: &str) -> Result<()> {
    app.client()
        .active_element()
        .await
        .context("the focused element")?
        .send_keys(keys)
        .await
        .context("send keys to the focused element")
}

/// Waits until the focused element is `data-testid=<id>`.
async fn wait_focus(app: &App, id: &str, what: &str) -> Result<()> {
    app.wait_for_script(
        &format!("return document.activeElement?.getAttribute('data-testid') === {id:?};"),
        &format!("{what}: the focus is on {id}"),
    )
    .await
}

async fn launch(
    name: &str,
    steps: serde_json::Value,
) -> Result<(App, FakeGemini, tempfile::TempDir)> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let fake = FakeGemini::start(json!({ "steps": steps }));
    let app = App::launch_connected(name, &[&ws], &fake.base_url()).await?;
    Ok((app, fake, temp))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_picker_gives_the_focus_back_to_the_prompt_box() -> Result<()> {
    let (app, _fake, _temp) =
        launch("overlays_picker_focus", json!([{"text": "First answer."}])).await?;

    // Esc in the picker's search box: back in the prompt box, where typing and Enter send.
    app.click("picker-open").await?;
    wait_focus(&app, "picker-search", "the picker opened").await?;
    app.type_into("picker-search", &key(Key::Escape)).await?;
    app.wait_until_gone("picker", "Esc closed the picker")
        .await?;
    wait_focus(&app, "prompt-input", "after Esc in the picker").await?;
    press(&app, "after the picker").await?;
    press(&app, &key(Key::Enter)).await?;
    app.wait_for_last_text("message-model", "Enter sent the prompt", |t| {
        t.contains("First answer.")
    })
    .await?;

    // Done (a click inside the picker): the same.
    app.click("picker-open").await?;
    wait_focus(&app, "picker-search", "the picker opened again").await?;
    app.click("picker-done").await?;
    app.wait_until_gone("picker", "Done closed the picker")
        .await?;
    wait_focus(&app, "prompt-input", "after Done").await?;
    press(&app, "again").await?;
    press(&app, &key(Key::Enter)).await?;
    app.wait_for_count("message-model", "Enter sent the second prompt", |n| n == 2)
        .await?;
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_closes_the_open_panel_from_anywhere_and_the_focus_returns() -> Result<()> {
    let (app, _fake, _temp) = launch("overlays_esc", json!([{"text": "unused"}])).await?;

    // Esc with the focus outside the panel (in the prompt box) closes it.
    app.click("settings-open").await?;
    app.wait_for_count("settings-panel", "the settings opened", |n| n == 1)
        .await?;
    // (Focused from a script: the docked panel covers part of the composer.)
    app.client()
        .execute(
            "document.querySelector('[data-testid=prompt-input]').focus();",
            vec![],
        )
        .await?;
    wait_focus(&app, "prompt-input", "the focus is in the prompt box").await?;
    press(&app, &key(Key::Escape)).await?;
    app.wait_until_gone(
        "settings-panel",
        "Esc from the prompt box closed the settings",
    )
    .await?;

    // Opening another panel closes the open one.
    app.click("settings-open").await?;
    app.wait_for_count("settings-panel", "the settings opened again", |n| n == 1)
        .await?;
    app.click("mcp-open").await?;
    app.wait_for_count("mcp-panel", "the MCP panel opened", |n| n == 1)
        .await?;
    app.wait_until_gone("settings-panel", "the MCP panel replaced the settings")
        .await?;
    press(&app, &key(Key::Escape)).await?;
    app.wait_until_gone("mcp-panel", "Esc closed the MCP panel")
        .await?;

    // From the keyboard: the history button, Enter, Esc: the focus is back on the button.
    app.client()
        .execute(
            "document.querySelector('[data-testid=history-open]').focus();",
            vec![],
        )
        .await?;
    wait_focus(&app, "history-open", "focused the History button").await?;
    press(&app, &key(Key::Enter)).await?;
    app.wait_for_count("history-panel", "the history opened", |n| n == 1)
        .await?;
    wait_focus(
        &app,
        "history-search",
        "the history's search box took the focus",
    )
    .await?;
    press(&app, &key(Key::Escape)).await?;
    app.wait_until_gone("history-panel", "Esc closed the history")
        .await?;
    wait_focus(&app, "history-open", "after the history closed").await?;
    let shot = app.screenshot("after-overlays").await?;
    eprintln!("screenshot: {}", shot.display());
    app.close().await
}
