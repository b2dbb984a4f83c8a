//! Owner-only files and folders for user data.
//!
//! The history holds transcripts and the contents of files the agent read; with the default
//! umask a new SQLite file is 0644 in a 0755 folder, readable by every account on the machine.
//! The data folder is therefore made 0700 and every file of the database 0600 (SQLite gives
//! its `-wal`, `-shm` and `-journal` files the database file's mode, so a private database
//! keeps its side files private too). Installs from before this rule are tightened when the
//! store opens. Other crates and the shells use these helpers for their own user-data files
//! (exports, logs). On non-Unix systems the functions only create; ACLs there are per user.

use std::fs::File;
use std::io;
use std::path::Path;

/// SQLite's companion files of a database: `<db>-wal`, `<db>-shm`, `<db>-journal`.
pub const SQLITE_SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Creates `dir` and its missing parents with mode 0700 (the parents created here too: they
/// only lead to our data), then makes `dir` itself owner-only if it was not (an older install).
///
/// Folders that are not ours to change are left alone: the home folder, the file-system
/// root, and sticky shared folders such as `/tmp` (a data dir pointed there by accident).
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    if !dir.is_dir() {
        create_dir_all_private(dir)?;
    }
    if is_shared_folder(dir) {
        return Ok(());
    }
    tighten(dir, 0o700)
}

/// Creates (or truncates) `path` as a file only its owner can read and write; an existing
/// file keeps its content until truncated and loses group/other access first.
pub fn create_file(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    // `mode` applies to new files only: an existing one is tightened before it is truncated.
    if path.exists() {
        tighten(path, 0o600)?;
    }
    options.open(path)
}

/// Creates `path` empty and 0600 if it does not exist, and drops group/other access from it
/// and from its SQLite side files that exist.
pub fn ensure_private_db(path: &Path) -> io::Result<()> {
    if !path.exists() {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        // An empty file is a valid new SQLite database.
        options.open(path)?;
    }
    tighten(path, 0o600)?;
    for suffix in SQLITE_SIDE_FILES {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let side = Path::new(&side);
        match tighten(side, 0o600) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => other?,
        }
    }
    Ok(())
}

fn create_dir_all_private(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// The home folder, `/`, or a sticky folder (`/tmp`): never tightened.
fn is_shared_folder(dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return true;
    };
    if dir.parent().is_none() {
        return true;
    }
    let home = std::env::var_os("HOME").and_then(|h| Path::new(&h).canonicalize().ok());
    if home.as_deref() == Some(dir.as_path()) {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(&dir) {
            return meta.permissions().mode() & 0o1000 != 0;
        }
    }
    false
}

/// Removes the group/other bits of `path` when it has any (owner bits untouched but for
/// `mode`'s); a path someone else owns is reported as the error `chmod` gives.
#[cfg(unix)]
fn tighten(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let current = std::fs::metadata(path)?.permissions().mode();
    if current & 0o077 == 0 {
        return Ok(());
    }
    tracing::info!(
        path = %path.display(),
        from = format!("{:o}", current & 0o777),
        to = format!("{mode:o}"),
        "making user data private"
    );
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn tighten(path: &Path, _mode: u32) -> io::Result<()> {
    std::fs::metadata(path).map(|_| ())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn exports_are_private_even_over_an_open_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("export.md");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::io::Write::write_all(&mut create_file(&path).unwrap(), b"new").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let fresh = dir.path().join("fresh.json");
        create_file(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o600);
    }

    #[test]
    fn shared_folders_are_left_alone() {
        let tmp = std::env::temp_dir();
        let before = mode(&tmp);
        ensure_private_dir(&tmp).unwrap();
        assert_eq!(mode(&tmp), before);
        assert!(is_shared_folder(Path::new("/")));
    }
}
