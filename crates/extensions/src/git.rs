//! Running the user's `git` on values the user (or an extension's manifest,
//! through `migratedTo`) supplied: the install source and `--ref`.
//!
//! Git reads any argument starting with `-` as an option, and some options
//! run commands (`--upload-pack=<cmd>` on `clone` and `fetch`), so a ref
//! such as `--upload-pack=touch x` ran `touch x` (issue 33). Two guards,
//! each enough on its own:
//! * the values are checked first ([`check_ref`], [`check_source`]): a ref
//!   follows `git check-ref-format`'s rules (a commit id passes them) and
//!   neither may start with `-`;
//! * every command puts `--end-of-options` before them, so git reads them
//!   as a repository and a ref whatever they look like.
//!
//! The `ext::` transport runs a command by design; git refuses it by
//! default, but a user's configuration or `GIT_ALLOW_PROTOCOL` can allow
//! it, and a `url.<x>.insteadOf` rule can turn an innocent URL into one.
//! An install never needs it, so it is refused outright here
//! (`protocol.ext.allow=never`, with `GIT_ALLOW_PROTOCOL`, which would
//! override that, removed).

use std::path::Path;
use std::process::{Command, Stdio};

/// Variables that would point git at another repository than the one the
/// command is about (inherited, say, from a git hook that started the app),
/// or override the protocol rule above.
const CLEARED_ENV: &[&str] = &[
    "GIT_ALLOW_PROTOCOL",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
];

/// Why `git_ref` (a `--ref`) cannot be used, if it cannot: git's
/// `check-ref-format` rules for a one-level-or-more ref, plus no leading
/// `-` (an option) or `+` (a forced refspec), no `:` (a refspec that
/// writes a local ref) and nothing git would expand (`@{…}`, `^`, `~`).
/// Branch and tag names, `refs/…` paths and commit ids all pass.
pub fn check_ref(git_ref: &str) -> Result<(), String> {
    let why = ref_problem(git_ref);
    match why {
        None => Ok(()),
        Some(why) => Err(format!(
            "Invalid --ref \"{}\": {why}.",
            git_ref.escape_debug()
        )),
    }
}

fn ref_problem(r: &str) -> Option<&'static str> {
    if r.is_empty() {
        return Some("a ref cannot be empty");
    }
    if r.len() > 1024 {
        return Some("a ref cannot be longer than 1024 bytes");
    }
    if r.starts_with('-') {
        return Some("a ref cannot start with \"-\"");
    }
    if r.starts_with('+') {
        return Some("a ref cannot start with \"+\"");
    }
    if r.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Some("a ref cannot contain spaces or control characters");
    }
    if let Some(c) = r
        .chars()
        .find(|c| matches!(c, '~' | '^' | ':' | '?' | '*' | '[' | '\\'))
    {
        return Some(match c {
            '~' | '^' => "a ref cannot contain \"~\" or \"^\"",
            ':' => "a ref cannot contain \":\"",
            '\\' => "a ref cannot contain \"\\\"",
            _ => "a ref cannot contain \"?\", \"*\" or \"[\"",
        });
    }
    if r.contains("..") {
        return Some("a ref cannot contain \"..\"");
    }
    if r.contains("@{") {
        return Some("a ref cannot contain \"@{\"");
    }
    if r == "@" {
        return Some("a ref cannot be \"@\"");
    }
    if r.ends_with('.') {
        return Some("a ref cannot end with \".\"");
    }
    if r.split('/').any(str::is_empty) {
        return Some("a ref cannot start or end with \"/\" or contain \"//\"");
    }
    if r.split('/')
        .any(|part| part.starts_with('.') || part.ends_with(".lock"))
    {
        return Some("no part of a ref can start with \".\" or end with \".lock\"");
    }
    None
}

