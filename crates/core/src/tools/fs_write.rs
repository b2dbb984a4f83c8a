//! Reading a file for an edit and writing it back safely, shared by
//! `write_file` and `replace`.
//!
//! Edits see text with LF line endings; writing restores the file's own
//! line endings (CRLF stays CRLF) and encoding (a BOM, UTF-16 and
//! windows-1252 are kept). Writes are atomic: a temporary file in the same
//! directory is written, flushed to disk and renamed over the target, so a
//! crash never leaves a half-written file. The file's permissions are kept.
//!
//! Files the model edits are read and written confined to the workspace
//! ([`read_for_edit_in`], [`write_text`]): on Unix the path is walked from a
//! workspace root by directory descriptors (see `confined`), so a symlink
//! swapped in after the workspace check cannot redirect the write outside.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use gd_protocol::ConfirmationDetails;

use super::text::{self, LineEnding, TextEncoding};
use super::{ToolContext, ToolError, ToolErrorKind, files};
use crate::diff;

#[cfg(unix)]
mod confined;

/// A text file as the edit tools see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// The decoded content, with LF line endings when the file uses CRLF.
    pub text: String,
    pub encoding: TextEncoding,
    pub line_ending: LineEnding,
    /// The file looked binary; its text is a lossy decoding.
    pub binary: bool,
}

impl TextFile {
    /// The bytes to write for `content` so that the file keeps its line
    /// endings and encoding.
    pub fn encode(&self, content: &str) -> Vec<u8> {
        let encoding = if self.binary {
            TextEncoding::Utf8
        } else {
            self.encoding
        };
        encoding.encode(&text::with_line_ending(content, self.line_ending))
    }
}

/// Reads `path` for an edit: `Ok(None)` when it does not exist; errors for a
/// directory, a file over [`text::MAX_FILE_SIZE`] or one that cannot be read.
/// Follows symlinks wherever they lead: for callers without a workspace;
/// the edit tools use [`read_for_edit_in`].
pub fn read_for_edit(path: &Path) -> Result<Option<TextFile>, ToolError> {
    match File::open(path) {
        Ok(file) => decode_file(path, file).map(Some),
        // A file where a parent directory should be: missing too, and
        // `check_creatable` explains it.
        Err(e) if is_missing(&e) => Ok(None),
        Err(e) => Err(io_error(path, "reading", &e)),
    }
}

/// [`read_for_edit`] confined to the workspace `roots`: the file is opened
/// relative to a directory reached from a root without following a link
/// outside, so what is read (and shown in the diff) is the file that
/// [`write_text`] would replace.
pub fn read_for_edit_in(roots: &[PathBuf], path: &Path) -> Result<Option<TextFile>, ToolError> {
    #[cfg(unix)]
    {
        match confined::open_for_read(roots, path) {
            Ok(Some(file)) => decode_file(path, file).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(confined_error(roots, path, "reading", e)),
        }
    }
    // Without openat and O_NOFOLLOW the check and the read stay separate
    // steps, as before issue 12.
    #[cfg(not(unix))]
    {
        if !files::is_within(path, roots) {
            return Err(outside_error(roots, path));
        }
        read_for_edit(path)
    }
}

fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Decodes an opened file, checking its type and size first.
fn decode_file(path: &Path, mut file: File) -> Result<TextFile, ToolError> {
    let metadata = file.metadata().map_err(|e| io_error(path, "reading", &e))?;
    if metadata.is_dir() {
        return Err(ToolError::new(
            ToolErrorKind::IsADirectory,
            format!(
                "Path is a directory, not a file: {}. Give the path of a file.",
                path.display()
            ),
        ));
    }
    if !metadata.is_file() {
        return Err(ToolError::new(
            ToolErrorKind::Io,
            format!(
                "Not a regular file: {} (a device, socket or pipe cannot be edited).",
                path.display()
            ),
        ));
    }
    if metadata.len() > text::MAX_FILE_SIZE {
        return Err(ToolError::new(
            ToolErrorKind::FileTooLarge,
            format!(
                "File is too large to edit: {} ({}; the limit is {}).",
                path.display(),
                text::human_size(metadata.len()),
                text::human_size(text::MAX_FILE_SIZE)
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(path, "reading", &e))?;
    let binary = text::looks_binary(&bytes);
    let (decoded, encoding) = if binary {
        (
            String::from_utf8_lossy(&bytes).into_owned(),
            TextEncoding::Utf8,
        )
    } else {
        text::decode(&bytes)
    };
    let line_ending = text::detect_line_ending(&decoded);
    let text = match line_ending {
        LineEnding::Crlf => text::normalize_newlines(&decoded),
        LineEnding::Lf => decoded,
    };
    Ok(TextFile {
        text,
        encoding,
        line_ending,
        binary,
    })
}

/// Writes `content` to `path` atomically, in the style of `existing` (its
/// line endings and encoding) or as given for a new file, confined to the
/// workspace `roots` at the moment of writing (see `confined`). Missing
/// parent directories are created. A symlink inside the workspace is
/// written through (the file it points to is replaced, the link stays);
/// one leading outside is refused with [`ToolErrorKind::PathNotInWorkspace`].
pub fn write_text(
    roots: &[PathBuf],
    path: &Path,
    content: &str,
    existing: Option<&TextFile>,
) -> Result<(), ToolError> {
    let bytes = match existing {
        Some(file) => file.encode(content),
        None => content.as_bytes().to_vec(),
    };
    #[cfg(unix)]
    {
        confined::write(roots, path, &bytes).map_err(|e| confined_error(roots, path, "writing", e))
    }
    // Without openat and O_NOFOLLOW the check and the write stay separate
    // steps, as before issue 12.
    #[cfg(not(unix))]
    {
        if !files::is_within(path, roots) {
            return Err(outside_error(roots, path));
        }
        write_atomic(path, &bytes).map_err(|e| io_error(path, "writing", &e))
    }
}

#[cfg(unix)]
fn confined_error(
    roots: &[PathBuf],
    path: &Path,
    doing: &str,
    error: confined::ConfinedError,
) -> ToolError {
    match error {
        confined::ConfinedError::Outside { resolved, .. } => {
            tracing::warn!(path = %path.display(), resolved = %resolved.display(), "{doing} refused: a symlink leads outside the workspace");
            let mut error = outside_error(roots, path);
            error.message = format!(
                "{} It leads to {} through a symbolic link.",
                error.message,
                resolved.display()
            );
            error
        }
        confined::ConfinedError::TooManyLinks(_) => ToolError::new(
            ToolErrorKind::Io,
            format!(
                "Error {doing} file {}: too many levels of symbolic links.",
                path.display()
            ),
        ),
        confined::ConfinedError::Io(e) => io_error(path, doing, &e),
    }
}

fn outside_error(roots: &[PathBuf], path: &Path) -> ToolError {
    ToolError::new(
        ToolErrorKind::PathNotInWorkspace,
        files::outside_workspace_message(path, roots),
    )
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces the content of `path` with `bytes` atomically, wherever it is:
/// for files the application itself keeps (the global memory file), never
/// for a path the model chose (use [`write_text`]). A temporary file
/// in the same directory is written and synced, given the permissions of
/// the file it replaces, and renamed over it. A symlink is followed, so the
/// file it points to is replaced and the link stays. Missing parent
/// directories are created. A read-only file is refused. On failure the
/// temporary file is removed and the original is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = match fs::canonicalize(path) {
        Ok(real) => real,
        Err(_) => path.to_path_buf(),
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    fs::create_dir_all(&dir)?;
    let permissions = match fs::metadata(&target) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "the path is a directory",
            ));
        }
        Ok(metadata) => {
            if metadata.permissions().readonly() {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "the file is read-only",
                ));
            }
            Some(metadata.permissions())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    // Short enough that the temporary name stays within name limits.
    let name: String = target
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(100).collect())
        .unwrap_or_else(|| "file".to_owned());
    let (temp_path, mut temp) = create_temp(&dir, &name)?;
    let result = (|| {
        temp.write_all(bytes)?;
        if let Some(permissions) = permissions {
            fs::set_permissions(&temp_path, permissions)?;
        }
        temp.sync_all()?;
        drop(temp);
        fs::rename(&temp_path, &target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp_path);
        return result;
    }
    // Make the rename itself durable; not every platform or file system
    // supports syncing a directory, so failures are ignored.
    if let Ok(dir) = File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".{name}.{}.{n}.gd-tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The confirmation of an edit of `path`: the whole texts, a unified diff
/// (headers name the path relative to the workspace) and the side-by-side
/// model. Texts are as the edit tools see them (LF when the file uses CRLF).
pub fn edit_confirmation(
    ctx: &ToolContext,
    title: String,
    path: &Path,
    original: Option<&str>,
    proposed: &str,
) -> ConfirmationDetails {
    let shown = text::display_path(path, &ctx.workspace_dirs);
    let file_diff = diff::diff_file(original, proposed, &shown);
    ConfirmationDetails::Edit {
        title,
        file_path: path.display().to_string(),
        file_name: file_name(path),
        original: original.map(str::to_owned),
        proposed: proposed.to_owned(),
        unified_diff: file_diff.unified,
        side_by_side: file_diff.side_by_side,
        is_new_file: original.is_none(),
    }
}

/// The last component of `path`, for titles.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// A short summary of a written file: "Created src/a.rs (+12)" or
/// "Updated src/a.rs (+3 −1)".
pub fn change_summary(shown_path: &str, original: Option<&str>, proposed: &str) -> String {
    let (added, removed) = diff::diff_stat(original, proposed);
    match original {
        None => format!("Created {shown_path} (+{added})"),
        Some(_) => format!("Updated {shown_path} (+{added} \u{2212}{removed})"),
    }
}

/// Refuses to create `path` under something that is not a directory.
pub fn check_creatable(path: &Path) -> Result<(), ToolError> {
    let mut ancestor = path.parent();
    while let Some(dir) = ancestor {
        match fs::metadata(dir) {
            Ok(metadata) if metadata.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(ToolError::new(
                    ToolErrorKind::NotADirectory,
                    format!(
                        "Cannot create {}: {} is a file, not a directory.",
                        path.display(),
                        dir.display()
                    ),
                ));
            }
            Err(_) => ancestor = dir.parent(),
        }
    }
    Ok(())
}

