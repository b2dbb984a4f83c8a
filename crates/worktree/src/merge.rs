//! Merging a worktree's branch back, and committing its last changes first.
//!
//! The merge is planned first, without touching anything: `git merge-tree --write-tree`
//! predicts the result and its conflicts in the object database only. `merge` then re-plans
//! and refuses if anything moved since the user confirmed, runs `git merge` in the base
//! checkout, and if that fails for any reason puts the checkout back (`git merge --abort`):
//! the user's repository is never left mid-merge.

use std::path::Path;

use crate::error::{Result, WorktreeError};
use crate::git::Git;
use crate::types::{
    Blocker, BlockerKind, ChangeStatus, CommitSummary, MergeKind, MergeOptions, MergeOutcome,
    MergePlan, Worktree,
};

/// The message of `commit_all` when the caller gives none.
pub const DEFAULT_COMMIT_MESSAGE: &str = "Work from a Gemini Desktop conversation";

impl Git {
    /// What merging the worktree's branch into its base branch would do, and what stops it.
    pub fn plan_merge(&self, worktree: &Worktree) -> Result<MergePlan> {
        let worktree = self.reload(worktree)?;
        let dir = &worktree.path;
        let base = worktree.base.clone();
        let base_ref = format!("refs/heads/{base}");
        let branch_ref = format!("refs/heads/{}", worktree.branch);
        let Some(base_head) = self.maybe_text(
            dir,
            &[
                &"rev-parse",
                &"-q",
                &"--verify",
                &format!("{base_ref}^{{commit}}"),
            ],
        )?
        else {
            return Err(WorktreeError::BaseBranchMissing(base));
        };
        let branch_head = self.text(
            dir,
            &[
                &"rev-parse",
                &"--verify",
                &format!("{branch_ref}^{{commit}}"),
            ],
        )?;
        let commits = self.commits_between(dir, &base_head, &branch_head)?;
        let kind = if commits.is_empty() {
            MergeKind::UpToDate
        } else if self.test(
            dir,
            &[&"merge-base", &"--is-ancestor", &base_head, &branch_head],
        )? {
            MergeKind::FastForward
        } else {
            MergeKind::MergeCommit
        };

        let mut blockers = Vec::new();
        let mut conflicts = Vec::new();
        let mut files = Vec::new();
        match kind {
            MergeKind::UpToDate => {}
            MergeKind::FastForward => {
                files = self.changes(dir, &base_head, &branch_head)?;
            }
            MergeKind::MergeCommit => {
                let (tree, clean, mut conflicted) =
                    self.merge_tree(dir, &base_head, &branch_head)?;
                if !clean && conflicted.is_empty() {
                    // Git says "conflict" without naming a file: still a conflict.
                    conflicted.push("(a conflict git did not attribute to one file)".to_owned());
                }
                if clean {
                    files = self.changes(dir, &base_head, &tree)?;
                } else {
                    blockers.push(Blocker {
                        kind: BlockerKind::Conflicts,
                        message: format!(
                            "“{}” and “{base}” both changed {}: resolve this in the worktree (for example merge “{base}” into it and fix the conflicts), then merge again.",
                            worktree.branch,
                            list(&conflicted)
                        ),
                    });
                    conflicts = conflicted;
                }
            }
        }

        let uncommitted = self.uncommitted(dir)?;
        if !uncommitted.is_empty() {
            blockers.push(Blocker {
                kind: BlockerKind::WorktreeUncommitted,
                message: format!(
                    "The worktree has uncommitted changes ({}); only commits are merged. Commit them first, or discard them.",
                    list(&uncommitted)
                ),
            });
        }

        let checkout = &worktree.base_checkout;
        if kind == MergeKind::UpToDate {
            // Nothing to merge: only the worktree is cleaned up, the base checkout's state
            // does not matter.
        } else if !checkout.is_dir() {
            blockers.push(Blocker {
                kind: BlockerKind::BaseCheckoutMissing,
                message: format!(
                    "The folder {} where “{base}” is merged no longer exists.",
                    checkout.display()
                ),
            });
        } else {
            let on = self.current_branch(checkout)?;
            if on.as_deref() != Some(base.as_str()) {
                blockers.push(Blocker {
                    kind: BlockerKind::BaseNotCheckedOut,
                    message: match on {
                        Some(other) => format!(
                            "{} is on branch “{other}”, not on “{base}”: check out “{base}” there first.",
                            checkout.display()
                        ),
                        None => format!(
                            "{} is on a detached HEAD, not on “{base}”: check out “{base}” there first.",
                            checkout.display()
                        ),
                    },
                });
            } else if let Some(operation) = self.operation_in_progress(checkout)? {
                blockers.push(Blocker {
                    kind: BlockerKind::BaseBusy,
                    message: format!(
                        "{} is in the middle of {operation}: finish or abort it first.",
                        checkout.display()
                    ),
                });
            } else {
                let dirty = self.tracked_changes(checkout)?;
                if !dirty.is_empty() {
                    blockers.push(Blocker {
                        kind: BlockerKind::BaseDirty,
                        message: format!(
                            "{} has uncommitted changes ({}): commit or stash them first, a merge must not mix with them.",
                            checkout.display(),
                            list(&dirty)
                        ),
                    });
                }
                // The base checkout has no changes to tracked files (or that blocks already),
                // so anything at a path the merge adds is untracked or ignored: git would
                // refuse, or overwrite it.
                let in_the_way: Vec<String> = files
                    .iter()
                    .filter(|f| matches!(f.status, ChangeStatus::Added | ChangeStatus::Renamed))
                    .filter(|f| checkout.join(&f.path).symlink_metadata().is_ok())
                    .filter(|f| !dirty.contains(&f.path))
                    .map(|f| f.path.clone())
                    .collect();
                if !in_the_way.is_empty() {
                    blockers.push(Blocker {
                        kind: BlockerKind::UntrackedInBase,
                        message: format!(
                            "{} has untracked files where the merge brings in files ({}): move them away first.",
                            checkout.display(),
                            list(&in_the_way)
                        ),
                    });
                }
            }
        }

        Ok(MergePlan {
            base,
            base_checkout: worktree.base_checkout.clone(),
            base_head,
            branch_head,
            kind,
            commits,
            files,
            conflicts,
            uncommitted,
            blockers,
            worktree,
        })
    }

