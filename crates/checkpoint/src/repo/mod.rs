//! The shadow repository of one workspace: snapshot, list, diff, restore,
//! garbage collection.
//!
//! A snapshot is a root commit (no parent, so dropping its ref frees it) on
//! `refs/checkpoints/<id>`, its metadata in the commit message. The shadow
//! repository's index mirrors the workspace as of the last snapshot, so the
//! next one is a stat walk (`git ls-files --modified --deleted --others`)
//! plus hashing of what changed, not a re-read of every file.
//!
//! This module opens the repository; the rest is split by concept:
//! `snapshot`, `browse` (list, get, diff), `restore`, `gc` (delete, size
//! cap) and `excludes` (the ignore rules it inherits).

mod browse;
mod excludes;
mod gc;
mod restore;
mod snapshot;

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tracing::{info, warn};

use crate::config::CheckpointConfig;
use crate::error::{CheckpointError, Result};
use crate::git::Git;
use excludes::inherited_excludes;

/// Where checkpoint refs live in the shadow repository.
const REF_PREFIX: &str = "refs/checkpoints/";
/// An `index.lock` this old is left over from a killed process.
const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(15 * 60);
/// From this many changed files on, a snapshot writes a pack, not loose objects.
const BULK_FILES: usize = 2000;
/// Retries of `git update-index` after an unreadable file was dropped.
const UNREADABLE_RETRIES: usize = 20;

/// What restoring a checkpoint does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The file is gone now and comes back.
    Recreate,
    /// The file was created after the checkpoint and is removed.
    Remove,
    /// The file's content (or mode) goes back to the checkpoint's.
    Revert,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Workspace-relative path.
    pub path: String,
    pub kind: ChangeKind,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreReport {
    pub checkpoint: String,
    pub changes: Vec<FileChange>,
    /// A snapshot of the state just before the restore, to undo it.
    pub undo: Option<String>,
}

/// Where a full snapshot stands when it asks whether to go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotStep {
    /// It has the shadow index and is about to read the workspace.
    Started,
    /// It has written its commit and is about to record it.
    Recording,
}

/// What a garbage collection did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Ids of the dropped checkpoints, oldest first.
    pub dropped: Vec<String>,
    /// Size of the shadow repository after the collection, when measured.
    pub size_bytes: Option<u64>,
    /// `git gc` ran.
    pub collected: bool,
}

/// One workspace's shadow repository.
#[derive(Debug)]
pub struct ShadowRepo {
    git: Git,
    config: CheckpointConfig,
    /// Serialises everything that uses the shadow index (snapshots,
    /// restores, garbage collection). Partial snapshots use their own
    /// temporary index and do not take it.
    index: Mutex<()>,
    /// Bytes hashed since the size was last measured: the size cap is only
    /// checked (`git count-objects`, a walk of the object store) when this
    /// grew enough to matter.
    unmeasured_bytes: AtomicU64,
    temp_counter: AtomicU64,
}

impl ShadowRepo {
    /// The shadow repository directory for `workspace`: `<root>/<first 16
    /// hex digits of the SHA-256 of its canonical path>`.
    pub fn dir_for(root: &Path, workspace: &Path) -> PathBuf {
        let hash = Sha256::digest(workspace.as_os_str().as_encoded_bytes());
        let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
        root.join(hex)
    }

    /// Opens (creating if needed) the shadow repository of `workspace`.
    pub fn open(config: &CheckpointConfig, workspace: &Path) -> Result<Self> {
        let workspace = workspace
            .canonicalize()
            .map_err(|e| CheckpointError::io(workspace, e))?;
        if !workspace.is_dir() {
            return Err(CheckpointError::Workspace(workspace));
        }
        // Copies of the workspace's files: other accounts must not read them.
        crate::private::ensure_private_root(&config.root)
            .map_err(|e| CheckpointError::io(&config.root, e))?;
        let git_dir = Self::dir_for(&config.root, &workspace);
        let git = Git::new(git_dir.clone(), workspace.clone());
        let repo = Self {
            git,
            config: config.clone(),
            index: Mutex::new(()),
            unmeasured_bytes: AtomicU64::new(u64::MAX / 2),
            temp_counter: AtomicU64::new(0),
        };
        if !git_dir.join("HEAD").is_file() {
            repo.init()?;
        }
        repo.write_excludes()?;
        repo.clear_stale_lock();
        Ok(repo)
    }

