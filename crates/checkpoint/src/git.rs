//! Runs the `git` binary against the shadow repository, isolated from the
//! user's and the project's git setup.
//!
//! Every command gets `GIT_DIR` (the shadow repository) and
//! `GIT_WORK_TREE` (the workspace), no system or global configuration, and
//! none of the caller's other `GIT_*` variables: a `GIT_INDEX_FILE` or
//! `GIT_OBJECT_DIRECTORY` inherited from a git hook must not redirect us into
//! the project's own repository.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::CheckpointError;

/// Author and committer of every checkpoint commit.
const AUTHOR_NAME: &str = "Gemini Desktop";
const AUTHOR_EMAIL: &str = "checkpoints@gemini-desktop.invalid";

#[derive(Debug, Clone)]
pub(crate) struct Git {
    git_dir: PathBuf,
    work_tree: PathBuf,
}

impl Git {
    pub(crate) fn new(git_dir: PathBuf, work_tree: PathBuf) -> Self {
        Self { git_dir, work_tree }
    }

    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    pub(crate) fn work_tree(&self) -> &Path {
        &self.work_tree
    }

    /// A `git` command with the isolated environment, run in the workspace
    /// (so paths in and out are relative to its root).
    pub(crate) fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new("git");
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                command.env_remove(&name);
            }
        }
        command
            .args(args)
            .current_dir(&self.work_tree)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", AUTHOR_NAME)
            .env("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL)
            .env("GIT_COMMITTER_NAME", AUTHOR_NAME)
            .env("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Runs `git args...` and returns its standard output.
    pub(crate) fn run<I, S>(&self, args: I) -> Result<Vec<u8>, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_with(self.command(args), None)
    }

    /// Runs `git args...` with `input` on standard input.
    pub(crate) fn run_input<I, S>(&self, args: I, input: &[u8]) -> Result<Vec<u8>, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_with(self.command(args), Some(input))
    }

    /// Runs a prepared command (e.g. with `GIT_INDEX_FILE` set).
    pub(crate) fn run_with(
        &self,
        mut command: Command,
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        let label = describe(&command);
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command.spawn().map_err(CheckpointError::GitMissing)?;
        if let Some(input) = input {
            // Write on another thread: git may fill its output pipe before it
            // has read all of its input.
            let mut stdin = child.stdin.take().expect("stdin is piped");
            let input = input.to_vec();
            let writer = std::thread::spawn(move || stdin.write_all(&input));
            let output = child
                .wait_with_output()
                .map_err(CheckpointError::GitMissing)?;
            let written = writer.join().unwrap_or(Ok(()));
            return finish(label, output, written.err());
        }
        let output = child
            .wait_with_output()
            .map_err(CheckpointError::GitMissing)?;
        finish(label, output, None)
    }

    /// Runs `git args...` and returns its output as trimmed text.
    pub(crate) fn text<I, S>(&self, args: I) -> Result<String, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.run(args)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }
}

fn finish(
    label: String,
    output: std::process::Output,
    write_error: Option<std::io::Error>,
) -> Result<Vec<u8>, CheckpointError> {
    if output.status.success() {
        if let Some(error) = write_error {
            return Err(CheckpointError::Git {
                command: label,
                message: format!("could not write its input: {error}"),
            });
        }
        return Ok(output.stdout);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let message = stderr.trim();
    Err(CheckpointError::Git {
        command: label,
        message: if message.is_empty() {
            format!("exited with {}", output.status)
        } else {
            message.chars().take(2000).collect()
        },
    })
}

/// `git <subcommand>` for error messages (arguments may hold file names).
fn describe(command: &Command) -> String {
    let mut args = command.get_args().map(|a| a.to_string_lossy());
    let mut sub = String::new();
    while let Some(arg) = args.next() {
        if arg == "-c" {
            args.next();
        } else if !arg.starts_with('-') {
            sub = arg.into_owned();
            break;
        }
    }
    format!("git {sub}")
}

/// Splits NUL-terminated output into paths.
pub(crate) fn split_nul(output: &[u8]) -> impl Iterator<Item = &[u8]> {
    output.split(|b| *b == 0).filter(|s| !s.is_empty())
}

/// Joins paths into NUL-terminated input.
pub(crate) fn join_nul<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for path in paths {
        out.extend_from_slice(path);
        out.push(0);
    }
    out
}
