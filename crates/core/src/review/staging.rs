//! The staging area of a session in review mode: what the turn's edits
//! would have written, in the order the files were first touched.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tracing::{debug, warn};

use super::store;
use crate::tools::fs_write::TextFile;
use crate::tools::text::{LineEnding, TextEncoding};

/// One staged file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StagedFile {
    pub path: PathBuf,
    /// The file as the edit tools read it from disk when the turn first
    /// touched it (LF text for a CRLF file); `None`: it did not exist.
    pub original: Option<String>,
    /// The content the turn's edits left.
    pub staged: String,
}

/// The staged files of the pending review. Shared by the tools (through
/// [`crate::tools::ToolContext::staging`]) and the session.
#[derive(Debug, Default)]
pub struct Staging {
    files: Mutex<Vec<StagedFile>>,
    /// Where the set is persisted after every change (see [`store`]).
    store: Mutex<Option<PathBuf>>,
}

impl Staging {
    /// A staging area persisted at `store` (none: kept in memory only).
    pub fn new(store: Option<PathBuf>) -> Self {
        Self {
            files: Mutex::default(),
            store: Mutex::new(store),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<StagedFile>> {
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The staged content of `path`, if the review has it.
    pub fn staged_text(&self, path: &Path) -> Option<String> {
        self.lock()
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.staged.clone())
    }

    /// What an edit tool sees of `path`: the staged content when there is
    /// one (in the style of the file on disk, `disk`), else the disk.
    pub fn overlay(&self, path: &Path, disk: Option<TextFile>) -> Option<TextFile> {
        let Some(staged) = self.staged_text(path) else {
            return disk;
        };
        Some(match disk {
            Some(file) => TextFile {
                text: staged,
                binary: false,
                ..file
            },
            None => TextFile {
                text: staged,
                encoding: TextEncoding::Utf8,
                line_ending: LineEnding::Lf,
                binary: false,
            },
        })
    }

    /// Stages `content` for `path`. `read` is what the tool planned from
    /// (the disk at the first touch, the staged content later): only the
    /// first touch's is kept as the original. A file staged back to its
    /// original leaves the review.
    pub fn stage(&self, path: &Path, read: Option<&str>, content: &str) {
        {
            let mut files = self.lock();
            match files.iter().position(|f| f.path == path) {
                Some(i) if files[i].original.as_deref() == Some(content) => {
                    files.remove(i);
                }
                Some(i) => content.clone_into(&mut files[i].staged),
                None => files.push(StagedFile {
                    path: path.to_owned(),
                    original: read.map(str::to_owned),
                    staged: content.to_owned(),
                }),
            }
            debug!(path = %path.display(), files = files.len(), "staged an edit for review");
        }
        self.persist();
    }

    /// The staged files, in the order they were first touched.
    pub fn files(&self) -> Vec<StagedFile> {
        self.lock().clone()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Replaces the whole set (a review restored from its file).
    pub fn restore(&self, files: Vec<StagedFile>) {
        *self.lock() = files;
    }

    /// Forgets the review (applied or discarded) and its file.
    pub fn clear(&self) {
        self.lock().clear();
        self.persist();
    }

    /// Moves the persisted set to `path` (`/clear` starts a conversation
    /// under a new id).
    pub fn set_store(&self, path: Option<PathBuf>) {
        let old = std::mem::replace(
            &mut *self.store.lock().unwrap_or_else(|e| e.into_inner()),
            path,
        );
        if let Some(old) = old {
            let _ = std::fs::remove_file(old);
        }
        self.persist();
    }

    /// Writes the set to its file (removes the file when empty). A failure
    /// is logged: the review still works, it only would not survive a crash.
    fn persist(&self) {
        let Some(path) = self.store.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
            return;
        };
        let files = self.files();
        if let Err(error) = store::save(&path, &files) {
            warn!(%error, path = %path.display(), "cannot persist the staged review");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crlf_file(text: &str) -> TextFile {
        TextFile {
            text: text.to_owned(),
            encoding: TextEncoding::Utf8Bom,
            line_ending: LineEnding::Crlf,
            binary: false,
        }
    }

    #[test]
    fn the_first_touch_keeps_the_original_and_reads_see_the_staged_text() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("reviews/s.json");
        let staging = Staging::new(Some(store.clone()));
        let path = Path::new("/w/a.txt");
        assert_eq!(staging.overlay(path, None), None);
        staging.stage(path, Some("one\n"), "two\n");
        // A later edit plans from the staged text; the original stays the disk's.
        staging.stage(path, Some("two\n"), "three\n");
        assert_eq!(
            staging.files(),
            vec![StagedFile {
                path: path.into(),
                original: Some("one\n".into()),
                staged: "three\n".into(),
            }]
        );
        // The disk's style is kept for the staged text.
        let seen = staging
            .overlay(path, Some(crlf_file("one\n")))
            .expect("staged");
        assert_eq!(seen.text, "three\n");
        assert_eq!(
            (seen.encoding, seen.line_ending),
            (TextEncoding::Utf8Bom, LineEnding::Crlf)
        );
        // Persisted after every change.
        assert_eq!(store::load(&store).unwrap(), staging.files());
        // Back to the original: nothing to review, nothing kept.
        staging.stage(path, Some("three\n"), "one\n");
        assert!(staging.is_empty());
        assert!(!store.exists());
    }

    #[test]
    fn a_new_file_is_staged_without_an_original_and_clear_forgets_it() {
        let staging = Staging::new(None);
        let path = Path::new("/w/new.txt");
        staging.stage(path, None, "x\n");
        let seen = staging.overlay(path, None).expect("staged");
        assert_eq!(
            (seen.text.as_str(), seen.line_ending),
            ("x\n", LineEnding::Lf)
        );
        assert_eq!(staging.files()[0].original, None);
        staging.clear();
        assert!(staging.is_empty());
    }
}
