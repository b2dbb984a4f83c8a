//! Where a pending review survives a crash or a restart.
//!
//! Chosen: a private JSON file (mode 0600) per conversation in the
//! project's temporary directory, `<temp>/reviews/<session id>.json`,
//! rewritten atomically after every staged edit and removed when the review
//! is applied or discarded. Not the history database: the staged set is
//! not part of the conversation (it is transient working state, gone once
//! decided) and the history's schema belongs to the recorder; a file keyed
//! by the conversation's id is found again by a resumed session of that
//! conversation, which shows the review again (files changed on disk
//! meanwhile are marked and refused when applied).

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::StagedFile;

/// The file a conversation's pending review is kept in.
pub fn review_store_path(temp_dir: &Path, session_id: &str) -> PathBuf {
    // Session ids are UUIDs; anything else is reduced to a safe name.
    let name: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    temp_dir.join("reviews").join(format!("{name}.json"))
}

/// Saves `files` at `path` (private, atomic); an empty set removes it.
pub(super) fn save(path: &Path, files: &[StagedFile]) -> io::Result<()> {
    if files.is_empty() {
        return match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let json = serde_json::to_vec(files).map_err(io::Error::other)?;
    let temp = path.with_extension(format!("{}.tmp", std::process::id()));
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let result = (|| {
        let mut file = options.open(&temp)?;
        file.write_all(&json)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// The review saved at `path`: empty when there is none; an unreadable
/// file is an error for the caller to report (it is left in place).
pub fn load(path: &Path) -> Result<Vec<StagedFile>, String> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("The saved review {} cannot be read: {e}", path.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!(
            "The saved review {} cannot be read: {e}",
            path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_privately_loads_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        let path = review_store_path(dir.path(), "a/b");
        assert!(path.ends_with("reviews/a_b.json"));
        assert_eq!(load(&path).unwrap(), Vec::new());
        let files = vec![StagedFile {
            path: "/w/a.txt".into(),
            original: None,
            staged: "x\n".into(),
        }];
        save(&path, &files).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        assert_eq!(load(&path).unwrap(), files);
        save(&path, &[]).unwrap();
        assert!(!path.exists());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "{").unwrap();
        assert!(load(&path).unwrap_err().contains("cannot be read"));
    }
}
