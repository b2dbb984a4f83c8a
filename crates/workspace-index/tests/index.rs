//! The picker backend on real temporary trees: listings, the full index,
//! fuzzy ranking, live changes and token estimates.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use gd_workspace_index::{
    EntryKind, FileIndex, Filtering, IndexEvent, SearchUpdate, Watcher, estimate_selection,
    list_dir,
};

fn write(root: &Path, rel: &str, contents: &[u8]) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

/// A small git workspace: `.gitignore` hides `target/` and `*.log`,
/// `.geminiignore` hides `secret.txt`.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    fs::create_dir(root.join(".git")).unwrap();
    write(&root, ".gitignore", b"target/\n*.log\n");
    write(&root, ".geminiignore", b"secret.txt\n");
    write(&root, "src/main.rs", b"fn main() {}\n");
    write(&root, "src/domain/remaining.txt", b"left\n");
    write(&root, "docs/maintenance.md", b"# notes\n");
    write(&root, "README.md", b"hello world\n");
    write(&root, "Zeta.txt", b"z\n");
    write(&root, "build.log", b"log\n");
    write(&root, "secret.txt", b"s3cret\n");
    write(&root, "target/debug/app", b"\x7fELF\0\0\0");
    write(&root, "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    (dir, root)
}

fn names(entries: &[gd_workspace_index::Entry]) -> Vec<&str> {
    entries.iter().map(|e| e.name.as_str()).collect()
}

fn final_search(index: &FileIndex, query: &str, limit: usize) -> SearchUpdate {
    let mut last = None;
    index.search(query, limit, |update| {
        last = Some(update);
        true
    });
    let last = last.expect("a search reports at least once");
    assert!(last.done, "the last update of a finished search is final");
    last
}

#[test]
fn listing_is_one_level_dirs_first_and_ignore_aware() {
    let (_dir, root) = workspace();
    let entries = list_dir(&root, "", Filtering::default(), false).unwrap();
    assert_eq!(
        names(&entries),
        [
            "docs",
            "src",
            ".geminiignore",
            ".gitignore",
            "logo.png",
            "README.md",
            "Zeta.txt"
        ]
    );
    let png = entries.iter().find(|e| e.name == "logo.png").unwrap();
    assert!(png.binary && !png.ignored && png.kind == EntryKind::File);
    let readme = entries.iter().find(|e| e.name == "README.md").unwrap();
    assert!(!readme.binary && readme.size == 12);

    // With the toggle, ignored entries are listed and flagged.
    let all = list_dir(&root, "", Filtering::default(), true).unwrap();
    let ignored: Vec<&str> = all
        .iter()
        .filter(|e| e.ignored)
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(ignored, ["target", "build.log", "secret.txt"]);
    assert!(!all.iter().any(|e| e.name == ".git"));

    // Settings turn the rules off.
    let no_git = Filtering {
        respect_git_ignore: false,
        respect_gemini_ignore: true,
    };
    let entries = list_dir(&root, "", no_git, false).unwrap();
    assert!(names(&entries).contains(&"target") && !names(&entries).contains(&"secret.txt"));

    let sub = list_dir(&root, "src", Filtering::default(), false).unwrap();
    assert_eq!(
        sub.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(),
        ["src/domain", "src/main.rs"]
    );
}

#[test]
fn listing_flags_huge_files_and_refuses_bad_paths() {
    let (_dir, root) = workspace();
    write(&root, "big.txt", &vec![b'a'; 1024 * 1024 + 1]);
    let entries = list_dir(&root, "", Filtering::default(), false).unwrap();
    assert!(entries.iter().find(|e| e.name == "big.txt").unwrap().huge);
    assert!(!entries.iter().find(|e| e.name == "README.md").unwrap().huge);

    let err = list_dir(&root, "../etc", Filtering::default(), false).unwrap_err();
    assert!(err.to_string().contains("not a path inside"), "{err}");
    assert!(list_dir(&root, "/etc", Filtering::default(), false).is_err());
    let err = list_dir(&root, "README.md", Filtering::default(), false).unwrap_err();
    assert!(err.to_string().contains("not a folder"), "{err}");
    assert!(list_dir(&root, "missing", Filtering::default(), false).is_err());
}

