//! The policy editor in the real app: `/policies` opens it on the session's effective rules; a
//! rule added through the form is written to `~/.gemini/policies/auto-saved.toml` (appended, the
//! file's comment kept), the session reloads its policy and lists the rule, and a dry run of a
//! shell command is decided by it (deny) without running anything. A rule the loader refuses is
//! shown in the form, naming the line, and the file is left as it was.
//!
//! Test ids: `prompt-input`, `policy-editor`, `policy-rule` (`data-source`, `data-tier`),
//! `policy-add`, `policy-form`, `policy-form-prefixes`, `policy-form-decision`,
//! `policy-form-priority`, `policy-form-command-regex`, `policy-form-save`, `policy-form-error`,
//! `policy-form-cancel`, `policy-dry-run`, `policy-dry-run-command`, `policy-dry-run-result`
//! (`data-decision`), `policy-dry-run-rule`.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::json;

const EXISTING: &str = "# Saved by hand; keep this comment.\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_added_in_the_panel_is_written_in_place_and_decides_a_dry_run() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let fake = FakeGemini::start(json!({"steps": [{"text": "unused"}]}));
    let app = App::launch_connected("policy_editor", &[&ws], &fake.base_url()).await?;
    let file = app.home().join(".gemini/policies/auto-saved.toml");
    std::fs::create_dir_all(file.parent().context("a parent")?)?;
    std::fs::write(&file, EXISTING)?;

    app.type_and_enter("prompt-input", "/policies").await?;
    app.wait_for_count("policy-rule", "the built-in rules listed", |n| n > 0)
        .await?;
    let before = app.count("policy-rule").await?;

    // A rule the loader refuses: the form says why, naming the line; nothing is written.
    app.click("policy-add").await?;
    app.replace_text("policy-form-command-regex", "git (push")
        .await?;
    app.click("policy-form-save").await?;
    app.wait_for_text("policy-form-error", "the loader's error", |t| {
        t.contains("auto-saved.toml:4:") && t.contains("commandRegex")
    })
    .await?;
    ensure!(
        std::fs::read_to_string(&file)? == EXISTING,
        "the file is untouched"
    );
    app.click("policy-form-cancel").await?;

    // Deny `git push` in the user's file.
    app.click("policy-add").await?;
    app.replace_text("policy-form-prefixes", "git push").await?;
    app.select_option("policy-form-decision", "deny").await?;
    app.replace_text("policy-form-priority", "500").await?;
    app.click("policy-form-save").await?;
    app.wait_for_count("policy-rule", "the new rule listed after the reload", |n| {
        n == before + 1
    })
    .await?;
    let written = std::fs::read_to_string(&file)?;
    ensure!(
        written
            == format!(
                "{EXISTING}\n[[rule]]\ncommandPrefix = \"git push\"\ndecision = \"deny\"\npriority = 500\n"
            ),
        "the rule is appended, the comment kept: {written:?}"
    );
    let sources = app.attrs("policy-rule", "data-source").await?;
    let expected = format!("{}:3", file.display());
    ensure!(
        sources.first() == Some(&Some(expected.clone())),
        "the user rule comes first: {sources:?}"
    );

    // The session decides with it at once: a dry run of `git push` is denied by it.
    // Enter in the command field runs it (the form's submit).
    app.type_and_enter("policy-dry-run-command", "git push origin main")
        .await?;
    app.wait_for_attr(
        "policy-dry-run-result",
        "data-decision",
        "the dry run's decision",
        |d| d == "deny",
    )
    .await?;
    app.wait_for_text("policy-dry-run-rule", "the deciding rule", |t| {
        t.contains(&expected)
    })
    .await?;
    ensure!(fake.main_requests().is_empty(), "nothing went to the model");
    // The dry run and its deciding rule at the top, for the README.
    app.wait_for_script(
        "const p = document.querySelector('[data-testid=\"policy-editor\"]'); \
         p.scrollTop = 0; return p.scrollTop === 0;",
        "the panel scrolled to its top",
    )
    .await?;
    app.screenshot("policy-editor").await?;
    app.close().await
}
