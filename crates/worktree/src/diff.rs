//! What a worktree changes against its base branch.
//!
//! The worktree's state (committed, uncommitted and untracked files, `.gitignore` respected)
//! is written as a tree through a temporary index, a copy of the worktree's own: the real
//! index, and so what the user or the agent staged, is never touched. That tree is compared
//! with the fork point, in one `git diff`, so the file list and the patch agree.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Result, WorktreeError};
use crate::git::Git;
use crate::types::{ChangeStatus, FileChange, Worktree, WorktreeDiff};

/// Options of every diff: the user's `diff.*` configuration must not change what we parse
/// (external diff tools, textconv, prefixes, relative paths, rename settings).
const DIFF_OPTIONS: &[&str] = &[
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--find-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
];

impl Git {
    /// Everything the worktree changes against its base branch, from the fork point
    /// (merge-base): committed, uncommitted and untracked files, with counts and the patch.
    pub fn diff(&self, worktree: &Worktree) -> Result<WorktreeDiff> {
        let worktree = self.reload(worktree)?;
        let base_ref = format!("refs/heads/{}", worktree.base);
        if !self.branch_exists(&worktree.path, &worktree.base)? {
            return Err(WorktreeError::BaseBranchMissing(worktree.base.clone()));
        }
        let fork_point = self.text(&worktree.path, &[&"merge-base", &base_ref, &"HEAD"])?;
        let state = self.snapshot(&worktree.path)?;
        let files = self.changes(&worktree.path, &fork_point, &state)?;
        let mut args: Vec<&dyn AsRef<OsStr>> = vec![&"diff"];
        args.extend(DIFF_OPTIONS.iter().map(|o| o as &dyn AsRef<OsStr>));
        args.extend([&fork_point as &dyn AsRef<OsStr>, &state, &"--"]);
        let patch = String::from_utf8_lossy(&self.run(&worktree.path, &args)?).into_owned();
        Ok(WorktreeDiff {
            base: worktree.base,
            fork_point,
            files,
            patch,
        })
    }

    /// A tree of the checkout's files as they are on disk (tracked and untracked, ignored
    /// files left out), written through a temporary copy of its index.
    pub(crate) fn snapshot(&self, dir: &Path) -> Result<String> {
        let git_dir = PathBuf::from(self.text(dir, &[&"rev-parse", &"--absolute-git-dir"])?);
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let index = TempFile(git_dir.join(format!(
            "gemini-desktop-snapshot-{}-{}.index",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        )));
        let real = git_dir.join("index");
        if real.exists() {
            // A copy keeps the stat data: `git add` then rereads only the files that changed.
            std::fs::copy(&real, &index.0).map_err(|source| WorktreeError::Io {
                path: real.clone(),
                source,
            })?;
        } else {
            self.run_env(
                dir,
                &[&"read-tree", &"HEAD"],
                &[("GIT_INDEX_FILE", index.0.as_os_str())],
            )?;
        }
        let env = [("GIT_INDEX_FILE", index.0.as_os_str())];
        self.run_env(dir, &[&"add", &"--all", &"--", &"."], &env)?;
        let tree = self.run_env(dir, &[&"write-tree"], &env)?;
        Ok(String::from_utf8_lossy(&tree).trim().to_owned())
    }

    /// The files that differ between two trees (or commits), with line counts.
    pub(crate) fn changes(&self, dir: &Path, from: &str, to: &str) -> Result<Vec<FileChange>> {
        let diff = |format: &'static str| -> Result<String> {
            let mut args: Vec<&dyn AsRef<OsStr>> = vec![&"diff", &format, &"-z"];
            args.extend(DIFF_OPTIONS.iter().map(|o| o as &dyn AsRef<OsStr>));
            args.extend([&from as &dyn AsRef<OsStr>, &to, &"--"]);
            Ok(String::from_utf8_lossy(&self.run(dir, &args)?).into_owned())
        };
        let statuses = parse_name_status(&diff("--name-status")?);
        let counts = parse_numstat(&diff("--numstat")?);
        let mut files: Vec<FileChange> = statuses
            .into_iter()
            .map(|(status, path, old_path)| {
                let (additions, deletions, binary) =
                    counts.get(&path).copied().unwrap_or((0, 0, false));
                FileChange {
                    path,
                    old_path,
                    status,
                    additions,
                    deletions,
                    binary,
                }
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }
}

/// Removes the temporary index (and a lock git may have left) when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let mut lock = self.0.clone().into_os_string();
        lock.push(".lock");
        let _ = std::fs::remove_file(lock);
    }
}

/// `git diff --name-status -z`: `M\0path\0`, `R090\0old\0new\0`.
fn parse_name_status(text: &str) -> Vec<(ChangeStatus, String, Option<String>)> {
    let mut out = Vec::new();
    let mut tokens = text.split('\0');
    while let Some(code) = tokens.next() {
        let Some(letter) = code.chars().next() else {
            continue;
        };
        match letter {
            'R' | 'C' => {
                let (Some(old), Some(new)) = (tokens.next(), tokens.next()) else {
                    break;
                };
                let status = if letter == 'R' {
                    ChangeStatus::Renamed
                } else {
                    ChangeStatus::Added
                };
                out.push((status, new.to_owned(), Some(old.to_owned())));
            }
            _ => {
                let Some(path) = tokens.next() else { break };
                let status = match letter {
                    'A' => ChangeStatus::Added,
                    'D' => ChangeStatus::Deleted,
                    _ => ChangeStatus::Modified,
                };
                out.push((status, path.to_owned(), None));
            }
        }
    }
    out
}

/// `git diff --numstat -z`: `3\t1\tpath\0`, renames `3\t1\t\0old\0new\0`, binary `-\t-\t…`.
/// Keyed by the (new) path.
fn parse_numstat(text: &str) -> HashMap<String, (u32, u32, bool)> {
    let mut out = HashMap::new();
    let mut tokens = text.split('\0');
    while let Some(token) = tokens.next() {
        if token.is_empty() {
            continue;
        }
        let mut fields = token.splitn(3, '\t');
        let (Some(added), Some(deleted), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let path = if path.is_empty() {
            let _old = tokens.next();
            match tokens.next() {
                Some(new) => new,
                None => break,
            }
        } else {
            path
        };
        let binary = added == "-" && deleted == "-";
        out.insert(
            path.to_owned(),
            (
                added.parse().unwrap_or(0),
                deleted.parse().unwrap_or(0),
                binary,
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_and_numstat_parse() {
        let statuses = parse_name_status("M\0a b.txt\0R087\0old.rs\0new.rs\0A\0é.bin\0D\0gone\0");
        assert_eq!(statuses.len(), 4);
        assert_eq!(
            statuses[1],
            (
                ChangeStatus::Renamed,
                "new.rs".to_owned(),
                Some("old.rs".to_owned())
            )
        );
        assert_eq!(statuses[3].0, ChangeStatus::Deleted);
        let counts = parse_numstat(concat!(
            "2\t1\ta b.txt\0",
            "1\t0\t\0old.rs\0new.rs\0",
            "-\t-\té.bin\0"
        ));
        assert_eq!(counts["a b.txt"], (2, 1, false));
        assert_eq!(counts["new.rs"], (1, 0, false));
        assert_eq!(counts["é.bin"], (0, 0, true));
    }
}
