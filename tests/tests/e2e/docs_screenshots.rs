//! The screenshots linked from the README (`docs/screenshots/`), taken from the real app in
//! WebKitGTK under Xvfb: a live conversation with an edit approved in the diff view and a shell
//! command, the same conversation reopened after a restart, the history browser's transcript of
//! a search hit, the header and the settings screen, in the light and dark themes at 1440, 1100
//! and 800 px.
//!
//! Ignored by default (it documents rather than tests, though it fails when a screen does not
//! show what it should). Refresh the committed images with `scripts/docs-screenshots.sh`, which
//! runs it with `GD_DOCS_SCREENSHOTS=<repo>/docs/screenshots`; without that variable the images
//! go to `target/e2e/docs_screenshots/`.

use std::path::PathBuf;

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_e2e::docs::{element_shot, out_dir, resize, series};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const FILE: &str = "greeting.txt";
const ORIGINAL: &str = "line one\nHello there\nline three\n";
const PROMPT: &str = "Make the greeting global, then show me the files";

fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    std::fs::write(ws.join(FILE), ORIGINAL)?;
    std::fs::write(ws.join("README.md"), "# Project\n")?;
    Ok(ws.canonicalize()?)
}

/// An edit (approved in the diff view), a shell command (approved), then a Markdown answer.
fn script() -> Value {
    json!({"steps": [
        {"text": "I will update the greeting first.", "functionCalls": [{
            "name": "replace",
            "args": {
                "file_path": format!("{{{{WORKSPACE}}}}/{FILE}"),
                "instruction": "Greet the whole world",
                "old_string": "Hello there",
                "new_string": "Hello, world",
            }
        }]},
        {"text": "Now the files.", "functionCalls": [{
            "name": "run_shell_command",
            "args": {"command": "ls -la", "description": "List the project's files"}
        }]},
        {"text": "Done. The greeting in `greeting.txt` now reads:\n\n```text\nHello, world\n```\n\n\
                  The project has **two files**:\n\n- `README.md`\n- `greeting.txt`\n"}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "documentation screenshots: run by scripts/docs-screenshots.sh"]
async fn docs_screenshots() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let fake = FakeGemini::start_with_vars(
        script(),
        &[("WORKSPACE", ws.to_str().context("UTF-8 path")?)],
    );
    let mut app = App::launch_connected("docs_screenshots", &[&ws], &fake.base_url()).await?;
    let out = out_dir(&app);
    std::fs::create_dir_all(&out)?;

    // The live conversation: the edit waits in the diff view, then the shell command.
    app.type_and_enter("prompt-input", PROMPT).await?;
    app.wait_for_count("edit-proposal", "shows the diff", |n| n == 1)
        .await?;
    series(&app, &out, "approval", &[1440, 800]).await?;
    resize(&app, 1100).await?;
    app.click("approve").await?;
    app.wait_for_text("confirm-command", "asks for the command", |t| {
        t.contains("ls -la")
    })
    .await?;
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("two files")
    })
    .await?;
    app.wait_until_gone("cancel", "is hidden once the turn ended")
        .await?;
    ensure!(std::fs::read_to_string(ws.join(FILE))?.contains("Hello, world"));
    series(&app, &out, "chat", &[1440, 1100, 800]).await?;
    for width in [1100, 800] {
        resize(&app, width).await?;
        element_shot(&app, "app-header", &out, &format!("header-light-{width}")).await?;
    }

    // Settings, over the chat.
    app.click("settings-open").await?;
    app.wait_for_count("setting", "lists the settings", |n| n > 0)
        .await?;
    series(&app, &out, "settings", &[1100, 800]).await?;
    app.click("settings-close").await?;

    // Reopened after a restart: the same conversation, built from the stored records.
    app.restart().await?;
    app.wait_ready().await?;
    app.wait_for_any_text("message-user", "shows the reopened session", |t| {
        t.contains(PROMPT)
    })
    .await?;
    app.wait_for_any_text("message-model", "shows the reopened answer", |t| {
        t.contains("two files")
    })
    .await?;
    series(&app, &out, "resumed", &[1440, 800]).await?;

    // The history browser: a search hit and its transcript.
    resize(&app, 1440).await?;
    app.click("history-open").await?;
    app.type_into("history-search", "greeting").await?;
    app.wait_for_text("history-hit", "finds the session", |t| {
        t.to_lowercase().contains("greeting")
    })
    .await?;
    app.click("history-hit").await?;
    app.wait_for_count("history-message", "shows the transcript", |n| n > 0)
        .await?;
    series(&app, &out, "history", &[1440, 1100]).await?;
    app.click("history-close").await?;

    // Three conversations in different states: the reopened one idle, a second waiting for
    // the approval of its edit, a third streaming its answer (slowly, for the pictures).
    app.click("new-conversation").await?;
    app.wait_for_count("conversation-item", "are two", |n| n == 2)
        .await?;
    app.wait_for_text("connection-text", "the second is connected", |t| {
        t.contains(gd_e2e::E2E_MODEL)
    })
    .await?;
    app.type_and_enter("prompt-input", "Greet the world")
        .await?;
    // (The first conversation already greeted the world: its edit fails, the command waits.)
    app.wait_for_count("confirmation", "the second waits for approval", |n| n == 1)
        .await?;
    let words = "The test suite runs in three stages: unit tests first, then the integration \
                 tests against a local server, and finally the end-to-end checks. ";
    fake.reset(
        json!({"chunk_chars": 6, "chunk_delay_ms": 300, "steps": [{"text": words.repeat(20)}]}),
        &[],
    );
    app.click("new-conversation").await?;
    app.wait_for_count("conversation-item", "are three", |n| n == 3)
        .await?;
    app.wait_for_text("connection-text", "the third is connected", |t| {
        t.contains(gd_e2e::E2E_MODEL)
    })
    .await?;
    app.type_and_enter("prompt-input", "How do the tests run?")
        .await?;
    app.wait_for_any_text("message-model", "streams", |t| t.contains("three stages"))
        .await?;
    app.wait_for_script(
        "return [...document.querySelectorAll('[data-testid=\"conversation-item\"]')]\
           .map((e) => e.dataset.status).join() === 'idle,approval,streaming';",
        "the three states",
    )
    .await?;
    series(&app, &out, "conversations", &[1440, 800]).await?;
    eprintln!("screenshots in {}", out.display());
    app.close().await
}
