//! Per-hunk review through the real app: one turn proposes edits of two files; in the first
//! the user rejects one hunk (a click) and accepts the other, in the second they move between
//! hunks with the keyboard and accept everything. The files on disk and what the model is sent
//! next (each call's functionResponse) are checked: the model hears exactly which hunk was not
//! applied, with its text, so it does not make it again.
//!
//! Test ids: `confirmation` (`data-call-id`), `hunk` (`data-hunk`, `data-status`) with
//! `hunk-accept` / `hunk-reject`, `approve`, `tool-card` (`data-state`).
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fantoccini::key::Key;
use gd_e2e::{App, function_responses};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

/// Twenty numbered lines: changes at both ends are two hunks.
fn numbered(name: &str) -> String {
    (1..=20).map(|i| format!("{name} line {i}\n")).collect()
}

/// `text` with its first line and its last line replaced.
fn both_ends(text: &str, first: &str, last: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    lines[0] = first;
    lines[n - 1] = last;
    lines.join("\n") + "\n"
}

fn write_file(path: &Path, content: &str) -> Value {
    json!({"name": "write_file", "args": {"file_path": path.to_str(), "content": content}})
}

/// Presses `keys` where the focus is (the page's own shortcuts see them).
async fn press(app: &App, keys: &str) -> Result<()> {
    app.client().active_element().await?.send_keys(keys).await?;
    Ok(())
}

/// Waits for the confirmation of a write to `file` and returns its call id.
async fn confirmation_of(app: &App, file: &str) -> Result<String> {
    app.wait_for_last_text("diff-stats", "the edit's counts are shown", |t| {
        t.contains('+')
    })
    .await?;
    app.wait_for_text("confirmation", &format!("asks about {file}"), |t| {
        t.contains(file)
    })
    .await?;
    app.wait_for_count("hunk", "two hunks with controls", |n| n == 2)
        .await?;
    let id = app
        .attrs("confirmation", "data-call-id")
        .await?
        .pop()
        .flatten()
        .context("call id")?;
    Ok(id)
}

async fn statuses(app: &App) -> Result<Vec<String>> {
    Ok(app
        .attrs("hunk", "data-status")
        .await?
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_hunk_rejected_in_one_file_the_rest_written_and_the_model_told() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    let ws = ws.canonicalize()?;
    let (alpha, beta) = (ws.join("alpha.txt"), ws.join("beta.txt"));
    let (alpha_before, beta_before) = (numbered("alpha"), numbered("beta"));
    std::fs::write(&alpha, &alpha_before)?;
    std::fs::write(&beta, &beta_before)?;
    let alpha_proposed = both_ends(&alpha_before, "ALPHA TOP", "ALPHA BOTTOM");
    let beta_proposed = both_ends(&beta_before, "BETA TOP", "BETA BOTTOM");
    let fake = FakeGemini::start(json!({"steps": [
        {"text": "Updating both files.", "functionCalls": [
            write_file(&alpha, &alpha_proposed),
            write_file(&beta, &beta_proposed),
        ]},
        {"text": "Both files are updated as you chose."}
    ]}));
    let app = App::launch_connected("hunk_review", &[&ws], &fake.base_url()).await?;
    app.type_and_enter("prompt-input", "Mark the ends of both files")
        .await?;

    // alpha.txt: reject the second hunk with a click, approve the rest.
    let alpha_call = confirmation_of(&app, "alpha.txt").await?;
    ensure!(statuses(&app).await? == ["accepted", "accepted"]);
    app.click("hunk[data-hunk=1] hunk-reject").await?;
    ensure!(statuses(&app).await? == ["accepted", "rejected"]);
    app.wait_for_last_text("approve", "counts the hunks", |t| {
        t.contains("Apply 1 of 2 hunks")
    })
    .await?;
    let shot = app.screenshot("confirmation").await?;
    eprintln!("hunk review screenshot: {}", shot.display());
    app.click("approve").await?;

    // beta.txt: the keys. J to the second hunk, R rejects it, A accepts it again.
    app.wait_for_script(
        &format!(
            "return document.querySelector('[data-testid=\"confirmation\"]')?.getAttribute('data-call-id') !== '{alpha_call}'"
        ),
        "the second confirmation replaced the first",
    )
    .await?;
    confirmation_of(&app, "beta.txt").await?;
    press(&app, "j").await?;
    press(&app, "r").await?;
    app.wait_for_script(
        "return [...document.querySelectorAll('[data-testid=\"hunk\"]')].map(e => e.dataset.status).join() === 'accepted,rejected'",
        "R rejected the hunk J moved to",
    )
    .await?;
    press(&app, "a").await?;
    app.wait_for_script(
        "return [...document.querySelectorAll('[data-testid=\"hunk\"]')].map(e => e.dataset.status).join() === 'accepted,accepted'",
        "A accepted it again",
    )
    .await?;
    press(
        &app,
        &format!("{}{}", char::from(Key::Control), char::from(Key::Enter)),
    )
    .await?;

    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("Both files are updated as you chose.")
    })
    .await?;
    ensure!(fake.wait_for_requests(2, Duration::from_secs(20)));

    // On disk: alpha has only its first hunk; beta has both.
    let alpha_now = std::fs::read_to_string(&alpha)?;
    ensure!(
        alpha_now == both_ends(&alpha_before, "ALPHA TOP", "alpha line 20"),
        "alpha.txt: {alpha_now}"
    );
    ensure!(std::fs::read_to_string(&beta)? == beta_proposed);

    // What the model hears.
    let body = fake.main_requests()[1]
        .body
        .clone()
        .context("second request")?;
    let responses = function_responses(&body);
    ensure!(responses.len() == 2, "{responses:?}");
    let alpha_said = responses[0]["response"]["output"]
        .as_str()
        .unwrap_or_default();
    ensure!(
        alpha_said.contains("The user applied 1 of 2 proposed changes")
            && alpha_said.contains("Not applied (the user rejected it")
            && alpha_said.contains("+ ALPHA BOTTOM")
            && alpha_said.contains("- alpha line 20"),
        "alpha's response: {alpha_said}"
    );
    let beta_said = responses[1]["response"]["output"]
        .as_str()
        .unwrap_or_default();
    ensure!(
        !beta_said.contains("Not applied") && !beta_said.contains("modified"),
        "beta was approved whole: {beta_said}"
    );
    app.close().await
}
