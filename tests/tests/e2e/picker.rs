//! The file picker in the real app: the backend indexes the workspace, the
//! search streams over a Channel, two files picked with the keyboard become
//! chips, and the request the fake Gemini server receives names them as
//! `@path` references (expanded into their contents once the core's
//! @-reference expansion handles them; either way the paths are in the
//! user's turn).
//!
//! Test ids: `picker-open`, `picker`, `picker-search`, `picker-row`
//! (`data-path`), `picker-status` (`data-searching`), `picker-done`,
//! `picker-chip` (`data-path`), `picker-tokens`, `prompt-input`,
//! `message-model`.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Context, Result, ensure};
use fantoccini::key::Key;
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::json;

/// Searches for `query` and picks the first result (Enter in the search box), once it is `path`.
async fn pick(app: &App, query: &str, path: &str) -> Result<()> {
    app.replace_text("picker-search", query).await?;
    app.wait_for_script(
        &format!(
            "const rows = document.querySelectorAll('[data-testid=picker-row]');
             const status = document.querySelector('[data-testid=picker-status]');
             return rows.length > 0 && rows[0].dataset.path === {path:?}
                 && status && status.dataset.searching === 'false';"
        ),
        &format!("`{query}` finds {path} first"),
    )
    .await?;
    app.type_into("picker-search", &String::from(char::from(Key::Enter)))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_files_picked_in_the_picker_reach_the_model_request() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let fake = FakeGemini::start(json!({"steps": [{"text": "Both files read."}]}));
    let app = App::launch_connected("picker_two_files", &[&ws], &fake.base_url()).await?;

    app.click("picker-open").await?;
    // The tree's first level comes from the real listing.
    app.wait_for_script(
        "return !!document.querySelector('[data-testid=picker-row][data-path=\"hello.txt\"]');",
        "the tree lists hello.txt",
    )
    .await?;
    pick(&app, "hello.txt", "hello.txt").await?;
    pick(&app, "README", "README.md").await?;
    let shot = app.screenshot("picker").await?;
    eprintln!("screenshot: {}", shot.display());
    app.click("picker-done").await?;
    app.wait_until_gone("picker", "the picker closed").await?;
    let chips = app.attrs("picker-chip", "data-path").await?;
    ensure!(
        chips == [Some("hello.txt".to_owned()), Some("README.md".to_owned())],
        "two chips: {chips:?}"
    );
    app.wait_for_text("picker-tokens", "a token estimate", |t| {
        t.contains("tokens") && !t.starts_with("~0 ")
    })
    .await?;

    let shot = app.screenshot("picker-chips").await?;
    eprintln!("screenshot: {}", shot.display());
    app.type_and_enter("prompt-input", "Summarise these files")
        .await?;
    app.wait_for_last_text("message-model", "showed the answer", |t| {
        t.contains("Both files read.")
    })
    .await?;

    let requests = fake.main_requests();
    let body = requests
        .first()
        .and_then(|r| r.body.clone())
        .context("a JSON request")?;
    let contents = body["contents"].as_array().context("contents")?;
    let user_turn = contents.last().context("the user's turn")?;
    let text: String = user_turn["parts"]
        .as_array()
        .context("parts")?
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    ensure!(
        text.contains("hello.txt")
            && text.contains("README.md")
            && text.contains("Summarise these files"),
        "the user's turn names both files: {text}"
    );
    ensure!(
        app.count("picker-chip").await? == 0,
        "chips are cleared after sending"
    );
    app.close().await
}