#[test]
fn index_holds_every_visible_file_and_ranks_fuzzy_matches() {
    let (_dir, root) = workspace();
    let index = FileIndex::new(vec![root.clone()], Filtering::default());
    index.start_build();
    assert!(index.wait_built(Duration::from_secs(10)));
    assert!(index.contains("src/main.rs") && index.contains("src/domain/remaining.txt"));
    assert!(!index.contains("target/debug/app") && !index.contains("build.log"));
    assert!(!index.contains("secret.txt"));
    assert_eq!(
        index.len(),
        8,
        "{:?}",
        final_search(&index, "", 100).matches
    );

    // The file named `main` beats paths that only contain the letters.
    let result = final_search(&index, "main", 10);
    let paths: Vec<&str> = result.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths[0], "src/main.rs", "{paths:?}");
    assert!(paths.contains(&"docs/maintenance.md"), "{paths:?}");
    assert_eq!(result.matches[0].indices, [4, 5, 6, 7]);
    assert!(result.matches[0].score >= result.matches[1].score);

    // Fuzzy: letters in order across the path.
    let result = final_search(&index, "sdrem", 10);
    assert_eq!(result.matches[0].path, "src/domain/remaining.txt");
    assert!(final_search(&index, "qqqxxx", 10).matches.is_empty());
    // The limit cuts the list but not the count.
    let result = final_search(&index, "e", 2);
    assert!(
        result.matches.len() == 2 && result.matched > 2,
        "{result:?}"
    );
}

#[test]
fn a_search_streams_while_the_index_builds() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for d in 0..40 {
        for f in 0..250 {
            write(&root, &format!("d{d:02}/file{f:03}.rs"), b"x");
        }
    }
    let index = FileIndex::new(vec![root], Filtering::default());
    index.start_build();
    let mut updates = Vec::new();
    index.search("file007", 5, |update| {
        updates.push(update);
        true
    });
    let last = updates.last().unwrap();
    assert!(last.done && last.indexed == 10_000, "{last:?}");
    assert_eq!(last.matches.len(), 5);
    assert!(last.matches.iter().all(|m| m.path.ends_with("file007.rs")));
}

/// Waits up to a second for events until `done` says the wanted state was
/// seen; returns every event received.
fn events_until(
    rx: &Receiver<IndexEvent>,
    mut done: impl FnMut(&[IndexEvent]) -> bool,
) -> Vec<IndexEvent> {
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut seen = Vec::new();
    while !done(&seen) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(event) => seen.push(event),
            Err(_) => panic!("not seen within a second; events: {seen:?}"),
        }
    }
    seen
}

fn added(events: &[IndexEvent]) -> Vec<String> {
    events
        .iter()
        .flat_map(|e| match e {
            IndexEvent::Changed { added, .. } => added.clone(),
            _ => vec![],
        })
        .collect()
}

fn removed(events: &[IndexEvent]) -> Vec<String> {
    events
        .iter()
        .flat_map(|e| match e {
            IndexEvent::Changed { removed, .. } => removed.clone(),
            _ => vec![],
        })
        .collect()
}

