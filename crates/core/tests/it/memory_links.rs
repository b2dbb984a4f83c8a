//! Context files that are symbolic links, and imports, by where the file
//! was found (issue 33, item 5), on real folders and links: what
//! `load_memory` reads, what it skips, and the warning it gives. The
//! model-request side is tested through the CLI (gd-cli's
//! `context_links`).

use crate::common::memory_options;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use gd_core::memory::load_memory;

const SECRET: &str = "SECRET-MARKER-4b1d";

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A home with `~/.ssh/id_rsa` and a workspace `~/code/ws`.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().canonicalize().unwrap();
    let home = tmp.join("home");
    write(&home.join(".ssh/id_rsa"), SECRET);
    let ws = home.join("code/ws");
    fs::create_dir_all(&ws).unwrap();
    (dir, home, ws)
}

#[test]
fn the_global_file_may_link_anywhere_but_its_imports_stay_out_of_home() {
    let (_d, home, ws) = setup();
    // The user's dotfiles folder holds the real file (a common setup).
    write(
        &home.join("dotfiles/gemini.md"),
        "Global from dotfiles.\n@../.ssh/id_rsa\n",
    );
    fs::create_dir_all(home.join(".gemini")).unwrap();
    symlink(
        home.join("dotfiles/gemini.md"),
        home.join(".gemini/GEMINI.md"),
    )
    .unwrap();
    // A home folder kept in git made `~` the global file's project root.
    fs::create_dir_all(home.join(".git")).unwrap();
    let memory = load_memory(&memory_options(&ws, &home), std::slice::from_ref(&ws));
    assert!(
        memory.text.contains("Global from dotfiles."),
        "{}",
        memory.text
    );
    assert!(!memory.text.contains(SECRET), "{}", memory.text);
    assert!(
        memory.text.contains(
            "<!-- Import failed: ../.ssh/id_rsa - Path is outside the allowed directories -->"
        ),
        "{}",
        memory.text
    );
    assert_eq!(memory.warnings, Vec::<String>::new());
}

#[test]
fn a_workspace_file_linked_outside_is_skipped_with_a_warning() {
    let (_d, home, ws) = setup();
    symlink("../../.ssh/id_rsa", ws.join("GEMINI.md")).unwrap();
    let memory = load_memory(&memory_options(&ws, &home), std::slice::from_ref(&ws));
    assert!(!memory.text.contains(SECRET), "{}", memory.text);
    assert_eq!(
        memory.warnings,
        [format!(
            "Context file GEMINI.md skipped: it leads to {}, outside the workspace (a context file may lead only to a file in its own folder, its project or a workspace folder).",
            home.join(".ssh/id_rsa").display()
        )]
    );
    assert!(memory.files.is_empty());
}

#[test]
fn links_and_imports_inside_the_project_still_work() {
    let (_d, home, _) = setup();
    // A repository with the workspace one folder down: the root's
    // GEMINI.md links into the repository, the workspace's imports a file
    // beside the workspace, in the same repository.
    let repo = home.join("code/repo");
    let ws = repo.join("pkg");
    fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo.join("docs/ai.md"), "Repository rules.");
    symlink("docs/ai.md", repo.join("GEMINI.md")).unwrap();
    write(&repo.join("shared/style.md"), "Shared style.");
    write(&ws.join("GEMINI.md"), "Package.\n@../shared/style.md\n");
    // An import that is itself a link out of the repository is refused.
    symlink("../../../.ssh/id_rsa", repo.join("shared/key.md")).unwrap();
    write(
        &ws.join("more/GEMINI.md"),
        "Deeper.\n@../../shared/key.md\n",
    );
    let memory = load_memory(&memory_options(&ws, &home), std::slice::from_ref(&ws));
    for text in ["Repository rules.", "Package.", "Shared style.", "Deeper."] {
        assert!(memory.text.contains(text), "{text}: {}", memory.text);
    }
    assert!(!memory.text.contains(SECRET), "{}", memory.text);
    assert!(memory.text.contains(
        "<!-- Import failed: ../../shared/key.md - Path is outside the allowed directories -->"
    ));
    assert_eq!(memory.warnings, Vec::<String>::new());
}

#[test]
fn an_ancestor_file_may_not_link_above_its_own_folder_when_home_is_the_project() {
    let (_d, home, ws) = setup();
    // `~` under git: `~/code` is between the project root and the
    // workspace, so its GEMINI.md is read; it links to the key.
    fs::create_dir_all(home.join(".git")).unwrap();
    symlink("../.ssh/id_rsa", home.join("code/GEMINI.md")).unwrap();
    let memory = load_memory(&memory_options(&ws, &home), std::slice::from_ref(&ws));
    assert!(!memory.text.contains(SECRET), "{}", memory.text);
    assert_eq!(memory.warnings.len(), 1, "{:?}", memory.warnings);
    assert!(
        memory.warnings[0].starts_with("Context file ../GEMINI.md skipped: it leads to"),
        "{:?}",
        memory.warnings
    );
}
