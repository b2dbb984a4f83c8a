//! Helpers: workspaces on disk and the project's own git.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use gd_checkpoint::{CheckpointConfig, CheckpointMeta, ShadowRepo};

pub struct Fixture {
    pub workspace: tempfile::TempDir,
    pub data: tempfile::TempDir,
    pub config: CheckpointConfig,
}

impl Fixture {
    pub fn new() -> Self {
        let workspace = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let config = CheckpointConfig::new(data.path().join("checkpoints"));
        Self {
            workspace,
            data,
            config,
        }
    }

    pub fn root(&self) -> PathBuf {
        self.workspace.path().canonicalize().unwrap()
    }

    pub fn write(&self, rel: &str, content: &str) {
        let path = self.workspace.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.workspace.path().join(rel)).ok()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.workspace.path().join(rel).exists()
    }

    pub fn remove(&self, rel: &str) {
        std::fs::remove_file(self.workspace.path().join(rel)).unwrap();
    }

    pub fn open(&self) -> ShadowRepo {
        ShadowRepo::open(&self.config, self.workspace.path()).unwrap()
    }

    /// The project's own git, with a neutral configuration.
    pub fn project_git(&self, args: &[&str]) -> String {
        project_git(self.workspace.path(), args)
    }
}

pub fn project_git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn edit_meta(tool: &str, files: &[&str]) -> CheckpointMeta {
    CheckpointMeta {
        session_id: Some("session-1".into()),
        message_id: Some("message-1".into()),
        call_id: Some("call-1".into()),
        tool: Some(tool.into()),
        files: files.iter().map(|f| f.to_string()).collect(),
        label: None,
    }
}

/// Paths in a checkpoint's tree, sorted.
pub fn tree_paths(repo: &ShadowRepo, commit: &str) -> Vec<String> {
    let out = Command::new("git")
        .args(["ls-tree", "-r", "--name-only", "-z", commit])
        .env("GIT_DIR", repo.git_dir())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut paths: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    paths.sort();
    paths
}
