//! Hooks through the real app (issue 20): a workspace `BeforeTool` hook matching `write_file`
//! exits 2; the model's write is blocked (the file is not written, the model gets the hook's
//! reason), the write's card carries a "hook: blocked" marker whose details show the hook's
//! stderr, and `/hooks` lists the hook with that last result; a hook added to settings.json
//! afterwards is listed once the panel's Refresh read the settings again.
//!
//! Test ids: `tool-card` (`data-tool`), `hook-marker` (`data-outcome`), `hook-details-stderr`,
//! `hooks-panel`, `hooks-item` (`data-name`), `hooks-last`, `message-model`.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Context, Result, ensure};
use gd_e2e::{App, function_responses};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const REASON: &str = "Writes to notes.txt are not allowed here";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_before_tool_hook_stops_the_write_and_marks_its_card() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = temp.path().join("project");
    std::fs::create_dir_all(ws.join(".gemini"))?;
    let ws = ws.canonicalize()?;
    let settings = json!({"hooks": {"BeforeTool": [{
        "matcher": "write_file",
        "hooks": [{"name": "no-writes", "type": "command", "command": format!("echo '{REASON}' >&2; exit 2")}]
    }]}});
    std::fs::write(
        ws.join(".gemini/settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )?;
    let target = ws.join("notes.txt");
    let fake = FakeGemini::start_with_vars(
        json!({"steps": [
            {"functionCalls": [{"name": "write_file", "args": {"file_path": "{{TARGET}}", "content": "hello"}}]},
            {"text": "The hook blocked the write."}
        ]}),
        &[("TARGET", target.to_str().context("UTF-8 path")?)],
    );
    let app = App::launch_connected("hooks", &[&ws], &fake.base_url()).await?;

    app.type_and_enter("prompt-input", "Write hello to notes.txt")
        .await?;
    app.wait_for_last_text("message-model", "answered", |t| t.contains("blocked"))
        .await?;
    ensure!(!target.exists(), "the write was blocked");
    let marker = "tool-card[data-tool=write_file] hook-marker";
    let outcomes = app.attrs(marker, "data-outcome").await?;
    ensure!(
        outcomes == [Some("blocked".to_owned())],
        "a blocked marker on the write's card: {outcomes:?}"
    );
    app.click(marker).await?;
    app.wait_for_text(
        "tool-card[data-tool=write_file] hook-details-stderr",
        "the hook's stderr",
        |t| t.contains(REASON),
    )
    .await?;
    let shot = app.screenshot("hook-marker-blocked").await?;
    eprintln!("hook marker screenshot: {}", shot.display());

    // The model was told why.
    let responses: Vec<Value> = fake
        .main_requests()
        .into_iter()
        .filter_map(|r| r.body)
        .flat_map(|b| function_responses(&b))
        .collect();
    let write = responses
        .iter()
        .find(|r| r["name"] == "write_file")
        .context("the write's response reached the model")?;
    ensure!(
        write["response"].to_string().contains(REASON),
        "the reason reached the model: {write}"
    );

    // `/hooks` lists it with that run.
    app.type_and_enter("prompt-input", "/hooks").await?;
    app.wait_for_text(
        "hooks-item[data-name=no-writes] hooks-last",
        "its last run",
        |t| t.contains("Blocked"),
    )
    .await?;
    let shot = app.screenshot("hooks-view").await?;
    eprintln!("hooks view screenshot: {}", shot.display());

    // A hook added to settings.json meanwhile: Refresh reads the settings again (the session
    // restarts and continues the conversation) and lists it, ready to run.
    let mut settings = settings;
    settings["hooks"]["AfterAgent"] = json!([{
        "hooks": [{"name": "added-later", "type": "command", "command": "true"}]
    }]);
    std::fs::write(
        ws.join(".gemini/settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )?;
    let meter = app.attrs("usage-meter-tokens", "data-value").await?;
    let meter = meter.into_iter().flatten().next().unwrap_or_default();
    ensure!(meter != "0", "the turn used tokens: {meter}");
    app.click("hooks-refresh").await?;
    app.wait_for_count(
        "hooks-item[data-name=added-later]",
        "lists the new hook",
        |n| n == 1,
    )
    .await?;
    // The reloaded session counts on from what the conversation used (issue 34, item 4).
    app.wait_for_attr("usage-meter-tokens", "data-value", "keeps the usage", |v| {
        v == meter
    })
    .await?;
    app.wait_for_any_text("message-user", "the conversation goes on", |t| {
        t == "Write hello to notes.txt"
    })
    .await?;
    app.close().await
}
