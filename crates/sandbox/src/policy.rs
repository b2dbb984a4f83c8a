//! What a sandboxed command may do.

use std::path::PathBuf;

/// Whether a sandboxed command reaches the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// Its own network namespace: a loopback of its own and nothing else (not even the host's
    /// loopback services, nor name resolution).
    #[default]
    None,
    /// The host's network, as the user has it.
    All,
}

/// The rules of one sandboxed command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Folders (absolute, existing) the command may write in: the workspace folders, the
    /// conversation's worktree, the user's `security.sandbox.writablePaths`, grants. Their
    /// `.git/hooks`, `.git/config` (and a linked worktree's git folders' ones) and `.gemini`
    /// stay read-only.
    pub writable: Vec<PathBuf>,
    /// More folders the command may write in that are not workspaces: the user's
    /// `security.sandbox.writablePaths` and what the user granted. Their existing protected
    /// parts stay read-only, but nothing is created in them on the host (a workspace gets an
    /// empty `.gemini`, and an empty read-only `.git` when it is not a repository, so that a
    /// command can neither plant settings nor `git init` a repository with hooks).
    pub extra_writable: Vec<PathBuf>,
    /// Whether it reaches the network.
    pub network: Network,
    /// The user's home folder, whose secrets are hidden; None: `$HOME`.
    pub home: Option<PathBuf>,
}
