//! A reopened or resumed session looks as the live one did, in the real app: a turn with an
//! approved `write_file` and a shell command against the fake Gemini server, then `restart()`
//! (the workspace's last session reopens in the chat) and a resume from the history browser.
//! Each time the chat shows the same tool cards (`data-tool`, final `data-state`, the shell
//! output as its result) and none of the records' plumbing: no `<untrusted_context>` wrapper,
//! no `Process Group PGID` line, no function call as text (`{"file_path"`). The history
//! browser's transcript shows the same cards.
//!
//! Test ids (see `README.md` of this crate): `prompt-input`, `confirmation` (`data-kind`),
//! `approve`, `message-list`, `message-user`, `message-model`, `tool-card`, `tool-result`,
//! `history-open`, `history-session`, `history-transcript`, `history-resume`, `history-panel`.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::PathBuf;

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const PROMPT: &str = "Write the okapi notes and count them";
const NOTES: &str = "okapi.md";
const CONTENT: &str = "The okapi is striped.\n";
/// What the model is told for plumbing; never shown to people.
const PLUMBING: &[&str] = &[
    "untrusted_context",
    "PGID",
    "{\"file_path\"",
    "write_file {",
];

fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    Ok(ws.canonicalize()?)
}

/// A `write_file` and a shell command in one response, then a closing answer.
fn script() -> Value {
    json!({"steps": [
        {"text": "I will write the notes and count the lines.", "functionCalls": [
            {"name": "write_file", "args": {
                "file_path": format!("{{{{WORKSPACE}}}}/{NOTES}"),
                "content": CONTENT,
            }},
            {"name": "run_shell_command", "args": {"command": "echo pangolin"}}
        ]},
        {"text": "Saved and counted."}
    ]})
}

async fn connected(app: &App) -> Result<()> {
    app.wait_ready().await?;
    app.wait_for_attr("connection-status", "data-state", "is connected", |s| {
        s == "connected"
    })
    .await?;
    Ok(())
}

/// The tool cards inside `scope` (a CSS selector): `(data-tool, data-state, what it shows)`,
/// the last being its title, result line, output and exit code, as `title | result | output | exit`.
async fn cards(app: &App, scope: &str) -> Result<Vec<(String, String, String)>> {
    let value = app
        .client()
        .execute(
            "return Array.from(document.querySelectorAll(arguments[0] + ' [data-testid=tool-card]')).map((c) => {\
               const t = (id) => { const e = c.querySelector(`[data-testid=${id}]`); return e ? e.textContent.trim() : ''; };\
               const shown = [t('tool-title'), t('tool-result'), t('tool-output'), t('tool-exit-code')].join(' | ');\
               return [c.dataset.tool, c.dataset.state, shown];\
             });",
            vec![json!(scope)],
        )
        .await
        .context("read the tool cards")?;
    Ok(serde_json::from_value(value)?)
}

/// All text under `scope` (hidden parts included).
async fn all_text(app: &App, scope: &str) -> Result<String> {
    let value = app
        .client()
        .execute(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : '';",
            vec![json!(scope)],
        )
        .await
        .context("read the text")?;
    Ok(value.as_str().unwrap_or_default().to_owned())
}

async fn no_plumbing(app: &App, scope: &str, when: &str) -> Result<()> {
    let text = all_text(app, scope).await?;
    for bad in PLUMBING {
        ensure!(
            !text.contains(bad),
            "{when}: {bad:?} shown in {scope}: {text}"
        );
    }
    Ok(())
}

/// Waits until the chat shows the reopened turn: its prompt and both tool cards finished.
async fn reopened(app: &App, what: &str) -> Result<()> {
    app.wait_for_any_text("message-user", what, |t| t == PROMPT)
        .await?;
    app.wait_for_script(
        "const c = document.querySelectorAll('[data-testid=message-list] [data-testid=tool-card]');\
         return c.length === 2 && Array.from(c).every((e) => e.dataset.state === 'success');",
        "shows both tool cards, finished",
    )
    .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_the_live_tool_cards_and_no_plumbing() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let ws_str = ws.to_str().context("UTF-8 path")?.to_owned();
    let fake = FakeGemini::start_with_vars(script(), &[("WORKSPACE", &ws_str)]);
    let mut app = App::launch_connected("resume", &[&ws], &fake.base_url()).await?;

    // Live: approve the edit, then the command.
    app.type_and_enter("prompt-input", PROMPT).await?;
    app.wait_for_attr("confirmation", "data-kind", "asks to write the file", |k| {
        k == "edit"
    })
    .await?;
    app.click("approve").await?;
    app.wait_for_attr(
        "confirmation",
        "data-kind",
        "asks to run the command",
        |k| k == "execute",
    )
    .await?;
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("Saved and counted.")
    })
    .await?;
    app.wait_until_gone("cancel", "is hidden once the turn ended")
        .await?;
    ensure!(std::fs::read_to_string(ws.join(NOTES))? == CONTENT);
    let chat = "[data-testid=message-list]";
    let live = cards(&app, chat).await?;
    ensure!(
        live.len() == 2
            && live[0].0 == "write_file"
            && live[1].0 == "run_shell_command"
            && live.iter().all(|c| c.1 == "success")
            && live[1].2.contains("pangolin")
            && live[1].2.ends_with("exit 0"),
        "live cards: {live:?}"
    );
    let live_answers = app.texts("message-model").await?;
    app.screenshot("live").await?;

    // Reopened after a restart: the same cards and answers, nothing for the model.
    app.restart().await?;
    connected(&app).await?;
    reopened(&app, "reopens the session").await?;
    let after_restart = cards(&app, chat).await?;
    ensure!(
        after_restart == live,
        "reopened cards {after_restart:?} differ from the live ones {live:?}"
    );
    let answers = app.texts("message-model").await?;
    ensure!(
        answers == live_answers,
        "answers {answers:?} differ from {live_answers:?}"
    );
    no_plumbing(&app, chat, "after a restart").await?;
    app.screenshot("reopened").await?;

    // The history browser's transcript: the same cards.
    app.click("history-open").await?;
    app.click("history-session").await?;
    app.wait_for_script(
        "return document.querySelectorAll('[data-testid=history-transcript] [data-testid=tool-card]').length === 2;",
        "the transcript shows the tool cards",
    )
    .await?;
    let transcript = "[data-testid=history-transcript]";
    let in_transcript = cards(&app, transcript).await?;
    ensure!(
        in_transcript == live,
        "transcript cards {in_transcript:?} differ from the live ones {live:?}"
    );
    no_plumbing(&app, transcript, "in the transcript").await?;
    app.screenshot("transcript").await?;

    // Resumed from the history: the same again.
    app.click("history-resume").await?;
    app.wait_until_gone("history-panel", "closes on resume")
        .await?;
    connected(&app).await?;
    reopened(&app, "shows the resumed session").await?;
    let resumed = cards(&app, chat).await?;
    ensure!(
        resumed == live,
        "resumed cards {resumed:?} differ from the live ones {live:?}"
    );
    no_plumbing(&app, chat, "after resuming").await?;
    app.screenshot("resumed").await?;
    app.close().await
}
