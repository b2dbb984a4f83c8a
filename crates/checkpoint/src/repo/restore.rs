//! Putting the workspace back to a checkpoint, file by file (ignored and
//! oversized files are never touched).

use std::io::ErrorKind;
use std::path::Path;

use crate::confine;
use crate::error::{CheckpointError, Result};
use crate::meta::{CheckpointKind, CheckpointMeta};

use super::{RestoreReport, ShadowRepo};

impl ShadowRepo {
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
