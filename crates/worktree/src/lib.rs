//! "New conversation in a worktree": isolated parallel work on one repository.
//!
//! A conversation runs in a git worktree on a new branch forked from the repository's current
//! branch (the *base*). Its diff against the base can be shown at any time; when done, the
//! branch is merged back into the base or the worktree is discarded, each after a *plan* the
//! UI shows for confirmation and hands back, and which the action re-checks (it refuses if
//! anything moved since the user looked).
//!
//! All of it runs the `git` binary (≥ 2.38, for `merge-tree --write-tree`) on the user's
//! repository, with the user's configuration and identity but none of the inherited `GIT_*`
//! variables (see [`Git`]). Blocking: async callers use `spawn_blocking`.
//!
//! The free functions use [`Git::default()`]; the methods of [`Git`] are the same with a
//! custom environment (tests).

mod diff;
mod discard;
mod error;
mod git;
mod merge;
mod repo;
mod types;

use std::path::Path;

pub use error::{Result, WorktreeError};
pub use git::Git;
pub use merge::DEFAULT_COMMIT_MESSAGE;
pub use repo::slug;
pub use types::{
    Blocker, BlockerKind, ChangeStatus, CommitSummary, CreateOptions, DiscardPlan, FileChange,
    MergeKind, MergeOptions, MergeOutcome, MergePlan, Repo, Worktree, WorktreeDiff,
};

/// See [`Git::probe`].
pub fn probe(folder: &Path) -> Result<Option<Repo>> {
    Git::default().probe(folder)
}

/// See [`Git::create`].
pub fn create(folder: &Path, options: CreateOptions) -> Result<Worktree> {
    Git::default().create(folder, options)
}

/// See [`Git::list`].
pub fn list(folder: &Path) -> Result<Vec<Worktree>> {
    Git::default().list(folder)
}

/// See [`Git::open`].
pub fn open(folder: &Path) -> Result<Option<Worktree>> {
    Git::default().open(folder)
}

/// See [`Git::diff`].
pub fn diff(worktree: &Worktree) -> Result<WorktreeDiff> {
    Git::default().diff(worktree)
}

/// See [`Git::plan_merge`].
pub fn plan_merge(worktree: &Worktree) -> Result<MergePlan> {
    Git::default().plan_merge(worktree)
}

/// See [`Git::merge`].
pub fn merge(worktree: &Worktree, plan: &MergePlan, options: MergeOptions) -> Result<MergeOutcome> {
    Git::default().merge(worktree, plan, options)
}

/// See [`Git::commit_all`].
pub fn commit_all(worktree: &Worktree, message: &str) -> Result<String> {
    Git::default().commit_all(worktree, message)
}

/// See [`Git::plan_discard`].
pub fn plan_discard(worktree: &Worktree) -> Result<DiscardPlan> {
    Git::default().plan_discard(worktree)
}

/// See [`Git::discard`].
pub fn discard(worktree: &Worktree, plan: &DiscardPlan) -> Result<()> {
    Git::default().discard(worktree, plan)
}