    /// Merges as planned: refuses if the plan no longer holds (either branch moved, a blocker
    /// appeared), merges in the base checkout, then removes the worktree and deletes its
    /// branch unless `options.keep_worktree`.
    pub fn merge(
        &self,
        worktree: &Worktree,
        plan: &MergePlan,
        options: MergeOptions,
    ) -> Result<MergeOutcome> {
        if plan.worktree.branch != worktree.branch {
            return Err(WorktreeError::StalePlan(
                "the plan is for another worktree".to_owned(),
            ));
        }
        let now = self.plan_merge(worktree)?;
        if now.base_head != plan.base_head {
            return Err(WorktreeError::StalePlan(format!(
                "“{}” has new commits",
                now.base
            )));
        }
        if now.branch_head != plan.branch_head {
            return Err(WorktreeError::StalePlan(format!(
                "“{}” has new commits",
                now.worktree.branch
            )));
        }
        if let Some(blocker) = now.blockers.first() {
            return Err(WorktreeError::Blocked(blocker.message.clone()));
        }
        let checkout = &now.base_checkout;
        match now.kind {
            MergeKind::UpToDate => {}
            MergeKind::FastForward => {
                self.run_merge(
                    checkout,
                    &["--ff-only", "--no-edit", "--no-autostash", "--no-squash"],
                    None,
                    &now.branch_head,
                )?;
            }
            MergeKind::MergeCommit => {
                let message = format!("Merge branch '{}' into {}", now.worktree.branch, now.base);
                self.run_merge(
                    checkout,
                    &["--no-ff", "--no-edit", "--no-autostash", "--no-squash"],
                    Some(&message),
                    &now.branch_head,
                )?;
            }
        }
        // The base branch, not the checkout's HEAD: after an up-to-date "merge" the checkout
        // may be on any branch (it was not touched).
        let dir = &now.worktree.path;
        let base_head = self.text(
            dir,
            &[
                &"rev-parse",
                &"--verify",
                &format!("refs/heads/{}^{{commit}}", now.base),
            ],
        )?;
        // Belt and braces before anything is deleted: the branch must now be in the base.
        if !self.test(
            dir,
            &[
                &"merge-base",
                &"--is-ancestor",
                &now.branch_head,
                &base_head,
            ],
        )? {
            return Err(WorktreeError::Git {
                command: "merge".to_owned(),
                message: format!(
                    "after the merge, “{}” does not contain “{}”; the worktree was kept",
                    now.base, now.worktree.branch
                ),
            });
        }
        tracing::info!(branch = %now.worktree.branch, base = %now.base, kind = ?now.kind, "worktree merged");
        let mut outcome = MergeOutcome {
            kind: now.kind,
            base_head,
            removed_worktree: false,
            deleted_branch: false,
            warnings: Vec::new(),
        };
        if !options.keep_worktree {
            let (removed, deleted, warnings) = self.remove(&now.worktree);
            outcome.removed_worktree = removed;
            outcome.deleted_branch = deleted;
            outcome.warnings = warnings;
        }
        Ok(outcome)
    }

