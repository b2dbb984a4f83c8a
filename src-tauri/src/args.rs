//! The app's command line: the workspace folder to open. (A session's launch options are
//! gd-core's `launch::LaunchOptions`; these are the process's arguments only.)

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What the app was started with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppArgs {
    /// Canonical absolute path of the workspace folder: the first positional command-line
    /// argument, or else the current directory. `None` only when there was no argument and the
    /// current directory could not be determined (e.g. it was deleted).
    pub workspace: Option<PathBuf>,
}

/// Why the command line could not be turned into [`AppArgs`].
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    #[error("workspace `{}` does not exist or cannot be accessed: {source}", path.display())]
    WorkspaceNotFound {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("workspace `{}` is not a directory", path.display())]
    WorkspaceNotADirectory { path: PathBuf },
}

/// What a command line asks for instead of a window: it is answered on stdout and the process
/// exits, before anything else starts (in particular before the single-instance plugin, which
/// would otherwise hand `--version` to an app already running).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfoRequest {
    /// `--version` / `-V`: [`version_line`].
    Version,
    /// `--help` / `-h`: [`help_text`].
    Help,
}

impl InfoRequest {
    /// The first `--version`/`-V`/`--help`/`-h` before `--` in `args` (without the program
    /// name), if any.
    pub fn find<I>(args: I) -> Option<Self>
    where
        I: IntoIterator<Item = OsString>,
    {
        for arg in args {
            match arg.to_str() {
                Some("--") => return None,
                Some("--version" | "-V") => return Some(Self::Version),
                Some("--help" | "-h") => return Some(Self::Help),
                _ => {}
            }
        }
        None
    }

    /// What the process prints for the request; `version` is the app's.
    pub fn text(self, version: &str) -> String {
        match self {
            Self::Version => version_line(version),
            Self::Help => help_text(version),
        }
    }
}

/// `gemini-desktop <version> (<commit>)`: the commit is build.rs's `GD_COMMIT`.
pub fn version_line(version: &str) -> String {
    format!("gemini-desktop {version} ({})", env!("GD_COMMIT"))
}

/// The app's `--help` (the man page, packaging/man/gemini-desktop.1, says the same at length).
pub fn help_text(version: &str) -> String {
    format!(
        "{version}
A desktop coding agent for Google Gemini.

Usage: gemini-desktop [OPTIONS] [FOLDER]

Opens the app on FOLDER (default: the current directory). When the app is already running,
FOLDER is handed to it and this process exits.

Options:
  -h, --help     Print this help and exit
  -V, --version  Print the version and commit and exit

Environment:
  GEMINI_API_KEY                   The Gemini API key (also read from .env files, as Gemini CLI
                                   does); without credentials the app opens on its sign-in screen
  GEMINI_DESKTOP_GPU=1             Keep WebKitGTK's GPU compositing on (off by default)
  WEBKIT_DISABLE_COMPOSITING_MODE  Set explicitly, wins over GEMINI_DESKTOP_GPU

Files:
  ~/.gemini/settings.json, FOLDER/.gemini/settings.json  Settings, shared with Gemini CLI

The headless agent is gemini-desktop-cli (see gemini-desktop-cli --help).
",
        version = version_line(version)
    )
}

impl AppArgs {
    /// Builds the options from this process's command line and current directory.
    pub fn from_env() -> Result<Self, ArgsError> {
        Self::parse(std::env::args_os().skip(1), std::env::current_dir().ok())
    }

    /// Builds the options from `args` (without the program name).
    ///
    /// The workspace is the first positional argument. Arguments starting with `-` are options:
    /// none are defined yet, and unknown ones are ignored, because launchers add their own
    /// (WebKitWebDriver, for instance, may pass `--automation`). `--` ends the options.
    pub fn parse<I>(args: I, current_dir: Option<PathBuf>) -> Result<Self, ArgsError>
    where
        I: IntoIterator<Item = OsString>,
    {
        let workspace = match Self::first_positional(args) {
            Some(path) => Some(Self::resolve_workspace(&path, current_dir.as_deref())?),
            // The current directory is only a default: if it cannot be resolved, run without a
            // workspace rather than refusing to start.
            None => current_dir.and_then(|cwd| canonical_dir(&cwd).ok()),
        };
        Ok(Self { workspace })
    }

