//! File-system helpers shared by tools and the folder listing: resolving
//! paths inside the workspace and reading a directory with ignore rules.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use ignore::WalkBuilder;

use crate::config::FileFiltering;

/// Name of the Gemini-specific ignore file (gitignore syntax).
pub const GEMINI_IGNORE_FILE: &str = ".geminiignore";

/// Resolves `path` (absolute, or relative to `base`) lexically, without
/// touching the disk, so that `..` cannot be used to escape a directory.
pub fn resolve(base: &Path, path: &str) -> PathBuf {
    let expanded = expand_home(path);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    };
    normalize(&joined)
}

fn expand_home(path: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    expand_home_in(path, home.as_deref())
}

/// `~` and `~/…` in `home`.
fn expand_home_in(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(&rest[1..]),
        _ => PathBuf::from(path),
    }
}

/// The directory `dir` names, canonical, if it exists: `~` and `~/…` are in
/// `home`, a relative path is relative to `base` (how
/// `context.includeDirectories` and `--include-directories` are read).
pub fn existing_dir(base: &Path, dir: &str, home: Option<&Path>) -> Option<PathBuf> {
    let expanded = expand_home_in(dir.trim(), home);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    };
    normalize(&joined)
        .canonicalize()
        .ok()
        .filter(|p| p.is_dir())
}

/// Removes `.` and resolves `..` components lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Whether `path` lies inside one of `roots`. Symlinks are resolved for the
/// part of the path that exists, so a link pointing outside is caught.
pub fn is_within(path: &Path, roots: &[PathBuf]) -> bool {
    let real = real_path(path);
    roots.iter().any(|root| {
        let root = real_path(root);
        real.starts_with(&root)
    })
}

/// Canonicalises the longest existing prefix of `path` and appends the rest.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut result = canonical;
            for part in rest.iter().rev() {
                result.push(part);
            }
            return result;
        }
        match (
            existing.file_name().map(|n| n.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Resolves a path argument of a tool (absolute, or relative to the first
/// workspace directory) and refuses it when it lies outside every workspace
/// directory, through `..` or through a symlink.
pub fn resolve_in_workspace(
    ctx: &super::ToolContext,
    path: &str,
) -> Result<PathBuf, super::ToolError> {
    if path.trim().is_empty() {
        return Err(super::ToolError::new(
            super::ToolErrorKind::InvalidParams,
            "The path must not be empty.",
        ));
    }
    let resolved = resolve(ctx.primary_dir(), path);
    if is_within(&resolved, &ctx.workspace_dirs) {
        Ok(resolved)
    } else {
        Err(super::ToolError::new(
            super::ToolErrorKind::PathNotInWorkspace,
            outside_workspace_message(&resolved, &ctx.workspace_dirs),
        ))
    }
}

/// [`resolve_in_workspace`] for the tools that only read: a path inside
/// one of [`super::ToolContext::read_only_dirs`] (an activated skill's
/// folder) is accepted too. Returns the path and the roots that bound it
/// (the workspace's, or the read-only folders), for ignore checks and
/// display. The edit tools and the shell never call this, so those folders
/// stay read-only: 0.61 adds them to the workspace, which would let an
/// auto-edit session change a skill unasked.
pub fn resolve_readable(
    ctx: &super::ToolContext,
    path: &str,
) -> Result<(PathBuf, Arc<Vec<PathBuf>>), super::ToolError> {
    let in_workspace = resolve_in_workspace(ctx, path);
    if in_workspace.is_err() && !ctx.read_only_dirs.is_empty() {
        let resolved = resolve(ctx.primary_dir(), path.trim());
        if is_within(&resolved, &ctx.read_only_dirs) {
            return Ok((resolved, ctx.read_only_dirs.clone()));
        }
    }
    in_workspace.map(|p| (p, ctx.workspace_dirs.clone()))
}

/// The message a tool returns for a path outside the workspace.
pub fn outside_workspace_message(path: &Path, roots: &[PathBuf]) -> String {
    let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    format!(
        "Path {} is outside the workspace. Paths must be within one of the workspace directories: {}",
        path.display(),
        roots.join(", ")
    )
}

/// One entry of a directory, with its ignore status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntryInfo {
    pub name: String,
    pub path: PathBuf,
    pub is_dir: bool,
    pub is_file: bool,
    /// Size in bytes (files; 0 for directories).
    pub size: u64,
    /// Excluded by .gitignore / .geminiignore (as configured).
    pub ignored: bool,
}

/// Reads the direct children of `dir`, marking those the ignore files
/// exclude. `.gitignore` only applies inside a git repository (as in Git and
/// Gemini CLI); `.geminiignore` applies everywhere. `follow_links` decides
/// whether a symlink reports its target's type.
pub fn read_dir_classified(
    dir: &Path,
    filtering: FileFiltering,
    follow_links: bool,
) -> std::io::Result<Vec<DirEntryInfo>> {
    let kept = kept_names(dir, filtering);
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name_os = entry.file_name();
        let name = name_os.to_string_lossy().into_owned();
        let path = entry.path();
        let metadata = if follow_links {
            std::fs::metadata(&path).or_else(|_| entry.metadata())
        } else {
            entry.metadata()
        };
        let Ok(metadata) = metadata else { continue };
        let is_dir = metadata.is_dir();
        let ignored = (filtering.respect_git_ignore && name == ".git")
            || !kept.as_ref().is_none_or(|k| k.contains(&name_os));
        entries.push(DirEntryInfo {
            name,
            path,
            is_dir,
            is_file: metadata.is_file(),
            size: if is_dir { 0 } else { metadata.len() },
            ignored,
        });
    }
    Ok(entries)
}

/// Names of the children the ignore rules keep, or `None` when no rule is
/// active (everything is kept).
fn kept_names(dir: &Path, filtering: FileFiltering) -> Option<HashSet<OsString>> {
    if !filtering.respect_git_ignore && !filtering.respect_gemini_ignore {
        return None;
    }
    let mut builder = WalkBuilder::new(dir);
    builder
        .max_depth(Some(1))
        .hidden(false)
        .ignore(false)
        .parents(true)
        .git_ignore(filtering.respect_git_ignore)
        .git_exclude(filtering.respect_git_ignore)
        .git_global(false)
        .require_git(true);
    if filtering.respect_gemini_ignore {
        builder.add_custom_ignore_filename(GEMINI_IGNORE_FILE);
    }
    Some(
        builder
            .build()
            .skip(1)
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_owned())
            .collect(),
    )
}

