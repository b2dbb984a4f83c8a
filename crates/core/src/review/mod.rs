//! Whole-turn review ("Review at end of turn", issue 17 item 2).
//!
//! With the mode on, `replace` and `write_file` do not ask and do not write:
//! their change goes to the session's [`Staging`] (path → the file on disk at
//! the turn's first touch, and the staged content). The tool answers the
//! model as if it had written, so the turn goes on, and every later read of
//! the turn (`read_file`, `read_many_files`, the next edit's original) sees
//! the staged content. When the turn ends, one [`gd_protocol::Event::TurnReview`]
//! shows every staged file; [`apply`] writes what the user accepted and
//! queues a note telling the model exactly what was not applied.
//!
//! Policy: a call the policy denies stays denied. Every other edit is staged,
//! even one the policy or the approval mode (`auto_edit`, `yolo`) would
//! allow without asking: the user asked to review the turn's edits, and
//! nothing reaches the disk before that review. Shell commands cannot be
//! staged: they are confirmed as usual and see the files on disk.
//!
//! A review stays pending until the user decides: a next turn keeps
//! staging on top of it (even with the mode switched off meanwhile, so the
//! model's reads stay consistent with what it was told), and its review
//! shows the whole pending set.

mod apply;
mod staging;
mod store;

pub use apply::apply;
pub use staging::{StagedFile, Staging};
pub use store::{load as load_store, review_store_path};

use std::path::{Path, PathBuf};

use gd_protocol::ReviewFile;

use crate::tools::replace::Replace;
use crate::tools::write_file::WriteFile;
use crate::tools::{fs_write, text};

/// Whether calls of `tool` are staged in review mode: the tools whose
/// writes go through [`crate::tools::planned_edit::PlannedEdit`].
pub fn stages(tool: &str) -> bool {
    tool == Replace::NAME || tool == WriteFile::NAME
}

/// The staged files as the review shows them. Reads the disk to tell which
/// changed since they were staged.
pub fn review_files(files: &[StagedFile], roots: &[PathBuf]) -> Vec<ReviewFile> {
    files
        .iter()
        .map(|file| {
            let shown = text::display_path(&file.path, roots);
            let diff = crate::diff::diff_file(file.original.as_deref(), &file.staged, &shown);
            ReviewFile {
                path: file.path.display().to_string(),
                shown_path: shown,
                original: file.original.clone(),
                staged: file.staged.clone(),
                added: diff.side_by_side.added,
                removed: diff.side_by_side.removed,
                new_file: file.original.is_none(),
                changed_on_disk: changed_on_disk(roots, &file.path, file.original.as_deref()),
                side_by_side: diff.side_by_side,
            }
        })
        .collect()
}

/// The disk no longer holds what the turn started from (an unreadable file
/// counts as changed: it cannot be written safely either).
fn changed_on_disk(roots: &[PathBuf], path: &Path, original: Option<&str>) -> bool {
    match fs_write::read_for_edit_in(roots, path) {
        Ok(current) => current.as_ref().map(|f| f.text.as_str()) != original,
        Err(_) => true,
    }
}
