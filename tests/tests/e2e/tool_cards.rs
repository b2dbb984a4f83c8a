//! Finished tool cards in the real app, from what the real core reports (issue 13, items 5 and
//! 10e): a shell command's card shows its plain output once, monospace, behind an
//! "Output · N lines" toggle, with the exit code core computed (`exit 2`, styled as an error,
//! the card failed);
//! a list_directory card expands to the folder's entries.
//!
//! Test ids: `approval-mode`, `prompt-input`, `tool-card` (`data-tool`, `data-state`),
//! `tool-output`, `tool-output-toggle`, `tool-exit-code` (`data-code`), `tool-result`.

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_output_once_with_the_exit_code_and_folder_entries() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let ws_str = ws.to_str().context("UTF-8 path")?.to_owned();
    let fake = FakeGemini::start(json!({"steps": [
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "printf 'alpha\\nbeta\\n'; exit 2"}}]},
        {"match_tool": "run_shell_command", "text": "It failed."}
    ]}));
    let app = App::launch_connected("tool_cards", &[&ws], &fake.base_url()).await?;
    // No confirmation in the way. Without the sandbox, choosing YOLO says what that means
    // (issue 36: core's warning, shown as a notice).
    app.select_option("approval-mode", "yolo").await?;
    app.wait_for_any_text("notice", "YOLO without the sandbox is explained", |t| {
        t.contains("Commands run without a sandbox")
    })
    .await?;

    app.type_and_enter("prompt-input", "Run it").await?;
    app.wait_for_last_text("message-model", "the answer after the command", |t| {
        t.contains("It failed.")
    })
    .await?;
    // It exited 2: a failed card, not a green "Done" (issue 34).
    app.wait_for_attr("tool-card", "data-state", "the command failed", |s| {
        s == "error"
    })
    .await?;
    let state = app.texts("tool-state").await?;
    ensure!(
        state.len() == 1 && state[0].starts_with("Failed"),
        "{state:?}"
    );
    let codes = app.texts("tool-exit-code").await?;
    ensure!(
        codes == ["exit 2"],
        "the exit code core computed: {codes:?}"
    );
    let outputs = app.texts("tool-output").await?;
    ensure!(
        outputs.len() == 1 && outputs[0].trim_end() == "alpha\nbeta",
        "the plain output, once: {outputs:?}"
    );
    ensure!(
        app.count("tool-result").await? == 0,
        "the output is not repeated as the result text"
    );
    let toggle = app.texts("tool-output-toggle").await?;
    ensure!(
        toggle.len() == 1 && toggle[0].ends_with("Output · 2 lines"),
        "{toggle:?}"
    );
    let font = app
        .client()
        .execute(
            "return getComputedStyle(document.querySelector('[data-testid=tool-output]')).fontFamily;",
            vec![],
        )
        .await?;
    ensure!(
        font.as_str().unwrap_or_default().contains("Mono"),
        "monospace: {font}"
    );
    app.click("tool-output-toggle").await?;
    app.wait_until_gone("tool-output", "collapsed by its toggle")
        .await?;
    app.screenshot("shell-card").await?;

    // A folder listing: collapsed, then its entries.
    fake.reset(
        json!({"steps": [
            {"functionCalls": [{"name": "list_directory", "args": {"dir_path": ws_str}}]},
            {"match_tool": "list_directory", "text": "Listed."}
        ]}),
        &[],
    );
    app.type_and_enter("prompt-input", "List the files here")
        .await?;
    app.wait_for_last_text("message-model", "the answer after the listing", |t| {
        t.contains("Listed.")
    })
    .await?;
    app.wait_for_last_text("tool-output-toggle", "the entries' toggle", |t| {
        t.ends_with("Entries · 3")
    })
    .await?;
    ensure!(app.count("tool-output").await? == 0, "collapsed by default");
    app.click("tool-output-toggle").await?;
    app.wait_for_last_text("tool-output", "the folder's entries", |t| {
        t.trim_end() == "src/\nhello.txt\nREADME.md"
    })
    .await?;
    app.screenshot("list-card").await?;
    app.close().await
}
