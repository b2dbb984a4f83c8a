//! Tool approvals through the real app: the model (the fake Gemini server, over real HTTP)
//! proposes edits of a file in a temporary workspace, the UI shows the diff, and the user
//! approves, rejects, edits the proposal, or switches the approval mode. Each step is checked
//! on disk and in what the model was sent.
//!
//! Written against the UI's test-id contract (see `README.md` of this crate):
//! `confirmation` (`data-kind`, `data-call-id`), `diff-view` (`data-call-id`), `diff-left`,
//! `diff-right`, `diff-editor`, `approve`, `reject`, `edit-proposal`, `always-allow`,
//! `approval-mode`, `tool-card` (`data-tool`, `data-state`), `message-model`, `prompt-input`.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use gd_e2e::{App, function_responses};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

/// What the model is told when the user rejects a call (Gemini CLI's wording).
const DECLINED: &str = "[Operation Cancelled] Reason: User did not allow tool call";
/// The note appended to a tool result when the user edited the proposal.
const MODIFIED_NOTE: &str = "The user modified the proposed change before it was applied";

const FILE: &str = "greeting.txt";
const ORIGINAL: &str = "line one\nHello there\nline three\n";

/// A workspace holding `greeting.txt`.
fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    std::fs::write(ws.join(FILE), ORIGINAL)?;
    Ok(ws.canonicalize()?)
}

fn utf8(path: &Path) -> Result<&str> {
    path.to_str().context("UTF-8 path")
}

/// A `replace` call of `old` by `new` in `greeting.txt`.
fn replace(old: &str, new: &str, instruction: &str) -> Value {
    json!({
        "name": "replace",
        "args": {
            "file_path": format!("{{{{WORKSPACE}}}}/{FILE}"),
            "instruction": instruction,
            "old_string": old,
            "new_string": new,
        }
    })
}

/// A two-step script: text and a proposal, then (after the tool result) a closing answer.
/// Texts stream in small chunks so the UI renders them incrementally.
fn proposal(intro: &str, call: Value, closing: &str) -> Value {
    json!({
        "chunk_chars": 6,
        "chunk_delay_ms": 5,
        "steps": [
            {"text": intro, "functionCalls": [call]},
            {"text": closing}
        ]
    })
}

fn read(ws: &Path) -> Result<String> {
    Ok(std::fs::read_to_string(ws.join(FILE))?)
}

/// The JSON body of the `n`-th (0-based) main request.
fn body(fake: &FakeGemini, n: usize) -> Result<Value> {
    let requests = fake.main_requests();
    requests
        .get(n)
        .and_then(|r| r.body.clone())
        .with_context(|| format!("main request {n} (of {})", requests.len()))
}

/// Waits for the pending edit confirmation and checks its diff; returns its call id.
async fn expect_edit_confirmation(app: &App, old_line: &str, new_line: &str) -> Result<String> {
    app.wait_for_attr("tool-card", "data-state", "awaits approval", |s| {
        s == "awaiting_approval"
    })
    .await?;
    let kind = app
        .wait_for_attr("confirmation", "data-kind", "is an edit", |k| k == "edit")
        .await?;
    ensure!(kind == "edit");
    let call_id = app
        .wait_for_attr("confirmation", "data-call-id", "names the call", |id| {
            !id.is_empty()
        })
        .await?;
    let diff_call = app
        .wait_for_attr("diff-view", "data-call-id", "is the call's diff", |id| {
            id == call_id
        })
        .await?;
    ensure!(diff_call == call_id);
    let tool = app
        .attrs("tool-card", "data-tool")
        .await?
        .pop()
        .flatten()
        .unwrap_or_default();
    ensure!(tool == "replace", "tool card of {tool:?}");
    app.wait_for_last_text("diff-left", "shows the old line", |t| t.contains(old_line))
        .await?;
    app.wait_for_last_text("diff-right", "shows the new line", |t| t.contains(new_line))
        .await?;
    Ok(call_id)
}

