//! The whole flow on real repositories: create, work, diff, merge (fast-forward and merge
//! commit), conflicts, discard.

use crate::common;

use common::{Fixture, write};
use gd_worktree::{
    BlockerKind, ChangeStatus, CreateOptions, FileChange, MergeKind, MergeOptions, WorktreeError,
};
use pretty_assertions::assert_eq;

fn change(path: &str, status: ChangeStatus, additions: u32, deletions: u32) -> FileChange {
    FileChange {
        path: path.to_owned(),
        old_path: None,
        status,
        additions,
        deletions,
        binary: false,
    }
}

#[test]
fn create_work_diff_commit_and_fast_forward_merge() {
    let f = Fixture::new();
    let base_before = f.head(&f.repo);
    let wt = f
        .git
        .create(
            &f.repo,
            CreateOptions {
                parent: None,
                branch: Some("feature/tidy".into()),
            },
        )
        .unwrap();
    // Beside the repository, named after the branch.
    assert_eq!(
        wt.path,
        f.root.join("projet été.worktrees").join("feature-tidy")
    );
    assert_eq!(wt.branch, "feature/tidy");
    assert_eq!(wt.base, "main");
    assert_eq!(wt.base_checkout, f.repo);
    assert_eq!(wt.head, base_before);
    assert!(wt.warnings.is_empty(), "{:?}", wt.warnings);
    assert_eq!(
        f.sh(&wt.path, &["branch", "--show-current"]),
        "feature/tidy"
    );
    assert_eq!(f.git.list(&f.repo).unwrap(), vec![wt.clone()]);

    // Work: one commit (a.txt edited, c.txt added, b.txt deleted), then an uncommitted
    // change and an untracked file.
    write(&wt.path, "a.txt", "one\nTWO\nthree\nfour\n");
    write(&wt.path, "c.txt", "new\nfile\n");
    std::fs::remove_file(wt.path.join("b.txt")).unwrap();
    f.commit(&wt.path, "Tidy up");
    write(&wt.path, "c.txt", "new\nfile\nmore\n");
    write(&wt.path, "sub dir/ünï.txt", "untracked\n");
    write(&wt.path, ".gitignore", "*.log\n");
    write(&wt.path, "noise.log", "ignored\n");

    let diff = f.git.diff(&wt).unwrap();
    assert_eq!(diff.base, "main");
    assert_eq!(diff.fork_point, base_before);
    assert_eq!(
        diff.files,
        vec![
            change(".gitignore", ChangeStatus::Added, 1, 0),
            change("a.txt", ChangeStatus::Modified, 2, 1),
            change("b.txt", ChangeStatus::Deleted, 0, 1),
            change("c.txt", ChangeStatus::Added, 3, 0),
            change("sub dir/ünï.txt", ChangeStatus::Added, 1, 0),
        ]
    );
    assert!(
        diff.patch.contains("diff --git a/a.txt b/a.txt"),
        "{}",
        diff.patch
    );
    assert!(diff.patch.contains("+TWO\n"));
    assert!(diff.patch.contains("b/sub dir/ünï.txt"), "{}", diff.patch);
    assert!(!diff.patch.contains("noise.log"));
    // The diff did not stage anything in the worktree.
    assert_eq!(f.sh(&wt.path, &["diff", "--cached", "--name-only"]), "");

    // Uncommitted work blocks the merge; commit_all lifts it.
    let plan = f.git.plan_merge(&wt).unwrap();
    assert!(!plan.can_merge());
    assert_eq!(plan.blockers.len(), 1, "{:?}", plan.blockers);
    assert_eq!(plan.blockers[0].kind, BlockerKind::WorktreeUncommitted);
    assert!(plan.blockers[0].message.contains("c.txt"));
    assert_eq!(
        plan.uncommitted,
        vec![".gitignore", "c.txt", "sub dir/ünï.txt"]
    );
    let refused = f
        .git
        .merge(&wt, &plan, MergeOptions::default())
        .unwrap_err();
    assert!(matches!(refused, WorktreeError::Blocked(_)), "{refused}");

    let commit = f.git.commit_all(&wt, "Finish").unwrap();
    assert_eq!(f.head(&wt.path), commit);
    assert!(matches!(
        f.git.commit_all(&wt, "again"),
        Err(WorktreeError::NothingToCommit)
    ));

    let plan = f.git.plan_merge(&wt).unwrap();
    assert!(plan.can_merge(), "{:?}", plan.blockers);
    assert_eq!(plan.kind, MergeKind::FastForward);
    assert_eq!(plan.base_head, base_before);
    assert_eq!(plan.branch_head, commit);
    let subjects: Vec<_> = plan.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, vec!["Finish", "Tidy up"]);
    let paths: Vec<_> = plan.files.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![".gitignore", "a.txt", "b.txt", "c.txt", "sub dir/ünï.txt"]
    );

    let outcome = f.git.merge(&wt, &plan, MergeOptions::default()).unwrap();
    assert_eq!(outcome.kind, MergeKind::FastForward);
    assert_eq!(outcome.base_head, commit);
    assert!(outcome.removed_worktree && outcome.deleted_branch);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);

    // The work is on main, the worktree and its branch are gone.
    assert_eq!(f.head(&f.repo), commit);
    assert_eq!(f.read("a.txt"), "one\nTWO\nthree\nfour\n");
    assert_eq!(f.read("c.txt"), "new\nfile\nmore\n");
    assert_eq!(f.read("sub dir/ünï.txt"), "untracked\n");
    assert!(!f.repo.join("b.txt").exists());
    assert_eq!(f.status(), "");
    assert!(!wt.path.exists());
    // The default `<repo>.worktrees` folder went with its last worktree.
    assert!(!f.root.join("projet été.worktrees").exists());
    assert!(!f.branch_exists("feature/tidy"));
    assert!(f.git.list(&f.repo).unwrap().is_empty());
    // The branch's configuration went with it.
    assert!(!f.sh_ok(
        &f.repo,
        &["config", "--get", "branch.feature/tidy.gemini-desktop-base"]
    ));
}

