//! The README's screenshots of reviewing edits (`docs/screenshots/`), from the real app in
//! WebKitGTK under Xvfb: an edit confirmation with one hunk rejected (light and dark, 1440 and
//! 800 px), the applied edit's card with what decided it and its revert, the three-way view of
//! a revert whose file changed since, and the end-of-turn review of two staged files.
//!
//! Ignored by default; `scripts/docs-screenshots.sh` runs it (see docs_screenshots.rs).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_e2e::docs::{out_dir, resize, series, shot};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

/// A small Rust file; the proposal changes it in three places (three hunks).
fn source(changed: bool) -> String {
    let mut lines: Vec<String> = (1..=36)
        .map(|i| format!("    let step_{i} = run({i});"))
        .collect();
    lines.insert(0, "fn main() {".into());
    lines.push("}".into());
    if changed {
        lines[2] = "    let step_2 = run_checked(2)?;".into();
        lines.insert(18, "    tracing::info!(\"halfway\");".into());
        lines[36] = "    let step_35 = run_checked(35)?;".into();
    }
    lines.join("\n") + "\n"
}

fn write_file(path: &Path, content: &str) -> Value {
    json!({"name": "write_file", "args": {"file_path": path.to_str(), "content": content}})
}

fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    std::fs::write(ws.join("main.rs"), source(false))?;
    std::fs::write(ws.join("notes.md"), "# Notes\n\n- first\n- second\n")?;
    Ok(ws.canonicalize()?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "documentation screenshots: run by scripts/docs-screenshots.sh"]
async fn docs_review_screenshots() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let main_rs = ws.join("main.rs");
    let fake = FakeGemini::start(json!({"steps": [
        {"text": "I will make the risky steps checked and log halfway.",
         "functionCalls": [write_file(&main_rs, &source(true))]},
        {"text": "Done: the parts you accepted are in place."}
    ]}));
    let app = App::launch_connected("docs_review", &[&ws], &fake.base_url()).await?;
    let out = out_dir(&app);
    std::fs::create_dir_all(&out)?;

    // 1. The confirmation: the middle hunk rejected.
    app.type_and_enter("prompt-input", "Make the risky steps checked")
        .await?;
    app.wait_for_count("hunk", "three hunks", |n| n == 3)
        .await?;
    app.click("hunk[data-hunk=1] hunk-reject").await?;
    app.wait_for_last_text("approve", "counts the hunks", |t| {
        t.contains("Apply 2 of 3 hunks")
    })
    .await?;
    series(&app, &out, "hunk-review", &[1440, 800]).await?;
    resize(&app, 1100).await?;
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "closing answer", |t| {
        t.contains("parts you accepted")
    })
    .await?;
    app.wait_until_gone("cancel", "the turn is over").await?;
    ensure!(!std::fs::read_to_string(&main_rs)?.contains("halfway"));

    // 2. The card: what decided it, and its revert; the file then changes by hand, so the
    // revert offers the three-way view.
    shot(&app, &out, "edit-card-light-1100").await?;
    let now = std::fs::read_to_string(&main_rs)?;
    std::fs::write(
        &main_rs,
        now.replace("run_checked(2)?", "run_checked(2).context(\"step 2\")?"),
    )?;
    app.click("revert-edit").await?;
    app.click("revert-confirm-yes").await?;
    app.wait_for_count("three-way", "the three-way view", |n| n == 1)
        .await?;
    app.client()
        .execute(
            "document.querySelector('[data-testid=\"three-way\"]').scrollIntoView({ block: 'start' });",
            vec![],
        )
        .await
        .context("scroll to the three-way view")?;
    shot(&app, &out, "revert-three-way-light-1100").await?;

    // 3. Review at end of turn: two files staged, reviewed together.
    fake.reset(
        json!({"steps": [
            {"text": "Updating the notes and the entry point.", "functionCalls": [
                write_file(&ws.join("notes.md"), "# Notes\n\n- first, revised\n- second\n- third\n"),
                write_file(&main_rs, &source(false).replace("run(1)", "run_first(1)")),
            ]},
            {"text": "Both files are staged for your review."}
        ]}),
        &[],
    );
    app.click("review-mode").await?;
    app.type_and_enter("prompt-input", "Tidy the notes and the entry point")
        .await?;
    app.wait_for_count("review-file", "lists both files", |n| n == 2)
        .await?;
    app.wait_until_gone("cancel", "the turn is over").await?;
    series(&app, &out, "turn-review", &[1440, 800]).await?;
    eprintln!("screenshots in {}", out.display());
    app.close().await
}
