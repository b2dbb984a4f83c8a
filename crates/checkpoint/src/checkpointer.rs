//! Checkpoints on a time budget, so that an edit never waits long.
//!
//! The rule:
//! 1. When a session starts, [`Checkpointer::start_baseline`] reads the
//!    whole workspace into the shadow index on a background thread. For a
//!    big workspace this is the slow part (every file is hashed once).
//! 2. Before an edit, [`Checkpointer::checkpoint`] starts a full snapshot on
//!    another thread and waits for it at most [`CheckpointConfig::budget`].
//!    With the baseline done, a full snapshot is a stat walk plus hashing of
//!    what changed, and normally fits.
//! 3. If it does not fit (baseline still running, a huge or slow disk), the
//!    full snapshot is abandoned (it will not be recorded: the edit is about
//!    to change the files under it) and a partial checkpoint of only the
//!    files the edit touches is taken instead, without the shadow index.
//!    Restoring it puts exactly those files back.
//!
//! [`CheckpointConfig::budget`]: crate::CheckpointConfig::budget

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use crate::error::{CheckpointError, Result};
use crate::meta::{Checkpoint, CheckpointMeta};
use crate::repo::{ShadowRepo, SnapshotStep};

/// A workspace's shadow repository plus the time-budget rule.
#[derive(Debug, Clone)]
pub struct Checkpointer {
    repo: Arc<ShadowRepo>,
    baseline_done: Arc<AtomicBool>,
    /// The workspace is too big for full snapshots (see
    /// [`CheckpointError::TooBig`]): go straight to partial ones.
    partial_only: Arc<AtomicBool>,
    budget: Duration,
}

/// Where a background full snapshot stands, shared with the waiting edit.
#[derive(Debug, Default)]
struct Job {
    /// The edit stopped waiting: do not record.
    abandoned: bool,
    /// Past the point of no return: the ref is being written.
    recording: bool,
}

impl Checkpointer {
    pub fn new(repo: impl Into<Arc<ShadowRepo>>) -> Self {
        let repo = repo.into();
        Self {
            budget: repo.config().budget,
            repo,
            baseline_done: Arc::new(AtomicBool::new(false)),
            partial_only: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Changes the time budget (else [`crate::CheckpointConfig::budget`]).
    pub fn with_budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    pub fn repo(&self) -> &Arc<ShadowRepo> {
        &self.repo
    }

    /// Reads the workspace into the shadow index on a background thread
    /// (then collects garbage if needed).
    pub fn start_baseline(&self) -> std::io::Result<std::thread::JoinHandle<()>> {
        let repo = self.repo.clone();
        let done = self.baseline_done.clone();
        let partial_only = self.partial_only.clone();
        std::thread::Builder::new()
            .name("checkpoint-baseline".into())
            .spawn(move || {
                let started = Instant::now();
                match repo.refresh() {
                    Ok(()) => info!(
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        workspace = %repo.workspace().display(),
                        "checkpoint baseline ready"
                    ),
                    Err(e @ CheckpointError::TooBig { .. }) => {
                        warn!(error = %e, "checkpoint baseline skipped");
                        partial_only.store(true, Ordering::Release);
                    }
                    Err(e) => warn!(error = %e, "checkpoint baseline failed"),
                }
                done.store(true, Ordering::Release);
                if let Err(e) = repo.maybe_gc() {
                    warn!(error = %e, "checkpoint garbage collection failed");
                }
            })
    }

    /// The baseline started by [`Self::start_baseline`] has finished.
    pub fn baseline_ready(&self) -> bool {
        self.baseline_done.load(Ordering::Acquire)
    }

    /// A checkpoint before an edit of `meta.files`, within the time budget:
    /// a full snapshot if it is ready in time, else a partial one of the
    /// touched files. Blocks the calling thread for at most about the
    /// budget plus the partial snapshot (a few git commands).
    pub fn checkpoint(&self, meta: &CheckpointMeta) -> Result<Checkpoint> {
        let started = Instant::now();
        if self.partial_only.load(Ordering::Acquire) {
            return self.repo.snapshot_files(meta);
        }
        let job = Arc::new(Mutex::new(Job::default()));
        let (tx, rx) = mpsc::channel();
        let spawned = {
            let repo = self.repo.clone();
            let job = job.clone();
            let meta = meta.clone();
            std::thread::Builder::new()
                .name("checkpoint".into())
                .spawn(move || {
                    let keep = |step: SnapshotStep| {
                        let mut job = job.lock().unwrap_or_else(|e| e.into_inner());
                        if job.abandoned {
                            return false;
                        }
                        if step == SnapshotStep::Recording {
                            job.recording = true;
                        }
                        true
                    };
                    let result = repo.snapshot_if(&meta, &keep);
                    let recorded = matches!(result, Ok(Some(_)));
                    let _ = tx.send(result);
                    if recorded && let Err(e) = repo.maybe_gc() {
                        warn!(error = %e, "checkpoint garbage collection failed");
                    }
                })
        };
        if let Err(e) = spawned {
            warn!(error = %e, "cannot start a snapshot thread; taking a partial checkpoint");
            return self.repo.snapshot_files(meta);
        }
        let budget = self.budget;
        let full = match rx.recv_timeout(budget) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => {
                let recording = {
                    let mut job = job.lock().unwrap_or_else(|e| e.into_inner());
                    job.abandoned = !job.recording;
                    job.recording
                };
                if recording {
                    // Only the ref is left to write: worth the wait.
                    rx.recv().unwrap_or(Ok(None))
                } else {
                    Ok(None)
                }
            }
            Err(RecvTimeoutError::Disconnected) => Ok(None),
        };
        match full {
            Ok(Some(checkpoint)) => {
                debug!(
                    id = %checkpoint.id,
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "full checkpoint"
                );
                Ok(checkpoint)
            }
            Ok(None) => {
                info!(
                    budget_ms = budget.as_millis() as u64,
                    baseline_ready = self.baseline_ready(),
                    "a full snapshot did not fit in the budget; checkpointing the edited files"
                );
                self.repo.snapshot_files(meta)
            }
            Err(e) => {
                if matches!(e, CheckpointError::TooBig { .. }) {
                    self.partial_only.store(true, Ordering::Release);
                }
                warn!(error = %e, "full snapshot failed; checkpointing the edited files");
                self.repo.snapshot_files(meta)
            }
        }
    }
}
