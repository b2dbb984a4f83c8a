//! The shadow repository of one workspace: snapshot, list, diff, restore,
//! garbage collection.
//!
//! A snapshot is a root commit (no parent, so dropping its ref frees it) on
//! `refs/checkpoints/<id>`, its metadata in the commit message. The shadow
//! repository's index mirrors the workspace as of the last snapshot, so the
//! next one is a stat walk (`git ls-files --modified --deleted --others`)
//! plus hashing of what changed, not a re-read of every file.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use chrono::{SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tracing::{debug, info, warn};

use crate::config::CheckpointConfig;
use crate::confine;
use crate::error::{CheckpointError, Result};
use crate::git::{Git, join_nul, split_nul};
use crate::meta::{self, Checkpoint, CheckpointKind, CheckpointMeta};

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

/// The index brought up to date with the workspace.
struct Staged {
    tree: String,
    skipped: Vec<String>,
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

    /// Updates the index from the workspace and writes its tree.
    fn stage(&self) -> Result<Staged> {
        let listed = self.git.run([
            "ls-files",
            "-z",
            "--modified",
            "--deleted",
            "--others",
            "--exclude-standard",
        ])?;
        let mut seen = BTreeSet::new();
        let mut update: Vec<&[u8]> = Vec::new();
        let mut remove: Vec<&[u8]> = Vec::new();
        let mut skipped = Vec::new();
        let mut bytes = 0u64;
        for path in split_nul(&listed) {
            if path.ends_with(b"/") || !seen.insert(path) {
                // A nested repository ("sub/"), or listed twice (deleted).
                continue;
            }
            let full = self.git.work_tree().join(bytes_to_path(path));
            match std::fs::symlink_metadata(&full) {
                Err(e) if e.kind() == ErrorKind::NotFound => update.push(path),
                Err(e) => {
                    debug!(path = %full.display(), error = %e, "not snapshotted");
                    remove.push(path);
                }
                Ok(m) if m.is_dir() => remove.push(path),
                Ok(m) if m.is_file() && m.len() > self.config.max_file_bytes => {
                    skipped.push(String::from_utf8_lossy(path).into_owned());
                    remove.push(path);
                }
                Ok(m) if m.is_file() || m.file_type().is_symlink() => {
                    bytes += m.len();
                    update.push(path);
                }
                // FIFOs, sockets, devices.
                Ok(_) => remove.push(path),
            }
        }
        if bytes > self.config.max_total_bytes {
            // E.g. a home directory opened as a workspace: never copy it all.
            return Err(CheckpointError::TooBig {
                bytes,
                cap: self.config.max_total_bytes,
            });
        }
        let mut unreadable = Vec::new();
        if !update.is_empty() {
            self.update_index(&mut update, &mut unreadable)?;
        }
        remove.extend(unreadable.iter().map(Vec::as_slice));
        if !remove.is_empty() {
            self.git.run_input(
                ["update-index", "-z", "--force-remove", "--stdin"],
                &join_nul(remove.iter().copied()),
            )?;
        }
        self.unmeasured_bytes.fetch_add(bytes, Ordering::Relaxed);
        let tree = self.git.text(["write-tree"])?;
        debug!(changed = update.len(), skipped = skipped.len(), "staged");
        Ok(Staged { tree, skipped })
    }

    /// `git update-index --add --remove` on `paths`; a file that cannot be
    /// read (permissions) is dropped and the rest tried again.
    fn update_index(&self, paths: &mut Vec<&[u8]>, unreadable: &mut Vec<Vec<u8>>) -> Result<()> {
        // Many files (a first read): stream them into one pack instead of a
        // loose object file each, a third of the size on disk (a 4 KiB block
        // per small object adds up) and one file instead of thousands.
        let threshold = if paths.len() >= BULK_FILES {
            "core.bigFileThreshold=1"
        } else {
            "core.bigFileThreshold=512m"
        };
        for _ in 0..UNREADABLE_RETRIES {
            let input = join_nul(paths.iter().copied());
            match self.git.run_input(
                [
                    "-c",
                    threshold,
                    "update-index",
                    "-z",
                    "--add",
                    "--remove",
                    "--stdin",
                ],
                &input,
            ) {
                Ok(_) => return Ok(()),
                Err(CheckpointError::Git { message, command }) => {
                    let bad = message
                        .lines()
                        .find_map(|l| l.split_once("Unable to process path ").map(|(_, p)| p))
                        .map(|p| p.trim().as_bytes().to_vec());
                    let Some(bad) = bad.filter(|b| paths.contains(&b.as_slice())) else {
                        return Err(CheckpointError::Git { message, command });
                    };
                    warn!(path = %String::from_utf8_lossy(&bad), "cannot read a file; it is not snapshotted");
                    paths.retain(|p| *p != bad.as_slice());
                    unreadable.push(bad);
                }
                Err(other) => return Err(other),
            }
        }
        Err(CheckpointError::Git {
            command: "git update-index".into(),
            message: "too many unreadable files".into(),
        })
    }