#[test]
fn merge_commit_when_the_base_moved() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    assert_eq!(wt.branch, "gemini-worktree-1");
    write(&wt.path, "a.txt", "one\ntwo\nthree\nfour\n");
    f.commit(&wt.path, "Add four");
    // Meanwhile on main, another file.
    f.write("b.txt", "bee\nsting\n");
    f.commit(&f.repo, "Sting");
    let main_head = f.head(&f.repo);

    // The diff is against the fork point: main's own new commit does not show as reverted.
    let diff = f.git.diff(&wt).unwrap();
    assert_eq!(
        diff.files,
        vec![change("a.txt", ChangeStatus::Modified, 1, 0)]
    );

    let plan = f.git.plan_merge(&wt).unwrap();
    assert!(plan.can_merge(), "{:?}", plan.blockers);
    assert_eq!(plan.kind, MergeKind::MergeCommit);
    assert!(plan.conflicts.is_empty());
    assert_eq!(
        plan.files,
        vec![change("a.txt", ChangeStatus::Modified, 1, 0)]
    );

    let outcome = f.git.merge(&wt, &plan, MergeOptions::default()).unwrap();
    assert_eq!(outcome.kind, MergeKind::MergeCommit);
    let parents = f.sh(&f.repo, &["rev-list", "--parents", "-n1", "HEAD"]);
    assert_eq!(
        parents.split(' ').skip(1).collect::<Vec<_>>(),
        vec![main_head.as_str(), plan.branch_head.as_str()]
    );
    assert_eq!(
        f.sh(&f.repo, &["log", "-1", "--format=%s"]),
        "Merge branch 'gemini-worktree-1' into main"
    );
    assert_eq!(f.read("a.txt"), "one\ntwo\nthree\nfour\n");
    assert_eq!(f.read("b.txt"), "bee\nsting\n");
    assert_eq!(f.status(), "");
    assert!(!wt.path.exists());
    assert!(!f.branch_exists("gemini-worktree-1"));
}

