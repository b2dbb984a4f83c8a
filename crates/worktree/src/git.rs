//! Runs the `git` binary on the user's repository.
//!
//! Unlike gd-checkpoint's shadow repository, this acts on the user's own repository, so the
//! user's global and system configuration (identity, signing, hooks) apply. What must not apply
//! is a `GIT_*` variable the app inherited, e.g. from being started by a git hook: a
//! `GIT_DIR`, `GIT_INDEX_FILE` or `GIT_WORK_TREE` would redirect every command into another
//! repository or index. So every command starts with no `GIT_*` variables at all, then gets
//! only the ones we set (and those of [`Git::env`], which is how tests isolate themselves).

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::error::{Result, WorktreeError};

/// How to run git: the environment every command of this crate gets.
///
/// [`Git::default`] is right for the app. Tests add variables with [`Git::env`] (for example
/// `GIT_CONFIG_GLOBAL` pointing at a temporary file) without touching the process environment.
#[derive(Debug, Clone, Default)]
pub struct Git {
    env: Vec<(OsString, OsString)>,
}

/// One argument list: `&[&"log", &path]` mixes text and paths.
pub(crate) type Args<'a> = &'a [&'a dyn AsRef<OsStr>];

impl Git {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an environment variable to every git command (after the inherited `GIT_*` ones
    /// were removed).
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    fn command(&self, dir: &Path, args: Args, extra_env: &[(&str, &OsStr)]) -> Command {
        let mut command = Command::new("git");
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                command.env_remove(&name);
            }
        }
        command
            // Paths in output as they are (UTF-8), not octal-escaped; no pager or colours.
            .args([
                "-c",
                "core.quotePath=false",
                "-c",
                "color.ui=false",
                "--no-pager",
            ])
            .args(args.iter().map(|a| a.as_ref()))
            .current_dir(dir)
            .env("GIT_TERMINAL_PROMPT", "0")
            // Never an editor: every commit and merge has its message on the command line.
            .env("GIT_EDITOR", "true")
            .env("GIT_MERGE_AUTOEDIT", "no")
            // Our read-only commands (status) must not take the index lock the user's own git,
            // or the conversation's agent, may need at the same moment.
            .env("GIT_OPTIONAL_LOCKS", "0")
            // Error messages are matched in English.
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in &self.env {
            command.env(name, value);
        }
        for (name, value) in extra_env {
            command.env(name, value);
        }
        command
    }

    /// Runs git and returns its output whatever the exit status.
    pub(crate) fn output_env(
        &self,
        dir: &Path,
        args: Args,
        extra_env: &[(&str, &OsStr)],
    ) -> Result<Output> {
        let output = self
            .command(dir, args, extra_env)
            .output()
            .map_err(WorktreeError::GitMissing)?;
        tracing::debug!(
            dir = %dir.display(),
            command = %label(args),
            status = %output.status,
            "git"
        );
        Ok(output)
    }

    pub(crate) fn output(&self, dir: &Path, args: Args) -> Result<Output> {
        self.output_env(dir, args, &[])
    }

    /// Runs git; a non-zero exit is an error carrying git's message.
    pub(crate) fn run_env(
        &self,
        dir: &Path,
        args: Args,
        extra_env: &[(&str, &OsStr)],
    ) -> Result<Vec<u8>> {
        let output = self.output_env(dir, args, extra_env)?;
        if output.status.success() {
            Ok(output.stdout)
        } else {
            Err(failure(args, &output))
        }
    }

    pub(crate) fn run(&self, dir: &Path, args: Args) -> Result<Vec<u8>> {
        self.run_env(dir, args, &[])
    }

    /// Runs git and returns its output as trimmed text.
    pub(crate) fn text(&self, dir: &Path, args: Args) -> Result<String> {
        let out = self.run(dir, args)?;
        Ok(String::from_utf8_lossy(&out).trim_end().to_owned())
    }

    /// Runs a git command that answers yes (exit 0) or no (exit 1).
    pub(crate) fn test(&self, dir: &Path, args: Args) -> Result<bool> {
        let output = self.output(dir, args)?;
        match output.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(failure(args, &output)),
        }
    }

    /// Like [`Git::text`], but `None` when git exits with 1 (`rev-parse -q --verify`,
    /// `symbolic-ref -q`, `config --get`: "not there").
    pub(crate) fn maybe_text(&self, dir: &Path, args: Args) -> Result<Option<String>> {
        let output = self.output(dir, args)?;
        match output.status.code() {
            Some(0) => Ok(Some(
                String::from_utf8_lossy(&output.stdout)
                    .trim_end()
                    .to_owned(),
            )),
            Some(1) => Ok(None),
            _ => Err(failure(args, &output)),
        }
    }
}

fn label(args: Args) -> String {
    args.iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The error for a failed command; a missing identity gets its own, actionable message.
pub(crate) fn failure(args: Args, output: &Output) -> WorktreeError {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let message = stderr.trim();
    if is_identity_error(message) {
        return WorktreeError::IdentityMissing;
    }
    WorktreeError::Git {
        command: label(args),
        message: if message.is_empty() {
            format!("exited with {}", output.status)
        } else {
            message.to_owned()
        },
    }
}

pub(crate) fn is_identity_error(stderr: &str) -> bool {
    stderr.contains("Please tell me who you are")
        || stderr.contains("Author identity unknown")
        || stderr.contains("Committer identity unknown")
        || stderr.contains("unable to auto-detect email address")
}