    /// A full snapshot of the workspace, recorded as a checkpoint.
    pub fn snapshot(&self, meta: &CheckpointMeta) -> Result<Checkpoint> {
        self.snapshot_if(meta, &|_| true)
            .map(|c| c.expect("kept when keep() is true"))
    }

    /// A full snapshot; `keep` is asked once the shadow index is ours
    /// ([`SnapshotStep::Started`]) and right before the checkpoint's ref is
    /// written ([`SnapshotStep::Recording`]). When it says no, nothing is
    /// recorded and `None` is returned: the caller gave up waiting (see
    /// [`crate::Checkpointer`]).
    pub fn snapshot_if(
        &self,
        meta: &CheckpointMeta,
        keep: &dyn Fn(SnapshotStep) -> bool,
    ) -> Result<Option<Checkpoint>> {
        let _guard = self.lock();
        if !keep(SnapshotStep::Started) {
            return Ok(None);
        }
        let staged = self.stage()?;
        self.record(
            CheckpointKind::Full,
            &staged.tree,
            meta,
            staged.skipped,
            &|| keep(SnapshotStep::Recording),
        )
    }

    /// Commits `tree` with the metadata and points a new ref at it.
    fn record(
        &self,
        kind: CheckpointKind,
        tree: &str,
        meta: &CheckpointMeta,
        skipped: Vec<String>,
        keep: &dyn Fn() -> bool,
    ) -> Result<Option<Checkpoint>> {
        let now = Utc::now();
        let created_at = now.to_rfc3339_opts(SecondsFormat::Millis, true);
        let message = meta::commit_message(kind, &created_at, meta, &skipped);
        let commit = String::from_utf8_lossy(
            &self
                .git
                .run_input(["commit-tree", tree, "-F", "-"], message.as_bytes())?,
        )
        .trim()
        .to_owned();
        if !keep() {
            return Ok(None);
        }
        let id = format!(
            "{}-{}",
            now.format("%Y%m%dT%H%M%S%3fZ"),
            &commit[..commit.len().min(8)]
        );
        self.git
            .run(["update-ref", &format!("{REF_PREFIX}{id}"), &commit, ""])?;
        Ok(Some(Checkpoint {
            id,
            commit,
            kind,
            created_at,
            meta: meta.clone(),
            skipped,
        }))
    }

    /// A snapshot of only `meta.files` (workspace-relative), without the
    /// shadow index: fast whatever the workspace's size, and safe while a
    /// full snapshot runs. Files that are ignored, over the size limit or
    /// outside the workspace are left out (listed in `skipped`).
    pub fn snapshot_files(&self, meta: &CheckpointMeta) -> Result<Checkpoint> {
        let mut covered = Vec::new();
        let mut skipped = Vec::new();
        for file in &meta.files {
            if relative(file).is_none() {
                skipped.push(file.clone());
            } else if !covered.contains(file) {
                covered.push(file.clone());
            }
        }
        let ignored = self.ignored(&covered)?;
        covered.retain(|f| {
            let keep = !ignored.contains(f);
            if !keep {
                skipped.push(f.clone());
            }
            keep
        });
        let mut present = Vec::new();
        covered.retain(|f| {
            match std::fs::symlink_metadata(self.workspace().join(f)) {
                Ok(m) if m.is_file() && m.len() > self.config.max_file_bytes => {
                    skipped.push(f.clone());
                    return false;
                }
                Ok(m) if m.is_file() || m.file_type().is_symlink() => present.push(f.clone()),
                Ok(m) if m.is_dir() => {
                    skipped.push(f.clone());
                    return false;
                }
                _ => {}
            }
            true
        });
        let index = self.git.git_dir().join(format!(
            "index-partial-{}-{}",
            std::process::id(),
            self.temp_counter.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            if !present.is_empty() {
                let mut command = self.git.command(["update-index", "-z", "--add", "--stdin"]);
                command.env("GIT_INDEX_FILE", &index);
                self.git.run_with(
                    command,
                    Some(&join_nul(present.iter().map(|p| p.as_bytes()))),
                )?;
            }
            let mut command = self.git.command(["write-tree"]);
            command.env("GIT_INDEX_FILE", &index);
            let tree = String::from_utf8_lossy(&self.git.run_with(command, None)?)
                .trim()
                .to_owned();
            let mut meta = meta.clone();
            meta.files = covered.clone();
            self.record(
                CheckpointKind::Partial,
                &tree,
                &meta,
                skipped.clone(),
                &|| true,
            )
        })();
        let _ = std::fs::remove_file(&index);
        result.map(|c| c.expect("always kept"))
    }

