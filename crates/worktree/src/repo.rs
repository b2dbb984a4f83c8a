//! Finding the repository, creating worktrees, and finding them again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Result, WorktreeError};
use crate::git::Git;
use crate::types::{CreateOptions, Repo, Worktree};

/// The branch configuration key that marks a branch as ours and names its base branch.
/// In the repository's shared config, so every worktree sees it, and `git branch -D` removes
/// it with the branch.
pub(crate) const BASE_KEY: &str = "gemini-desktop-base";
/// The checkout the worktree was created from: where the merge happens.
pub(crate) const CHECKOUT_KEY: &str = "gemini-desktop-checkout";

const DEFAULT_BRANCH_PREFIX: &str = "gemini-worktree-";

impl Git {
    /// The repository `folder` is in, or `None` when it is not in a git checkout (then the UI
    /// does not offer a worktree). A bare repository or a `.git` folder also gives `None`.
    pub fn probe(&self, folder: &Path) -> Result<Option<Repo>> {
        if !folder.is_dir() {
            return Err(WorktreeError::FolderMissing(folder.to_path_buf()));
        }
        let output = self.output(folder, &[&"rev-parse", &"--show-toplevel"])?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            // A repository git refuses to use is not "no repository": say why.
            if stderr.contains("dubious ownership") {
                return Err(crate::git::failure(&[&"rev-parse"], &output));
            }
            return Ok(None);
        }
        let top_level = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim_end());
        let branch = self.current_branch(&top_level)?;
        let head = self.maybe_text(
            &top_level,
            &[&"rev-parse", &"-q", &"--verify", &"HEAD^{commit}"],
        )?;
        // `normal`, not `all`: an untracked folder counts once, and a big one (an unignored
        // `node_modules`) is not walked just to show a menu.
        let out = self.run(
            &top_level,
            &[
                &"status",
                &"--porcelain=v1",
                &"-z",
                &"--untracked-files=normal",
                &"--no-renames",
            ],
        )?;
        let uncommitted = parse_status(&String::from_utf8_lossy(&out));
        Ok(Some(Repo {
            top_level,
            branch,
            head,
            dirty: !uncommitted.is_empty(),
            uncommitted_files: uncommitted.len(),
        }))
    }

    /// Creates a worktree on a new branch forked from the current branch's HEAD of the
    /// repository `folder` is in.
    ///
    /// Refuses a detached HEAD (there would be no branch to merge back into), a repository
    /// without commits, an invalid or existing branch name and an existing target folder.
    /// Uncommitted changes of the repository are allowed but stay where they are: the new
    /// worktree starts from the last commit, and `Worktree::warnings` says so.
    pub fn create(&self, folder: &Path, options: CreateOptions) -> Result<Worktree> {
        let repo = self
            .probe(folder)?
            .ok_or_else(|| WorktreeError::NotARepository(folder.to_path_buf()))?;
        let base = repo.branch.clone().ok_or(WorktreeError::DetachedHead)?;
        let head = repo.head.clone().ok_or(WorktreeError::NoCommits)?;
        let top = &repo.top_level;
        let parent = match options.parent {
            Some(parent) if parent.is_absolute() => parent,
            Some(parent) => top.join(parent),
            None => default_parent(top)?,
        };
        let branch = match options.branch {
            Some(name) => {
                let name = self.check_branch_name(top, name.trim())?;
                if self.branch_exists(top, &name)? {
                    return Err(WorktreeError::BranchExists(name));
                }
                name
            }
            None => self.free_branch_name(top, &parent)?,
        };
        let path = parent.join(slug(&branch));
        if path.symlink_metadata().is_ok() {
            return Err(WorktreeError::FolderExists(path));
        }
        std::fs::create_dir_all(&parent).map_err(|source| WorktreeError::Io {
            path: parent.clone(),
            source,
        })?;
        // The start point is the commit we just read, not the branch name: what was checked
        // is what is forked.
        self.run(
            top,
            &[
                &"worktree",
                &"add",
                &"--quiet",
                &"-b",
                &branch,
                &"--",
                &path,
                &head,
            ],
        )?;
        let recorded = self
            .record(top, &branch, &base)
            .and_then(|()| self.load(&path));
        let mut worktree = match recorded {
            Ok(worktree) => worktree,
            Err(error) => {
                // Don't leave a half-made worktree the list would not show.
                let _ = self.run(top, &[&"worktree", &"remove", &"--force", &"--", &path]);
                let _ = self.run(top, &[&"branch", &"-D", &"--", &branch]);
                return Err(error);
            }
        };
        // A worktree inside the repository shows up there as untracked files (and `git add -A`
        // would embed it) unless it is ignored.
        if let Ok(inside) = worktree.path.strip_prefix(top)
            && matches!(
                self.test(top, &[&"check-ignore", &"-q", &"--", &inside]),
                Ok(false)
            )
        {
            worktree.warnings.push(format!(
                "The worktree is inside the repository and not ignored: add “{}/” to .gitignore, or it shows up there as untracked files.",
                inside.parent().unwrap_or(inside).display()
            ));
        }
        if repo.uncommitted_files > 0 {
            worktree.warnings.push(format!(
                "{} has {} uncommitted or untracked file{}; they are not in the new worktree, which starts from the last commit of “{}”.",
                top.display(),
                repo.uncommitted_files,
                if repo.uncommitted_files == 1 { "" } else { "s" },
                base
            ));
        }
        tracing::info!(path = %worktree.path.display(), branch = %worktree.branch, base = %worktree.base, "worktree created");
        Ok(worktree)
    }

    /// The worktrees this feature created for the repository `folder` is in (also when
    /// `folder` is one of them). A worktree whose folder was deleted by hand is still listed
    /// (its branch exists): discard it to clean up.
    pub fn list(&self, folder: &Path) -> Result<Vec<Worktree>> {
        let repo = self
            .probe(folder)?
            .ok_or_else(|| WorktreeError::NotARepository(folder.to_path_buf()))?;
        let entries = self.worktree_entries(&repo.top_level)?;
        let Some(main) = entries.first().map(|e| e.path.clone()) else {
            return Ok(Vec::new());
        };
        let config = self.ours(&repo.top_level)?;
        let mut list = Vec::new();
        for entry in entries.into_iter().skip(1) {
            let Some(branch) = entry.branch else { continue };
            let Some((base, checkout)) = config.get(&branch) else {
                continue;
            };
            list.push(Worktree {
                path: entry.path,
                branch: branch.clone(),
                base: base.clone(),
                base_checkout: checkout.clone().unwrap_or_else(|| main.clone()),
                repo: main.clone(),
                head: entry.head,
                warnings: Vec::new(),
            });
        }
        Ok(list)
    }

    /// The worktree `folder` is in, if it is one this feature created (the app uses this to
    /// show the diff / merge / discard actions for a conversation's workspace).
    pub fn open(&self, folder: &Path) -> Result<Option<Worktree>> {
        let Some(repo) = self.probe(folder)? else {
            return Ok(None);
        };
        match self.load(&repo.top_level) {
            Ok(worktree) => Ok(Some(worktree)),
            Err(WorktreeError::NotAWorktree(_)) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Reads a worktree back from its folder (the state now, not what a caller remembers).
    pub(crate) fn load(&self, path: &Path) -> Result<Worktree> {
        let not_ours = || WorktreeError::NotAWorktree(path.to_path_buf());
        if !path.is_dir() {
            return Err(not_ours());
        }
        let output = self.output(path, &[&"rev-parse", &"--show-toplevel"])?;
        if !output.status.success() {
            return Err(not_ours());
        }
        let top = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim_end());
        let branch = self.current_branch(&top)?.ok_or_else(not_ours)?;
        let base = self
            .config_get(&top, &format!("branch.{branch}.{BASE_KEY}"))?
            .ok_or_else(not_ours)?;
        let entries = self.worktree_entries(&top)?;
        let main = entries
            .first()
            .map(|e| e.path.clone())
            .ok_or_else(not_ours)?;
        if same_path(&main, &top) {
            // Our branch, checked out in the main checkout by hand: not a worktree to remove.
            return Err(not_ours());
        }
        let checkout = self
            .config_get(&top, &format!("branch.{branch}.{CHECKOUT_KEY}"))?
            .map(PathBuf::from)
            .unwrap_or_else(|| main.clone());
        let head = self.text(&top, &[&"rev-parse", &"--verify", &"HEAD^{commit}"])?;
        Ok(Worktree {
            path: top,
            branch,
            base,
            base_checkout: checkout,
            repo: main,
            head,
            warnings: Vec::new(),
        })
    }

    /// [`Git::load`] for a worktree a caller holds: it must still be that branch's checkout.
    pub(crate) fn reload(&self, worktree: &Worktree) -> Result<Worktree> {
        if !worktree.path.exists() {
            return Err(WorktreeError::WorktreeMissing(worktree.path.clone()));
        }
        let now = self.load(&worktree.path)?;
        if now.branch != worktree.branch {
            return Err(WorktreeError::StalePlan(format!(
                "the worktree is now on branch “{}”, not “{}”",
                now.branch, worktree.branch
            )));
        }
        Ok(now)
    }

    fn record(&self, top: &Path, branch: &str, base: &str) -> Result<()> {
        self.run(
            top,
            &[
                &"config",
                &"--local",
                &format!("branch.{branch}.{BASE_KEY}"),
                &base,
            ],
        )?;
        self.run(
            top,
            &[
                &"config",
                &"--local",
                &format!("branch.{branch}.{CHECKOUT_KEY}"),
                &top,
            ],
        )?;
        Ok(())
    }

    /// Branch → (base, checkout) for every branch we marked.
    fn ours(&self, dir: &Path) -> Result<HashMap<String, (String, Option<PathBuf>)>> {
        let output = self.output(
            dir,
            &[
                &"config",
                &"--local",
                &"-z",
                &"--get-regexp",
                &format!(r"^branch\..*\.({BASE_KEY}|{CHECKOUT_KEY})$"),
            ],
        )?;
        let mut bases = HashMap::new();
        let mut checkouts = HashMap::new();
        if output.status.success() {
            let text = String::from_utf8_lossy(&output.stdout);
            for item in text.split('\0').filter(|s| !s.is_empty()) {
                let (key, value) = item.split_once('\n').unwrap_or((item, ""));
                let Some(rest) = key.strip_prefix("branch.") else {
                    continue;
                };
                if let Some(branch) = rest.strip_suffix(&format!(".{}", BASE_KEY.to_lowercase())) {
                    bases.insert(branch.to_owned(), value.to_owned());
                } else if let Some(branch) =
                    rest.strip_suffix(&format!(".{}", CHECKOUT_KEY.to_lowercase()))
                {
                    checkouts.insert(branch.to_owned(), PathBuf::from(value));
                }
            }
        }
        Ok(bases
            .into_iter()
            .map(|(branch, base)| {
                let checkout = checkouts.remove(&branch);
                (branch, (base, checkout))
            })
            .collect())
    }

    pub(crate) fn config_get(&self, dir: &Path, key: &str) -> Result<Option<String>> {
        self.maybe_text(dir, &[&"config", &"--get", &key])
    }

    pub(crate) fn current_branch(&self, dir: &Path) -> Result<Option<String>> {
        Ok(self
            .maybe_text(dir, &[&"symbolic-ref", &"-q", &"HEAD"])?
            .and_then(|r| r.strip_prefix("refs/heads/").map(str::to_owned)))
    }

    pub(crate) fn branch_exists(&self, dir: &Path, name: &str) -> Result<bool> {
        self.test(
            dir,
            &[
                &"show-ref",
                &"--verify",
                &"--quiet",
                &format!("refs/heads/{name}"),
            ],
        )
    }

    /// Validates a branch name the user typed, with git's own rules.
    fn check_branch_name(&self, dir: &Path, name: &str) -> Result<String> {
        let invalid = || WorktreeError::InvalidBranchName(name.to_owned());
        // `-x` would be read as an option; `@{-1}` and friends would be expanded.
        if name.is_empty() || name.starts_with('-') || name.contains("@{") || name == "HEAD" {
            return Err(invalid());
        }
        let output = self.output(dir, &[&"check-ref-format", &"--branch", &name])?;
        let checked = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || checked.trim_end() != name {
            return Err(invalid());
        }
        Ok(name.to_owned())
    }

    /// The first `gemini-worktree-N` that is neither a branch nor a folder.
    fn free_branch_name(&self, dir: &Path, parent: &Path) -> Result<String> {
        for n in 1.. {
            let name = format!("{DEFAULT_BRANCH_PREFIX}{n}");
            if !self.branch_exists(dir, &name)? && parent.join(&name).symlink_metadata().is_err() {
                return Ok(name);
            }
        }
        unreachable!("there is always a free number")
    }

    /// Uncommitted files of a checkout: staged, changed, and untracked (not ignored) ones.
    pub(crate) fn uncommitted(&self, dir: &Path) -> Result<Vec<String>> {
        let out = self.run(
            dir,
            &[
                &"status",
                &"--porcelain=v1",
                &"-z",
                &"--untracked-files=all",
                &"--no-renames",
            ],
        )?;
        Ok(parse_status(&String::from_utf8_lossy(&out)))
    }

    /// Uncommitted changes to tracked files only (untracked files don't stop a merge unless
    /// the merge would overwrite them, which is checked separately).
    pub(crate) fn tracked_changes(&self, dir: &Path) -> Result<Vec<String>> {
        let out = self.run(
            dir,
            &[
                &"status",
                &"--porcelain=v1",
                &"-z",
                &"--untracked-files=no",
                &"--no-renames",
            ],
        )?;
        Ok(parse_status(&String::from_utf8_lossy(&out)))
    }

    pub(crate) fn worktree_entries(&self, dir: &Path) -> Result<Vec<WorktreeEntry>> {
        let out = self.run(dir, &[&"worktree", &"list", &"--porcelain", &"-z"])?;
        Ok(parse_worktree_list(&String::from_utf8_lossy(&out)))
    }
}

