//! Plan mode through the real app: the user switches the session to Plan, the model (the fake
//! Gemini server) writes a plan and presents it with `exit_plan_mode`; the plan pane shows it,
//! the user comments on a paragraph and asks for changes (the model's next request carries the
//! comment, quoted with its paragraph), then approves the revised plan with Auto-edit, and the
//! edit that follows is written without a confirmation.
//!
//! Test ids: `approval-mode`, `plan-pane` (`data-status`), `plan-paragraph`,
//! `plan-comment-input`, `plan-comment-save`, `plan-comment`, `plan-ask-changes`,
//! `plan-approve-mode`, `plan-approve`, `confirmation`, `tool-card`, `message-model`.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use gd_e2e::{App, function_responses};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const FILE: &str = "greeting.txt";
const ORIGINAL: &str = "Hello there\n";
const PLAN: &str = "# Plan\n\nChange the greeting to Hello, world.\n\nCheck the file afterwards.\n";
const REVISED: &str =
    "# Plan\n\nChange the greeting to Hello, world.\n\nShow the new file in the chat.\n";
const COMMENT: &str = "Do not check, just show it";

fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    std::fs::write(ws.join(FILE), ORIGINAL)?;
    Ok(ws.canonicalize()?)
}

fn read(ws: &Path) -> Result<String> {
    Ok(std::fs::read_to_string(ws.join(FILE))?)
}

fn call(name: &str, args: Value) -> Value {
    json!({"functionCalls": [{"name": name, "args": args}]})
}

/// Waits (on the server's request journal) until `n` main requests arrived.
fn wait_for_main_requests(fake: &FakeGemini, n: usize) -> Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while fake.main_requests().len() < n {
        let left = deadline
            .checked_duration_since(std::time::Instant::now())
            .context("timed out waiting for the model's requests")?;
        fake.wait_for_requests(fake.requests().len() + 1, left);
    }
    Ok(())
}

/// The `exit_plan_mode` results the model received in main request `n`.
fn plan_answers(fake: &FakeGemini, n: usize) -> Result<Vec<String>> {
    let requests = fake.main_requests();
    let body = requests
        .get(n)
        .and_then(|r| r.body.clone())
        .with_context(|| format!("main request {n} (of {})", requests.len()))?;
    Ok(function_responses(&body)
        .into_iter()
        .filter(|r| r["name"] == "exit_plan_mode")
        .map(|r| r["response"].to_string())
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_is_commented_revised_approved_and_run() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let ws_text = ws.to_str().context("UTF-8 path")?;
    let fake = FakeGemini::start_with_vars(
        json!({"steps": [
            call("write_file", json!({"file_path": "greeting-plan.md", "content": PLAN})),
            call("exit_plan_mode", json!({"plan_filename": "greeting-plan.md"})),
            call("write_file", json!({"file_path": "greeting-plan.md", "content": REVISED})),
            call("exit_plan_mode", json!({"plan_filename": "greeting-plan.md"})),
            call("write_file", json!({"file_path": format!("{ws_text}/{FILE}"), "content": "Hello, world\n"})),
            {"text": "The greeting now says Hello, world."}
        ]}),
        &[("WORKSPACE", ws_text)],
    );
    let app = App::launch_connected("plan_mode", &[&ws], &fake.base_url()).await?;

    app.select_option("approval-mode", "plan").await?;
    app.type_and_enter("prompt-input", "Greet the world, plan first")
        .await?;

    // 1. The plan is shown as a document; nothing in the workspace changed.
    app.wait_for_attr("plan-pane", "data-status", "waits for review", |s| {
        s == "review"
    })
    .await?;
    app.wait_for_count("plan-paragraph", "are the plan's three paragraphs", |n| {
        n == 3
    })
    .await?;
    ensure!(read(&ws)? == ORIGINAL, "nothing is written while planning");
    ensure!(
        app.count("confirmation").await? == 0,
        "the plan is not in the dock"
    );
    let shot = app.screenshot("plan-pane").await?;
    eprintln!("plan pane screenshot: {}", shot.display());

    // 2. Comment on the last paragraph, ask for changes.
    app.click("plan-paragraph").await?;
    app.type_into("plan-comment-input", COMMENT).await?;
    app.click("plan-comment-save").await?;
    app.wait_for_last_text("plan-comment", "shows the saved comment", |t| {
        t.contains(COMMENT)
    })
    .await?;
    app.click("plan-ask-changes").await?;
    // The model's next request carries the comment under its quoted paragraph.
    wait_for_main_requests(&fake, 3)?;
    let answers = plan_answers(&fake, 2)?;
    let feedback = answers.last().context("the plan's answer")?;
    ensure!(
        feedback.contains(&format!(
            "Plan rejected. User feedback: > Check the file afterwards.\\n\\n{COMMENT}"
        )),
        "{feedback}"
    );

    // 3. The revised plan: approve it with Auto-edit.
    app.wait_for_last_text("plan-paragraph", "shows the revised plan", |t| {
        t.contains("Show the new file in the chat.")
    })
    .await?;
    app.wait_for_attr("plan-pane", "data-status", "waits for review again", |s| {
        s == "review"
    })
    .await?;
    app.select_option("plan-approve-mode", "auto_edit").await?;
    app.click("plan-approve").await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("The greeting now says Hello, world.")
    })
    .await?;

    // 4. The edit ran without asking; the session is in Auto-edit; the pane stays, approved.
    ensure!(read(&ws)? == "Hello, world\n");
    ensure!(
        app.count("confirmation").await? == 0,
        "no confirmation for the edit"
    );
    let mode = app.texts("approval-mode").await?;
    ensure!(mode == ["auto_edit"], "the mode switched: {mode:?}");
    app.wait_for_attr("plan-pane", "data-status", "is approved", |s| {
        s == "approved"
    })
    .await?;
    let answers = plan_answers(&fake, 4)?;
    let approved = answers.last().context("the approval")?;
    ensure!(
        approved.contains("Plan approved. Switching to Auto-Edit mode"),
        "{approved}"
    );
    app.close().await
}