    /// Which of `files` the project's ignore rules exclude.
    fn ignored(&self, files: &[String]) -> Result<Vec<String>> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        let input = join_nul(files.iter().map(|f| f.as_bytes()));
        let command = self
            .git
            .command(["check-ignore", "-z", "--no-index", "--stdin"]);
        // Exit code 1 means "none ignored": not an error here.
        match self.git.run_with(command, Some(&input)) {
            Ok(out) => Ok(split_nul(&out)
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect()),
            Err(CheckpointError::Git { message, .. }) if message.starts_with("exited with") => {
                Ok(Vec::new())
            }
            Err(e) => Err(e),
        }
    }

    /// Every checkpoint, newest first.
    pub fn list(&self) -> Result<Vec<Checkpoint>> {
        self.for_each_ref(REF_PREFIX.trim_end_matches('/'))
    }

    /// One checkpoint.
    pub fn get(&self, id: &str) -> Result<Checkpoint> {
        if !meta::valid_id(id) {
            return Err(CheckpointError::InvalidId(id.to_owned()));
        }
        self.for_each_ref(&format!("{REF_PREFIX}{id}"))?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or_else(|| CheckpointError::NotFound(id.to_owned()))
    }

    fn for_each_ref(&self, pattern: &str) -> Result<Vec<Checkpoint>> {
        let out = self.git.run([
            "for-each-ref",
            "--format=%(refname:lstrip=2)%00%(objectname)%00%(contents:body)%00",
            pattern,
        ])?;
        let fields: Vec<String> = out
            .split(|b| *b == 0)
            .map(|f| String::from_utf8_lossy(f).trim().to_owned())
            .collect();
        let mut list = Vec::new();
        for chunk in fields.chunks(3) {
            let [id, commit, body] = chunk else { continue };
            if id.is_empty() {
                continue;
            }
            match meta::parse(id, commit, body) {
                Ok(checkpoint) => list.push(checkpoint),
                Err(e) => warn!(error = %e, "skipping a checkpoint"),
            }
        }
        // Ids start with the creation time (UTC, fixed width).
        list.sort_by(|a, b| b.id.cmp(&a.id));
        Ok(list)
    }

    /// What restoring `id` would change, without changing anything.
    pub fn diff(&self, id: &str) -> Result<Vec<FileChange>> {
        let checkpoint = self.get(id)?;
        match checkpoint.kind {
            CheckpointKind::Full => {
                let _guard = self.lock();
                let staged = self.stage()?;
                self.tree_changes(&staged.tree, &checkpoint.commit)
            }
            CheckpointKind::Partial => self.partial_changes(&checkpoint),
        }
    }

    /// Changes from `current` (a tree) to the tree of `target` (a commit).
    fn tree_changes(&self, current: &str, target: &str) -> Result<Vec<FileChange>> {
        let out = self.git.run([
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--name-status",
            current,
            target,
        ])?;
        let mut changes = Vec::new();
        let mut tokens = split_nul(&out);
        while let (Some(status), Some(path)) = (tokens.next(), tokens.next()) {
            let kind = match status.first() {
                Some(b'A') => ChangeKind::Recreate,
                Some(b'D') => ChangeKind::Remove,
                _ => ChangeKind::Revert,
            };
            changes.push(FileChange {
                path: String::from_utf8_lossy(path).into_owned(),
                kind,
            });
        }
        Ok(changes)
    }

    /// `(path, mode, blob)` of the files of a partial checkpoint.
    fn partial_entries(&self, checkpoint: &Checkpoint) -> Result<Vec<(String, String, String)>> {
        if checkpoint.meta.files.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec![
            "ls-tree".to_owned(),
            "-r".into(),
            "-z".into(),
            "--full-tree".into(),
            checkpoint.commit.clone(),
            "--".into(),
        ];
        args.extend(checkpoint.meta.files.iter().cloned());
        let out = self.git.run(&args)?;
        let mut entries = Vec::new();
        for record in split_nul(&out) {
            let record = String::from_utf8_lossy(record);
            let Some((info, path)) = record.split_once('\t') else {
                continue;
            };
            let mut parts = info.split(' ');
            if let (Some(mode), Some(_), Some(blob)) = (parts.next(), parts.next(), parts.next()) {
                entries.push((path.to_owned(), mode.to_owned(), blob.to_owned()));
            }
        }
        Ok(entries)
    }

    fn partial_changes(&self, checkpoint: &Checkpoint) -> Result<Vec<FileChange>> {
        let entries = self.partial_entries(checkpoint)?;
        let mut changes = Vec::new();
        for file in &checkpoint.meta.files {
            let full = self.workspace().join(file);
            let exists = std::fs::symlink_metadata(&full).is_ok();
            let kind = match entries.iter().find(|(p, _, _)| p == file) {
                None if exists => Some(ChangeKind::Remove),
                None => None,
                Some(_) if !exists => Some(ChangeKind::Recreate),
                Some((_, _, blob)) => {
                    let now = self.git.text(["hash-object", "--no-filters", "--", file])?;
                    (now != *blob).then_some(ChangeKind::Revert)
                }
            };
            if let Some(kind) = kind {
                changes.push(FileChange {
                    path: file.clone(),
                    kind,
                });
            }
        }
        Ok(changes)
    }

    /// Puts the workspace back to checkpoint `id`: files it has are written
    /// back, files created since are removed, ignored and oversized files
    /// are never touched. The state before is snapshotted first (the
    /// report's `undo`).
    pub fn restore(&self, id: &str) -> Result<RestoreReport> {
        self.restore_in_session(id, None)
    }

    /// [`Self::restore`] for a session: the snapshot of the state before
    /// (the undo) is linked to `session_id`, so it is listed with that
    /// session's checkpoints.
    pub fn restore_in_session(&self, id: &str, session_id: Option<&str>) -> Result<RestoreReport> {
        let checkpoint = self.get(id)?;
        let label = Some(format!("before restoring {id}"));
        let session_id = session_id.map(str::to_owned);
        match checkpoint.kind {
            CheckpointKind::Full => {
                let _guard = self.lock();
                let staged = self.stage()?;
                let undo = self.record(
                    CheckpointKind::Full,
                    &staged.tree,
                    &CheckpointMeta {
                        session_id,
                        label,
                        ..CheckpointMeta::default()
                    },
                    staged.skipped,
                    &|| true,
                )?;
                let changes = self.tree_changes(&staged.tree, &checkpoint.commit)?;
                // A two-tree "switch": only the differing files are written or
                // removed; --reset lets it overwrite files we do not track.
                self.git.run([
                    "read-tree",
                    "--reset",
                    "-u",
                    &staged.tree,
                    &checkpoint.commit,
                ])?;
                Ok(RestoreReport {
                    checkpoint: id.to_owned(),
                    changes,
                    undo: undo.map(|c| c.id),
                })
            }
            CheckpointKind::Partial => {
                for file in &checkpoint.meta.files {
                    confine::no_link_on_the_way(self.workspace(), &self.workspace().join(file))?;
                }
                let undo = self.snapshot_files(&CheckpointMeta {
                    session_id,
                    files: checkpoint.meta.files.clone(),
                    label,
                    ..CheckpointMeta::default()
                })?;
                let changes = self.partial_changes(&checkpoint)?;
                let entries = self.partial_entries(&checkpoint)?;
                for change in &changes {
                    let full = self.workspace().join(&change.path);
                    confine::no_link_on_the_way(self.workspace(), &full)?;
                    match entries.iter().find(|(p, _, _)| *p == change.path) {
                        None => {
                            remove_file(&full)?;
                            remove_empty_parents(&full, self.workspace());
                        }
                        Some((_, mode, blob)) => {
                            let content = self.git.run(["cat-file", "blob", blob])?;
                            write_file(&full, mode, &content)?;
                        }
                    }
                }
                Ok(RestoreReport {
                    checkpoint: id.to_owned(),
                    changes,
                    undo: Some(undo.id),
                })
            }
        }
    }

    /// Drops checkpoints by id (unknown ids are ignored).
    pub fn delete(&self, ids: &[String]) -> Result<()> {
        let mut input = String::new();
        for id in ids {
            if !meta::valid_id(id) {
                return Err(CheckpointError::InvalidId(id.clone()));
            }
            input.push_str(&format!("delete {REF_PREFIX}{id}\n"));
        }
        if !input.is_empty() {
            self.git
                .run_input(["update-ref", "--stdin"], input.as_bytes())?;
        }
        Ok(())
    }

    /// The shadow repository's size on disk (objects and packs).
    pub fn size_bytes(&self) -> Result<u64> {
        let out = self.git.text(["count-objects", "-v"])?;
        let kib: u64 = out
            .lines()
            .filter_map(|l| l.split_once(": "))
            .filter(|(k, _)| matches!(*k, "size" | "size-pack" | "size-garbage"))
            .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
            .sum();
        self.unmeasured_bytes.store(0, Ordering::Relaxed);
        Ok(kib * 1024)
    }

    /// Collects garbage when needed: more than `max_checkpoints` drops the
    /// oldest; when the repository may have outgrown `max_total_bytes`, it
    /// is measured and, if over, the oldest half of the checkpoints is
    /// dropped and `git gc` run, until it fits or one checkpoint is left.
    pub fn maybe_gc(&self) -> Result<GcReport> {
        let check_size = self.unmeasured_bytes.load(Ordering::Relaxed)
            >= (self.config.max_total_bytes / 16).max(1);
        let _guard = self.lock();
        self.gc_locked(check_size)
    }

    /// [`Self::maybe_gc`], measuring the size whatever was hashed since.
    pub fn gc(&self) -> Result<GcReport> {
        let _guard = self.lock();
        self.gc_locked(true)
    }

    fn gc_locked(&self, check_size: bool) -> Result<GcReport> {
        let mut report = GcReport::default();
        let mut list = self.list()?;
        if list.len() > self.config.max_checkpoints {
            let old: Vec<String> = list
                .split_off(self.config.max_checkpoints)
                .into_iter()
                .rev()
                .map(|c| c.id)
                .collect();
            self.delete(&old)?;
            report.dropped.extend(old);
        }
        if !check_size {
            return Ok(report);
        }
        let mut size = self.size_bytes()?;
        while size > self.config.max_total_bytes {
            let keep = (list.len() / 2).max(1);
            let old: Vec<String> = list
                .split_off(keep.min(list.len()))
                .into_iter()
                .rev()
                .map(|c| c.id)
                .collect();
            self.delete(&old)?;
            report.dropped.extend(old.iter().cloned());
            self.git.run([
                "gc",
                "--quiet",
                &format!("--prune={}", self.config.prune_grace),
            ])?;
            report.collected = true;
            size = self.size_bytes()?;
            info!(size, dropped = old.len(), "checkpoint repository collected");
            if list.len() <= 1 {
                break;
            }
        }
        if size > self.config.max_total_bytes {
            warn!(
                size,
                cap = self.config.max_total_bytes,
                "the checkpoint repository is still over its size cap"
            );
        }
        report.size_bytes = Some(size);
        Ok(report)
    }
}