/// One entry of `git worktree list --porcelain -z`.
#[derive(Debug, Clone)]
pub(crate) struct WorktreeEntry {
    pub(crate) path: PathBuf,
    pub(crate) head: String,
    pub(crate) branch: Option<String>,
}

fn parse_worktree_list(text: &str) -> Vec<WorktreeEntry> {
    let mut entries = Vec::new();
    let mut current: Option<WorktreeEntry> = None;
    for line in text.split('\0') {
        if line.is_empty() {
            entries.extend(current.take());
            continue;
        }
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "worktree" => {
                entries.extend(current.take());
                current = Some(WorktreeEntry {
                    path: PathBuf::from(value),
                    head: String::new(),
                    branch: None,
                });
            }
            "HEAD" => {
                if let Some(entry) = current.as_mut() {
                    entry.head = value.to_owned();
                }
            }
            "branch" => {
                if let Some(entry) = current.as_mut() {
                    entry.branch = value.strip_prefix("refs/heads/").map(str::to_owned);
                }
            }
            _ => {}
        }
    }
    entries.extend(current);
    entries
}

/// Paths of `git status --porcelain=v1 -z --no-renames`, sorted.
fn parse_status(text: &str) -> Vec<String> {
    let mut paths: Vec<String> = text
        .split('\0')
        .filter(|entry| entry.len() > 3)
        .map(|entry| entry[3..].to_owned())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// `<repo-parent>/<repo-name>.worktrees`: beside the repository, not inside it (the
/// repository's own tools, watchers and `git status` must not see the worktrees).
fn default_parent(top: &Path) -> Result<PathBuf> {
    let (Some(parent), Some(name)) = (top.parent(), top.file_name()) else {
        return Err(WorktreeError::Io {
            path: top.to_path_buf(),
            source: std::io::Error::other(
                "the repository is at the root of the file system: choose where the worktree goes",
            ),
        });
    };
    let mut folder = name.to_os_string();
    folder.push(".worktrees");
    Ok(parent.join(folder))
}

/// A folder name for a branch: letters (any script), digits, `-`, `_` and `.`; anything else
/// (the `/` of `feature/x`) becomes `-`.
pub fn slug(branch: &str) -> String {
    let mut out = String::new();
    for c in branch.chars() {
        let c = if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
            c
        } else {
            '-'
        };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    let out = out.trim_matches(|c| c == '-' || c == '.');
    if out.is_empty() {
        "worktree".to_owned()
    } else {
        out.to_owned()
    }
}

pub(crate) fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("feature/x y"), "feature-x-y");
        assert_eq!(slug("é-ü/日本"), "é-ü-日本");
        assert_eq!(slug("..//"), "worktree");
        assert_eq!(slug("a//b"), "a-b");
    }

    #[test]
    fn worktree_list_parses() {
        let text = "worktree /r\0HEAD abc\0branch refs/heads/main\0\0worktree /r w\0HEAD def\0detached\0\0";
        let entries = parse_worktree_list(text);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].path, PathBuf::from("/r w"));
        assert_eq!(entries[1].branch, None);
        assert_eq!(entries[0].branch.as_deref(), Some("main"));
    }
}
