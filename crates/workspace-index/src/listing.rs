//! One level of the workspace tree. The picker's tree is lazy: a folder is
//! listed when it is expanded, so the first level of a 150,000-file
//! workspace costs one directory read, not a walk.

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::{Filtering, HUGE_FILE_BYTES};

/// How many bytes are sniffed to tell binary files from text (the core
/// samples the same amount).
const SNIFF_BYTES: usize = 8 * 1024;

/// Above this many files in one folder, binary files are told by their
/// extension only, so a huge flat folder still lists quickly.
const SNIFF_LIMIT: usize = 2_000;

/// What an entry is. Symbolic links are not followed (as in the core's
/// walks), so they are never expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Dir,
    File,
    Symlink,
    Other,
}

/// An entry of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub name: String,
    /// The path relative to the root, `/`-separated: what `@path` uses.
    pub path: String,
    pub kind: EntryKind,
    /// Size in bytes (0 for folders).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub size: u64,
    /// Hidden by `.gitignore`/`.geminiignore`; only listed when ignored
    /// entries are shown.
    pub ignored: bool,
    /// The file looks binary (NUL bytes or mostly control characters).
    pub binary: bool,
    /// The file is larger than [`HUGE_FILE_BYTES`].
    pub huge: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("`{0}` is not a path inside the workspace")]
    OutsideRoot(String),
    #[error("`{0}` is not a folder")]
    NotADirectory(String),
    #[error("cannot read `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Resolves `relative` (a `/`-separated path, `""` for the root) below
/// `root`, refusing absolute paths and `..` so a listing never leaves the
/// workspace.
pub fn resolve(root: &Path, relative: &str) -> Result<PathBuf, ListError> {
    let rel = Path::new(relative);
    let mut out = root.to_path_buf();
    for component in rel.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => return Err(ListError::OutsideRoot(relative.to_owned())),
        }
    }
    Ok(out)
}

/// Lists the folder `relative` of `root`: folders first, then files, each
/// by name (case-insensitive). Entries hidden by the ignore rules are left
/// out unless `show_ignored`, in which case they are flagged `ignored`.
/// `.git` is never listed.
pub fn list_dir(
    root: &Path,
    relative: &str,
    filtering: Filtering,
    show_ignored: bool,
) -> Result<Vec<Entry>, ListError> {
    let dir = resolve(root, relative)?;
    let io_err = |source| ListError::Io {
        path: relative.to_owned(),
        source,
    };
    let meta = fs::symlink_metadata(&dir).map_err(io_err)?;
    if !meta.is_dir() {
        return Err(ListError::NotADirectory(relative.to_owned()));
    }

    // The names the ignore rules let through, one level deep.
    let visible: HashSet<std::ffi::OsString> = filtering
        .walker(&dir)
        .max_depth(Some(1))
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.depth() == 1)
        .map(|e| e.file_name().to_owned())
        .collect();

    let mut entries = Vec::new();
    let read = fs::read_dir(&dir).map_err(io_err)?;
    for dirent in read.filter_map(Result::ok) {
        let name_os = dirent.file_name();
        if name_os == ".git" {
            continue;
        }
        let ignored = !visible.contains(&name_os);
        if ignored && !show_ignored {
            continue;
        }
        let Ok(file_type) = dirent.file_type() else {
            continue;
        };
        let kind = if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else if file_type.is_symlink() {
            EntryKind::Symlink
        } else {
            EntryKind::Other
        };
        let size = match kind {
            EntryKind::File => dirent.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        };
        let name = name_os.to_string_lossy().into_owned();
        let path = if relative.trim_matches('/').is_empty() {
            name.clone()
        } else {
            format!("{}/{}", relative.trim_matches('/'), name)
        };
        entries.push(Entry {
            name,
            path,
            kind,
            size,
            ignored,
            binary: false,
            huge: size > HUGE_FILE_BYTES,
        });
    }

    let sniff = entries.len() <= SNIFF_LIMIT;
    for entry in entries.iter_mut().filter(|e| e.kind == EntryKind::File) {
        entry.binary = if sniff {
            file_looks_binary(&dir.join(&entry.name))
        } else {
            binary_extension(&entry.name)
        };
    }

    entries.sort_by(|a, b| {
        (a.kind != EntryKind::Dir)
            .cmp(&(b.kind != EntryKind::Dir))
            .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(entries)
}

/// Whether the start of the file at `path` looks binary; unreadable files
/// count as text (reading them later reports the real problem).
pub fn file_looks_binary(path: &Path) -> bool {
    let mut buf = vec![0u8; SNIFF_BYTES];
    let Ok(mut file) = fs::File::open(path) else {
        return false;
    };
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(_) => break,
        }
    }
    looks_binary(&buf[..filled])
}

/// The core's rule (`tools::text::looks_binary`): a NUL byte, or more than
/// 30% control characters other than whitespace; UTF-16 BOMs are text.
pub fn looks_binary(bytes: &[u8]) -> bool {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return false;
    }
    if bytes.is_empty() {
        return false;
    }
    if bytes.contains(&0) {
        return true;
    }
    let control = bytes
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C | 0x1B))
        .count();
    control * 10 > bytes.len() * 3
}

/// Extensions of common binary formats, for folders too large to sniff.
fn binary_extension(name: &str) -> bool {
    const BINARY: &[&str] = &[
        "png", "jpg", "jpeg", "gif", "webp", "ico", "bmp", "pdf", "zip", "gz", "tgz", "xz", "bz2",
        "7z", "tar", "jar", "class", "so", "dylib", "dll", "exe", "o", "a", "rlib", "wasm", "bin",
        "woff", "woff2", "ttf", "otf", "mp3", "mp4", "mov", "avi", "sqlite", "db",
    ];
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| BINARY.contains(&ext.to_ascii_lowercase().as_str()))
}
