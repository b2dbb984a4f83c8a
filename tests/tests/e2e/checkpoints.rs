//! Restoring a checkpoint through the real app: the model (the fake Gemini server, over real
//! HTTP) edits a file and then creates another; both are approved in the UI and land on disk.
//! Restoring the first edit's checkpoint from its tool card ("Restore" → "Restore code") puts the
//! edited file back and removes the file created later, checked on disk.
//!
//! Written against the UI's test-id contract (see `README.md` of this crate): `tool-card`
//! (`data-call-id`, `data-tool`, `data-state`), `approve`, `restore-checkpoint`
//! (`data-checkpoint-id`, `data-scope`), `restore-confirm`, `restore-file`, `restore-code`,
//! `restore-conversation`, `restore-both`, `restore-result` (`data-phase`), `restore-result-text`.
//!
//! The checkpoints go to the app's private `HOME` (`~/.gemini/gemini-desktop/checkpoints`),
//! which the harness creates per launch.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::PathBuf;

use anyhow::{Context, Result, ensure};
use fantoccini::Locator;
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const FILE: &str = "greeting.txt";
const ORIGINAL: &str = "line one\nHello there\nline three\n";
const EDITED: &str = "line one\nHello, world\nline three\n";
const CREATED: &str = "notes.md";
const CREATED_CONTENT: &str = "# Notes\n\nThe greeting is global now.\n";

/// A workspace holding `greeting.txt`.
fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    std::fs::write(ws.join(FILE), ORIGINAL)?;
    Ok(ws.canonicalize()?)
}

/// The model's turn: a `replace` in `greeting.txt`, then a `write_file` creating `notes.md`,
/// then a closing answer.
fn script() -> Value {
    json!({"steps": [
        {"text": "I will greet the world.", "functionCalls": [{
            "name": "replace",
            "args": {
                "file_path": format!("{{{{WORKSPACE}}}}/{FILE}"),
                "instruction": "Greet the world",
                "old_string": "Hello there",
                "new_string": "Hello, world",
            }
        }]},
        {"text": "And I will take notes.", "functionCalls": [{
            "name": "write_file",
            "args": {
                "file_path": format!("{{{{WORKSPACE}}}}/{CREATED}"),
                "content": CREATED_CONTENT,
            }
        }]},
        {"text": "The greeting is global and noted."}
    ]})
}

/// Waits for the pending confirmation of a `tool` call, approves it and waits until the call
/// succeeded; returns its call id.
async fn approve(app: &App, tool: &str) -> Result<String> {
    let call_id = app
        .wait_for_attr("confirmation", "data-call-id", "names the call", |id| {
            !id.is_empty()
        })
        .await?;
    let card = format!("[data-testid=tool-card][data-call-id=\"{call_id}\"]");
    let name = app
        .client()
        .find(Locator::Css(&card))
        .await
        .with_context(|| format!("the tool card of {call_id}"))?
        .attr("data-tool")
        .await?;
    ensure!(
        name.as_deref() == Some(tool),
        "{call_id} is a {name:?} call"
    );
    app.click("approve").await?;
    app.wait_for_script(
        &format!(
            "return document.querySelector('{card}')?.getAttribute('data-state') === 'success';"
        ),
        &format!("{tool} call {call_id} succeeded"),
    )
    .await?;
    Ok(call_id)
}

/// The `restore-checkpoint` button inside the tool card of `call_id`, once it is shown.
async fn restore_button(app: &App, call_id: &str) -> Result<fantoccini::elements::Element> {
    let selector = format!(
        "[data-testid=tool-card][data-call-id=\"{call_id}\"] [data-testid=restore-checkpoint]"
    );
    app.wait_for_script(
        &format!("return document.querySelector('{selector}') !== null;"),
        &format!("the card of {call_id} offers Restore"),
    )
    .await?;
    Ok(app.client().find(Locator::Css(&selector)).await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restoring_the_first_edit_reverts_it_and_removes_a_later_file() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let ws_str = ws.to_str().context("UTF-8 path")?;
    let fake = FakeGemini::start_with_vars(script(), &[("WORKSPACE", ws_str)]);
    let app = App::launch_connected("checkpoints", &[&ws], &fake.base_url()).await?;

    app.type_and_enter("prompt-input", "Make the greeting global and take notes")
        .await?;
    let edit_call = approve(&app, "replace").await?;
    ensure!(
        std::fs::read_to_string(ws.join(FILE))? == EDITED,
        "the edit is on disk"
    );
    let write_call = approve(&app, "write_file").await?;
    ensure!(
        std::fs::read_to_string(ws.join(CREATED))? == CREATED_CONTENT,
        "the new file is on disk"
    );
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("The greeting is global and noted.")
    })
    .await?;
    app.wait_until_gone("cancel", "is hidden once the turn ended")
        .await?;

    // Both edits got a checkpoint; the first one is a full snapshot (the workspace is tiny, so
    // the background baseline is long done), which is what lets a restore remove later files.
    let write_button = restore_button(&app, &write_call).await?;
    let button = restore_button(&app, &edit_call).await?;
    let first_id = button.attr("data-checkpoint-id").await?.unwrap_or_default();
    let second_id = write_button
        .attr("data-checkpoint-id")
        .await?
        .unwrap_or_default();
    ensure!(
        !first_id.is_empty() && first_id != second_id,
        "one checkpoint per edit: {first_id:?}, {second_id:?}"
    );
    let scope = button.attr("data-scope").await?;
    ensure!(
        scope.as_deref() == Some("full"),
        "the first checkpoint is a full snapshot: {scope:?}"
    );

    app.click_element(&button).await.context("click Restore")?;
    app.interactable("restore-confirm").await?;
    let files = app.texts("restore-file").await?;
    ensure!(
        files == [FILE],
        "the confirmation lists the edited file: {files:?}"
    );
    // The conversation choices are offered too (tests/e2e/history.rs restores both).
    for enabled in ["restore-conversation", "restore-both"] {
        let element = app
            .client()
            .find(Locator::Css(&gd_e2e::testid(enabled)))
            .await?;
        ensure!(element.is_enabled().await?, "{enabled} is enabled");
    }
    let shot = app.screenshot("restore-confirm").await?;
    eprintln!("restore confirmation screenshot: {}", shot.display());
    ensure!(
        std::fs::read_to_string(ws.join(FILE))? == EDITED,
        "opening the confirmation changes nothing"
    );

    app.click("restore-code").await?;
    let result = app
        .wait_for_text("restore-result-text", "reports the restore", |t| {
            t.starts_with("Restored") || t.starts_with("Could not")
        })
        .await?;
    ensure!(
        result == "Restored 2 files to before this edit",
        "result: {result:?}"
    );
    let phase = app.attrs("restore-result", "data-phase").await?;
    ensure!(phase == [Some("restored".to_owned())], "{phase:?}");
    app.screenshot("restore-result").await?;

    ensure!(
        std::fs::read_to_string(ws.join(FILE))? == ORIGINAL,
        "the edited file is back to its original content"
    );
    ensure!(
        !ws.join(CREATED).exists(),
        "the file created after the checkpoint was removed"
    );
    app.close().await
}
