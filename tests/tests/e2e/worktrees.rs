//! "New conversation in a worktree" (issue 16, item 5) in the real app, on a real git
//! repository: the sidebar offers it on the repository's folder, creates the worktree beside the
//! repository and opens a conversation there (its entry shows the branch); work committed in the
//! worktree shows in the review panel's diff; merging (after the plan) closes that conversation,
//! fast-forwards the base branch and removes the worktree folder. Discarding one (after the
//! plan that lists the uncommitted file it loses) removes its folder and branch, and leaves the
//! base branch as it was.
//!
//! Test ids (the UI's contract): `new-worktree`, `worktree-branch-input`,
//! `worktree-parent-input`, `worktree-create-submit`, `conversation-item` (`data-folder`),
//! `worktree-branch`, `worktree-review`, `worktree-diff-file` (`data-path`), `worktree-merge`,
//! `worktree-plan`, `worktree-confirm`, `worktree-done`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use serde_json::json;

/// Runs git in `dir` without the caller's `GIT_*` variables (a hook's `GIT_DIR` would redirect
/// it) and fails with its stderr.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let mut command = Command::new("git");
    command.current_dir(dir).args(args);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            command.env_remove(key);
        }
    }
    let output = command.output().context("run git")?;
    ensure!(
        output.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// A repository on `main` with one commit and an identity in its own config (the app's HOME is
/// empty: no global identity).
fn repository(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let repo = temp.path().join("the repo");
    std::fs::create_dir(&repo)?;
    let repo = repo.canonicalize()?;
    git(&repo, &["init", "-q", "-b", "main"])?;
    git(&repo, &["config", "user.name", "E2E Tester"])?;
    git(&repo, &["config", "user.email", "e2e@example.com"])?;
    git(&repo, &["config", "commit.gpgsign", "false"])?;
    std::fs::write(repo.join("README.md"), "# The repo\n")?;
    git(&repo, &["add", "README.md"])?;
    git(&repo, &["commit", "-q", "-m", "Initial commit"])?;
    Ok(repo)
}

fn utf8(path: &Path) -> Result<&str> {
    path.to_str().context("UTF-8 path")
}

/// Opens the sidebar if the window started narrow (the branch line shows only when it is open),
/// then creates the worktree `branch` through "New in worktree…"; returns its folder once its
/// conversation is shown and connected.
async fn new_worktree(app: &App, repo: &Path, branch: &str) -> Result<PathBuf> {
    let expanded = app.attrs("sidebar-toggle", "aria-expanded").await?;
    if expanded != [Some("true".to_owned())] {
        app.click("sidebar-toggle").await?;
    }
    app.click("new-worktree").await?;
    app.type_into("worktree-branch-input", branch).await?;
    app.click("worktree-create-submit").await?;
    let worktree = repo.with_file_name("the repo.worktrees").join(branch);
    app.wait_for_text("workspace-path", "shows the worktree", |t| {
        t == utf8(&worktree).unwrap_or_default()
    })
    .await?;
    app.wait_for_text("connection-text", "its session is connected", |t| {
        t.contains(gd_e2e::E2E_MODEL)
    })
    .await?;
    Ok(worktree)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_is_discarded_with_what_it_loses() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let repo = repository(&temp)?;
    let fake = FakeGemini::start(json!({ "steps": [{ "text": "Nothing to do." }] }));
    let app = App::launch_connected("worktrees-discard", &[&repo], &fake.base_url()).await?;
    let base = git(&repo, &["rev-parse", "main"])?;
    let worktree = new_worktree(&app, &repo, "spike").await?;
    std::fs::write(worktree.join("scratch.txt"), "not committed\n")?;

    app.click("worktree-review").await?;
    app.wait_for_count("worktree-diff-file", "lists the file", |n| n == 1)
        .await?;
    app.click("worktree-discard").await?;
    app.wait_for_text("worktree-plan", "lists what is lost", |t| {
        t.contains("1 uncommitted file will be lost") && t.contains("scratch.txt")
    })
    .await?;
    app.click("worktree-confirm").await?;
    app.wait_for_text("worktree-done", "the discard is done", |t| {
        t.contains("were discarded")
    })
    .await?;

    ensure!(!worktree.exists(), "the worktree folder is removed");
    ensure!(
        git(&repo, &["branch", "--list", "spike"])?.is_empty(),
        "the branch is deleted"
    );
    ensure!(
        git(&repo, &["rev-parse", "main"])? == base,
        "main did not move"
    );
    ensure!(!repo.join("scratch.txt").exists());
    app.wait_for_count("conversation-item", "is the repository's alone", |n| n == 1)
        .await?;
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_in_a_worktree_is_reviewed_and_merged_into_the_base() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let repo = repository(&temp)?;
    let fake = FakeGemini::start(json!({ "steps": [{ "text": "Nothing to do." }] }));
    let app = App::launch_connected("worktrees", &[&repo], &fake.base_url()).await?;

    // The sidebar starts collapsed in a narrow window; the branch line needs it open.
    let expanded = app.attrs("sidebar-toggle", "aria-expanded").await?;
    if expanded != [Some("true".to_owned())] {
        app.click("sidebar-toggle").await?;
    }

    // Offered on the repository's folder, with the default location beside it.
    app.click("new-worktree").await?;
    let parent = repo.with_file_name("the repo.worktrees");
    let shown = app
        .client()
        .execute(
            "return document.querySelector('[data-testid=\"worktree-parent-input\"]').value;",
            vec![],
        )
        .await?;
    ensure!(
        shown == json!(utf8(&parent)?),
        "default parent shown: {shown}"
    );
    app.type_into("worktree-branch-input", "feature-e2e")
        .await?;
    app.click("worktree-create-submit").await?;

    // A second conversation, on the worktree's folder, whose entry shows its branch.
    let worktree = parent.join("feature-e2e");
    app.wait_for_count("conversation-item", "are two", |n| n == 2)
        .await?;
    let folders: Vec<String> = app
        .attrs("conversation-item", "data-folder")
        .await?
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect();
    ensure!(
        folders == [utf8(&repo)?, utf8(&worktree)?],
        "conversation folders: {folders:?}"
    );
    app.wait_for_text("worktree-branch", "shows the branch", |t| {
        t.trim() == "⎇ feature-e2e"
    })
    .await?;
    app.wait_for_text("workspace-path", "shows the worktree", |t| {
        t == utf8(&worktree).unwrap_or_default()
    })
    .await?;
    app.wait_for_text("connection-text", "its session is connected", |t| {
        t.contains(gd_e2e::E2E_MODEL)
    })
    .await?;
    ensure!(
        git(&worktree, &["rev-parse", "--abbrev-ref", "HEAD"])? == "feature-e2e",
        "the worktree is on its branch"
    );
    // Made from a trusted repository, the worktree is trusted too (no second trust prompt).
    let trust = app
        .invoke("trust_status", json!({}))
        .await?
        .map_err(|e| anyhow::anyhow!("trust_status: {e}"))?;
    ensure!(
        trust["workspace"] == json!(utf8(&worktree)?) && trust["trusted"] == json!(true),
        "the worktree's trust: {trust}"
    );

    // Work in the worktree, committed.
    std::fs::write(worktree.join("hello.txt"), "Hello from the worktree\n")?;
    git(&worktree, &["add", "hello.txt"])?;
    git(&worktree, &["commit", "-q", "-m", "Add hello"])?;

    // The review lists it.
    app.click("worktree-review").await?;
    app.wait_for_count("worktree-diff-file", "lists the file", |n| n == 1)
        .await?;
    let paths = app.attrs("worktree-diff-file", "data-path").await?;
    ensure!(
        paths == [Some("hello.txt".to_owned())],
        "diff files: {paths:?}"
    );
    app.screenshot("worktree-review").await?;

    // Merge: the plan, then confirm.
    app.click("worktree-merge").await?;
    app.wait_for_text("worktree-plan", "shows a fast-forward", |t| {
        t.contains("Fast-forward") && t.contains("Add hello")
    })
    .await?;
    app.click("worktree-confirm").await?;
    app.wait_for_text("worktree-done", "the merge is done", |t| {
        t.contains("fast-forwarded main")
    })
    .await?;

    // The base has the file, the worktree folder and branch are gone, so is its conversation.
    ensure!(std::fs::read_to_string(repo.join("hello.txt"))? == "Hello from the worktree\n");
    ensure!(git(&repo, &["log", "-1", "--format=%s", "main"])? == "Add hello");
    ensure!(!worktree.exists(), "the worktree folder is removed");
    ensure!(
        git(&repo, &["branch", "--list", "feature-e2e"])?.is_empty(),
        "the branch is deleted"
    );
    app.wait_for_count("conversation-item", "is the repository's alone", |n| n == 1)
        .await?;
    let folders = app.attrs("conversation-item", "data-folder").await?;
    ensure!(folders == [Some(utf8(&repo)?.to_owned())], "{folders:?}");
    app.close().await
}
