//! Session history through the real app: chat against the fake Gemini server (real HTTP),
//! restart the app (same `HOME`, so the same history database), the last session reopens in
//! the chat; find it in the history browser by a word from it, open it, resume it, and check
//! that the next request carries the earlier conversation. Then an edit's checkpoint is
//! restored with "code and conversation": the file is back on disk and the next request no
//! longer has the undone turn. A second test makes the edit before a restart and undoes it
//! after, from the history browser's transcript.
//!
//! Test ids (see `README.md` of this crate): `history-open`, `history-search`, `history-hit`,
//! `history-transcript`, `history-message`, `history-resume`, `history-panel`, `history-call`,
//! `history-restore-checkpoint`, `history-restore-both`, `history-status`, and the chat's
//! `message-user`, `message-model`, `notice`, `tool-card`, `restore-checkpoint`, `restore-both`.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use fantoccini::Locator;
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const FILE: &str = "greeting.txt";
const ORIGINAL: &str = "line one\nHello there\nline three\n";
const EDITED: &str = "line one\nHello, world\nline three\n";
/// The first prompt, with the word searched for later.
const FIRST: &str = "Remember the okapi for later";
const EDIT_PROMPT: &str = "Make the greeting global";

fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    std::fs::write(ws.join(FILE), ORIGINAL)?;
    Ok(ws.canonicalize()?)
}

fn answer(text: &str) -> Value {
    json!({"steps": [{"text": text}]})
}

/// A `replace` in `greeting.txt`, then a closing answer.
fn edit_script() -> Value {
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
        {"text": "The greeting is global."}
    ]})
}

/// The user texts of the last main request's `contents`, in order.
fn last_request_prompts(fake: &FakeGemini) -> Result<(Vec<String>, usize)> {
    let requests = fake.main_requests();
    let last = requests.last().context("a main request")?;
    let contents = last
        .body
        .as_ref()
        .and_then(|b| b.get("contents"))
        .and_then(Value::as_array)
        .context("the request's contents")?;
    let mut texts = Vec::new();
    let mut calls = 0;
    for content in contents {
        for part in content
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if part.get("functionCall").is_some() {
                calls += 1;
            }
            if content.get("role").and_then(Value::as_str) == Some("user")
                && let Some(text) = part.get("text").and_then(Value::as_str)
            {
                texts.push(text.to_owned());
            }
        }
    }
    Ok((texts, calls))
}

/// Launches the app on `ws` (artifacts in `target/e2e/<name>/`).
async fn connected(app: &App) -> Result<()> {
    app.wait_ready().await?;
    app.wait_for_attr("connection-status", "data-state", "is connected", |s| {
        s == "connected"
    })
    .await?;
    Ok(())
}

/// Sends the edit prompt (the fake answers with `edit_script`), approves the edit and waits for
/// the turn to end; returns the edit's call id.
async fn approved_edit(app: &App, ws: &Path) -> Result<String> {
    app.type_and_enter("prompt-input", EDIT_PROMPT).await?;
    let call_id = app
        .wait_for_attr("confirmation", "data-call-id", "names the call", |id| {
            !id.is_empty()
        })
        .await?;
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("The greeting is global.")
    })
    .await?;
    app.wait_until_gone("cancel", "is hidden once the turn ended")
        .await?;
    ensure!(
        std::fs::read_to_string(ws.join(FILE))? == EDITED,
        "the edit is on disk"
    );
    Ok(call_id)
}

/// The next request (answered "Fresh start.") has the first prompt but not the undone turn.
async fn next_request_lacks_the_undone_turn(app: &App, fake: &FakeGemini) -> Result<()> {
    // The undone prompt came back to the composer, to be edited and sent again; the user
    // writes another one instead.
    app.wait_for_script(
        &format!(
            "return document.querySelector('[data-testid=prompt-input]').value === {:?};",
            EDIT_PROMPT
        ),
        "the undone prompt is back in the composer",
    )
    .await?;
    app.replace_text("prompt-input", "").await?;
    fake.reset(answer("Fresh start."), &[]);
    chat(app, "What now?", "Fresh start.").await?;
    let (prompts, calls) = last_request_prompts(fake)?;
    ensure!(
        prompts.iter().any(|t| t.contains(FIRST)),
        "the earlier prompt stays: {prompts:?}"
    );
    ensure!(
        !prompts.iter().any(|t| t.contains(EDIT_PROMPT)) && calls == 0,
        "the undone turn is gone: {prompts:?}, {calls} function calls"
    );
    Ok(())
}

