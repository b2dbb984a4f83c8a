//! What can go wrong, in the sentences the user reads.
//!
//! Every message says what is wrong and, where there is one, what to do about it: the desktop
//! app shows them as they are.

use std::path::PathBuf;

/// An error of this crate. `Display` is the message for the user.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("Git could not be started (is it installed and on the PATH?): {0}")]
    GitMissing(#[source] std::io::Error),

    #[error("The folder {} does not exist.", .0.display())]
    FolderMissing(PathBuf),

    #[error("{} is not inside a git repository.", .0.display())]
    NotARepository(PathBuf),

    #[error(
        "The repository is on a detached HEAD: check out a branch first, the worktree needs a base branch to merge back into."
    )]
    DetachedHead,

    #[error(
        "The repository has no commits yet: commit something first, the worktree starts from the current branch's last commit."
    )]
    NoCommits,

    #[error("“{0}” is not a valid branch name.")]
    InvalidBranchName(String),

    #[error("A branch named “{0}” already exists: choose another name.")]
    BranchExists(String),

    #[error("The folder {} already exists: choose another branch name or location.", .0.display())]
    FolderExists(PathBuf),

    #[error("{} is not a worktree created by Gemini Desktop.", .0.display())]
    NotAWorktree(PathBuf),

    #[error(
        "The worktree folder {} no longer exists: discard it to clean up its branch.",
        .0.display()
    )]
    WorktreeMissing(PathBuf),

    #[error(
        "The base branch “{0}” no longer exists, so there is nothing to compare with or merge into."
    )]
    BaseBranchMissing(String),

    #[error("Something changed since this was shown ({0}): review it again and confirm.")]
    StalePlan(String),

    #[error("The merge cannot go ahead: {0}")]
    Blocked(String),

    #[error("There is nothing to commit in the worktree.")]
    NothingToCommit,

    #[error(
        "Git does not know who you are: set your name and email (git config --global user.name \"Your Name\", git config --global user.email you@example.com) and try again."
    )]
    IdentityMissing,

    #[error("Git could not merge, and the repository was put back as it was: {0}")]
    MergeFailed(String),

    #[error("Could not access {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("git {command} failed: {message}")]
    Git { command: String, message: String },
}

pub type Result<T, E = WorktreeError> = std::result::Result<T, E>;
