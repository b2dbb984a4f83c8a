//! Throwing a worktree away, after a plan that lists what is lost.

use crate::error::{Result, WorktreeError};
use crate::git::Git;
use crate::types::{DiscardPlan, Worktree};

impl Git {
    /// What discarding the worktree loses: its uncommitted and untracked files, and the
    /// commits of its branch the base branch does not have.
    pub fn plan_discard(&self, worktree: &Worktree) -> Result<DiscardPlan> {
        // A worktree folder deleted by hand can still be discarded: its branch is cleaned up.
        let present = worktree.path.exists();
        let worktree = if present {
            self.reload(worktree)?
        } else {
            self.reload_missing(worktree)?
        };
        let dir = if present {
            &worktree.path
        } else {
            &worktree.repo
        };
        let branch_head = worktree.head.clone();
        let commits = match self.maybe_text(
            dir,
            &[
                &"rev-parse",
                &"-q",
                &"--verify",
                &format!("refs/heads/{}^{{commit}}", worktree.base),
            ],
        )? {
            Some(base_head) => self.commits_between(dir, &base_head, &branch_head)?,
            // No base any more: every commit since the fork is unknown, so list the branch's
            // commits that no other branch has.
            None => self.unique_commits(dir, &worktree.branch, &branch_head)?,
        };
        let (uncommitted, state) = if present {
            (self.uncommitted(dir)?, self.snapshot(dir)?)
        } else {
            (Vec::new(), String::new())
        };
        Ok(DiscardPlan {
            worktree,
            uncommitted,
            commits,
            branch_head,
            state,
        })
    }

    /// Removes the worktree folder (`git worktree remove --force`) and deletes its branch
    /// (`git branch -D`), refusing if anything changed since `plan` was made.
    pub fn discard(&self, worktree: &Worktree, plan: &DiscardPlan) -> Result<()> {
        if plan.worktree.branch != worktree.branch {
            return Err(WorktreeError::StalePlan(
                "the plan is for another worktree".to_owned(),
            ));
        }
        let now = self.plan_discard(worktree)?;
        if now.branch_head != plan.branch_head {
            return Err(WorktreeError::StalePlan(format!(
                "“{}” has new commits",
                now.worktree.branch
            )));
        }
        if now.state != plan.state {
            return Err(WorktreeError::StalePlan(
                "files in the worktree changed".to_owned(),
            ));
        }
        let (removed, deleted, warnings) = self.remove(&now.worktree);
        if !(removed && deleted) {
            return Err(WorktreeError::Git {
                command: "worktree remove / branch -D".to_owned(),
                message: warnings.join(" "),
            });
        }
        tracing::info!(branch = %now.worktree.branch, "worktree discarded");
        Ok(())
    }

    /// A worktree of ours whose folder is gone: known from its branch and its configuration.
    fn reload_missing(&self, worktree: &Worktree) -> Result<Worktree> {
        let not_ours = || WorktreeError::NotAWorktree(worktree.path.clone());
        let repo = &worktree.repo;
        if !repo.is_dir() {
            return Err(not_ours());
        }
        let base = self
            .config_get(
                repo,
                &format!("branch.{}.{}", worktree.branch, crate::repo::BASE_KEY),
            )?
            .ok_or_else(not_ours)?;
        // Checked out in a folder that exists (moved with `git worktree move`): not this one.
        let elsewhere = self
            .worktree_entries(repo)?
            .into_iter()
            .any(|e| e.branch.as_deref() == Some(worktree.branch.as_str()) && e.path.exists());
        if elsewhere {
            return Err(not_ours());
        }
        let head = self
            .maybe_text(
                repo,
                &[
                    &"rev-parse",
                    &"-q",
                    &"--verify",
                    &format!("refs/heads/{}^{{commit}}", worktree.branch),
                ],
            )?
            .ok_or_else(not_ours)?;
        Ok(Worktree {
            base,
            head,
            warnings: Vec::new(),
            ..worktree.clone()
        })
    }

    /// The branch's commits that no other branch has (when the base is gone).
    fn unique_commits(
        &self,
        dir: &std::path::Path,
        branch: &str,
        head: &str,
    ) -> Result<Vec<crate::types::CommitSummary>> {
        // `--exclude` with `--branches` matches differently across git versions: list the
        // other branches' commits ourselves.
        let refs = self.text(
            dir,
            &[
                &"for-each-ref",
                &"--format=%(refname)%09%(objectname)",
                &"refs/heads/",
            ],
        )?;
        let ours = format!("refs/heads/{branch}");
        let others: Vec<String> = refs
            .lines()
            .filter_map(|line| line.split_once('\t'))
            .filter(|(name, _)| *name != ours)
            .map(|(_, id)| format!("^{id}"))
            .collect();
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> =
            vec![&"log", &"--no-color", &"-z", &"--format=%H%x09%s", &head];
        args.extend(others.iter().map(|o| o as &dyn AsRef<std::ffi::OsStr>));
        args.push(&"--");
        let out = self.run(dir, &args)?;
        Ok(String::from_utf8_lossy(&out)
            .split('\0')
            .filter(|line| !line.is_empty())
            .map(|line| {
                let (id, subject) = line.split_once('\t').unwrap_or((line, ""));
                crate::types::CommitSummary {
                    id: id.trim().to_owned(),
                    subject: subject.to_owned(),
                }
            })
            .collect())
    }
}
