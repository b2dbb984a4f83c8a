//! A partial restore writes and removes files inside the workspace only:
//! a folder of the workspace that became a symbolic link to somewhere else
//! after the checkpoint (the agent can make one with a shell command) must
//! not carry the restore's writes or removals out of the workspace. The
//! restore is refused with an error naming the link, and nothing changes.

#![cfg(unix)]

use crate::common;

use std::os::unix::fs::symlink;

use common::{Fixture, edit_meta};

#[test]
fn a_restore_does_not_write_through_a_folder_turned_into_a_link() {
    let fx = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("a.txt"), "outside\n").unwrap();
    fx.write("sub/a.txt", "a1\n");
    let repo = fx.open();
    let checkpoint = repo
        .snapshot_files(&edit_meta("write_file", &["sub/a.txt"]))
        .unwrap();

    std::fs::remove_dir_all(fx.root().join("sub")).unwrap();
    symlink(outside.path(), fx.root().join("sub")).unwrap();
    let error = repo.restore(&checkpoint.id).unwrap_err().to_string();

    assert!(error.contains("symbolic link"), "{error}");
    assert!(error.contains("sub"), "{error}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("a.txt")).unwrap(),
        "outside\n",
        "the restore wrote outside the workspace"
    );
}

#[test]
fn a_restore_does_not_remove_through_a_folder_turned_into_a_link() {
    let fx = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("b.txt"), "keep me\n").unwrap();
    fx.write("a.txt", "a\n");
    let repo = fx.open();
    // `new/b.txt` did not exist at the checkpoint: restoring removes it.
    let checkpoint = repo
        .snapshot_files(&edit_meta("write_file", &["new/b.txt"]))
        .unwrap();
    symlink(outside.path(), fx.root().join("new")).unwrap();
    let error = repo.restore(&checkpoint.id).unwrap_err().to_string();

    assert!(error.contains("symbolic link"), "{error}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("b.txt")).unwrap(),
        "keep me\n",
        "the restore removed a file outside the workspace"
    );
}
