//! A restarted app shows the conversation it showed before the restart, word for word: the
//! transcript's visible text (answers, tool cards, an answer stopped mid-stream and its
//! "Cancelled." note, a loop-detection notice, the turns' footers) and the header's usage meter
//! are compared before and after `restart()` (the workspace's last session reopens), and the
//! usage panel lists the same turns.
//!
//! Three turns against the fake Gemini server: a shell command that exits 3 (a failed card),
//! a long answer stopped with Stop, and an answer the loop detection stops.
//!
//! Test ids (see `README.md` of this crate): `prompt-input`, `confirmation`, `approve`,
//! `cancel`, `message-list`, `message-model`, `notice`, `tool-card`, `usage-meter`,
//! `usage-meter-tokens`, `usage-panel`, `usage-turn-row`, `usage-no-turns`.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Context, Result, ensure};
use gd_e2e::{App, okapi_notes};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

fn usage(prompt: u64, output: u64) -> Value {
    json!({"promptTokenCount": prompt, "candidatesTokenCount": output,
           "totalTokenCount": prompt + output})
}

/// What a person sees of the conversation: the message list's rendered text.
async fn visible_text(app: &App) -> Result<String> {
    let value = app
        .client()
        .execute(
            "const e = document.querySelector('[data-testid=message-list]'); return e ? e.innerText : '';",
            vec![],
        )
        .await
        .context("read the transcript")?;
    Ok(value.as_str().unwrap_or_default().to_owned())
}

async fn meter(app: &App) -> Result<String> {
    let values = app.attrs("usage-meter-tokens", "data-value").await?;
    Ok(values.into_iter().flatten().next().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_app_shows_the_same_conversation_notices_and_usage() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    let ws = ws.canonicalize()?;
    let fake = FakeGemini::start(json!({"steps": [
        {"text": "Checking the build.",
         "functionCalls": [{"name": "run_shell_command", "args": {"command": "exit 3"}}],
         "usage": usage(21_000, 40)},
        {"text": "The check failed with exit code 3.", "usage": usage(22_000, 60)}
    ]}));
    let mut app = App::launch_connected("restart", &[&ws], &fake.base_url()).await?;

    // 1. A command that fails: approved, run, its card failed.
    app.type_and_enter("prompt-input", "Run the check").await?;
    app.wait_for_attr("confirmation", "data-kind", "asks to run it", |k| {
        k == "execute"
    })
    .await?;
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "answered", |t| t.contains("exit code 3"))
        .await?;

    // 2. A long answer, stopped mid-stream.
    let long = okapi_notes(60);
    fake.reset(
        json!({"chunk_chars": 12, "chunk_delay_ms": 40,
               "steps": [{"text": long, "usage": usage(23_000, 900)}]}),
        &[],
    );
    app.type_and_enter("prompt-input", "Tell me all about okapis")
        .await?;
    app.wait_for_last_text("message-model", "streams", |t| t.contains("Okapi note"))
        .await?;
    app.click("cancel").await?;
    app.wait_for_any_text("notice", "says it was stopped", |t| t == "Cancelled.")
        .await?;

    // 3. An answer the loop detection stops.
    let looping = "I am going to check the file again to be sure. ".repeat(30);
    fake.reset(
        json!({"chunk_chars": 20, "steps": [{"text": looping}]}),
        &[],
    );
    app.type_and_enter("prompt-input", "Check it again").await?;
    app.wait_for_any_text("notice", "reports the loop", |t| {
        t.starts_with("Loop detected")
    })
    .await?;
    app.wait_for_attr(
        "usage-meter-tokens",
        "data-value",
        "counts the turns",
        |v| v.parse::<u64>().is_ok_and(|n| n >= 43_100),
    )
    .await?;

    let before = visible_text(&app).await?;
    let meter_before = meter(&app).await?;
    ensure!(before.contains("Cancelled."), "live: {before}");
    app.screenshot("before-restart").await?;

    app.restart().await?;
    app.wait_ready().await?;
    app.wait_for_any_text("notice", "shows the loop notice again", |t| {
        t.starts_with("Loop detected")
    })
    .await?;
    app.wait_for_attr(
        "usage-meter-tokens",
        "data-value",
        "shows the same usage",
        |v| v == meter_before,
    )
    .await?;
    let after = visible_text(&app).await?;
    app.screenshot("after-restart").await?;
    ensure!(
        after == before,
        "the reopened conversation differs\n--- before ---\n{before}\n--- after ---\n{after}"
    );

    // The usage panel lists the three turns, not "No turns yet".
    app.click("usage-meter").await?;
    app.wait_for_count("usage-turn-row", "lists the stored turns", |n| n == 3)
        .await?;
    ensure!(
        app.count("usage-no-turns").await? == 0,
        "the panel says there are no turns"
    );
    app.close().await
}