/// Waits until the turn is over: no Stop button, Send available again.
async fn wait_turn_over(app: &App) -> Result<()> {
    app.wait_until_gone("cancel", "is hidden once the turn ended")
        .await?;
    app.interactable("send").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_are_approved_rejected_and_edited_before_they_run() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let vars = [("WORKSPACE", utf8(&ws)?)];
    let fake = FakeGemini::start_with_vars(
        proposal(
            "I will greet the whole world.",
            replace("Hello there", "Hello, world", "Greet the world"),
            "The greeting now says hello to the world.",
        ),
        &vars,
    );
    let app = App::launch_connected("approvals", &[&ws], &fake.base_url()).await?;

    // 1. Approve: the text streams, the diff is shown, and the edit lands on disk.
    app.type_and_enter("prompt-input", "Make the greeting global")
        .await?;
    app.wait_for_last_text("message-user", "shows the prompt", |t| {
        t.contains("Make the greeting global")
    })
    .await?;
    app.wait_for_any_text("message-model", "streamed the intro", |t| {
        t.contains("I will greet the whole world.")
    })
    .await?;
    let first_call = expect_edit_confirmation(&app, "Hello there", "Hello, world").await?;
    ensure!(read(&ws)? == ORIGINAL, "nothing is written before approval");
    let shot = app.screenshot("diff-view").await?;
    eprintln!("diff screenshot: {}", shot.display());
    app.click("approve").await?;
    app.wait_for_attr("tool-card", "data-state", "succeeded", |s| s == "success")
        .await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("The greeting now says hello to the world.")
    })
    .await?;
    wait_turn_over(&app).await?;
    ensure!(read(&ws)? == "line one\nHello, world\nline three\n");
    ensure!(fake.main_requests().len() == 2);
    let result = function_responses(&body(&fake, 1)?)
        .pop()
        .context("the tool result")?;
    ensure!(result["name"] == "replace", "{result}");
    ensure!(result["response"].get("error").is_none(), "{result}");

    // 2. Reject: nothing is written and the turn stops; the model learns why with the next prompt.
    fake.reset(
        proposal(
            "Let me also shout the last line.",
            replace("line three", "LINE THREE", "Shout"),
            "unreachable: a rejected call ends the turn",
        ),
        &vars,
    );
    app.type_and_enter("prompt-input", "Also shout the last line")
        .await?;
    let second_call = expect_edit_confirmation(&app, "line three", "LINE THREE").await?;
    ensure!(second_call != first_call, "a new call id: {second_call}");
    app.click("reject").await?;
    app.wait_for_attr("tool-card", "data-state", "is cancelled", |s| {
        s == "cancelled"
    })
    .await?;
    // The turn is over (the UI says so once core has ended it): nothing of it can still write
    // or ask the model.
    wait_turn_over(&app).await?;
    ensure!(read(&ws)? == "line one\nHello, world\nline three\n");
    ensure!(
        fake.main_requests().len() == 1,
        "the model is not asked to continue after a rejection"
    );

    // 3. Edit the proposal: the user's text is written, and the model is told.
    fake.reset(
        proposal(
            "Understood. Then I suggest capitals for the first line.",
            replace("line one", "LINE ONE", "Capitals"),
            "Your version is in place.",
        ),
        &vars,
    );
    app.type_and_enter("prompt-input", "No shouting please")
        .await?;
    ensure!(fake.wait_for_requests(1, Duration::from_secs(20)));
    let declined = function_responses(&body(&fake, 0)?);
    let declined = declined.last().context("the rejected call's response")?;
    ensure!(declined["name"] == "replace", "{declined}");
    ensure!(
        declined["response"]["error"] == DECLINED,
        "the rejection reaches the model: {declined}"
    );

    expect_edit_confirmation(&app, "line one", "LINE ONE").await?;
    app.click("edit-proposal").await?;
    app.wait_for_last_text("diff-editor", "holds the proposed text", |t| {
        t.contains("LINE ONE")
    })
    .await?;
    let edited = "Line one, edited by hand\nHello, world\nline three";
    app.replace_text("diff-editor", edited).await?;
    app.click("approve").await?;
    app.wait_for_attr("tool-card", "data-state", "succeeded", |s| s == "success")
        .await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("Your version is in place.")
    })
    .await?;
    ensure!(read(&ws)? == edited, "the user's version is on disk");
    let result = function_responses(&body(&fake, 1)?)
        .pop()
        .context("the tool result")?;
    let output = result["response"]["output"].as_str().unwrap_or_default();
    ensure!(output.contains(MODIFIED_NOTE), "{result}");

    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yolo_mode_runs_edits_without_asking() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let fake = FakeGemini::start_with_vars(
        proposal(
            "Changing it right away.",
            replace("Hello there", "Hello, yolo", "Greet"),
            "Done without asking.",
        ),
        &[("WORKSPACE", utf8(&ws)?)],
    );
    let app = App::launch_connected("approvals_yolo", &[&ws], &fake.base_url()).await?;

    let mode = app.texts("approval-mode").await?;
    ensure!(
        mode == ["default"],
        "the session starts in default mode: {mode:?}"
    );
    app.select_option("approval-mode", "yolo").await?;
    // Any confirmation that shows up, even briefly, is noticed.
    app.client()
        .execute(
            "window.__gdSawConfirmation = false;\
             new MutationObserver(() => {\
               if (document.querySelector('[data-testid=\"confirmation\"]')) {\
                 window.__gdSawConfirmation = true;\
               }\
             }).observe(document.body, { childList: true, subtree: true });",
            vec![],
        )
        .await?;

    app.type_and_enter("prompt-input", "Change the greeting")
        .await?;
    app.wait_for_attr("tool-card", "data-state", "succeeded", |s| s == "success")
        .await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("Done without asking.")
    })
    .await?;
    ensure!(read(&ws)? == "line one\nHello, yolo\nline three\n");
    app.wait_for_last_text("decided-by-label", "says the mode allowed it", |t| {
        t == "Allowed: YOLO mode"
    })
    .await?;
    let saw = app
        .client()
        .execute("return window.__gdSawConfirmation;", vec![])
        .await?;
    ensure!(
        saw == json!(false),
        "no confirmation was shown in yolo mode"
    );
    ensure!(app.count("confirmation").await? == 0);
    ensure!(fake.main_requests().len() == 2);
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_covers_the_next_edit_of_the_session() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    // "Always allow edits" on a `replace` covers the other edit tool too
    // (issue 34: the next `write_file` was asked again).
    let write = json!({"name": "write_file", "args": {
        "file_path": "{{WORKSPACE}}/notes.txt", "content": "shouted\n"}});
    let fake = FakeGemini::start_with_vars(
        json!({"steps": [
            {"functionCalls": [replace("line one", "LINE ONE", "first")]},
            {"functionCalls": [replace("line three", "LINE THREE", "second")]},
            {"functionCalls": [write]},
            {"text": "Both lines are shouting now."}
        ]}),
        &[("WORKSPACE", utf8(&ws)?)],
    );
    let app = App::launch_connected("approvals_always", &[&ws], &fake.base_url()).await?;
    app.type_and_enter("prompt-input", "Shout both lines")
        .await?;
    expect_edit_confirmation(&app, "line one", "LINE ONE").await?;
    app.click("always-allow").await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("Both lines are shouting now.")
    })
    .await?;
    ensure!(read(&ws)? == "LINE ONE\nHello there\nLINE THREE\n");
    ensure!(std::fs::read_to_string(ws.join("notes.txt"))? == "shouted\n");
    let states = app.attrs("tool-card", "data-state").await?;
    ensure!(
        states.iter().all(|s| s.as_deref() == Some("success")) && states.len() == 3,
        "{states:?}"
    );
    ensure!(app.count("confirmation").await? == 0, "asked only once");
    app.close().await
}

