//! Limits and locations.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Overrides where the shadow repositories live (tests, portable setups).
pub const DIR_ENV: &str = "GEMINI_DESKTOP_CHECKPOINT_DIR";

/// Files larger than this are not snapshotted (10 MiB).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Above this size the oldest snapshots of a workspace are dropped (2 GiB).
pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// At most this many snapshots are kept per workspace.
pub const DEFAULT_MAX_CHECKPOINTS: usize = 300;
/// How long an edit waits for a full snapshot before it settles for a
/// snapshot of the files it touches.
pub const DEFAULT_BUDGET: Duration = Duration::from_millis(400);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointConfig {
    /// Where the shadow repositories live, one directory per workspace.
    pub root: PathBuf,
    /// Files larger than this are skipped (never snapshotted, never restored).
    pub max_file_bytes: u64,
    /// Size cap of one workspace's shadow repository; above it the oldest
    /// snapshots are dropped and the repository is garbage-collected.
    pub max_total_bytes: u64,
    /// Snapshots kept per workspace; older ones are dropped.
    pub max_checkpoints: usize,
    /// The time budget of a pre-edit checkpoint (see [`crate::Checkpointer`]).
    pub budget: Duration,
    /// Unreferenced objects younger than this survive garbage collection
    /// (`git gc --prune=<grace>`), so that a snapshot being written while a
    /// collection runs is never pruned under its feet.
    pub prune_grace: String,
}

impl CheckpointConfig {
    /// Defaults with the shadow repositories under `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
            max_checkpoints: DEFAULT_MAX_CHECKPOINTS,
            budget: DEFAULT_BUDGET,
            prune_grace: "2.minutes.ago".into(),
        }
    }

    /// `$GEMINI_DESKTOP_CHECKPOINT_DIR`, else
    /// `~/.gemini/gemini-desktop/checkpoints` (next to Gemini CLI's own
    /// `~/.gemini/history`, which we leave alone).
    pub fn default_root(
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Option<PathBuf> {
        env(DIR_ENV)
            .filter(|d| !d.trim().is_empty())
            .map(PathBuf::from)
            .or_else(|| home.map(|h| h.join(".gemini").join("gemini-desktop").join("checkpoints")))
    }
}
