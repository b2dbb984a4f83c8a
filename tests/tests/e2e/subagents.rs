//! Subagents through the real app (issue 19): the model (the fake Gemini server) calls
//! `invoke_agent` for the built-in `generalist`; the subagent's own conversation (its requests
//! carry its own system instruction, so the server answers them from a branch of the script)
//! calls `write_file`; the confirmation appears INSIDE the nested subagent card, labelled with
//! the agent, and in the dock; approving it from the card writes the file; the subagent hands
//! its result back with `complete_task` and the parent answers.
//!
//! Test ids: `tool-card`, `subagent-card` (`data-status`, `data-awaiting`), `subagent-status`,
//! `subagent-stream`, `confirmation`, `confirmation-agent`, `approve`, `subagent-toggle`,
//! `message-model`.
//!
//! Needs the subagent runner (core) and the scenario's `branches` (gd-fake-gemini), both from
//! the "runner" work of issue 19. Build first: `npm --prefix ui ci && npm --prefix ui run build
//! && cargo build -p gemini-desktop`.

use std::path::PathBuf;

use anyhow::{Context, Result, ensure};
use gd_e2e::{App, function_responses};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const FILE: &str = "notes.txt";
const CONTENT: &str = "Written by the generalist\n";
const TASK: &str = "Write the notes file";
/// Only the generalist's system instruction says this (its built-in prompt).
const GENERALIST_PROMPT_PART: &str = "general-purpose software engineering agent";
const ANSWER: &str = "The generalist wrote notes.txt.";

fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    Ok(ws.canonicalize()?)
}

fn call(name: &str, args: Value) -> Value {
    json!({"functionCalls": [{"name": name, "args": args}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_confirmation_is_answered_inside_its_nested_card() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let ws_text = ws.to_str().context("UTF-8 path")?;
    let fake = FakeGemini::start_with_vars(
        json!({
            "steps": [
                call("invoke_agent", json!({"agent_name": "generalist", "prompt": TASK})),
                {"text": ANSWER}
            ],
            "branches": [{
                "system_contains": GENERALIST_PROMPT_PART,
                "steps": [
                    call("write_file", json!({"file_path": "{{WORKSPACE}}/notes.txt", "content": CONTENT})),
                    call("complete_task", json!({"result": "notes.txt written"}))
                ]
            }]
        }),
        &[("WORKSPACE", ws_text)],
    );
    let mut app = App::launch_connected("subagents", &[&ws], &fake.base_url()).await?;
    app.type_and_enter("prompt-input", "Have an agent write the notes")
        .await?;

    // 1. The nested card, under the parent's invoke_agent call, waits for the user.
    app.wait_for_count(
        "tool-card[data-tool=invoke_agent] subagent-card",
        "is the nested card",
        |n| n == 1,
    )
    .await?;
    app.wait_for_attr(
        "subagent-card",
        "data-awaiting",
        "waits for the user",
        |s| s == "true",
    )
    .await?;
    app.wait_for_count(
        "subagent-card confirmation",
        "is the confirmation inside the card",
        |n| n == 1,
    )
    .await?;
    let asked = app.texts("subagent-card confirmation-agent").await?;
    ensure!(
        asked.iter().any(|t| t.contains("asked by Generalist")),
        "labelled with the agent: {asked:?}"
    );
    ensure!(
        app.count("confirmation-dock confirmation").await? == 1,
        "the dock shows it too"
    );
    ensure!(!ws.join(FILE).exists(), "nothing written before approving");
    // The live nested card with its confirmation, light at 1440 px and dark at 800 px.
    for (width, theme) in [(1440, "light"), (800, "dark")] {
        gd_e2e::docs::resize(&app, width).await?;
        gd_e2e::docs::theme(&app, theme).await?;
        app.client()
            .execute(
                "document.querySelector('[data-testid=\"subagent-card\"]').scrollIntoView();",
                vec![],
            )
            .await?;
        let shot = app
            .screenshot(&format!("subagent-nested-confirmation-{theme}-{width}"))
            .await?;
        eprintln!("nested confirmation screenshot: {}", shot.display());
    }
    // Back to following the end of the conversation (the list renders the rows near the view).
    app.client()
        .execute(
            "const s = document.querySelector('[data-testid=\"scroller\"]'); s.scrollTop = s.scrollHeight;",
            vec![],
        )
        .await?;

    // 2. Approve from inside the card: the file is written, the run completes.
    app.click("subagent-card approve").await?;
    app.wait_for_attr("subagent-card", "data-status", "completed", |s| {
        s == "completed"
    })
    .await?;
    ensure!(std::fs::read_to_string(ws.join(FILE))? == CONTENT);
    app.wait_until_gone(
        "confirmation",
        "the answered confirmation left card and dock",
    )
    .await?;

    // 3. The parent got the subagent's result and answered.
    app.wait_for_last_text("message-model", "gave the parent's answer", |t| {
        t.contains(ANSWER)
    })
    .await?;
    let results: Vec<String> = fake
        .main_requests()
        .iter()
        .filter_map(|r| r.body.clone())
        .flat_map(|body| function_responses(&body))
        .filter(|r| r["name"] == "invoke_agent")
        .map(|r| r["response"].to_string())
        .collect();
    ensure!(
        results.iter().any(|r| r.contains("notes.txt written")),
        "the parent's request carries the subagent's result: {results:?}"
    );

    // 4. Its stream stays available once finished.
    app.click("subagent-toggle").await?;
    app.wait_for_count(
        "subagent-stream tool-card[data-tool=write_file]",
        "is the nested write_file card",
        |n| n == 1,
    )
    .await?;

    // 5. Reopened after a restart (from the history): the same card, finished and collapsed,
    // expandable to the recorded stream.
    app.restart().await?;
    app.wait_ready().await?;
    app.wait_for_attr("subagent-card", "data-status", "is the recorded run", |s| {
        s == "completed"
    })
    .await?;
    ensure!(
        app.count("subagent-stream").await? == 0,
        "a recorded run starts collapsed"
    );
    ensure!(app.count("subagent-stop").await? == 0, "nothing to stop");
    app.click("subagent-toggle").await?;
    app.wait_for_count(
        "subagent-stream tool-card[data-tool=write_file]",
        "is the recorded write_file card",
        |n| n == 1,
    )
    .await?;
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_a_running_subagent_and_the_parent_continues() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let fake = FakeGemini::start(json!({
        "steps": [
            call("invoke_agent", json!({"agent_name": "generalist", "prompt": TASK})),
            {"text": ANSWER}
        ],
        // The subagent's first request hangs until it is stopped.
        "branches": [{
            "system_contains": GENERALIST_PROMPT_PART,
            "steps": [{"text": "still thinking", "delay_ms": 120_000}]
        }]
    }));
    let app = App::launch_connected("subagents_stop", &[&ws], &fake.base_url()).await?;
    app.type_and_enter("prompt-input", "Have an agent write the notes")
        .await?;
    app.wait_for_attr("subagent-card", "data-status", "runs", |s| s == "running")
        .await?;
    app.click("subagent-stop").await?;
    app.wait_for_attr("subagent-card", "data-status", "was cancelled", |s| {
        s == "cancelled"
    })
    .await?;
    ensure!(
        app.count("subagent-stop").await? == 0,
        "no Stop once it ended"
    );
    app.wait_for_last_text("message-model", "gave the parent's answer", |t| {
        t.contains(ANSWER)
    })
    .await?;
    app.close().await
}
