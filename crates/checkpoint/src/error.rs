//! What can go wrong with checkpoints.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The `git` binary is missing or could not be started.
    #[error("cannot run git (is it installed?): {0}")]
    GitMissing(#[source] std::io::Error),
    #[error("{command} failed: {message}")]
    Git { command: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the workspace {0} is not a directory")]
    Workspace(PathBuf),
    #[error("invalid checkpoint id {0:?}")]
    InvalidId(String),
    #[error("no checkpoint {0}")]
    NotFound(String),
    /// A first read would store more than the size cap: only partial
    /// checkpoints (the edited files) are taken for this workspace.
    #[error(
        "the workspace holds {bytes} bytes of files to snapshot, more than the {cap}-byte cap: only the edited files are checkpointed"
    )]
    TooBig { bytes: u64, cap: u64 },
    #[error("checkpoint {id} has unreadable metadata: {reason}")]
    Metadata { id: String, reason: String },
}

impl CheckpointError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = CheckpointError> = std::result::Result<T, E>;
