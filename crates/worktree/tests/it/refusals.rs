//! What is refused, with which message; probe, list, open; paths with spaces and unicode.

use crate::common;

use std::path::Path;

use common::{Fixture, write};
use gd_worktree::{ChangeStatus, CreateOptions, WorktreeError};
use pretty_assertions::assert_eq;

fn named(branch: &str) -> CreateOptions {
    CreateOptions {
        parent: None,
        branch: Some(branch.to_owned()),
    }
}

#[test]
fn probe_describes_the_repository_and_ignores_other_folders() {
    let f = Fixture::new();
    let repo = f.git.probe(&f.repo).unwrap().unwrap();
    assert_eq!(repo.top_level, f.repo);
    assert_eq!(repo.branch.as_deref(), Some("main"));
    assert_eq!(repo.head, Some(f.head(&f.repo)));
    assert!(!repo.dirty);

    // From a subfolder, with a change and an untracked file.
    write(&f.repo, "sub/x.txt", "x\n");
    f.write("a.txt", "changed\n");
    let repo = f.git.probe(&f.repo.join("sub")).unwrap().unwrap();
    assert_eq!(repo.top_level, f.repo);
    assert!(repo.dirty);
    assert_eq!(repo.uncommitted_files, 2);

    let plain = tempfile::tempdir().unwrap();
    assert_eq!(f.git.probe(plain.path()).unwrap(), None);
    let error = f
        .git
        .create(plain.path(), CreateOptions::default())
        .unwrap_err();
    assert!(matches!(error, WorktreeError::NotARepository(_)), "{error}");
    let missing = plain.path().join("nope");
    assert!(matches!(
        f.git.probe(&missing),
        Err(WorktreeError::FolderMissing(_))
    ));
}

#[test]
fn a_detached_head_is_refused_with_a_clear_message() {
    let f = Fixture::new();
    f.sh(&f.repo, &["checkout", "-q", "--detach"]);
    let repo = f.git.probe(&f.repo).unwrap().unwrap();
    assert_eq!(repo.branch, None);
    let error = f.git.create(&f.repo, CreateOptions::default()).unwrap_err();
    assert!(matches!(error, WorktreeError::DetachedHead));
    assert_eq!(
        error.to_string(),
        "The repository is on a detached HEAD: check out a branch first, the worktree needs a base branch to merge back into."
    );
    assert!(!f.root.join("projet été.worktrees").exists());
}

#[test]
fn a_repository_without_commits_is_refused() {
    let f = Fixture::empty();
    let error = f.git.create(&f.repo, CreateOptions::default()).unwrap_err();
    assert!(matches!(error, WorktreeError::NoCommits), "{error}");
}

#[test]
fn existing_or_invalid_branches_and_existing_folders_are_refused() {
    let f = Fixture::new();
    f.sh(&f.repo, &["branch", "taken"]);
    let error = f.git.create(&f.repo, named("taken")).unwrap_err();
    assert!(
        matches!(error, WorktreeError::BranchExists(ref b) if b == "taken"),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "A branch named “taken” already exists: choose another name."
    );

    for bad in [
        "-rf", "a..b", "bad name", "x.lock", "@{-1}", "HEAD", "", "end/",
    ] {
        let error = f.git.create(&f.repo, named(bad)).unwrap_err();
        assert!(
            matches!(error, WorktreeError::InvalidBranchName(_)),
            "{bad:?}: {error}"
        );
    }

    let folder = f.root.join("projet été.worktrees").join("free");
    std::fs::create_dir_all(&folder).unwrap();
    let error = f.git.create(&f.repo, named("free")).unwrap_err();
    assert!(
        matches!(error, WorktreeError::FolderExists(ref p) if *p == folder),
        "{error}"
    );
    // Nothing was created by the refusals.
    assert!(!f.branch_exists("free"));
    assert!(!f.branch_exists("-rf"));
    assert!(f.git.list(&f.repo).unwrap().is_empty());

    // The default name skips taken branches and folders.
    f.sh(&f.repo, &["branch", "gemini-worktree-1"]);
    std::fs::create_dir_all(f.root.join("projet été.worktrees/gemini-worktree-2")).unwrap();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    assert_eq!(wt.branch, "gemini-worktree-3");
}