    /// [`Self::open`], shared within this process: two sessions on the same
    /// folder get the same repository (and so the same index lock) instead
    /// of tripping over git's `index.lock`. The first opener's limits apply.
    pub fn shared(config: &CheckpointConfig, workspace: &Path) -> Result<Arc<Self>> {
        static OPEN: Mutex<Vec<(PathBuf, Weak<ShadowRepo>)>> = Mutex::new(Vec::new());
        let workspace = workspace
            .canonicalize()
            .map_err(|e| CheckpointError::io(workspace, e))?;
        let dir = Self::dir_for(&config.root, &workspace);
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|(_, repo)| repo.strong_count() > 0);
        if let Some(repo) = open
            .iter()
            .find(|(d, _)| *d == dir)
            .and_then(|(_, repo)| repo.upgrade())
        {
            return Ok(repo);
        }
        let repo = Arc::new(Self::open(config, &workspace)?);
        open.push((dir, Arc::downgrade(&repo)));
        Ok(repo)
    }

    fn init(&self) -> Result<()> {
        let dir = self.git.git_dir();
        std::fs::create_dir_all(dir).map_err(|e| CheckpointError::io(dir, e))?;
        self.git.run(["init", "--quiet"])?;
        let excludes = self.git.work_tree().join(".geminiignore");
        let settings: [(&str, &str); 11] = [
            ("core.autocrlf", "false"),
            ("core.safecrlf", "false"),
            // The project's .gitignore files apply through the work tree;
            // .geminiignore is read live as our "global" excludes file, so
            // the user's own global excludes never change what is kept.
            ("core.excludesFile", &excludes.to_string_lossy()),
            // The index makes every snapshot after the first a stat walk.
            ("core.untrackedCache", "true"),
            ("feature.manyFiles", "true"),
            ("core.logAllRefUpdates", "false"),
            // We collect garbage ourselves, off the turn's path.
            ("gc.auto", "0"),
            ("commit.gpgSign", "false"),
            // Fast zlib: the first snapshot of a big workspace hashes
            // everything; level 1 costs little space and much less time.
            ("core.looseCompression", "1"),
            ("core.compression", "1"),
            ("core.hooksPath", "/dev/null"),
        ];
        for (key, value) in settings {
            self.git.run(["config", key, value])?;
        }
        let marker = dir.join("gemini-desktop-workspace");
        std::fs::write(&marker, self.git.work_tree().as_os_str().as_encoded_bytes())
            .map_err(|e| CheckpointError::io(&marker, e))?;
        info!(git_dir = %dir.display(), workspace = %self.git.work_tree().display(), "created the checkpoint repository");
        Ok(())
    }

    /// `info/exclude`: `.git` and the project's own `.git/info/exclude`
    /// (its `.gitignore` files apply by themselves). Rewritten only when it
    /// changed, so git's untracked cache stays valid.
    fn write_excludes(&self) -> Result<()> {
        let mut text = String::from("# Written by Gemini Desktop: never snapshotted.\n.git\n");
        text.push_str(&inherited_excludes(self.git.work_tree()));
        let info = self.git.git_dir().join("info");
        let path = info.join("exclude");
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            return Ok(());
        }
        std::fs::create_dir_all(&info).map_err(|e| CheckpointError::io(&info, e))?;
        std::fs::write(&path, text).map_err(|e| CheckpointError::io(&path, e))
    }

    /// A process killed in the middle of a snapshot (Ctrl-C during a
    /// headless run) leaves `index.lock` behind, and every later snapshot
    /// would fail. A lock older than [`STALE_LOCK`] cannot belong to a live
    /// snapshot (even a first read of a huge workspace takes less) and is
    /// removed.
    fn clear_stale_lock(&self) {
        let lock = self.git.git_dir().join("index.lock");
        let stale = std::fs::metadata(&lock)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_LOCK);
        if stale && std::fs::remove_file(&lock).is_ok() {
            warn!(lock = %lock.display(), "removed a stale lock of the checkpoint repository");
        }
    }

    pub fn workspace(&self) -> &Path {
        self.git.work_tree()
    }

    pub fn git_dir(&self) -> &Path {
        self.git.git_dir()
    }

    pub fn config(&self) -> &CheckpointConfig {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        self.index.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Brings the shadow index up to date without recording a checkpoint
    /// (the "baseline": the expensive first read of a big workspace), and
    /// stops tracking files the project now ignores.
    pub fn refresh(&self) -> Result<()> {
        let _guard = self.lock();
        self.write_excludes()?;
        let ignored = self.git.run([
            "ls-files",
            "-z",
            "--cached",
            "--ignored",
            "--exclude-standard",
        ])?;
        if !ignored.is_empty() {
            self.git.run_input(
                ["update-index", "-z", "--force-remove", "--stdin"],
                &ignored,
            )?;
        }
        self.stage()?;
        Ok(())
    }
}

/// A workspace-relative path that stays inside the workspace.
fn relative(path: &str) -> Option<&Path> {
    let p = Path::new(path);
    (!path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))).then_some(p)
}

#[cfg(unix)]
fn bytes_to_path(bytes: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}