    /// Commits everything in the worktree (changes and untracked files, `.gitignore`
    /// respected), so that a blocked merge can go ahead. Returns the new commit.
    pub fn commit_all(&self, worktree: &Worktree, message: &str) -> Result<String> {
        let worktree = self.reload(worktree)?;
        let dir = &worktree.path;
        if self.uncommitted(dir)?.is_empty() {
            return Err(WorktreeError::NothingToCommit);
        }
        let message = match message.trim() {
            "" => DEFAULT_COMMIT_MESSAGE,
            message => message,
        };
        self.run(dir, &[&"add", &"--all", &"--", &"."])?;
        self.run(
            dir,
            &[
                &"commit",
                &"--quiet",
                &"--no-edit",
                &format!("--message={message}"),
            ],
        )?;
        self.text(dir, &[&"rev-parse", &"--verify", &"HEAD^{commit}"])
    }

    /// `git merge`, and `git merge --abort` if it fails halfway.
    fn run_merge(
        &self,
        checkout: &Path,
        flags: &[&str],
        message: Option<&str>,
        commit: &str,
    ) -> Result<()> {
        let message = message.map(|m| format!("--message={m}"));
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"merge", &"--quiet"];
        args.extend(flags.iter().map(|f| f as &dyn AsRef<std::ffi::OsStr>));
        if let Some(message) = &message {
            args.push(message);
        }
        args.push(&commit);
        // Checked by the plan already; checked again because the abort below must only
        // ever undo our own merge, never one the user has in progress.
        if let Some(operation) = self.operation_in_progress(checkout)? {
            return Err(WorktreeError::Blocked(format!(
                "{} is in the middle of {operation}: finish or abort it first.",
                checkout.display()
            )));
        }
        let output = self.output(checkout, &args)?;
        if output.status.success() {
            return Ok(());
        }
        let in_progress = self
            .maybe_text(checkout, &[&"rev-parse", &"-q", &"--verify", &"MERGE_HEAD"])?
            .is_some();
        if in_progress && let Err(error) = self.run(checkout, &[&"merge", &"--abort"]) {
            tracing::error!(%error, "git merge --abort failed");
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        if crate::git::is_identity_error(&stderr) {
            return Err(WorktreeError::IdentityMissing);
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let message = [stderr.trim(), stdout.trim()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        Err(WorktreeError::MergeFailed(message))
    }

    /// The git operation a checkout is in the middle of (a merge, rebase, ...), if any.
    fn operation_in_progress(&self, checkout: &Path) -> Result<Option<&'static str>> {
        const STATES: [(&str, &str); 5] = [
            ("MERGE_HEAD", "a merge"),
            ("CHERRY_PICK_HEAD", "a cherry-pick"),
            ("REVERT_HEAD", "a revert"),
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase or `git am`"),
        ];
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"rev-parse"];
        for (name, _) in &STATES {
            args.push(&"--git-path");
            args.push(name);
        }
        let out = self.text(checkout, &args)?;
        for ((_, label), path) in STATES.iter().zip(out.lines()) {
            if checkout.join(path).symlink_metadata().is_ok() {
                return Ok(Some(label));
            }
        }
        Ok(None)
    }