#[test]
fn live_creates_renames_and_deletes_are_seen_within_a_second() {
    let (_dir, root) = workspace();
    let index = FileIndex::new(vec![root.clone()], Filtering::default());
    index.start_build();
    assert!(index.wait_built(Duration::from_secs(10)));
    let _watcher = Watcher::new(&index).unwrap();
    let rx = index.subscribe();

    // Create.
    write(&root, "src/new_module.rs", b"pub fn x() {}\n");
    events_until(&rx, |e| added(e).contains(&"src/new_module.rs".to_owned()));
    assert!(index.contains("src/new_module.rs"));
    assert_eq!(
        final_search(&index, "newmod", 5).matches[0].path,
        "src/new_module.rs"
    );

    // Rename.
    fs::rename(root.join("src/new_module.rs"), root.join("src/renamed.rs")).unwrap();
    events_until(&rx, |e| {
        removed(e).contains(&"src/new_module.rs".to_owned())
            && added(e).contains(&"src/renamed.rs".to_owned())
    });
    assert!(!index.contains("src/new_module.rs") && index.contains("src/renamed.rs"));
    let result = final_search(&index, "newmod", 5);
    assert!(
        result.matches.iter().all(|m| m.path != "src/new_module.rs"),
        "{result:?}"
    );

    // Delete.
    fs::remove_file(root.join("src/renamed.rs")).unwrap();
    events_until(&rx, |e| removed(e).contains(&"src/renamed.rs".to_owned()));
    assert!(!index.contains("src/renamed.rs"));

    // A new folder with files, and a folder deleted with its files.
    write(&root, "pkg/a/lib.rs", b"x");
    events_until(&rx, |e| added(e).contains(&"pkg/a/lib.rs".to_owned()));
    fs::remove_dir_all(root.join("src/domain")).unwrap();
    let events = events_until(&rx, |e| {
        removed(e).contains(&"src/domain/remaining.txt".to_owned())
    });
    assert!(
        events.iter().any(
            |e| matches!(e, IndexEvent::Changed { dirs, .. } if dirs.contains(&"src".to_owned()))
        ),
        "{events:?}"
    );
    assert!(!index.contains("src/domain/remaining.txt"));

    // Ignored files do not enter the index.
    write(&root, "target/debug/new.bin", b"x");
    write(&root, "run.log", b"x");
    write(&root, "marker.txt", b"x");
    let events = events_until(&rx, |e| added(e).contains(&"marker.txt".to_owned()));
    assert_eq!(added(&events), ["marker.txt"]);
    assert!(!index.contains("run.log") && !index.contains("target/debug/new.bin"));
}

#[test]
fn editing_an_ignore_file_rebuilds_the_index() {
    let (_dir, root) = workspace();
    let index = FileIndex::new(vec![root.clone()], Filtering::default());
    index.start_build();
    assert!(index.wait_built(Duration::from_secs(10)));
    let _watcher = Watcher::new(&index).unwrap();
    let rx = index.subscribe();
    write(&root, ".geminiignore", b"secret.txt\ndocs/\n");
    events_until(&rx, |e| {
        e.iter().any(|e| matches!(e, IndexEvent::Built { .. }))
    });
    assert!(!index.contains("docs/maintenance.md") && index.contains("src/main.rs"));
    let result = final_search(&index, "maintenance", 5);
    assert!(result.matches.is_empty(), "{result:?}");
}

#[test]
fn include_directories_are_indexed_by_absolute_path() {
    let (_dir, root) = workspace();
    let other = tempfile::tempdir().unwrap();
    let other_root = other.path().canonicalize().unwrap();
    write(&other_root, "lib/shared.rs", b"x");
    let index = FileIndex::new(vec![root, other_root.clone()], Filtering::default());
    index.start_build();
    assert!(index.wait_built(Duration::from_secs(10)));
    let key = other_root
        .join("lib/shared.rs")
        .to_string_lossy()
        .into_owned();
    assert!(index.contains(&key));
    assert_eq!(final_search(&index, "shared", 5).matches[0].path, key);
}

#[test]
fn token_estimates_count_text_and_flag_binary_and_huge_files() {
    let (_dir, root) = workspace();
    write(&root, "big.txt", &vec![b'a'; 2 * 1024 * 1024]);
    let roots = vec![root.clone()];
    let paths = [
        "README.md",
        "logo.png",
        "big.txt",
        "src",
        "missing.rs",
        "../x",
    ]
    .map(String::from);
    let estimate = estimate_selection(&roots, &paths, Filtering::default());
    let items = &estimate.items;
    assert_eq!(items[0].tokens, 3, "12 bytes / 4");
    assert_eq!((items[1].binary_files, items[1].tokens), (1, 258));
    assert_eq!((items[2].huge_files, items[2].tokens), (1, 512 * 1024));
    assert_eq!(items[3].files, 2, "{:?}", items[3]);
    assert!(items[4].error.is_some() && items[5].error.is_some());
    assert_eq!(estimate.tokens, items.iter().map(|i| i.tokens).sum::<u64>());
}
