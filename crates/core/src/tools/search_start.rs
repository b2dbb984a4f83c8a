//! Where a search or listing starts, set up once for `glob`,
//! `grep_search`, `list_directory` and `read_many_files`: which folder
//! (inside the workspace), whether it is there, and which ignore rules a
//! call asks for. Each tool keeps its own words for what went wrong, the
//! texts models and tests know.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{ToolContext, ToolError, ToolErrorKind, files};
use crate::config::FileFiltering;

/// A call's overrides of the session's ignore settings; what it leaves
/// out keeps the session's setting.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub struct FilteringOptions {
    #[serde(default)]
    pub respect_git_ignore: Option<bool>,
    #[serde(default)]
    pub respect_gemini_ignore: Option<bool>,
}

impl FilteringOptions {
    /// The rules that apply: these overrides over the session's `base`.
    pub fn over(&self, base: FileFiltering) -> FileFiltering {
        FileFiltering {
            respect_git_ignore: self.respect_git_ignore.unwrap_or(base.respect_git_ignore),
            respect_gemini_ignore: self
                .respect_gemini_ignore
                .unwrap_or(base.respect_gemini_ignore),
        }
    }
}

/// `dir_path` inside the workspace, or the first workspace folder when the
/// call gives none (or a blank one).
pub fn dir_or_workspace(ctx: &ToolContext, dir_path: Option<&str>) -> Result<PathBuf, ToolError> {
    match dir_path {
        Some(path) if !path.trim().is_empty() => files::resolve_in_workspace(ctx, path),
        _ => Ok(ctx.primary_dir().to_path_buf()),
    }
}

/// [`dir_or_workspace`] for the read tools: an activated skill's folder is
/// a valid start too ([`files::resolve_readable`]). Returns the roots that
/// bound the start as well.
pub fn dir_or_readable(
    ctx: &ToolContext,
    dir_path: Option<&str>,
) -> Result<(PathBuf, std::sync::Arc<Vec<PathBuf>>), ToolError> {
    match dir_path {
        Some(path) if !path.trim().is_empty() => files::resolve_readable(ctx, path),
        _ => Ok((ctx.primary_dir().to_path_buf(), ctx.workspace_dirs.clone())),
    }
}

/// A tool's words for a start that is not there or not a folder; each is
/// followed by the path (and the I/O error, for `inaccessible`).
#[derive(Debug, Clone, Copy)]
pub struct StartMessages {
    pub not_found: &'static str,
    pub not_a_dir: &'static str,
    pub inaccessible: &'static str,
}

/// Checks that `path` is a directory (or, with `accept_file`, a file).
/// Returns whether it is a file.
pub fn check_start(
    path: &Path,
    accept_file: bool,
    messages: &StartMessages,
) -> Result<bool, ToolError> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Ok(false),
        Ok(m) if accept_file && m.is_file() => Ok(true),
        Ok(_) => Err(ToolError::new(
            ToolErrorKind::NotADirectory,
            format!("{}: {shown}", messages.not_a_dir),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ToolError::new(
            ToolErrorKind::NotFound,
            format!("{}: {shown}", messages.not_found),
        )),
        Err(e) => Err(ToolError::new(
            ToolErrorKind::Io,
            format!("{} {shown}: {e}", messages.inaccessible),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGES: StartMessages = StartMessages {
        not_found: "Missing",
        not_a_dir: "Not a folder",
        inaccessible: "Cannot open",
    };

    #[test]
    fn checks_the_start_and_applies_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(check_start(dir.path(), false, &MESSAGES), Ok(false));
        assert_eq!(check_start(&file, true, &MESSAGES), Ok(true));
        let error = check_start(&file, false, &MESSAGES).unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::NotADirectory);
        assert_eq!(error.message, format!("Not a folder: {}", file.display()));
        let missing = dir.path().join("nope");
        let error = check_start(&missing, true, &MESSAGES).unwrap_err();
        assert_eq!(error.message, format!("Missing: {}", missing.display()));

        let session = FileFiltering {
            respect_git_ignore: true,
            respect_gemini_ignore: true,
        };
        let options = FilteringOptions {
            respect_git_ignore: Some(false),
            respect_gemini_ignore: None,
        };
        assert_eq!(
            options.over(session),
            FileFiltering {
                respect_git_ignore: false,
                respect_gemini_ignore: true,
            }
        );
    }
}
