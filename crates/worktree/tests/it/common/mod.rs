//! Real repositories in temporary folders, and a `Git` that ignores the machine's git
//! configuration (`GIT_CONFIG_GLOBAL` is a file of the test's own, set per command).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use gd_worktree::Git;

pub struct Fixture {
    _temp: tempfile::TempDir,
    /// The parent of the repository (its default `<name>.worktrees` goes here).
    pub root: PathBuf,
    /// The repository: a path with a space and non-ASCII letters.
    pub repo: PathBuf,
    pub global: PathBuf,
    pub git: Git,
}

impl Fixture {
    /// A repository on branch `main` with one commit: `a.txt` (3 lines) and `b.txt`.
    pub fn new() -> Self {
        let fixture = Self::empty();
        fixture.write("a.txt", "one\ntwo\nthree\n");
        fixture.write("b.txt", "bee\n");
        fixture.sh(&fixture.repo, &["add", "."]);
        fixture.sh(&fixture.repo, &["commit", "-q", "-m", "initial"]);
        fixture
    }

    /// `git init` only, no commit.
    pub fn empty() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap().join("work dir");
        let repo = root.join("projet été");
        std::fs::create_dir_all(&repo).unwrap();
        let global = temp.path().join("gitconfig");
        std::fs::write(
            &global,
            "[user]\n\tname = Test User\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n",
        )
        .unwrap();
        let git = Git::new()
            .env("GIT_CONFIG_GLOBAL", &global)
            .env("GIT_CONFIG_NOSYSTEM", "1");
        let fixture = Self {
            _temp: temp,
            root,
            repo,
            global,
            git,
        };
        fixture.sh(&fixture.repo, &["init", "-q", "-b", "main"]);
        fixture
    }

    /// Runs a git command of the test's own (setup and checks), isolated the same way.
    pub fn sh(&self, dir: &Path, args: &[&str]) -> String {
        let output = self.command(dir, args).output().unwrap();
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_owned()
    }

    /// Whether a git command of the test's own succeeds.
    pub fn sh_ok(&self, dir: &Path, args: &[&str]) -> bool {
        self.command(dir, args).output().unwrap().status.success()
    }

    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                command.env_remove(name);
            }
        }
        command
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", &self.global)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C");
        command
    }

    pub fn write(&self, name: &str, text: &str) {
        write(&self.repo, name, text);
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.repo.join(name)).unwrap()
    }

    /// Commits everything in `dir`.
    pub fn commit(&self, dir: &Path, message: &str) {
        self.sh(dir, &["add", "-A"]);
        self.sh(dir, &["commit", "-q", "-m", message]);
    }

    pub fn head(&self, dir: &Path) -> String {
        self.sh(dir, &["rev-parse", "HEAD"])
    }

    pub fn branch_exists(&self, name: &str) -> bool {
        self.sh_ok(
            &self.repo,
            &[
                "show-ref",
                "--verify",
                "--quiet",
                &format!("refs/heads/{name}"),
            ],
        )
    }

    /// `git status --porcelain` of the repository (empty when clean).
    pub fn status(&self) -> String {
        self.sh(&self.repo, &["status", "--porcelain"])
    }
}

pub fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}
