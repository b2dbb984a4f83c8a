//! What the API takes and gives back. Everything the UI shows is `Serialize`; plans are also
//! `Deserialize` because the UI hands the confirmed plan back to `merge` / `discard`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A git repository as seen from a folder ([`crate::Git::probe`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct Repo {
    /// The checkout's top-level folder (git's spelling: symlinks resolved).
    pub top_level: PathBuf,
    /// The checked-out branch; `None` on a detached HEAD (a worktree cannot be created then).
    pub branch: Option<String>,
    /// The HEAD commit; `None` before the first commit.
    pub head: Option<String>,
    /// Whether there are uncommitted changes or untracked files.
    pub dirty: bool,
    /// How many files are changed, staged or untracked (what a new worktree would NOT get);
    /// an untracked folder counts once.
    pub uncommitted_files: usize,
}

/// Where and how to create a worktree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct CreateOptions {
    /// The folder that receives the worktree folder. Default: beside the repository,
    /// `<repo-parent>/<repo-name>.worktrees/`. A relative path is relative to the repository.
    pub parent: Option<PathBuf>,
    /// The new branch. Default: the first free `gemini-worktree-N`.
    pub branch: Option<String>,
}

/// A worktree this feature created: a linked checkout on its own branch, which remembers
/// the branch it was forked from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct Worktree {
    /// The worktree's folder: the conversation's workspace.
    pub path: PathBuf,
    /// Its branch (without `refs/heads/`).
    pub branch: String,
    /// The branch it was forked from and merges back into.
    pub base: String,
    /// The checkout the merge happens in: the folder the worktree was created from.
    pub base_checkout: PathBuf,
    /// The repository's main checkout.
    pub repo: PathBuf,
    /// The branch's current commit.
    pub head: String,
    /// Only from `create`: what the user should know, e.g. that uncommitted changes of the
    /// repository were not carried into the new worktree.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// How a file differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub enum ChangeStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct FileChange {
    /// The path (the new one for a rename), relative to the repository root.
    pub path: String,
    /// The old path of a rename.
    pub old_path: Option<String>,
    pub status: ChangeStatus,
    /// Lines added (0 for a binary file).
    pub additions: u32,
    /// Lines removed (0 for a binary file).
    pub deletions: u32,
    pub binary: bool,
}

/// Everything a worktree changes against its base branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct WorktreeDiff {
    pub base: String,
    /// The commit the comparison is against: where the branch forked from the base
    /// (merge-base), so the base's own later commits don't show as reverted.
    pub fork_point: String,
    /// Committed, uncommitted and untracked changes together, sorted by path.
    pub files: Vec<FileChange>,
    /// The unified diff (`a/` and `b/` prefixes, renames detected, no colour).
    pub patch: String,
}

/// One commit, for a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct CommitSummary {
    pub id: String,
    pub subject: String,
}

/// What a merge will do to the base branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub enum MergeKind {
    /// The branch has nothing the base doesn't: only the worktree is cleaned up.
    UpToDate,
    /// The base has not moved: it moves forward to the branch, no merge commit.
    FastForward,
    /// Both moved: a merge commit on the base.
    MergeCommit,
}

/// Why a merge cannot happen now. `kind` lets the UI offer the fix (e.g. `commit_all`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub enum BlockerKind {
    /// The folder the merge happens in is gone.
    BaseCheckoutMissing,
    /// The base checkout is on another branch (or detached).
    BaseNotCheckedOut,
    /// The base checkout is in the middle of a merge, rebase, cherry-pick or revert.
    BaseBusy,
    /// The base checkout has uncommitted changes to tracked files.
    BaseDirty,
    /// Files the merge brings in exist, untracked, in the base checkout.
    UntrackedInBase,
    /// The worktree has uncommitted changes or untracked files: `commit_all` first.
    WorktreeUncommitted,
    /// The branches change the same lines.
    Conflicts,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct Blocker {
    pub kind: BlockerKind,
    /// The sentence the user reads.
    pub message: String,
}

/// What `merge` will do; shown for confirmation, then handed back to `merge`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct MergePlan {
    pub worktree: Worktree,
    pub base: String,
    pub base_checkout: PathBuf,
    /// The base branch's commit when planned (the merge refuses if it moved).
    pub base_head: String,
    /// The worktree branch's commit when planned (the merge refuses if it moved).
    pub branch_head: String,
    pub kind: MergeKind,
    /// The commits the base will get, newest first.
    pub commits: Vec<CommitSummary>,
    /// How the base checkout's files will change (empty when there are conflicts).
    pub files: Vec<FileChange>,
    /// Files both sides changed in ways git cannot combine.
    pub conflicts: Vec<String>,
    /// Uncommitted files of the worktree (they would not be merged).
    pub uncommitted: Vec<String>,
    /// Empty when the merge can go ahead.
    pub blockers: Vec<Blocker>,
}

impl MergePlan {
    pub fn can_merge(&self) -> bool {
        self.blockers.is_empty()
    }
}

/// Options of `merge`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct MergeOptions {
    /// Keep the worktree folder and its branch after merging (default: remove both).
    pub keep_worktree: bool,
}

/// What `merge` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct MergeOutcome {
    pub kind: MergeKind,
    /// The base branch's commit after the merge.
    pub base_head: String,
    pub removed_worktree: bool,
    pub deleted_branch: bool,
    /// Clean-up that failed after a successful merge (the merge itself stands).
    pub warnings: Vec<String>,
}

/// What `discard` will throw away; shown for confirmation, then handed back to `discard`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct DiscardPlan {
    pub worktree: Worktree,
    /// Uncommitted and untracked files that will be deleted.
    pub uncommitted: Vec<String>,
    /// Commits of the branch the base branch does not have, newest first: they will be lost.
    pub commits: Vec<CommitSummary>,
    /// The branch's commit when planned.
    pub branch_head: String,
    /// A tree of the worktree's files when planned (committed, changed and untracked), so
    /// that `discard` notices any change since, even to a file that was already listed.
    pub state: String,
}

impl DiscardPlan {
    /// Whether discarding loses anything at all.
    pub fn loses_work(&self) -> bool {
        !self.uncommitted.is_empty() || !self.commits.is_empty()
    }
}