/// Runs blocking file work off the async threads.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        ToolError::new(
            ToolErrorKind::Execution,
            format!("File operation failed: {e}"),
        )
    })?
}

/// A tool error for a failed read or write of `path`.
pub fn io_error(path: &Path, doing: &str, error: &io::Error) -> ToolError {
    let kind = match error.kind() {
        io::ErrorKind::PermissionDenied => ToolErrorKind::PermissionDenied,
        io::ErrorKind::NotFound => ToolErrorKind::NotFound,
        io::ErrorKind::IsADirectory => ToolErrorKind::IsADirectory,
        io::ErrorKind::NotADirectory => ToolErrorKind::NotADirectory,
        _ => ToolErrorKind::Io,
    };
    ToolError::new(
        kind,
        format!("Error {doing} file {}: {error}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn leftovers(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".gd-tmp"))
            .collect()
    }

    #[test]
    fn atomic_write_keeps_mode_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&path, b"#!/bin/sh\necho hi\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "#!/bin/sh\necho hi\n");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn creates_parents_and_follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b/c.txt");
        write_atomic(&nested, b"x").unwrap();
        assert_eq!(fs::read(&nested).unwrap(), b"x");

        let real = dir.path().join("real.txt");
        fs::write(&real, "before").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"after").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "after");
    }

    #[test]
    fn refuses_read_only_files_and_directories_without_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ro.txt");
        fs::write(&path, "keep").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
        let err = write_atomic(&path, b"new").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(fs::read_to_string(&path).unwrap(), "keep");
        let err = write_atomic(dir.path(), b"new").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn read_for_edit_normalises_crlf_and_write_restores_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("win.txt");
        fs::write(&path, b"\xEF\xBB\xBFone\r\ntwo\r\n").unwrap();
        let file = read_for_edit(&path).unwrap().unwrap();
        assert_eq!(file.text, "one\ntwo\n");
        assert_eq!(file.line_ending, LineEnding::Crlf);
        assert_eq!(file.encoding, TextEncoding::Utf8Bom);
        write_text(
            &[dir.path().to_path_buf()],
            &path,
            "one\nthree\n",
            Some(&file),
        )
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"\xEF\xBB\xBFone\r\nthree\r\n");

        assert_eq!(read_for_edit(&dir.path().join("none")).unwrap(), None);
        let err = read_for_edit(dir.path()).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::IsADirectory);
    }

    #[test]
    fn confined_reads_and_writes_refuse_links_out_with_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (ws, out) = (base.join("ws"), base.join("out"));
        fs::create_dir_all(&ws).unwrap();
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(out.join("secret.txt"), ws.join("s.txt")).unwrap();
        let roots = [ws.clone()];
        let err = read_for_edit_in(&roots, &ws.join("s.txt")).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::PathNotInWorkspace);
        let err = write_text(&roots, &ws.join("s.txt"), "x", None).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::PathNotInWorkspace);
        assert!(
            err.message.contains("outside the workspace")
                && err.message.contains("through a symbolic link"),
            "{}",
            err.message
        );
        assert_eq!(
            fs::read_to_string(out.join("secret.txt")).unwrap(),
            "secret"
        );
        assert_eq!(read_for_edit_in(&roots, &ws.join("none/x")).unwrap(), None);
        write_text(&roots, &ws.join("new/a.txt"), "a\n", None).unwrap();
        let file = read_for_edit_in(&roots, &ws.join("new/a.txt"))
            .unwrap()
            .unwrap();
        assert_eq!(file.text, "a\n");
        let err = read_for_edit_in(&roots, &ws.join("new")).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::IsADirectory);
    }

    #[test]
    fn read_for_edit_refuses_huge_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.log");
        let file = File::create(&path).unwrap();
        file.set_len(text::MAX_FILE_SIZE + 1).unwrap();
        let err = read_for_edit(&path).unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::FileTooLarge);
        assert!(err.message.contains("too large"), "{}", err.message);
    }
}
