//! Reverting an applied edit after the fact through the real app (issue 17, item 3): the model
//! (the fake Gemini server, over real HTTP) edits two regions of a file; the edit is approved
//! and lands on disk. From its tool card the user reverts one hunk ("View diff" → "Revert this
//! hunk" → confirm), then the rest ("Revert this edit" → confirm): each step is checked on disk,
//! and the next request tells the model what was reverted.
//!
//! Test ids: `tool-card` (`data-call-id`, `data-state`), `approve`, `tool-view-diff`,
//! `revert-hunk` (`data-hunk`), `revert-edit`, `revert-confirm-yes`, `revert-message`,
//! `revert-status`, `message-model`.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::PathBuf;

use anyhow::{Context, Result, ensure};
use fantoccini::Locator;
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const FILE: &str = "list.txt";

/// 20 numbered lines; `changed` ones read "line N changed".
fn lines(changed: &[usize]) -> String {
    (1..=20)
        .map(|i| {
            if changed.contains(&i) {
                format!("line {i} changed\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect()
}

fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    std::fs::write(ws.join(FILE), lines(&[]))?;
    Ok(ws.canonicalize()?)
}

/// The model changes lines 2 and 18 (two hunks), then answers.
fn script() -> Value {
    json!({"steps": [
        {"text": "Changing two lines.", "functionCalls": [{
            "name": "replace",
            "args": {
                "file_path": format!("{{{{WORKSPACE}}}}/{FILE}"),
                "instruction": "Change lines 2 and 18",
                "old_string": lines(&[]),
                "new_string": lines(&[2, 18]),
            }
        }]},
        {"text": "Both lines are changed."}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_is_reverted_hunk_by_hunk_from_its_card_and_the_model_hears_it() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let ws_str = ws.to_str().context("UTF-8 path")?;
    let fake = FakeGemini::start_with_vars(script(), &[("WORKSPACE", ws_str)]);
    let app = App::launch_connected("revert", &[&ws], &fake.base_url()).await?;

    app.type_and_enter("prompt-input", "Change lines 2 and 18")
        .await?;
    let call_id = app
        .wait_for_attr("confirmation", "data-call-id", "names the call", |id| {
            !id.is_empty()
        })
        .await?;
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("Both lines are changed.")
    })
    .await?;
    app.wait_until_gone("cancel", "is hidden once the turn ended")
        .await?;
    ensure!(
        std::fs::read_to_string(ws.join(FILE))? == lines(&[2, 18]),
        "the edit is on disk"
    );

    // One hunk: the second one, from the open diff.
    let card = format!("[data-testid=tool-card][data-call-id=\"{call_id}\"]");
    let view_diff = app
        .client()
        .find(Locator::Css(&format!(
            "{card} [data-testid=tool-view-diff]"
        )))
        .await
        .context("the card's View diff")?;
    app.click_element(&view_diff).await?;
    let hunk = format!("{card} [data-testid=revert-hunk][data-hunk=\"1\"]");
    app.wait_for_script(
        &format!("return document.querySelector('{hunk}') !== null;"),
        "the second hunk offers its revert",
    )
    .await?;
    let revert_hunk = app.client().find(Locator::Css(&hunk)).await?;
    app.click_element(&revert_hunk)
        .await
        .context("click Revert this hunk")?;
    app.click("revert-confirm-yes").await?;
    let message = app
        .wait_for_text("revert-message", "reports the hunk revert", |t| {
            !t.is_empty()
        })
        .await?;
    ensure!(
        message == "Reverted 1 hunk; the rest stays applied.",
        "message: {message:?}"
    );
    ensure!(
        std::fs::read_to_string(ws.join(FILE))? == lines(&[2]),
        "only line 18 went back"
    );
    app.screenshot("revert-hunk-done").await?;

    // The rest of the edit.
    app.click("revert-edit").await?;
    app.click("revert-confirm-yes").await?;
    let status = app
        .wait_for_text("revert-status", "says Reverted", |t| {
            t.starts_with("Reverted")
        })
        .await?;
    ensure!(status.contains("back to what it was"), "status: {status:?}");
    ensure!(
        std::fs::read_to_string(ws.join(FILE))? == lines(&[]),
        "the file is back to its original"
    );

    // The next request tells the model.
    fake.reset(
        json!({"steps": [{"text": "Noted."}]}),
        &[("WORKSPACE", ws_str)],
    );
    app.type_and_enter("prompt-input", "What now?").await?;
    app.wait_for_last_text("message-model", "answered", |t| t.contains("Noted."))
        .await?;
    let last = fake
        .main_requests()
        .into_iter()
        .last()
        .and_then(|r| r.body)
        .context("the last request's body")?;
    let sent = last["contents"].to_string();
    ensure!(
        sent.contains(&format!(
            "You changed {FILE} in call {call_id}; the user reverted hunk 2 of that edit"
        )),
        "the hunk revert is in the next message: {sent}"
    );
    ensure!(
        sent.contains("the user reverted that whole edit"),
        "the second revert is too: {sent}"
    );
    app.close().await
}
