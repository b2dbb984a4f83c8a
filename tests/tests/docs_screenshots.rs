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

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use gd_e2e::{App, testid};
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

/// Where the images go: `GD_DOCS_SCREENSHOTS` or the test's artifacts folder.
fn out_dir(app: &App) -> PathBuf {
    std::env::var_os("GD_DOCS_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| app.artifacts_dir().to_path_buf())
}

/// Resizes the window to `width` px (the height stays 900) and waits for the layout to follow.
async fn resize(app: &App, width: u32) -> Result<()> {
    app.client()
        .set_window_size(width, 900)
        .await
        .context("resize the window")?;
    app.wait_for_script(
        // Both sides: after a restart the window comes back at its remembered size, and a
        // screenshot taken before the height followed shows a part of the page.
        &format!(
            "return Math.abs(window.innerWidth - {width}) <= 2 && Math.abs(window.innerHeight - 900) <= 2;"
        ),
        &format!("the page is {width}×900 px"),
    )
    .await
}

/// Forces the light or dark palette (what the `ui.theme` setting or the GTK theme choose).
async fn theme(app: &App, name: &str) -> Result<()> {
    app.client()
        .execute(
            "document.documentElement.dataset.theme = arguments[0];",
            vec![json!(name)],
        )
        .await
        .context("set the theme")?;
    Ok(())
}

/// A full-window screenshot copied to `<out>/<name>.png`.
async fn shot(app: &App, out: &Path, name: &str) -> Result<()> {
    let taken = app.screenshot(name).await?;
    if taken.parent() != Some(out) {
        std::fs::copy(&taken, out.join(format!("{name}.png")))
            .with_context(|| format!("copy {name}.png"))?;
    }
    Ok(())
}

/// A screenshot of one element (e.g. the header) as `<out>/<name>.png`: the window's screenshot
/// cut to the element's box with ImageMagick (WebKitWebDriver's own element screenshots of the
/// header come out black).
async fn element_shot(app: &App, id: &str, out: &Path, name: &str) -> Result<()> {
    let rect = app
        .client()
        .execute(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect();\
             return [r.x, r.y, r.width, r.height].map((v) => Math.round(v * devicePixelRatio));",
            vec![json!(testid(id))],
        )
        .await
        .with_context(|| format!("measure {id}"))?;
    let [x, y, w, h]: [i64; 4] = serde_json::from_value(rect)?;
    let full = app.screenshot(&format!("{name}-window")).await?;
    let target = out.join(format!("{name}.png"));
    let status = std::process::Command::new("convert")
        .arg(&full)
        .args(["-crop", &format!("{w}x{h}+{x}+{y}"), "+repage"])
        .arg(&target)
        .status()
        .context("run ImageMagick's convert (apt-get install imagemagick)")?;
    ensure!(status.success(), "convert failed to cut {name}.png");
    Ok(())
}

/// The same screen in both themes at each width.
async fn series(app: &App, out: &Path, name: &str, widths: &[u32]) -> Result<()> {
    for &width in widths {
        resize(app, width).await?;
        for palette in ["light", "dark"] {
            theme(app, palette).await?;
            shot(app, out, &format!("{name}-{palette}-{width}")).await?;
        }
    }
    theme(app, "light").await
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
