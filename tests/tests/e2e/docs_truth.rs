//! The README's screenshots of what issue 34 changed ("the app tells the truth"), from the real
//! app in WebKitGTK under Xvfb, light and dark, 1440 and 800 px: a conversation reopened after a
//! restart with a failed command, an answer stopped mid-stream and a loop notice, as it was live;
//! plan mode said in the prompt box and a write it refused; the question before Ctrl+L clears;
//! the Panels menu; the policy editor in words; a failed command's card; the trust prompt.
//!
//! Ignored by default, like `docs_screenshots`; `scripts/docs-screenshots.sh` runs it with
//! `GD_DOCS_SCREENSHOTS=<repo>/docs/screenshots`.

use anyhow::{Context, Result};
use gd_e2e::docs::{element_shot, out_dir, resize, series, theme};
use gd_e2e::{App, okapi_notes};
use gd_fake_gemini::FakeGemini;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "documentation screenshots: run by scripts/docs-screenshots.sh"]
async fn docs_truth() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    std::fs::write(ws.join("main.rs"), "fn main() {}\n")?;
    let ws = ws.canonicalize()?;
    let fake = FakeGemini::start(json!({"steps": [
        {"text": "Running the check.",
         "functionCalls": [{"name": "run_shell_command", "args": {"command": "exit 3", "description": "Run the check"}}]},
        {"text": "The check failed with exit code 3."}
    ]}));
    let mut app = App::launch_connected("docs_truth", &[&ws], &fake.base_url()).await?;
    let out = out_dir(&app);
    std::fs::create_dir_all(&out)?;

    // A failed command, an answer stopped mid-stream, a loop stopped.
    app.type_and_enter("prompt-input", "Run the check").await?;
    app.wait_for_attr("confirmation", "data-kind", "asks", |k| k == "execute")
        .await?;
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "answered", |t| t.contains("exit code 3"))
        .await?;
    // The command that exited 3: a failed card, not a green "Done" (reopened, it is the same:
    // tests/e2e/restart.rs).
    resize(&app, 1100).await?;
    for palette in ["light", "dark"] {
        theme(&app, palette).await?;
        element_shot(
            &app,
            "tool-card",
            &out,
            &format!("failed-card-{palette}-1100"),
        )
        .await?;
    }
    theme(&app, "light").await?;
    fake.reset(
        json!({"chunk_chars": 12, "chunk_delay_ms": 40,
               "steps": [{"text": okapi_notes(60)}]}),
        &[],
    );
    app.type_and_enter("prompt-input", "Tell me all about okapis")
        .await?;
    app.wait_for_last_text("message-model", "streams", |t| t.contains("Okapi note"))
        .await?;
    app.click("cancel").await?;
    app.wait_for_any_text("notice", "stopped", |t| t == "Cancelled.")
        .await?;
    fake.reset(
        json!({"chunk_chars": 20,
               "steps": [{"text": "I am going to check the file again to be sure. ".repeat(30)}]}),
        &[],
    );
    app.type_and_enter("prompt-input", "Check it again").await?;
    app.wait_for_any_text("notice", "loop", |t| t.starts_with("Loop detected"))
        .await?;
    app.restart().await?;
    app.wait_ready().await?;
    app.wait_for_any_text("notice", "reopened", |t| t.starts_with("Loop detected"))
        .await?;
    series(&app, &out, "reopened-notices", &[1440, 800]).await?;

    // Plan mode: said in the prompt box; a write to the source refused, by plan mode.
    let source = ws.join("main.rs");
    fake.reset(
        json!({"steps": [
            {"functionCalls": [{"name": "write_file", "args": {
                "file_path": source.to_str().context("UTF-8 path")?, "content": "fn main() { todo!() }\n"}}]},
            {"text": "Plan mode keeps the source as it is; I will write the plan instead."}
        ]}),
        &[],
    );
    app.select_option("approval-mode", "plan").await?;
    app.wait_for_count("plan-mode-banner", "says plan mode", |n| n == 1)
        .await?;
    app.type_and_enter("prompt-input", "Change main.rs").await?;
    app.wait_for_last_text("message-model", "answered", |t| {
        t.contains("Plan mode keeps")
    })
    .await?;
    app.wait_for_attr("tool-card", "data-state", "the write was refused", |s| {
        s == "refused"
    })
    .await?;
    series(&app, &out, "plan-mode", &[1440, 800]).await?;
    app.click("plan-mode-leave").await?;

    // Ctrl+L asks first.
    resize(&app, 1440).await?;
    app.client()
        .find(fantoccini::Locator::Css("[data-testid=prompt-input]"))
        .await
        .context("the prompt box")?
        .send_keys(&format!("{}l", char::from(fantoccini::key::Key::Control)))
        .await
        .context("press Ctrl+L")?;
    app.wait_for_count("clear-confirm", "asks before clearing", |n| n == 1)
        .await?;
    series(&app, &out, "clear-confirm", &[1440, 800]).await?;
    app.click("clear-cancel").await?;

    // The Panels menu, then the policy editor in words.
    app.click("panels-open").await?;
    app.wait_for_count("panels-menu", "opens", |n| n == 1)
        .await?;
    series(&app, &out, "panels-menu", &[1440, 800]).await?;
    app.click("panels-open").await?;
    app.click("policies-open").await?;
    app.wait_for_count("policy-rules", "lists the rules", |n| n == 1)
        .await?;
    series(&app, &out, "policies", &[1440, 800]).await?;
    app.close().await?;

    // The trust prompt of a folder opened for the first time: whole at every width.
    let fresh = temp.path().join("cloned-repo");
    std::fs::create_dir(&fresh)?;
    let base = fake.base_url();
    let untrusted = App::launch_untrusted(
        "docs_truth_trust",
        &[&fresh],
        &[
            ("GEMINI_API_KEY", "e2e-key"),
            ("GOOGLE_GEMINI_BASE_URL", &base),
            ("GEMINI_MODEL", gd_e2e::E2E_MODEL),
        ],
    )
    .await?;
    untrusted.wait_ready().await?;
    untrusted
        .wait_for_count("trust-prompt", "asks about the folder", |n| n == 1)
        .await?;
    series(&untrusted, &out, "trust", &[1440, 1100, 800]).await?;
    eprintln!("screenshots in {}", out.display());
    untrusted.close().await
}