/// Ignore rules that apply to `workspace` from outside it: the project's
/// `.git/info/exclude` and, when the workspace is a folder inside a
/// repository, the `.gitignore` files of its parent folders up to the
/// repository's root (git would apply them; with `GIT_WORK_TREE` set to the
/// folder it cannot see them). Patterns are rewritten relative to the
/// workspace: unanchored ones apply as they are, anchored ones only when
/// they point inside it.
fn inherited_excludes(workspace: &Path) -> String {
    let mut text = String::new();
    let mut inner = PathBuf::new();
    for ancestor in workspace.ancestors() {
        if ancestor != workspace {
            let rel = inner.to_string_lossy().replace('\\', "/");
            if let Ok(rules) = std::fs::read_to_string(ancestor.join(".gitignore")) {
                text.push_str(&format!("# From {}/.gitignore:\n", ancestor.display()));
                for rule in rules.lines().filter_map(|r| rebase_rule(r, &rel)) {
                    text.push_str(&rule);
                    text.push('\n');
                }
            }
        }
        let dot_git = ancestor.join(".git");
        if dot_git.exists() {
            let rel = inner.to_string_lossy().replace('\\', "/");
            if let Ok(rules) = std::fs::read_to_string(dot_git.join("info").join("exclude")) {
                text.push_str("# From the project's .git/info/exclude:\n");
                for rule in rules.lines().filter_map(|r| rebase_rule(r, &rel)) {
                    text.push_str(&rule);
                    text.push('\n');
                }
            }
            break;
        }
        match ancestor.file_name() {
            // (Joining an empty path would add a trailing slash.)
            Some(name) if inner.as_os_str().is_empty() => inner = PathBuf::from(name),
            Some(name) => inner = Path::new(name).join(&inner),
            None => break,
        }
    }
    text
}