/// A rule of the workspace's own policy file allows the edit: no confirmation, and the card's
/// `decided-by` line names that rule (file, line, tier, priority) and opens to its text. The
/// always-allow test above covers the click; this is the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_allowed_by_a_policy_file_names_the_rule() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let policies = ws.join(".gemini/policies");
    std::fs::create_dir_all(&policies)?;
    let rule = "[[rule]]\ntoolName = \"replace\"\ndecision = \"allow\"\npriority = 100\n";
    std::fs::write(
        policies.join("dev.toml"),
        format!("# This project's edits need no approval.\n\n{rule}"),
    )?;
    let fake = FakeGemini::start_with_vars(
        proposal(
            "Changing it as the policy allows.",
            replace("Hello there", "Hello, policy", "Greet"),
            "Done by the rule.",
        ),
        &[("WORKSPACE", utf8(&ws)?)],
    );
    let app = App::launch_connected("approvals_policy_file", &[&ws], &fake.base_url()).await?;
    app.type_and_enter("prompt-input", "Change the greeting")
        .await?;
    app.wait_for_last_text("message-model", "gave the closing answer", |t| {
        t.contains("Done by the rule.")
    })
    .await?;
    ensure!(read(&ws)? == "line one\nHello, policy\nline three\n");
    ensure!(app.count("confirmation").await? == 0, "nothing was asked");
    let file = policies.join("dev.toml");
    let expected = format!(
        "Allowed by rule · {}:3 · workspace tier · priority 100",
        file.display()
    );
    let label = app
        .wait_for_last_text("decided-by-label", "names the policy file's rule", |t| {
            t == expected
        })
        .await?;
    ensure!(label == expected, "{label}");
    app.click("decided-by-toggle").await?;
    let text = app
        .wait_for_last_text("decided-by-rule", "shows the rule as written", |t| {
            !t.is_empty()
        })
        .await?;
    ensure!(text.trim_end() == rule.trim_end(), "{text:?}");
    app.close().await
}
