//! The command sandbox in the real app (issue 36): a folder whose settings turn on
//! `security.toolSandboxing`, YOLO mode, and a model that writes outside the workspace. The
//! write is refused by the sandbox; the app asks "this command needs to write in <folder>";
//! "Allow once" runs it again with that folder writable (the card says it ran sandboxed, with
//! the grant), "No" leaves it refused and the model hears why.
//!
//! Test ids: `approval-mode`, `prompt-input`, `sandbox-confirm`, `sandbox-need`,
//! `sandbox-allow-once`, `sandbox-deny`, `tool-card`, `tool-sandbox` (`data-sandboxed`),
//! `message-model`.

use anyhow::{Context, Result, ensure};
use gd_e2e::{App, function_responses, target_dir};
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::{Value, json};

/// A model that runs `command` and then answers `answer`.
fn runs(command: &str, answer: &str) -> Value {
    json!({"steps": [
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": command}}]},
        {"match_tool": "run_shell_command", "text": answer}
    ]})
}

/// The last `functionResponse` the model was sent, as JSON text.
fn last_function_response(fake: &FakeGemini) -> Result<String> {
    let request = fake.main_requests().last().cloned().context("a request")?;
    let body = request.body.context("a body")?;
    function_responses(&body)
        .last()
        .map(Value::to_string)
        .context("a functionResponse")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_is_asked_about_allowed_once_then_declined() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    // The project turns the sandbox on (a project may turn it on, never off).
    std::fs::create_dir_all(ws.join(".gemini"))?;
    std::fs::write(
        ws.join(".gemini/settings.json"),
        r#"{"security": {"toolSandboxing": true}}"#,
    )?;
    // Outside the workspace, and not under /tmp (the sandbox has a /tmp of its own).
    let outside = tempfile::tempdir_in(target_dir()?)?;
    let granted = outside.path().join("granted.txt");
    let fake = FakeGemini::start(runs(
        &format!("touch {} && echo made", granted.display()),
        "Made it.",
    ));
    let mut app = App::launch_connected("sandbox", &[&ws], &fake.base_url()).await?;
    app.select_option("approval-mode", "yolo").await?;

    app.type_and_enter("prompt-input", "Make the file").await?;
    app.wait_for_count(
        "sandbox-confirm",
        "the app asks about the refused write",
        |n| n == 1,
    )
    .await?;
    ensure!(!granted.exists(), "the sandbox let the write through");
    let needs = app.texts("sandbox-need").await?;
    let folder = std::fs::canonicalize(outside.path())?;
    ensure!(
        needs
            .iter()
            .any(|n| n.contains(&folder.display().to_string())),
        "names the folder it needs: {needs:?}"
    );
    app.screenshot("sandbox-confirm").await?;
    app.click("sandbox-allow-once").await?;
    app.wait_for_last_text("message-model", "the answer after the second run", |t| {
        t.contains("Made it.")
    })
    .await?;
    ensure!(granted.is_file(), "the allowed run wrote the file");
    app.wait_for_attr(
        "tool-sandbox",
        "data-sandboxed",
        "the card says sandboxed",
        |s| s == "true",
    )
    .await?;
    let sent = last_function_response(&fake)?;
    ensure!(
        sent.contains("the user allowed this command to write in") && sent.contains("once"),
        "the model hears what was allowed: {sent}"
    );
    app.screenshot("sandbox-allowed").await?;

    // "Once" was once: the next command is refused again, and "No" keeps it refused.
    let denied = outside.path().join("denied.txt");
    fake.reset(
        runs(&format!("touch {}", denied.display()), "Could not."),
        &[],
    );
    app.type_and_enter("prompt-input", "Another one").await?;
    app.wait_for_count("sandbox-confirm", "asked again", |n| n == 1)
        .await?;
    app.click("sandbox-deny").await?;
    app.wait_for_last_text("message-model", "the answer after the refusal", |t| {
        t.contains("Could not.")
    })
    .await?;
    ensure!(!denied.exists(), "a declined write happened");
    let sent = last_function_response(&fake)?;
    ensure!(
        sent.contains("The sandbox refused this command")
            && sent.contains("The user did not allow it."),
        "the model hears the refusal: {sent}"
    );
    ensure!(
        app.count("sandbox-confirm").await? == 0,
        "the question is gone once answered"
    );
    let live = app.texts("tool-sandbox").await?;

    // Reopened after a restart, both cards still say they ran sandboxed, as they did live.
    app.restart().await?;
    app.wait_ready().await?;
    app.wait_for_count(
        "tool-sandbox",
        "the reopened cards show their sandbox",
        |n| n == live.len(),
    )
    .await?;
    let reopened = app.texts("tool-sandbox").await?;
    ensure!(reopened == live, "live {live:?}, reopened {reopened:?}");
    let sandboxed = app
        .client()
        .execute(
            "return [...document.querySelectorAll('[data-testid=tool-sandbox]')].map((e) => e.dataset.sandboxed);",
            vec![],
        )
        .await?;
    ensure!(
        sandboxed == serde_json::json!(["true", "true"]),
        "{sandboxed}"
    );
    app.screenshot("sandbox-reopened").await?;
    app.close().await
}

/// The README's pictures of the sandbox: the question about a refused write over a live
/// conversation, and the card of the run it allowed (light and dark, 1440 and 800 px).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "documentation screenshots: run by scripts/docs-screenshots.sh"]
async fn docs_sandbox() -> Result<()> {
    use gd_e2e::docs::{out_dir, series};

    let temp = tempfile::tempdir()?;
    let ws = temp.path().join("project");
    std::fs::create_dir_all(ws.join(".gemini"))?;
    std::fs::write(
        ws.join(".gemini/settings.json"),
        r#"{"security": {"toolSandboxing": true}}"#,
    )?;
    let cache = tempfile::tempdir_in(target_dir()?)?;
    let fake = FakeGemini::start(runs(
        &format!(
            "mkdir -p {0}/wheels && cp -r . {0}/wheels/project",
            cache.path().display()
        ),
        "Copied the project into the wheel cache.",
    ));
    let app = App::launch_connected("docs_sandbox", &[&ws], &fake.base_url()).await?;
    let out = out_dir(&app);
    std::fs::create_dir_all(&out)?;
    app.select_option("approval-mode", "yolo").await?;
    app.type_and_enter("prompt-input", "Copy the project into the wheel cache")
        .await?;
    app.wait_for_count("sandbox-confirm", "asked", |n| n == 1)
        .await?;
    series(&app, &out, "sandbox-confirm", &[1440, 800]).await?;
    app.click("sandbox-allow-once").await?;
    app.wait_for_last_text("message-model", "answered", |t| t.contains("Copied"))
        .await?;
    series(&app, &out, "sandbox-allowed", &[1440, 800]).await?;
    app.close().await
}