/// One gitignore rule written for a folder `rel` levels up (`a/b`, or ""
/// for the workspace itself), rewritten for the workspace; `None` when it
/// cannot match inside the workspace.
fn rebase_rule(rule: &str, rel: &str) -> Option<String> {
    let rule = rule.trim_end();
    if rule.is_empty() || rule.starts_with('#') {
        return None;
    }
    if rel.is_empty() {
        return Some(rule.to_owned());
    }
    let (neg, body) = match rule.strip_prefix('!') {
        Some(rest) => ("!", rest),
        None => ("", rule),
    };
    let (body, dir) = match body.strip_suffix('/') {
        Some(b) => (b, "/"),
        None => (body, ""),
    };
    if !body.contains('/') || body.starts_with("**/") {
        return Some(rule.to_owned());
    }
    let anchored = body.trim_start_matches('/');
    let inside = anchored.strip_prefix(rel)?.strip_prefix('/')?;
    (!inside.is_empty()).then(|| format!("{neg}/{inside}{dir}"))
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

fn remove_file(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(CheckpointError::io(path, e)),
        _ => Ok(()),
    }
}

/// Removes the directories left empty by removing `file`, up to (not
/// including) the workspace, as a full restore (git) does.
fn remove_empty_parents(file: &Path, workspace: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == workspace || !d.starts_with(workspace) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// Writes a restored file with its git mode (regular, executable, symlink).
fn write_file(path: &Path, mode: &str, content: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| CheckpointError::io(parent, e))?;
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink() || mode == "120000")
    {
        remove_file(path)?;
    }
    #[cfg(unix)]
    if mode == "120000" {
        use std::os::unix::ffi::OsStrExt;
        let target = std::ffi::OsStr::from_bytes(content);
        return std::os::unix::fs::symlink(target, path).map_err(|e| CheckpointError::io(path, e));
    }
    std::fs::write(path, content).map_err(|e| CheckpointError::io(path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            let mut perms = meta.permissions();
            let exec = mode == "100755";
            let current = perms.mode();
            let wanted = if exec {
                current | 0o111
            } else {
                current & !0o111
            };
            if wanted != current {
                perms.set_mode(wanted);
                let _ = std::fs::set_permissions(path, perms);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::rebase_rule;

    #[test]
    fn parent_rules_are_rebased_onto_the_workspace() {
        assert_eq!(
            rebase_rule("node_modules/", "web").as_deref(),
            Some("node_modules/")
        );
        assert_eq!(rebase_rule("*.log", "web").as_deref(), Some("*.log"));
        assert_eq!(
            rebase_rule("!keep.log", "web").as_deref(),
            Some("!keep.log")
        );
        assert_eq!(rebase_rule("**/dist", "web").as_deref(), Some("**/dist"));
        assert_eq!(rebase_rule("/web/dist/", "web").as_deref(), Some("/dist/"));
        assert_eq!(
            rebase_rule("web/a/b.txt", "web").as_deref(),
            Some("/a/b.txt")
        );
        assert_eq!(rebase_rule("!/web/keep", "web").as_deref(), Some("!/keep"));
        assert_eq!(rebase_rule("/top-only", "web"), None);
        assert_eq!(rebase_rule("webapp/x", "web"), None);
        assert_eq!(rebase_rule("other/dist", "web"), None);
        assert_eq!(rebase_rule("# comment", "web"), None);
        assert_eq!(rebase_rule("/x", "").as_deref(), Some("/x"));
    }
}