    /// `git merge-tree --write-tree`: the merged tree, whether it is clean, and the conflicted
    /// paths; in the object database only.
    fn merge_tree(
        &self,
        dir: &Path,
        ours: &str,
        theirs: &str,
    ) -> Result<(String, bool, Vec<String>)> {
        let args: [&dyn AsRef<std::ffi::OsStr>; 7] = [
            &"merge-tree",
            &"--write-tree",
            &"--name-only",
            &"--no-messages",
            &"-z",
            &ours,
            &theirs,
        ];
        let output = self.output(dir, &args)?;
        // 0: clean, 1: conflicts; anything else is an error.
        if !matches!(output.status.code(), Some(0 | 1)) {
            let stderr = String::from_utf8_lossy(&output.stderr);
            if stderr.contains("--write-tree") || stderr.contains("usage: git merge-tree") {
                let version = self.text(dir, &[&"version"]).unwrap_or_default();
                return Err(WorktreeError::Git {
                    command: "merge-tree --write-tree".to_owned(),
                    message: format!(
                        "this needs git 2.38 or newer, and this is {version}: update git to merge worktrees"
                    ),
                });
            }
            return Err(crate::git::failure(&args, &output));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let mut parts = text.split('\0');
        let tree = parts.next().unwrap_or_default().trim().to_owned();
        let clean = output.status.code() == Some(0);
        let mut conflicts: Vec<String> = Vec::new();
        if !clean {
            for path in parts.take_while(|p| !p.is_empty()) {
                if !conflicts.iter().any(|c| c == path) {
                    conflicts.push(path.to_owned());
                }
            }
        }
        Ok((tree, clean, conflicts))
    }

    /// Commits reachable from `to` but not from `from`, newest first.
    pub(crate) fn commits_between(
        &self,
        dir: &Path,
        from: &str,
        to: &str,
    ) -> Result<Vec<CommitSummary>> {
        let out = self.run(
            dir,
            &[
                &"log",
                &"--no-color",
                &"-z",
                &"--format=%H%x09%s",
                &format!("{from}..{to}"),
                &"--",
            ],
        )?;
        Ok(String::from_utf8_lossy(&out)
            .split('\0')
            .filter(|line| !line.is_empty())
            .map(|line| {
                let (id, subject) = line.split_once('\t').unwrap_or((line, ""));
                CommitSummary {
                    id: id.trim().to_owned(),
                    subject: subject.to_owned(),
                }
            })
            .collect())
    }

    /// Removes the worktree folder (with whatever is in it) and deletes its branch; what
    /// failed is returned as warnings.
    pub(crate) fn remove(&self, worktree: &Worktree) -> (bool, bool, Vec<String>) {
        let mut warnings = Vec::new();
        let repo = &worktree.repo;
        let removed = if worktree.path.exists() {
            match self.run(
                repo,
                &[&"worktree", &"remove", &"--force", &"--", &worktree.path],
            ) {
                Ok(_) => true,
                Err(error) => {
                    warnings.push(format!(
                        "The worktree folder {} could not be removed: {error}",
                        worktree.path.display()
                    ));
                    false
                }
            }
        } else {
            // Deleted by hand: forget it.
            let _ = self.run(repo, &[&"worktree", &"prune"]);
            true
        };
        if removed
            && let Some(parent) = worktree.path.parent()
            && parent.extension().is_some_and(|e| e == "worktrees")
        {
            // The default `<repo>.worktrees` folder goes with its last worktree.
            let _ = std::fs::remove_dir(parent);
        }
        let deleted = removed
            && match self.run(repo, &[&"branch", &"-D", &"--", &worktree.branch]) {
                Ok(_) => true,
                Err(error) => {
                    warnings.push(format!(
                        "The branch “{}” could not be deleted: {error}",
                        worktree.branch
                    ));
                    false
                }
            };
        (removed, deleted, warnings)
    }
}

/// A short list of paths for a message: the first five, then "and N more".
fn list(paths: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = paths
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}