/// Why `source` (a git URL) cannot be cloned, if it cannot: no leading `-`
/// (an option) and no control characters (a newline would split the URL in
/// messages and in git's own handling of it), and never the `ext::`
/// transport.
pub fn check_source(source: &str) -> Result<(), String> {
    let why = if source.starts_with('-') {
        Some("a source cannot start with \"-\"")
    } else if source.chars().any(char::is_control) {
        Some("a source cannot contain control characters")
    } else if source.to_ascii_lowercase().starts_with("ext::") {
        Some("the ext:: transport runs commands and is not allowed")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(format!(
            "Invalid source \"{}\": {why}.",
            source.escape_debug()
        )),
    }
}

/// Runs the user's git with the guards above; its stderr is the error.
fn git(args: &[&str], cwd: Option<&Path>) -> Result<(), String> {
    let mut cmd = Command::new("git");
    for name in CLEARED_ENV {
        cmd.env_remove(name);
    }
    cmd.args(["-c", "protocol.ext.allow=never"])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null());
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    let out = cmd.output().map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// 0.61's `cloneFromGit`: a shallow clone of `source` into `dest`, then
/// `git_ref` (or `HEAD`) fetched and checked out. Both values are checked
/// before git runs, and come after `--end-of-options`.
pub(crate) fn clone(source: &str, git_ref: Option<&str>, dest: &Path) -> Result<(), String> {
    check_source(source)?;
    let git_ref = git_ref.unwrap_or("HEAD");
    check_ref(git_ref)?;
    let fail = |e: String| format!("Failed to clone Git repository from {source} {e}");
    let dest_s = dest.to_string_lossy().into_owned();
    git(
        &[
            "clone",
            "--quiet",
            "--depth",
            "1",
            "--end-of-options",
            source,
            &dest_s,
        ],
        None,
    )
    .map_err(fail)?;
    git(
        &[
            "fetch",
            "--quiet",
            "--depth",
            "1",
            "--end-of-options",
            "origin",
            git_ref,
        ],
        Some(dest),
    )
    .map_err(fail)?;
    git(
        &["checkout", "--quiet", "--end-of-options", "FETCH_HEAD"],
        Some(dest),
    )
    .map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_ids_and_paths_pass() {
        for ok in [
            "main",
            "HEAD",
            "v1.2.3",
            "release/2024-01",
            "refs/tags/v1",
            "refs/pull/12/head",
            "feature_x@2",
            "0123456789abcdef0123456789abcdef01234567",
            "abc1234",
        ] {
            assert_eq!(check_ref(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn options_refspecs_and_expansions_are_refused() {
        for (bad, why) in [
            ("", "cannot be empty"),
            ("--upload-pack=touch x", "cannot start with \"-\""),
            ("-u", "cannot start with \"-\""),
            ("+main", "cannot start with \"+\""),
            ("main:refs/heads/x", "\":\""),
            ("a..b", "\"..\""),
            ("main@{1}", "\"@{\""),
            ("@", "cannot be \"@\""),
            ("HEAD~1", "\"~\" or \"^\""),
            ("v1^{}", "\"~\" or \"^\""),
            ("a b", "spaces or control"),
            ("a\tb", "spaces or control"),
            ("a\u{7f}", "spaces or control"),
            ("ma*in", "\"*\""),
            ("a\\b", "\"\\\""),
            ("/main", "\"/\""),
            ("main/", "\"/\""),
            ("a//b", "\"//\""),
            ("main.", "end with \".\""),
            ("refs/.hidden", "start with \".\""),
            ("main.lock", "\".lock\""),
        ] {
            let err = check_ref(bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        assert!(check_ref(&"a".repeat(1025)).is_err());
    }

    #[test]
    fn sources_that_are_options_or_commands_are_refused() {
        assert!(check_source("https://github.com/acme/x").is_ok());
        assert!(check_source("file:///tmp/repo.git").is_ok());
        for bad in [
            "--upload-pack=touch x",
            "-utouch x",
            "ext::sh -c touch% x",
            "EXT::sh",
            "https://x/\nrepo",
        ] {
            assert!(check_source(bad).is_err(), "{bad:?}");
        }
    }
}