#[test]
fn uncommitted_changes_stay_behind_with_a_warning() {
    let f = Fixture::new();
    f.write("a.txt", "not committed\n");
    f.write("loose.txt", "untracked\n");
    let wt = f.git.create(&f.repo, named("side")).unwrap();
    assert_eq!(wt.warnings.len(), 1);
    assert!(
        wt.warnings[0].contains("2 uncommitted or untracked files"),
        "{}",
        wt.warnings[0]
    );
    assert_eq!(
        std::fs::read_to_string(wt.path.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    assert!(!wt.path.join("loose.txt").exists());
    // And the repository still has them.
    assert_eq!(f.read("a.txt"), "not committed\n");
}

#[test]
fn spaces_and_unicode_in_the_parent_the_branch_and_file_names() {
    let f = Fixture::new();
    let parent = f.root.join("mes arbres/ça va");
    let wt = f
        .git
        .create(
            &f.repo,
            CreateOptions {
                parent: Some(parent.clone()),
                branch: Some("feature/ünï côde".replace(' ', "-")),
            },
        )
        .unwrap();
    assert_eq!(wt.path, parent.join("feature-ünï-côde"));
    assert_eq!(wt.branch, "feature/ünï-côde");
    write(&wt.path, "dossier à/fichier é.txt", "a\nb\n");
    f.git.commit_all(&wt, "Ajout").unwrap();
    std::fs::rename(wt.path.join("a.txt"), wt.path.join("a renamé.txt")).unwrap();

    let diff = f.git.diff(&wt).unwrap();
    let files: Vec<_> = diff
        .files
        .iter()
        .map(|c| {
            (
                c.path.as_str(),
                c.old_path.as_deref(),
                c.status,
                c.additions,
            )
        })
        .collect();
    assert_eq!(
        files,
        vec![
            ("a renamé.txt", Some("a.txt"), ChangeStatus::Renamed, 0),
            ("dossier à/fichier é.txt", None, ChangeStatus::Added, 2),
        ]
    );
    assert!(
        diff.patch.contains("rename to a renamé.txt"),
        "{}",
        diff.patch
    );

    // Listed with its branch's new commit (`head` is read, not remembered).
    let listed = gd_worktree::Worktree {
        head: f.head(&wt.path),
        ..wt.clone()
    };
    assert_eq!(f.git.list(&f.repo).unwrap(), vec![listed]);
    f.git.commit_all(&wt, "").unwrap();
    assert_eq!(
        f.sh(&wt.path, &["log", "-1", "--format=%s"]),
        gd_worktree::DEFAULT_COMMIT_MESSAGE
    );
    let plan = f.git.plan_merge(&wt).unwrap();
    f.git.merge(&wt, &plan, Default::default()).unwrap();
    assert_eq!(f.read("dossier à/fichier é.txt"), "a\nb\n");
    assert!(f.repo.join("a renamé.txt").exists());
    assert!(!wt.path.exists());
}

#[test]
fn list_and_open_know_only_our_worktrees() {
    let f = Fixture::new();
    let ours = f.git.create(&f.repo, named("ours")).unwrap();
    // A worktree the user made by hand is not ours.
    let theirs = f.root.join("by hand");
    f.sh(
        &f.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "theirs",
            theirs.to_str().unwrap(),
        ],
    );

    assert_eq!(f.git.list(&f.repo).unwrap(), vec![ours.clone()]);
    // Also from inside a worktree.
    assert_eq!(f.git.list(&theirs).unwrap(), vec![ours.clone()]);
    assert_eq!(
        f.git.open(&ours.path.join(".")).unwrap(),
        Some(ours.clone())
    );
    assert_eq!(f.git.open(&theirs).unwrap(), None);
    assert_eq!(f.git.open(&f.repo).unwrap(), None);
    let plain = tempfile::tempdir().unwrap();
    assert_eq!(f.git.open(plain.path()).unwrap(), None);
    let error = f.git.diff(&gd_worktree::Worktree {
        path: theirs.clone(),
        ..ours.clone()
    });
    assert!(matches!(error, Err(WorktreeError::NotAWorktree(_))));
}

#[test]
fn a_missing_identity_is_a_clear_error() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, named("anon")).unwrap();
    write(&wt.path, "c.txt", "c\n");
    // A git with no identity and no guessing from the host.
    let anonymous = f.root.join("anonymous.gitconfig");
    std::fs::write(&anonymous, "[user]\n\tuseConfigOnly = true\n").unwrap();
    let git = gd_worktree::Git::new()
        .env("GIT_CONFIG_GLOBAL", &anonymous)
        .env("GIT_CONFIG_NOSYSTEM", "1");
    let error = git.commit_all(&wt, "x").unwrap_err();
    assert!(matches!(error, WorktreeError::IdentityMissing), "{error}");
    assert!(error.to_string().contains("user.email"));
}

/// Inherited `GIT_*` variables must not redirect the library into another repository:
/// a `GIT_DIR` set for the process (as a git hook would) is removed. Run in a child process
/// so this test's environment does not leak into the others.
#[test]
fn inherited_git_variables_are_ignored() {
    if std::env::var_os("GD_WORKTREE_CHILD").is_some() {
        let folder = std::env::var_os("GD_WORKTREE_FOLDER").unwrap();
        let repo = gd_worktree::Git::new()
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .probe(Path::new(&folder))
            .unwrap();
        assert_eq!(repo, None, "GIT_DIR leaked into the library's git commands");
        return;
    }
    let f = Fixture::new();
    let plain = tempfile::tempdir().unwrap();
    // This test's name in the binary: its module path without the binary's own name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::inherited_git_variables_are_ignored");
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name.as_str(), "--nocapture"])
        .env("GD_WORKTREE_CHILD", "1")
        .env("GD_WORKTREE_FOLDER", plain.path())
        .env("GIT_DIR", f.repo.join(".git"))
        .env("GIT_WORK_TREE", &f.repo)
        .env("GIT_INDEX_FILE", f.repo.join(".git/index"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The child really ran the check (not filtered out).
    assert!(stdout.contains("1 passed"), "{stdout}");
}

#[test]
fn a_worktree_inside_the_repository_warns_unless_ignored() {
    let f = Fixture::new();
    let inside = CreateOptions {
        parent: Some(".trees".into()),
        branch: Some("in".to_owned()),
    };
    let wt = f.git.create(&f.repo, inside).unwrap();
    assert_eq!(wt.path, f.repo.join(".trees/in"));
    assert_eq!(wt.warnings.len(), 1, "{:?}", wt.warnings);
    assert!(
        wt.warnings[0].contains("add “.trees/” to .gitignore"),
        "{}",
        wt.warnings[0]
    );

    f.write(".gitignore", ".trees/\n");
    f.commit(&f.repo, "Ignore trees");
    let ignored = CreateOptions {
        parent: Some(".trees".into()),
        branch: Some("in2".to_owned()),
    };
    let wt = f.git.create(&f.repo, ignored).unwrap();
    assert!(wt.warnings.is_empty(), "{:?}", wt.warnings);
}
