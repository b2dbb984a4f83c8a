//! Modification times of many files met during a walk, cheaply.
//!
//! `glob` answers newest first (Gemini CLI's contract), so it needs the
//! modification time of every match: 15,000 matches mean 15,000 stat calls.
//! Stat by full path makes the kernel walk every component of the path
//! again (`link_path_walk` and the dentry lookups were most of glob's time in
//! a profile of a 25k-file tree). The walker visits the entries of one
//! directory one after another on the same thread, so [`MtimeReader`] keeps
//! that directory open (`O_PATH`) and asks for the time relative to it: one
//! component to resolve instead of the whole path.

use std::path::Path;
use std::time::SystemTime;

/// Reads modification times, following symbolic links as
/// `std::fs::metadata` does. One per walker thread: it holds the directory
/// of the last file asked about.
#[derive(Default)]
pub struct MtimeReader {
    #[cfg(target_os = "linux")]
    dir: Option<(std::path::PathBuf, std::os::fd::OwnedFd)>,
}

impl MtimeReader {
    /// The modification time of `path`; `None` when it cannot be read (the
    /// file vanished, permissions).
    pub fn modified(&mut self, path: &Path) -> Option<SystemTime> {
        #[cfg(target_os = "linux")]
        if let Some(time) = self.modified_in_dir(path) {
            return Some(time);
        }
        std::fs::metadata(path).and_then(|m| m.modified()).ok()
    }

    /// Through the parent directory's descriptor; `None` sends the caller
    /// to the full-path fallback (no parent, the directory cannot be opened,
    /// or the stat failed: the fallback reports the same error honestly).
    #[cfg(target_os = "linux")]
    fn modified_in_dir(&mut self, path: &Path) -> Option<SystemTime> {
        use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};
        use std::os::unix::ffi::OsStrExt;

        let (parent, name) = (path.parent()?, path.file_name()?);
        let cached = self
            .dir
            .as_ref()
            .is_some_and(|(dir, _)| dir.as_os_str().as_bytes() == parent.as_os_str().as_bytes());
        if !cached {
            self.dir = None;
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let fd = rustix::fs::open(parent, flags, Mode::empty()).ok()?;
            self.dir = Some((parent.to_path_buf(), fd));
        }
        let (_, fd) = self.dir.as_ref()?;
        // No AT_SYMLINK_NOFOLLOW: a link's target's time, as metadata() gives.
        let stat = rustix::fs::statx(fd, name, AtFlags::STATX_DONT_SYNC, StatxFlags::MTIME).ok()?;
        if stat.stx_mask & StatxFlags::MTIME.bits() == 0 {
            return None;
        }
        let time = stat.stx_mtime;
        // tv_sec is signed (before 1970 is negative); tv_nsec always adds.
        let seconds = std::time::Duration::from_secs(time.tv_sec.unsigned_abs());
        let whole = if time.tv_sec >= 0 {
            SystemTime::UNIX_EPOCH.checked_add(seconds)
        } else {
            SystemTime::UNIX_EPOCH.checked_sub(seconds)
        };
        whole?.checked_add(std::time::Duration::from_nanos(time.tv_nsec.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn set_mtime(path: &Path, time: SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    #[test]
    fn same_times_as_metadata_across_directories_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        let files = ["one.rs", "a/two.rs", "a/b/three.rs", "a/four.rs", "five.rs"];
        for (n, file) in files.iter().enumerate() {
            let path = root.join(file);
            std::fs::write(&path, "x").unwrap();
            let time =
                SystemTime::UNIX_EPOCH + Duration::new(1_600_000_000 + n as u64 * 77, 123_456_789);
            set_mtime(&path, time);
        }
        // A link to a file elsewhere: its target's time, as metadata() says.
        std::os::unix::fs::symlink(root.join("a/b/three.rs"), root.join("link.rs")).unwrap();
        // Before the epoch, too.
        let old = root.join("a/old.rs");
        std::fs::write(&old, "x").unwrap();
        set_mtime(&old, SystemTime::UNIX_EPOCH - Duration::new(86_400, 500));

        let mut reader = MtimeReader::default();
        for file in files
            .iter()
            .chain(&["link.rs", "a/old.rs", "one.rs", "a/b/three.rs"])
        {
            let path = root.join(file);
            let expected = std::fs::metadata(&path).unwrap().modified().unwrap();
            assert_eq!(reader.modified(&path), Some(expected), "{file}");
        }
    }

    #[test]
    fn missing_files_and_vanished_directories_read_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("f"), "x").unwrap();
        let mut reader = MtimeReader::default();
        assert!(reader.modified(&sub.join("f")).is_some());
        assert_eq!(reader.modified(&sub.join("gone")), None);
        std::fs::remove_dir_all(&sub).unwrap();
        assert_eq!(reader.modified(&sub.join("f")), None);
        // No parent: the full-path fallback.
        let root = std::fs::metadata("/").unwrap().modified().ok();
        assert_eq!(reader.modified(Path::new("/")), root);
    }
}
