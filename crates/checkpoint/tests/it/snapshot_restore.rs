//! Snapshot and restore with the real `git` binary on real folders.

use crate::common;

use std::collections::BTreeMap;

use common::{Fixture, edit_meta, tree_paths};
use gd_checkpoint::{ChangeKind, CheckpointError, CheckpointKind, FileChange, ShadowRepo};
use pretty_assertions::assert_eq;
use sha2::{Digest, Sha256};

/// Everything about the project's own repository that we must not change.
fn project_state(fx: &Fixture) -> (String, String, String, BTreeMap<String, String>) {
    // Read the files first: `git status` below may refresh the index.
    let git_dir = fx.root().join(".git");
    let index = std::fs::read(git_dir.join("index")).unwrap();
    let index = format!("{:x}", Sha256::digest(&index));
    // Every file under .git with its content hash.
    let mut files = BTreeMap::new();
    for entry in walk(&git_dir) {
        let bytes = std::fs::read(&entry).unwrap();
        files.insert(
            entry.strip_prefix(&git_dir).unwrap().display().to_string(),
            format!("{:x}", Sha256::digest(&bytes)),
        );
    }
    let head = fx.project_git(&["rev-parse", "HEAD"]);
    let status = fx.project_git(&["status", "--porcelain=v1", "-uall"]);
    (head, status, index, files)
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn change(path: &str, kind: ChangeKind) -> FileChange {
    FileChange {
        path: path.into(),
        kind,
    }
}

#[test]
fn restore_in_a_git_repository_leaves_the_projects_git_untouched() {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\n");
    fx.write("src/main.rs", "fn main() {}\n");
    fx.write("src/lib.rs", "pub fn a() {}\n");
    fx.write("README.md", "hello\n");
    fx.project_git(&["init", "-q"]);
    fx.project_git(&["add", "-A"]);
    fx.project_git(&["commit", "-q", "-m", "first"]);
    // Some uncommitted work, staged and not.
    fx.write("src/lib.rs", "pub fn a() { /* wip */ }\n");
    fx.write("notes.txt", "untracked notes\n");
    fx.write("build.log", "ignored\n");
    // `git status` refreshes the project's index: do it before measuring.
    fx.project_git(&["status"]);
    let before = project_state(&fx);

    let repo = fx.open();
    assert!(
        !repo.git_dir().starts_with(fx.root()),
        "the shadow repository is outside the project"
    );
    let checkpoint = repo
        .snapshot(&edit_meta("replace", &["src/main.rs"]))
        .unwrap();
    assert_eq!(checkpoint.kind, CheckpointKind::Full);
    assert_eq!(
        tree_paths(&repo, &checkpoint.commit),
        vec![
            ".gitignore",
            "README.md",
            "notes.txt",
            "src/lib.rs",
            "src/main.rs"
        ],
        "ignored files and .git are not snapshotted"
    );

    // The agent edits, creates and deletes files.
    fx.write("src/main.rs", "fn main() { println!(\"changed\"); }\n");
    fx.write("src/new/mod.rs", "// new\n");
    fx.remove("README.md");
    fx.write("build.log", "ignored, changed\n");

    assert_eq!(
        repo.diff(&checkpoint.id).unwrap(),
        vec![
            change("README.md", ChangeKind::Recreate),
            change("src/main.rs", ChangeKind::Revert),
            change("src/new/mod.rs", ChangeKind::Remove),
        ]
    );
    let report = repo.restore(&checkpoint.id).unwrap();
    assert_eq!(report.changes.len(), 3);
    assert_eq!(fx.read("src/main.rs").unwrap(), "fn main() {}\n");
    assert_eq!(fx.read("README.md").unwrap(), "hello\n");
    assert!(
        !fx.exists("src/new/mod.rs"),
        "a file created after the checkpoint is removed"
    );
    assert!(!fx.exists("src/new"), "and its now empty directory");
    assert_eq!(fx.read("src/lib.rs").unwrap(), "pub fn a() { /* wip */ }\n");
    assert_eq!(fx.read("notes.txt").unwrap(), "untracked notes\n");
    assert_eq!(
        fx.read("build.log").unwrap(),
        "ignored, changed\n",
        "ignored files are never touched"
    );

    let after = project_state(&fx);
    assert_eq!(
        after, before,
        "the project's HEAD, index, status and .git are unchanged"
    );

    // The restore can be undone.
    let undo = report.undo.expect("an undo checkpoint");
    let undo_meta = repo.get(&undo).unwrap().meta;
    assert_eq!(undo_meta.session_id, None);
    assert_eq!(
        undo_meta.label.as_deref(),
        Some(format!("before restoring {}", checkpoint.id).as_str())
    );
    // Restored for a session, the undo snapshot is that session's.
    let redo = repo.restore_in_session(&undo, Some("s1")).unwrap();
    let redo_meta = repo.get(&redo.undo.unwrap()).unwrap().meta;
    assert_eq!(redo_meta.session_id.as_deref(), Some("s1"));
    assert_eq!(
        fx.read("src/main.rs").unwrap(),
        "fn main() { println!(\"changed\"); }\n"
    );
    assert!(fx.exists("src/new/mod.rs"));
    assert!(!fx.exists("README.md"));
}

#[test]
fn restore_in_a_folder_that_is_not_a_repository() {
    let fx = Fixture::new();
    fx.write("a.txt", "a1\n");
    fx.write("dir/b.txt", "b1\n");
    let repo = fx.open();
    let first = repo.snapshot(&edit_meta("write_file", &["a.txt"])).unwrap();
    fx.write("a.txt", "a2\n");
    fx.remove("dir/b.txt");
    fx.write("c.txt", "c\n");
    let second = repo.snapshot(&edit_meta("write_file", &["c.txt"])).unwrap();

    let list = repo.list().unwrap();
    assert_eq!(
        list.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        vec![second.id.as_str(), first.id.as_str()],
        "newest first"
    );
    assert_eq!(list[1].meta, edit_meta("write_file", &["a.txt"]));

    repo.restore(&first.id).unwrap();
    assert_eq!(fx.read("a.txt").unwrap(), "a1\n");
    assert_eq!(
        fx.read("dir/b.txt").unwrap(),
        "b1\n",
        "a deleted file comes back"
    );
    assert!(!fx.exists("c.txt"));
    assert!(
        !fx.root().join(".git").exists(),
        "no repository appears in the folder"
    );

    repo.restore(&second.id).unwrap();
    assert_eq!(fx.read("a.txt").unwrap(), "a2\n");
    assert!(!fx.exists("dir/b.txt"));
    assert_eq!(fx.read("c.txt").unwrap(), "c\n");
}

#[test]
fn ignore_rules_are_honoured_and_ignored_files_never_touched() {
    let fx = Fixture::new();
    fx.write(".gitignore", "target/\n*.tmp\n");
    fx.write(".geminiignore", "secrets.txt\n");
    fx.write("sub/.gitignore", "local.cache\n");
    fx.write("src/a.rs", "a\n");
    fx.write("target/out.bin", "build output\n");
    fx.write("x.tmp", "temp\n");
    fx.write("secrets.txt", "hunter2\n");
    fx.write("sub/local.cache", "cache\n");
    fx.write("sub/kept.txt", "kept\n");
    let repo = fx.open();
    let checkpoint = repo.snapshot(&edit_meta("replace", &["src/a.rs"])).unwrap();
    assert_eq!(
        tree_paths(&repo, &checkpoint.commit),
        vec![
            ".geminiignore",
            ".gitignore",
            "src/a.rs",
            "sub/.gitignore",
            "sub/kept.txt"
        ]
    );
    // Ignored files change, appear and disappear: a restore leaves them be.
    fx.write("target/out.bin", "rebuilt\n");
    fx.write("target/new.bin", "new\n");
    fx.remove("x.tmp");
    fx.write("secrets.txt", "changed\n");
    fx.write("src/a.rs", "a2\n");
    repo.restore(&checkpoint.id).unwrap();
    assert_eq!(fx.read("src/a.rs").unwrap(), "a\n");
    assert_eq!(fx.read("target/out.bin").unwrap(), "rebuilt\n");
    assert_eq!(fx.read("target/new.bin").unwrap(), "new\n");
    assert!(!fx.exists("x.tmp"));
    assert_eq!(fx.read("secrets.txt").unwrap(), "changed\n");
    assert_eq!(fx.read("sub/local.cache").unwrap(), "cache\n");
}

#[test]
fn files_over_the_size_limit_are_skipped_and_left_alone() {
    let mut fx = Fixture::new();
    fx.config.max_file_bytes = 1000;
    fx.write("small.txt", "small\n");
    fx.write("big.bin", &"x".repeat(2000));
    let repo = fx.open();
    let checkpoint = repo
        .snapshot(&edit_meta("write_file", &["small.txt"]))
        .unwrap();
    assert_eq!(checkpoint.skipped, vec!["big.bin".to_owned()]);
    assert_eq!(tree_paths(&repo, &checkpoint.commit), vec!["small.txt"]);
    // Listed again from the stored metadata.
    assert_eq!(
        repo.get(&checkpoint.id).unwrap().skipped,
        vec!["big.bin".to_owned()]
    );

    fx.write("big.bin", &"y".repeat(3000));
    fx.write("small.txt", "changed\n");
    repo.restore(&checkpoint.id).unwrap();
    assert_eq!(fx.read("small.txt").unwrap(), "small\n");
    assert_eq!(
        fx.read("big.bin").unwrap(),
        "y".repeat(3000),
        "a skipped file is not touched"
    );

    // A file that grows over the limit leaves the snapshots from then on.
    fx.write("small.txt", &"z".repeat(1500));
    let grown = repo
        .snapshot(&edit_meta("write_file", &["small.txt"]))
        .unwrap();
    assert!(tree_paths(&repo, &grown.commit).is_empty());
    assert_eq!(
        grown.skipped,
        vec!["big.bin".to_owned(), "small.txt".to_owned()]
    );
}

#[test]
fn partial_checkpoints_cover_the_touched_files() {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\n");
    fx.write("a.txt", "a1\n");
    fx.write("other.txt", "o1\n");
    fx.write("x.log", "log\n");
    let repo = fx.open();
    let checkpoint = repo
        .snapshot_files(&edit_meta(
            "write_file",
            &["a.txt", "new/b.txt", "x.log", "../escape"],
        ))
        .unwrap();
    assert_eq!(checkpoint.kind, CheckpointKind::Partial);
    assert_eq!(checkpoint.meta.files, vec!["a.txt", "new/b.txt"]);
    assert_eq!(checkpoint.skipped, vec!["../escape", "x.log"]);
    assert_eq!(tree_paths(&repo, &checkpoint.commit), vec!["a.txt"]);

    fx.write("a.txt", "a2\n");
    fx.write("new/b.txt", "created\n");
    fx.write("other.txt", "o2\n");
    fx.write("x.log", "log2\n");
    assert_eq!(
        repo.diff(&checkpoint.id).unwrap(),
        vec![
            change("a.txt", ChangeKind::Revert),
            change("new/b.txt", ChangeKind::Remove)
        ]
    );
    let report = repo.restore(&checkpoint.id).unwrap();
    assert_eq!(report.changes.len(), 2);
    assert_eq!(fx.read("a.txt").unwrap(), "a1\n");
    assert!(!fx.exists("new/b.txt"));
    assert!(!fx.exists("new"), "and the directory it was created in");
    assert_eq!(
        fx.read("other.txt").unwrap(),
        "o2\n",
        "files outside a partial checkpoint stay"
    );
    assert_eq!(fx.read("x.log").unwrap(), "log2\n");
    // Undo brings the edit back.
    repo.restore(&report.undo.unwrap()).unwrap();
    assert_eq!(fx.read("a.txt").unwrap(), "a2\n");
    assert_eq!(fx.read("new/b.txt").unwrap(), "created\n");
}

#[test]
fn bad_ids_are_clear_errors() {
    let fx = Fixture::new();
    fx.write("a.txt", "a\n");
    let repo = fx.open();
    assert!(matches!(
        repo.restore("../../HEAD"),
        Err(CheckpointError::InvalidId(_))
    ));
    let err = repo.restore("20990101T000000000Z-deadbeef").unwrap_err();
    assert!(matches!(err, CheckpointError::NotFound(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "no checkpoint 20990101T000000000Z-deadbeef"
    );
}

#[test]
fn one_shadow_repository_per_workspace_reused_across_opens() {
    let fx = Fixture::new();
    fx.write("a.txt", "a\n");
    let first = fx.open();
    let checkpoint = first
        .snapshot(&edit_meta("write_file", &["a.txt"]))
        .unwrap();
    drop(first);
    let again = fx.open();
    assert_eq!(again.list().unwrap()[0].id, checkpoint.id);
    assert_eq!(
        again.git_dir(),
        ShadowRepo::dir_for(&fx.config.root, &fx.root())
    );
    let other = Fixture::new();
    let other_dir = ShadowRepo::dir_for(&fx.config.root, &other.root());
    assert_ne!(other_dir, again.git_dir());
}

#[test]
fn a_stale_lock_from_a_killed_process_is_cleared_on_open() {
    let fx = Fixture::new();
    fx.write("a.txt", "a\n");
    let repo = fx.open();
    let lock = repo.git_dir().join("index.lock");
    std::fs::write(&lock, "").unwrap();
    // A fresh lock may belong to a live snapshot: kept, and the error is clear.
    let err = fx
        .open()
        .snapshot(&edit_meta("write_file", &["a.txt"]))
        .unwrap_err();
    assert!(err.to_string().contains("index.lock"), "{err}");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    fx.open()
        .snapshot(&edit_meta("write_file", &["a.txt"]))
        .unwrap();
    assert!(!lock.exists());
}

#[test]
fn sessions_on_the_same_folder_share_one_repository() {
    let fx = Fixture::new();
    fx.write("a.txt", "a\n");
    let one = ShadowRepo::shared(&fx.config, fx.workspace.path()).unwrap();
    let two = ShadowRepo::shared(&fx.config, &fx.root().join(".")).unwrap();
    assert!(std::sync::Arc::ptr_eq(&one, &two));
    // Concurrent snapshots queue on the shared lock instead of failing on
    // git's index.lock.
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let repo = if i % 2 == 0 { one.clone() } else { two.clone() };
            std::thread::spawn(move || repo.snapshot(&edit_meta("write_file", &["a.txt"])))
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    assert_eq!(one.list().unwrap().len(), 4);
}

#[test]
fn a_folder_inside_a_repository_honours_the_parent_ignore_rules() {
    let fx = Fixture::new();
    fx.write(".gitignore", "node_modules/\n/top-only\nweb/dist/\n*.log\n");
    fx.write(".git/info/exclude", "local-notes.txt\n");
    fx.write("web/src/app.js", "app\n");
    fx.write("web/node_modules/dep/index.js", "dep\n");
    fx.write("web/dist/bundle.js", "bundle\n");
    fx.write(
        "web/top-only",
        "kept: the rule is anchored at the repository root\n",
    );
    fx.write("web/debug.log", "log\n");
    fx.write("web/local-notes.txt", "notes\n");
    fx.project_git(&["init", "-q"]);
    let repo = ShadowRepo::open(&fx.config, &fx.root().join("web")).unwrap();
    let checkpoint = repo
        .snapshot(&edit_meta("write_file", &["src/app.js"]))
        .unwrap();
    assert_eq!(
        tree_paths(&repo, &checkpoint.commit),
        vec!["src/app.js", "top-only"]
    );
}
