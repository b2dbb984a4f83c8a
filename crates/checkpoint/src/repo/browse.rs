//! Reading checkpoints: the list, one by id, and what restoring one would
//! change.

use tracing::warn;

use crate::error::{CheckpointError, Result};
use crate::git::split_nul;
use crate::meta::{self, Checkpoint, CheckpointKind};

use super::{ChangeKind, FileChange, REF_PREFIX, ShadowRepo};

impl ShadowRepo {
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
    pub(super) fn tree_changes(&self, current: &str, target: &str) -> Result<Vec<FileChange>> {
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
    pub(super) fn partial_entries(
        &self,
        checkpoint: &Checkpoint,
    ) -> Result<Vec<(String, String, String)>> {
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

    pub(super) fn partial_changes(&self, checkpoint: &Checkpoint) -> Result<Vec<FileChange>> {
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
}