/// Orders names the way JavaScript's `localeCompare` does for ASCII names:
/// case-insensitive first, then lowercase before uppercase.
pub fn locale_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| b.cmp(a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn resolve_is_lexical_and_relative_to_base() {
        let base = Path::new("/work/ws");
        assert_eq!(
            resolve(base, "src/../a.txt"),
            PathBuf::from("/work/ws/a.txt")
        );
        assert_eq!(resolve(base, "/etc/passwd"), PathBuf::from("/etc/passwd"));
        assert_eq!(resolve(base, "../../x"), PathBuf::from("/x"));
    }

    #[test]
    fn within_checks_follow_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let outside = dir.path().join("outside");
        fs::create_dir_all(&ws).unwrap();
        fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
        let roots = vec![ws.clone()];
        assert!(is_within(&ws.join("new/file.txt"), &roots));
        assert!(!is_within(&ws.join("link/x"), &roots));
        assert!(!is_within(&outside, &roots));
    }

    #[test]
    fn gitignore_applies_only_in_git_repos_and_geminiignore_always() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        fs::write(root.join(GEMINI_IGNORE_FILE), "secret.txt\n").unwrap();
        fs::create_dir(root.join("build")).unwrap();
        fs::write(root.join("a.log"), "x").unwrap();
        fs::write(root.join("secret.txt"), "x").unwrap();
        fs::write(root.join("main.rs"), "x").unwrap();
        let ignored = |filtering| {
            let mut names: Vec<String> = read_dir_classified(root, filtering, true)
                .unwrap()
                .into_iter()
                .filter(|e| e.ignored)
                .map(|e| e.name)
                .collect();
            names.sort();
            names
        };
        assert_eq!(ignored(FileFiltering::default()), vec!["secret.txt"]);
        fs::create_dir(root.join(".git")).unwrap();
        assert_eq!(
            ignored(FileFiltering::default()),
            vec![".git", "a.log", "build", "secret.txt"]
        );
        let none = FileFiltering {
            respect_git_ignore: false,
            respect_gemini_ignore: false,
        };
        assert!(ignored(none).is_empty());
    }

    #[test]
    fn locale_like_ordering() {
        let mut names = vec!["README.md", "hello.txt", "b", "B", "a"];
        names.sort_by(|a, b| locale_order(a, b));
        assert_eq!(names, vec!["a", "b", "B", "hello.txt", "README.md"]);
    }
}
