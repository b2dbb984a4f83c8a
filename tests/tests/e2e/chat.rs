//! Chatting with the agent through the real app: the UI sends a prompt over
//! IPC, the core talks to the fake Gemini server over real HTTP, and the
//! events stream back into the webview through the session's Channel.
//!
//! Written against the UI's test-id contract (see this crate's README): `prompt-input`, `send`,
//! `cancel`, `message-user`, `message-model`, `tool-card` (`data-tool`, `data-state`),
//! `tool-result`, `turn-footer`, `notice`, `composer-hint`, `connection-text`.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::PathBuf;

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::{copy_peer_workspace, scenario};
use serde_json::json;

/// A copy of the peer-bench workspace.
fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    Ok(copy_peer_workspace(temp.path()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_sends_the_prompt_and_the_answer_streams_with_the_tool_call() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let fake = FakeGemini::start_with_vars(
        scenario("b_list_dir"),
        &[("WORKSPACE", ws.to_str().context("UTF-8 path")?)],
    );
    let app = App::launch_connected("chat_round_trip", &[&ws], &fake.base_url()).await?;

    // Enter in the prompt field sends (no click on Send).
    app.type_and_enter("prompt-input", "List the files here")
        .await?;
    app.wait_for_last_text("message-user", "showed the prompt", |t| {
        t.trim() == "List the files here"
    })
    .await?;
    let texts = app.texts("prompt-input").await?;
    ensure!(texts == [""], "the prompt field is emptied: {texts:?}");
    app.wait_for_last_text("message-model", "showed the answer", |t| {
        t.contains("The directory contains hello.txt, README.md and src/.")
    })
    .await?;
    let tools = app.attrs("tool-card", "data-tool").await?;
    ensure!(
        tools == [Some("list_directory".to_owned())],
        "one list_directory card: {tools:?}"
    );
    app.wait_for_attr("tool-card", "data-state", "succeeded", |s| s == "success")
        .await?;
    app.wait_for_text("tool-result", "showed the tool result", |t| {
        t.contains("Listed 3 item(s).")
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

    // The composer is ready for the next prompt, and the Send button sends too.
    fake.reset(json!({"steps": [{"text": "Second answer."}]}), &[]);
    app.type_into("prompt-input", "And now?").await?;
    app.click("send").await?;
    app.wait_for_last_text("message-model", "showed the second answer", |t| {
        t.contains("Second answer.")
    })
    .await?;
    ensure!(app.count("message-user").await? == 2);
    let shot = app.screenshot("chat").await?;
    eprintln!("screenshot: {}", shot.display());
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_a_hanging_turn_and_the_next_prompt_works() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let fake = FakeGemini::start(json!({
        "faults": [{"request": 1, "kind": "hang"}],
        "steps": [{"text": "too late"}]
    }));
    let app = App::launch_connected("chat_cancel", &[&ws], &fake.base_url()).await?;
    app.type_and_enter("prompt-input", "take your time").await?;
    ensure!(fake.wait_for_requests(1, Duration::from_secs(20)));
    // The Stop button is there while the turn runs.
    app.click("cancel").await?;
    app.wait_until_gone("cancel", "is hidden once the turn is cancelled")
        .await?;
    app.wait_for_text("notice", "reported the cancellation", |t| {
        t.to_lowercase().contains("cancel")
    })
    .await?;
    app.interactable("send").await?;
    ensure!(fake.main_requests().len() == 1);
    let answers = app.texts("message-model").await?;
    ensure!(
        !answers.iter().any(|t| t.contains("too late")),
        "{answers:?}"
    );

    // The session goes on: the next prompt is answered (the fault only hit request 1).
    app.type_and_enter("prompt-input", "and now quickly")
        .await?;
    app.wait_for_last_text("message-model", "answered the next prompt", |t| {
        t.contains("too late")
    })
    .await?;
    app.close().await
}

/// Without credentials the sign-in screen replaces the chat (see `signin.rs` for signing in).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_credentials_the_sign_in_screen_is_shown() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let app = App::launch("chat_no_key", &[&ws]).await?;
    app.wait_ready().await?;
    app.wait_for_count("signin-screen", "is shown", |n| n == 1)
        .await?;
    for choice in ["signin-google", "signin-api-key", "signin-vertex"] {
        app.interactable(choice).await?;
    }
    app.wait_for_text("connection-text", "says the agent is not connected", |t| {
        t.contains("not connected")
    })
    .await?;
    ensure!(
        app.count("prompt-input").await? == 0,
        "no prompt field without credentials"
    );
    app.wait_for_text("account-label", "invites to sign in", |t| t == "Sign in")
        .await?;
    app.close().await
}
