//! Topics through the real app: the model (the fake Gemini server) narrates two prompts with
//! `update_topic`, the chat shows each new topic as a chapter, the outline lists both and a
//! click jumps back to the first; after a restart the reopened conversation still has its
//! chapters, and the history finds the conversation by a word that is only in a topic summary.
//!
//! Test ids: `topic-chapter`, `topic-chapter-title`, `topics-outline-toggle`, `topics-outline`,
//! `topics-outline-item`, `message-model`, `history-open`, `history-search`, `history-hit`.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const FIRST: &str = "Survey the project";
const SECOND: &str = "Fix the greeting";
/// Only in the second topic's summary: the history must find it there.
const SUMMARY_WORD: &str = "marmoset";

fn topic(title: &str, summary: &str) -> Value {
    json!({"functionCalls": [{"name": "update_topic", "args": {
        "title": title, "summary": summary, "strategic_intent": "Read before changing anything."
    }}]})
}

/// A long answer, so the list scrolls and the outline has somewhere to jump.
fn long_answer(head: &str) -> Value {
    let body: Vec<String> = (1..=40).map(|i| format!("{head} line {i}.")).collect();
    json!({"text": body.join("\n\n")})
}

/// Waits until the (re)launched app's session is connected.
async fn connected(app: &App) -> Result<()> {
    app.wait_ready().await?;
    app.wait_for_attr("connection-status", "data-state", "is connected", |s| {
        s == "connected"
    })
    .await?;
    Ok(())
}

/// Whether the chapter titled `title` is on screen inside the message list.
fn chapter_visible(title: &str) -> String {
    format!(
        r#"const titles = [...document.querySelectorAll('[data-testid=topic-chapter-title]')];
        const el = titles.find((t) => t.textContent.trim() === {title:?});
        if (!el) return false;
        const r = el.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight;"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topics_are_chapters_with_an_outline_and_a_history_search() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    let ws = ws.canonicalize()?;
    // The fake's main turns are stateless (the step is the number of trailing tool results), so
    // each prompt gets its own script.
    let fake = FakeGemini::start(json!({"steps": [
        topic(FIRST, "Nothing changed yet; reading the layout."),
        long_answer("Survey"),
    ]}));
    let mut app = App::launch_connected("topics", &[&ws], &fake.base_url()).await?;

    app.type_and_enter("prompt-input", "Look around").await?;
    app.wait_for_last_text("message-model", "answered the first prompt", |t| {
        t.contains("Survey line 40.")
    })
    .await?;
    app.wait_until_gone("cancel", "has ended the first turn")
        .await?;
    fake.reset(
        json!({"steps": [
            topic(SECOND, &format!("The {SUMMARY_WORD} greeting is next.")),
            long_answer("Greeting"),
        ]}),
        &[],
    );
    app.type_and_enter("prompt-input", "Now the greeting")
        .await?;
    app.wait_for_last_text("message-model", "answered the second prompt", |t| {
        t.contains("Greeting line 40.")
    })
    .await?;

    // Two chapters; the outline lists them in order. (The list is virtualised: a chapter far
    // above the newest answer is not in the page until the outline jumps to it.)
    app.click("topics-outline-toggle").await?;
    app.wait_for_count("topics-outline-item", "lists both topics", |n| n == 2)
        .await?;
    let items = app.texts("topics-outline-item").await?;
    ensure!(
        items.len() == 2 && items[0].contains(FIRST) && items[1].contains(SECOND),
        "{items:?}"
    );
    let shot = app.screenshot("topics-outline").await?;
    eprintln!("topics outline screenshot: {}", shot.display());

    // The first chapter scrolled out of sight under the long answers; the outline jumps to it.
    let first_visible = chapter_visible(FIRST);
    app.wait_for_script(
        &format!("return !(() => {{ {first_visible} }})();"),
        "has scrolled the first chapter away",
    )
    .await?;
    let first_item = app
        .client()
        .find_all(fantoccini::Locator::Css(
            "[data-testid=topics-outline-item]",
        ))
        .await?;
    app.click_element(&first_item[0]).await?;
    app.wait_for_script(&first_visible, "jumped to the first chapter")
        .await?;
    let items = app
        .client()
        .find_all(fantoccini::Locator::Css(
            "[data-testid=topics-outline-item]",
        ))
        .await?;
    app.click_element(&items[1]).await?;
    app.wait_for_script(&chapter_visible(SECOND), "jumped to the second chapter")
        .await?;

    // After a restart the reopened conversation keeps its chapters ...
    app.restart().await?;
    connected(&app).await?;
    app.click("topics-outline-toggle").await?;
    app.wait_for_count("topics-outline-item", "lists both topics again", |n| n == 2)
        .await?;

    // ... and the history finds the conversation by a word of a topic's summary.
    app.click("history-open").await?;
    app.type_into("history-search", SUMMARY_WORD).await?;
    app.wait_for_text("history-hit", "finds the conversation by its topic", |t| {
        !t.is_empty()
    })
    .await?;
    app.close().await
}