    /// The first positional argument of `args` (without the program name), if any; see
    /// [`AppArgs::parse`] for what counts as an option.
    pub fn first_positional<I>(args: I) -> Option<PathBuf>
    where
        I: IntoIterator<Item = OsString>,
    {
        let mut positional = None;
        let mut only_positional = false;
        for arg in args {
            let is_option = !only_positional && arg.to_string_lossy().starts_with('-');
            if arg == "--" && !only_positional {
                only_positional = true;
            } else if is_option {
                tracing::debug!(?arg, "ignoring unknown command-line option");
            } else if positional.is_none() {
                positional = Some(PathBuf::from(arg));
            } else {
                tracing::warn!(?arg, "ignoring extra command-line argument");
            }
        }
        positional
    }

    /// A workspace named on a command line: resolved against `current_dir` when relative, then
    /// canonicalised; it must be a directory.
    pub fn resolve_workspace(
        path: &Path,
        current_dir: Option<&Path>,
    ) -> Result<PathBuf, ArgsError> {
        match current_dir {
            Some(cwd) if path.is_relative() => canonical_dir(&cwd.join(path)),
            _ => canonical_dir(path),
        }
    }
}

/// `path` canonicalised; it must be a directory.
pub(crate) fn canonical_dir(path: &Path) -> Result<PathBuf, ArgsError> {
    let canonical = std::fs::canonicalize(path).map_err(|source| ArgsError::WorkspaceNotFound {
        path: path.to_path_buf(),
        source,
    })?;
    if canonical.is_dir() {
        Ok(canonical)
    } else {
        Err(ArgsError::WorkspaceNotADirectory { path: canonical })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn version_and_help_are_found_before_the_end_of_options() {
        assert_eq!(
            InfoRequest::find(args(&["--version"])),
            Some(InfoRequest::Version)
        );
        assert_eq!(
            InfoRequest::find(args(&["folder", "-h"])),
            Some(InfoRequest::Help)
        );
        assert_eq!(InfoRequest::find(args(&["--", "--version"])), None);
        assert_eq!(InfoRequest::find(args(&["--automation", "x"])), None);
        let line = InfoRequest::Version.text("1.2.3");
        assert!(line.starts_with("gemini-desktop 1.2.3 ("), "{line}");
        assert!(
            InfoRequest::Help
                .text("1.2.3")
                .contains("Usage: gemini-desktop")
        );
    }

    #[test]
    fn no_argument_uses_the_current_directory() {
        let dir = tempfile::tempdir().unwrap();
        let options = AppArgs::parse(args(&[]), Some(dir.path().to_path_buf())).unwrap();
        assert_eq!(options.workspace, Some(dir.path().canonicalize().unwrap()));
    }

    #[test]
    fn no_argument_and_no_current_directory_means_no_workspace() {
        let options = AppArgs::parse(args(&[]), None).unwrap();
        assert_eq!(options.workspace, None);
    }

    #[test]
    fn first_positional_argument_is_canonicalised() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("project")).unwrap();
        let options = AppArgs::parse(
            args(&["--automation", "project/./", "ignored"]),
            Some(dir.path().to_path_buf()),
        )
        .unwrap();
        assert_eq!(
            options.workspace,
            Some(dir.path().join("project").canonicalize().unwrap())
        );
    }

    #[test]
    fn double_dash_ends_options() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("-odd")).unwrap();
        let options =
            AppArgs::parse(args(&["--", "-odd"]), Some(dir.path().to_path_buf())).unwrap();
        assert_eq!(
            options.workspace,
            Some(dir.path().join("-odd").canonicalize().unwrap())
        );
    }

    #[test]
    fn a_file_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file.txt");
        std::fs::write(&file, "x").unwrap();
        let err = AppArgs::parse(args(&[file.to_str().unwrap()]), None).unwrap_err();
        assert!(
            matches!(err, ArgsError::WorkspaceNotADirectory { .. }),
            "{err}"
        );
    }

    #[test]
    fn a_missing_path_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let err = AppArgs::parse(args(&[missing.to_str().unwrap()]), None).unwrap_err();
        assert!(matches!(err, ArgsError::WorkspaceNotFound { .. }), "{err}");
        assert!(err.to_string().contains("missing"), "{err}");
    }
}
