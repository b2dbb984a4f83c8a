//! Built-in slash commands through the real app: `/stats` shows the session's statistics in
//! the chat (counted by the core from a real exchange with the fake Gemini server), `/clear`
//! empties the chat and starts a new conversation in the same session, so the next request the
//! fake server receives has no earlier turns, while the old conversation stays in the history.
//!
//! Test ids (see `README.md` of this crate): `prompt-input`, `message-user`, `message-model`,
//! `stats-card`, `stats-turns`, `stats-model-row`, `stats-requests`, `stats-input`,
//! `stats-output`.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::{Value, json};

use gd_e2e::E2E_MODEL as MODEL;

/// `/stats`: waits for a new stats card and returns (turns, requests, input, output) of it.
async fn stats(app: &App, cards_before: usize) -> Result<(String, String, u64, u64)> {
    app.type_and_enter("prompt-input", "/stats").await?;
    app.wait_for_count("stats-card", "one more stats card", |n| {
        n == cards_before + 1
    })
    .await?;
    let last = |texts: Vec<String>| texts.last().cloned().unwrap_or_default();
    let number = |text: String| -> Result<u64> {
        text.replace(',', "")
            .trim()
            .parse()
            .with_context(|| format!("a number: {text:?}"))
    };
    let models = app.attrs("stats-model-row", "data-model").await?;
    ensure!(
        models.last() == Some(&Some(MODEL.to_owned())),
        "one row for the model: {models:?}"
    );
    Ok((
        last(app.texts("stats-turns").await?),
        last(app.texts("stats-requests").await?),
        number(last(app.texts("stats-input").await?))?,
        number(last(app.texts("stats-output").await?))?,
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_and_clear() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let fake = FakeGemini::start(json!({"steps": [{"text": "Noted: tulip."}]}));
    let app = App::launch_connected("commands", &[&ws], &fake.base_url()).await?;

    app.type_and_enter("prompt-input", "Remember the word tulip")
        .await?;
    app.wait_for_last_text("message-model", "answered", |t| t.contains("Noted: tulip."))
        .await?;

    // /stats: counted by the core from the exchange that just happened.
    let (turns, requests, input, output) = stats(&app, 0).await?;
    ensure!(
        turns == "1" && requests == "1",
        "turns {turns}, requests {requests}"
    );
    ensure!(input > 0 && output > 0, "tokens in {input}, out {output}");
    ensure!(
        app.count("message-user").await? == 1,
        "/stats is not sent as a message"
    );
    ensure!(fake.main_requests().len() == 1, "/stats made no request");
    app.screenshot("stats").await?;

    // /clear: the chat empties; the same session starts a new conversation.
    app.type_and_enter("prompt-input", "/clear").await?;
    app.wait_for_count("message-model", "the chat is cleared", |n| n == 0)
        .await?;
    ensure!(app.count("message-user").await? == 0);
    ensure!(app.count("stats-card").await? == 0);
    fake.reset(json!({"steps": [{"text": "I do not know any word."}]}), &[]);
    app.type_and_enter("prompt-input", "What was the word?")
        .await?;
    app.wait_for_last_text("message-model", "answered again", |t| {
        t.contains("I do not know any word.")
    })
    .await?;
    let requests = fake.main_requests();
    ensure!(requests.len() == 1, "{} requests", requests.len());
    let second: Value = requests[0].body.clone().context("JSON body")?;
    let contents = second["contents"].as_array().context("contents")?;
    ensure!(
        contents.len() == 1,
        "no earlier turns after /clear: {contents:?}"
    );
    ensure!(
        !second.to_string().contains("tulip"),
        "the old conversation is forgotten"
    );
    let (turns, requests, _, _) = stats(&app, 0).await?;
    ensure!(
        turns == "1" && requests == "1",
        "the statistics started again: turns {turns}, requests {requests}"
    );

    // Both conversations are in the history, each its own session.
    let sessions = app
        .invoke(
            "history_list",
            json!({"workspace": null, "after": null, "limit": 10}),
        )
        .await?
        .map_err(|e| anyhow::anyhow!("history_list: {e}"))?;
    let titles: Vec<&str> = sessions
        .as_array()
        .context("a list")?
        .iter()
        .filter(|s| s["message_count"].as_i64() > Some(0))
        .filter_map(|s| s["title"].as_str())
        .collect();
    ensure!(
        titles.contains(&"Remember the word tulip") && titles.contains(&"What was the word?"),
        "two recorded conversations: {titles:?}"
    );
    app.screenshot("cleared").await?;
    app.close().await
}