/// Sends a prompt and waits for the model's answer containing `answer`.
async fn chat(app: &App, prompt: &str, answer: &str) -> Result<()> {
    app.type_and_enter("prompt-input", prompt).await?;
    app.wait_for_last_text("message-model", "shows the answer", |t| t.contains(answer))
        .await?;
    app.wait_until_gone("cancel", "is hidden once the turn ended")
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_restart_find_resume_and_restore_code_and_conversation() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let ws_str = ws.to_str().context("UTF-8 path")?.to_owned();
    let fake = FakeGemini::start(answer("Noted: the okapi."));
    let mut app = App::launch_connected("history", &[&ws], &fake.base_url()).await?;

    chat(&app, FIRST, "Noted: the okapi.").await?;

    // Restart: the workspace's last session reopens, its conversation in the chat.
    app.restart().await?;
    connected(&app).await?;
    app.wait_for_any_text("message-user", "shows the reopened session", |t| t == FIRST)
        .await?;
    app.wait_for_any_text("message-model", "shows the reopened answer", |t| {
        t.contains("Noted: the okapi.")
    })
    .await?;

    // Find it by a word from it, open it, resume it.
    app.click("history-open").await?;
    app.type_into("history-search", "okapi").await?;
    app.wait_for_text("history-hit", "finds the session", |t| t.contains("okapi"))
        .await?;
    let marks = app
        .client()
        .find_all(Locator::Css("[data-testid=history-hit] mark"))
        .await?;
    ensure!(!marks.is_empty(), "the matched word is highlighted");
    app.click("history-hit").await?;
    app.wait_for_any_text("history-message", "shows the transcript", |t| {
        t.contains(FIRST)
    })
    .await?;
    let shot = app.screenshot("history-browser").await?;
    eprintln!("history browser screenshot: {}", shot.display());
    app.click("history-resume").await?;
    app.wait_until_gone("history-panel", "closes on resume")
        .await?;
    connected(&app).await?;
    app.wait_for_any_text("message-user", "shows the resumed session", |t| t == FIRST)
        .await?;

    // The next prompt carries the earlier conversation: an edit, approved.
    fake.reset(edit_script(), &[("WORKSPACE", &ws_str)]);
    let call_id = approved_edit(&app, &ws).await?;
    let first_request = fake
        .main_requests()
        .first()
        .cloned()
        .context("the edit turn's first request")?;
    let body = first_request.body.unwrap_or_default().to_string();
    ensure!(
        body.contains(FIRST) && body.contains("Noted: the okapi."),
        "the resumed session's request carries the earlier conversation: {body}"
    );

    // Restore the edit's checkpoint: code and conversation.
    let selector = format!(
        "[data-testid=tool-card][data-call-id=\"{call_id}\"] [data-testid=restore-checkpoint]"
    );
    app.wait_for_script(
        &format!("return document.querySelector('{selector}') !== null;"),
        "the edit's card offers Restore",
    )
    .await?;
    let restore = app.client().find(Locator::Css(&selector)).await?;
    app.click_element(&restore).await?;
    app.click("restore-both").await?;
    app.wait_for_any_text("notice", "reports the restore", |t| {
        t.starts_with("Restored") || t.contains("Could not")
    })
    .await?;
    let notices = app.texts("notice").await?;
    ensure!(
        notices
            .iter()
            .any(|t| t == "Restored 1 file and the conversation to before this edit"),
        "notices: {notices:?}"
    );
    ensure!(
        std::fs::read_to_string(ws.join(FILE))? == ORIGINAL,
        "the file is back to its original content"
    );
    let users = app.texts("message-user").await?;
    ensure!(
        users == [FIRST],
        "the chat dropped the undone turn: {users:?}"
    );
    app.screenshot("history-restored").await?;

    // The next request no longer has the undone turn.
    next_request_lacks_the_undone_turn(&app, &fake).await?;
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_from_before_a_restart_is_undone_from_the_history_with_its_conversation()
-> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let ws_str = ws.to_str().context("UTF-8 path")?.to_owned();
    let fake = FakeGemini::start(answer("Noted: the okapi."));
    let mut app = App::launch_connected("history_restore", &[&ws], &fake.base_url()).await?;
    chat(&app, FIRST, "Noted: the okapi.").await?;
    fake.reset(edit_script(), &[("WORKSPACE", &ws_str)]);
    let call_id = approved_edit(&app, &ws).await?;

    // Restart: the session reopens from the store, and its edit card, rebuilt from the stored
    // transcript, gets its checkpoint back.
    app.restart().await?;
    connected(&app).await?;
    app.wait_for_any_text("message-user", "shows the reopened edit prompt", |t| {
        t == EDIT_PROMPT
    })
    .await?;
    let card = format!(
        "[data-testid=tool-card][data-call-id=\"{call_id}\"] [data-testid=restore-checkpoint]"
    );
    app.wait_for_script(
        &format!("return document.querySelector('{card}') !== null;"),
        "the reopened edit card offers Restore",
    )
    .await?;

    // Find the session in the history browser and undo the edit from its transcript.
    app.click("history-open").await?;
    app.type_into("history-search", "okapi").await?;
    app.wait_for_text("history-hit", "finds the session", |t| t.contains("okapi"))
        .await?;
    app.click("history-hit").await?;
    let call = format!("[data-testid=history-call][data-call-id=\"{call_id}\"]");
    app.wait_for_script(
        &format!(
            "return document.querySelector('{call} [data-testid=history-restore-checkpoint]') !== null;"
        ),
        "the transcript's edit offers Restore",
    )
    .await?;
    app.click("history-restore-checkpoint").await?;
    app.wait_for_text("history-restore-file", "lists the edited file", |t| {
        t == FILE
    })
    .await?;
    app.screenshot("history-restore-confirm").await?;
    app.click("history-restore-both").await?;
    app.wait_for_text("history-status", "reports the restore", |t| {
        t.starts_with("Restored") || t.contains("Could not")
    })
    .await?;
    let status = app.texts("history-status").await?;
    ensure!(
        status == ["Restored 1 file and the conversation to before this edit"],
        "status: {status:?}"
    );
    ensure!(
        std::fs::read_to_string(ws.join(FILE))? == ORIGINAL,
        "the file is back to its original content"
    );
    // The transcript was read again without the undone turn.
    app.wait_for_script(
        &format!(
            "return document.querySelector('{call}') === null && document.querySelectorAll('[data-testid=history-message]:not([data-kind=turn_end])').length === 2;"
        ),
        "the transcript lost the undone turn",
    )
    .await?;
    app.screenshot("history-restored-from-transcript").await?;
    app.click("history-close").await?;
    app.wait_until_gone("history-panel", "closes").await?;
    let users = app.texts("message-user").await?;
    ensure!(
        users == [FIRST],
        "the chat dropped the undone turn: {users:?}"
    );

    next_request_lacks_the_undone_turn(&app, &fake).await?;
    app.close().await
}