#[test]
fn a_predicted_conflict_refuses_the_merge_and_leaves_the_repository_alone() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    write(&wt.path, "a.txt", "one\nworktree\nthree\n");
    f.commit(&wt.path, "Worktree's two");
    f.write("a.txt", "one\nmain\nthree\n");
    f.commit(&f.repo, "Main's two");
    let main_head = f.head(&f.repo);

    let plan = f.git.plan_merge(&wt).unwrap();
    assert_eq!(plan.kind, MergeKind::MergeCommit);
    assert_eq!(plan.conflicts, vec!["a.txt"]);
    assert_eq!(plan.blockers.len(), 1);
    assert_eq!(plan.blockers[0].kind, BlockerKind::Conflicts);
    assert!(
        plan.blockers[0].message.contains("a.txt"),
        "{}",
        plan.blockers[0].message
    );

    let error = f
        .git
        .merge(&wt, &plan, MergeOptions::default())
        .unwrap_err();
    assert!(matches!(error, WorktreeError::Blocked(_)), "{error}");
    assert_eq!(f.head(&f.repo), main_head);
    assert_eq!(f.read("a.txt"), "one\nmain\nthree\n");
    assert_eq!(f.status(), "");
    assert!(!f.sh_ok(&f.repo, &["rev-parse", "-q", "--verify", "MERGE_HEAD"]));
    assert!(wt.path.exists());
    assert!(f.branch_exists(&wt.branch));
}

#[test]
fn a_dirty_base_checkout_blocks_the_merge() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    write(&wt.path, "c.txt", "c\n");
    f.commit(&wt.path, "Add c");
    f.write("b.txt", "edited by the user\n");

    let plan = f.git.plan_merge(&wt).unwrap();
    let kinds: Vec<_> = plan.blockers.iter().map(|b| b.kind).collect();
    assert_eq!(kinds, vec![BlockerKind::BaseDirty]);
    assert!(plan.blockers[0].message.contains("b.txt"));
    let error = f
        .git
        .merge(&wt, &plan, MergeOptions::default())
        .unwrap_err();
    assert!(
        error.to_string().contains("uncommitted changes (b.txt)"),
        "{error}"
    );
    assert_eq!(f.read("b.txt"), "edited by the user\n");
    assert!(!f.repo.join("c.txt").exists());
    assert!(wt.path.exists());
}

#[test]
fn untracked_files_in_the_way_and_a_base_on_another_branch_block_the_merge() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    write(&wt.path, "c.txt", "from the worktree\n");
    f.commit(&wt.path, "Add c");

    f.write("c.txt", "the user's own\n");
    let plan = f.git.plan_merge(&wt).unwrap();
    let kinds: Vec<_> = plan.blockers.iter().map(|b| b.kind).collect();
    assert_eq!(kinds, vec![BlockerKind::UntrackedInBase]);
    std::fs::remove_file(f.repo.join("c.txt")).unwrap();

    f.sh(&f.repo, &["switch", "-q", "--orphan", "elsewhere"]);
    f.write("z.txt", "z\n");
    f.commit(&f.repo, "Unrelated");
    let plan = f.git.plan_merge(&wt).unwrap();
    let kinds: Vec<_> = plan.blockers.iter().map(|b| b.kind).collect();
    assert_eq!(kinds, vec![BlockerKind::BaseNotCheckedOut]);
    assert!(
        plan.blockers[0]
            .message
            .contains("“elsewhere”, not on “main”"),
        "{}",
        plan.blockers[0].message
    );
    assert!(f.git.merge(&wt, &plan, MergeOptions::default()).is_err());
    assert!(!f.repo.join("c.txt").exists());
}

#[test]
fn a_stale_merge_plan_is_refused() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    write(&wt.path, "c.txt", "c\n");
    f.commit(&wt.path, "Add c");
    let plan = f.git.plan_merge(&wt).unwrap();
    assert_eq!(plan.kind, MergeKind::FastForward);

    // The base moves after the user saw the plan.
    f.write("d.txt", "d\n");
    f.commit(&f.repo, "Add d");
    let moved = f.head(&f.repo);
    let error = f
        .git
        .merge(&wt, &plan, MergeOptions::default())
        .unwrap_err();
    assert!(matches!(error, WorktreeError::StalePlan(_)), "{error}");
    assert!(
        error.to_string().contains("“main” has new commits"),
        "{error}"
    );
    assert_eq!(f.head(&f.repo), moved);

    // The branch moves after the user saw the plan.
    let plan = f.git.plan_merge(&wt).unwrap();
    write(&wt.path, "e.txt", "e\n");
    f.commit(&wt.path, "Add e");
    let error = f
        .git
        .merge(&wt, &plan, MergeOptions::default())
        .unwrap_err();
    assert!(matches!(error, WorktreeError::StalePlan(_)), "{error}");
    assert_eq!(f.head(&f.repo), moved);

    // A fresh plan goes through, keeping the worktree when asked.
    let plan = f.git.plan_merge(&wt).unwrap();
    assert_eq!(plan.kind, MergeKind::MergeCommit);
    let outcome = f
        .git
        .merge(
            &wt,
            &plan,
            MergeOptions {
                keep_worktree: true,
            },
        )
        .unwrap();
    assert!(!outcome.removed_worktree && !outcome.deleted_branch);
    assert!(wt.path.exists());
    assert!(f.branch_exists(&wt.branch));
    assert!(f.repo.join("e.txt").exists());
    // Merged, so the next plan has nothing to bring in, even with the repository on another
    // branch; merging it only cleans up.
    f.sh(&f.repo, &["switch", "-q", "--orphan", "elsewhere"]);
    f.write("z.txt", "z\n");
    f.commit(&f.repo, "Unrelated");
    let plan = f.git.plan_merge(&wt).unwrap();
    assert_eq!(plan.kind, MergeKind::UpToDate);
    assert!(plan.can_merge(), "{:?}", plan.blockers);
    let elsewhere = f.head(&f.repo);
    let outcome = f.git.merge(&wt, &plan, MergeOptions::default()).unwrap();
    assert!(outcome.removed_worktree && outcome.deleted_branch);
    assert_eq!(f.head(&f.repo), elsewhere);
    assert!(!wt.path.exists());
    assert!(!f.branch_exists(&wt.branch));
}

