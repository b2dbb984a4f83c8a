//! "New conversation in a worktree" (issue 16, item 5): the commands behind the sidebar's
//! "New in worktree…" and "Review worktree…" (diff, merge, discard). The work is gd-worktree's;
//! it runs `git` and blocks, so every command runs on a blocking thread and the webview's IPC
//! never waits on a merge.
//!
//! Worktrees are addressed by their folder (the conversation's workspace): every command reads
//! the worktree back from it, so the UI never hands over a stale description. `merge` and
//! `discard` take the plan the user confirmed; gd-worktree re-checks it and refuses with its
//! "Something changed since this was shown" sentence when anything moved (the UI then plans
//! again). Errors are gd-worktree's sentences, as `CommandError`s of kind `input`.
//!
//! The conversation working in a worktree must be closed (its session stopped) before `merge`
//! or `discard` removes the folder: the UI does that, these commands cannot know.

use std::path::{Path, PathBuf};

use gd_protocol::{CommandError, CommandErrorKind};
use gd_worktree::{
    CreateOptions, DiscardPlan, MergeOptions, MergeOutcome, MergePlan, Repo, Worktree,
    WorktreeDiff, WorktreeError,
};

fn error(e: impl std::fmt::Display) -> CommandError {
    CommandError::new(CommandErrorKind::Input, e.to_string())
}

/// Runs `f` on a blocking thread, its error as the user's sentence.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, WorktreeError> + Send + 'static,
) -> Result<T, CommandError> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(error)?
        .map_err(error)
}

/// The worktree `path` is, read from its folder; an error when it is not one of ours.
fn ours(path: &Path) -> Result<Worktree, WorktreeError> {
    gd_worktree::open(path)?.ok_or_else(|| WorktreeError::NotAWorktree(path.to_path_buf()))
}

/// The plan's worktree, when it is the one at `path` (a plan of another worktree is refused).
/// Taken from the plan rather than the folder so that a worktree whose folder was deleted by
/// hand can still be discarded (gd-worktree re-reads what it needs anyway).
fn planned(path: &str, worktree: &Worktree) -> Result<Worktree, CommandError> {
    if worktree.path != Path::new(path) {
        return Err(error(format!(
            "The plan is for {}, not {path}: review it again.",
            worktree.path.display()
        )));
    }
    Ok(worktree.clone())
}

/// The git checkout `folder` is in (`None`: not in one, and the UI does not offer a worktree).
#[tauri::command]
pub async fn worktree_probe(folder: String) -> Result<Option<Repo>, CommandError> {
    blocking(move || gd_worktree::probe(Path::new(&folder))).await
}

/// Creates a worktree on a new branch (default: the first free `gemini-worktree-N`) forked
/// from the current branch of the repository `folder` is in, in `parent` (default: beside the
/// repository). Its `path` is the new conversation's folder; its `warnings` are for the user.
#[tauri::command]
pub async fn worktree_create(
    folder: String,
    branch: Option<String>,
    parent: Option<String>,
) -> Result<Worktree, CommandError> {
    let options = CreateOptions {
        parent: parent.filter(|p| !p.trim().is_empty()).map(PathBuf::from),
        branch: branch.filter(|b| !b.trim().is_empty()),
    };
    blocking(move || {
        let worktree = gd_worktree::create(Path::new(&folder), options)?;
        inherit_trust(Path::new(&folder), &worktree.path);
        Ok(worktree)
    })
    .await
}

/// A worktree made from a trusted folder is trusted too (it holds the same project: asking
/// again would only be noise). It lives beside the repository, outside any rule that covers the
/// repository's own folder, so it gets a rule of its own in `trustedFolders.json`. An untrusted
/// or undecided repository leaves the worktree undecided: the trust prompt asks, as for any
/// folder. Failing to write the rule is logged; the prompt then asks.
fn inherit_trust(repository: &Path, worktree: &Path) {
    use gd_core::settings_screen::{set_trust, trust_info};
    let home = gd_core::launch::home_dir();
    let repo = trust_info(repository, home.as_deref());
    if !repo.enabled || repo.trusted != Some(true) {
        return;
    }
    if let Err(error) = set_trust(
        worktree,
        home.as_deref(),
        gd_protocol::TrustLevel::TrustFolder,
    ) {
        tracing::warn!(%error, worktree = %worktree.display(), "could not trust the new worktree");
    }
}

/// The worktree `folder` is, if it is one this app created (the sidebar shows its branch and
/// offers "Review worktree…").
#[tauri::command]
pub async fn worktree_of(folder: String) -> Result<Option<Worktree>, CommandError> {
    blocking(move || gd_worktree::open(Path::new(&folder))).await
}

/// Everything the worktree at `path` changes against its base branch (committed, uncommitted
/// and untracked), with the unified patch.
#[tauri::command]
pub async fn worktree_diff(path: String) -> Result<WorktreeDiff, CommandError> {
    blocking(move || gd_worktree::diff(&ours(Path::new(&path))?)).await
}

/// What merging the worktree at `path` into its base would do, and what blocks it now.
#[tauri::command]
pub async fn worktree_plan_merge(path: String) -> Result<MergePlan, CommandError> {
    blocking(move || gd_worktree::plan_merge(&ours(Path::new(&path))?)).await
}

/// Commits everything in the worktree at `path` (lifts the "uncommitted changes" blocker).
/// Returns the new commit.
#[tauri::command]
pub async fn worktree_commit_all(path: String, message: String) -> Result<String, CommandError> {
    blocking(move || {
        let message = if message.trim().is_empty() {
            gd_worktree::DEFAULT_COMMIT_MESSAGE.to_owned()
        } else {
            message
        };
        gd_worktree::commit_all(&ours(Path::new(&path))?, &message)
    })
    .await
}

/// Merges the worktree at `path` into its base as the confirmed `plan` says (refused when
/// anything moved since); then removes the worktree and its branch unless `keep_worktree`.
#[tauri::command]
pub async fn worktree_merge(
    path: String,
    plan: MergePlan,
    keep_worktree: Option<bool>,
) -> Result<MergeOutcome, CommandError> {
    let worktree = planned(&path, &plan.worktree)?;
    let options = MergeOptions {
        keep_worktree: keep_worktree.unwrap_or(false),
    };
    blocking(move || gd_worktree::merge(&worktree, &plan, options)).await
}

/// What discarding the worktree at `path` loses (uncommitted files, commits the base lacks).
#[tauri::command]
pub async fn worktree_plan_discard(path: String) -> Result<DiscardPlan, CommandError> {
    blocking(move || gd_worktree::plan_discard(&ours(Path::new(&path))?)).await
}

/// Removes the worktree at `path` and deletes its branch as the confirmed `plan` says
/// (refused when its files or commits changed since).
#[tauri::command]
pub async fn worktree_discard(path: String, plan: DiscardPlan) -> Result<(), CommandError> {
    let worktree = planned(&path, &plan.worktree)?;
    blocking(move || gd_worktree::discard(&worktree, &plan)).await
}
