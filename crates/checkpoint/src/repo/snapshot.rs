//! Taking snapshots: staging the workspace into the shadow index (a stat
//! walk plus hashing of what changed), whole-workspace and partial
//! (listed files only) checkpoints.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::sync::atomic::Ordering;

use chrono::{SecondsFormat, Utc};
use tracing::{debug, warn};

use crate::error::{CheckpointError, Result};
use crate::git::{join_nul, split_nul};
use crate::meta::{self, Checkpoint, CheckpointKind, CheckpointMeta};

use super::{
    BULK_FILES, REF_PREFIX, ShadowRepo, SnapshotStep, UNREADABLE_RETRIES, bytes_to_path, relative,
};

/// The index brought up to date with the workspace.
pub(super) struct Staged {
    pub(super) tree: String,
    pub(super) skipped: Vec<String>,
}

impl ShadowRepo {
    /// Updates the index from the workspace and writes its tree.
    pub(super) fn stage(&self) -> Result<Staged> {
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
    pub(super) fn record(
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
}