#[test]
fn discard_lists_what_is_lost_and_refuses_a_stale_plan() {
    let f = Fixture::new();
    let base_head = f.head(&f.repo);
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    write(&wt.path, "c.txt", "c\n");
    f.commit(&wt.path, "Add c");
    write(&wt.path, "a.txt", "changed\n");
    write(&wt.path, "new file.txt", "untracked\n");

    let plan = f.git.plan_discard(&wt).unwrap();
    assert!(plan.loses_work());
    assert_eq!(plan.uncommitted, vec!["a.txt", "new file.txt"]);
    let subjects: Vec<_> = plan.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, vec!["Add c"]);

    // A file that was already listed changes again: the plan is stale.
    write(&wt.path, "a.txt", "changed twice\n");
    let error = f.git.discard(&wt, &plan).unwrap_err();
    assert!(matches!(error, WorktreeError::StalePlan(_)), "{error}");
    assert!(wt.path.exists());

    // A new commit: stale too.
    let plan = f.git.plan_discard(&wt).unwrap();
    f.commit(&wt.path, "More");
    assert!(matches!(
        f.git.discard(&wt, &plan),
        Err(WorktreeError::StalePlan(_))
    ));

    let plan = f.git.plan_discard(&wt).unwrap();
    assert_eq!(plan.commits.len(), 2);
    assert!(plan.uncommitted.is_empty());
    f.git.discard(&wt, &plan).unwrap();
    assert!(!wt.path.exists());
    assert!(!f.branch_exists(&wt.branch));
    assert!(f.git.list(&f.repo).unwrap().is_empty());
    // The base is untouched.
    assert_eq!(f.head(&f.repo), base_head);
    assert_eq!(f.status(), "");
    assert!(!f.repo.join("c.txt").exists());
}

#[test]
fn discarding_an_untouched_worktree_loses_nothing() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    let plan = f.git.plan_discard(&wt).unwrap();
    assert!(!plan.loses_work());
    f.git.discard(&wt, &plan).unwrap();
    assert!(!wt.path.exists());
    assert!(!f.branch_exists(&wt.branch));
}

