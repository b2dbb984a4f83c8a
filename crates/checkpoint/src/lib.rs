//! Checkpoints: snapshots of a workspace taken before the agent edits it,
//! so that any edit can be undone.
//!
//! Each workspace gets a *shadow* git repository outside the project
//! (`~/.gemini/gemini-desktop/checkpoints/<hash of the path>`), driven with
//! the `git` binary through `GIT_DIR` / `GIT_WORK_TREE` with no system or
//! global configuration: the project's own `.git` is never read or written
//! (beyond its `info/exclude`, which is honoured), and the project does not
//! even need to be a git repository.
//!
//! * What is kept: every file the project's `.gitignore` files,
//!   `.git/info/exclude` and `.geminiignore` do not exclude, up to
//!   [`CheckpointConfig::max_file_bytes`] each.
//! * A checkpoint is a commit on `refs/checkpoints/<id>` whose message holds
//!   its [`CheckpointMeta`] (session, message, tool call, files) as JSON.
//! * [`ShadowRepo::restore`] puts the kept files back: changed files are
//!   reverted, files created since are removed, deleted files come back.
//!   Ignored and oversized files are never touched.
//! * Garbage collection keeps at most [`CheckpointConfig::max_checkpoints`]
//!   and stays under [`CheckpointConfig::max_total_bytes`].
//! * [`Checkpointer`] adds the time budget that keeps a turn from waiting
//!   on the first snapshot of a big workspace.

mod checkpointer;
mod config;
mod confine;
mod error;
mod git;
mod meta;
mod private;
mod repo;

pub use checkpointer::Checkpointer;
pub use config::{
    CheckpointConfig, DEFAULT_BUDGET, DEFAULT_MAX_CHECKPOINTS, DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_TOTAL_BYTES, DIR_ENV,
};
pub use error::{CheckpointError, Result};
pub use meta::{Checkpoint, CheckpointKind, CheckpointMeta};
pub use repo::{ChangeKind, FileChange, GcReport, RestoreReport, ShadowRepo, SnapshotStep};