#[test]
fn a_worktree_folder_deleted_by_hand_can_still_be_discarded() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    write(&wt.path, "c.txt", "c\n");
    f.commit(&wt.path, "Add c");
    std::fs::remove_dir_all(&wt.path).unwrap();

    let listed = f.git.list(&f.repo).unwrap();
    assert_eq!(listed.len(), 1);
    let error = f.git.plan_merge(&listed[0]).unwrap_err();
    assert!(
        matches!(error, WorktreeError::WorktreeMissing(_)),
        "{error}"
    );
    assert!(error.to_string().contains("discard it"), "{error}");
    let plan = f.git.plan_discard(&listed[0]).unwrap();
    let subjects: Vec<_> = plan.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, vec!["Add c"]);
    assert!(plan.uncommitted.is_empty());
    f.git.discard(&listed[0], &plan).unwrap();
    assert!(!f.branch_exists(&wt.branch));
    assert!(f.git.list(&f.repo).unwrap().is_empty());
    assert_eq!(
        f.sh(&f.repo, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
}

#[cfg(unix)]
#[test]
fn a_merge_that_fails_halfway_is_aborted() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    write(&wt.path, "c.txt", "c\n");
    f.commit(&wt.path, "Add c");
    f.write("d.txt", "d\n");
    f.commit(&f.repo, "Add d");
    let main_head = f.head(&f.repo);
    // A hook of the user's that rejects the merge commit after git merged the files.
    let hook = f.repo.join(".git/hooks/pre-merge-commit");
    std::fs::write(&hook, "#!/bin/sh\necho 'no merges today' >&2\nexit 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let plan = f.git.plan_merge(&wt).unwrap();
    assert!(plan.can_merge(), "{:?}", plan.blockers);
    let error = f
        .git
        .merge(&wt, &plan, MergeOptions::default())
        .unwrap_err();
    assert!(matches!(error, WorktreeError::MergeFailed(_)), "{error}");
    assert!(error.to_string().contains("no merges today"), "{error}");
    // Put back as it was: same commit, no merge in progress, no merged file, nothing removed.
    assert_eq!(f.head(&f.repo), main_head);
    assert!(!f.sh_ok(&f.repo, &["rev-parse", "-q", "--verify", "MERGE_HEAD"]));
    assert_eq!(f.status(), "");
    assert!(!f.repo.join("c.txt").exists());
    assert!(wt.path.exists());
    assert!(f.branch_exists(&wt.branch));
}

#[test]
fn a_merge_the_user_has_in_progress_blocks_ours_and_is_left_alone() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    write(&wt.path, "c.txt", "c\n");
    f.commit(&wt.path, "Add c");
    // The user's own merge with a conflict, unresolved.
    f.sh(&f.repo, &["switch", "-q", "-c", "other"]);
    f.write("a.txt", "other\n");
    f.commit(&f.repo, "Other");
    f.sh(&f.repo, &["switch", "-q", "main"]);
    f.write("a.txt", "main\n");
    f.commit(&f.repo, "Main");
    assert!(!f.sh_ok(&f.repo, &["merge", "other"]));

    let plan = f.git.plan_merge(&wt).unwrap();
    let kinds: Vec<_> = plan.blockers.iter().map(|b| b.kind).collect();
    assert_eq!(kinds, vec![BlockerKind::BaseBusy]);
    assert!(
        plan.blockers[0]
            .message
            .contains("in the middle of a merge")
    );
    assert!(f.git.merge(&wt, &plan, MergeOptions::default()).is_err());
    // The user's merge is still there.
    assert!(f.sh_ok(&f.repo, &["rev-parse", "-q", "--verify", "MERGE_HEAD"]));
}

#[test]
fn a_deleted_base_branch_is_reported_and_discard_still_lists_the_commits() {
    let f = Fixture::new();
    f.sh(&f.repo, &["switch", "-q", "-c", "dev"]);
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    assert_eq!(wt.base, "dev");
    write(&wt.path, "c.txt", "c\n");
    f.commit(&wt.path, "Add c");
    f.sh(&f.repo, &["switch", "-q", "main"]);
    f.sh(&f.repo, &["branch", "-D", "dev"]);

    let error = f.git.diff(&wt).unwrap_err();
    assert!(
        matches!(error, WorktreeError::BaseBranchMissing(ref b) if b == "dev"),
        "{error}"
    );
    assert!(matches!(
        f.git.plan_merge(&wt),
        Err(WorktreeError::BaseBranchMissing(_))
    ));
    // Only the commit no other branch has is lost.
    let plan = f.git.plan_discard(&wt).unwrap();
    let subjects: Vec<_> = plan.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, vec!["Add c"]);
    f.git.discard(&wt, &plan).unwrap();
    assert!(!wt.path.exists());
}

#[test]
fn binary_files_are_flagged_in_the_diff() {
    let f = Fixture::new();
    let wt = f.git.create(&f.repo, CreateOptions::default()).unwrap();
    std::fs::write(wt.path.join("image.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    let diff = f.git.diff(&wt).unwrap();
    assert_eq!(
        diff.files,
        vec![FileChange {
            path: "image.bin".into(),
            old_path: None,
            status: ChangeStatus::Added,
            additions: 0,
            deletions: 0,
            binary: true,
        }]
    );
    assert!(
        diff.patch
            .contains("Binary files /dev/null and b/image.bin differ"),
        "{}",
        diff.patch
    );
}
