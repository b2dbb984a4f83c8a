//! The bounds on memory imports: a file is included a bounded number of
//! times, every file is read once, and the whole memory is capped, with a
//! warning naming the file where a bound was hit — while ordinary import
//! trees (a diamond, a cycle) load exactly as before.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::*;
use gd_core::config::FileFiltering;
use gd_core::memory::{
    DiscoveryOptions, ImportBudget, MAX_INCLUDES_PER_FILE, MAX_MEMORY_BYTES, load_memory,
    load_memory_with,
};
use gd_protocol::Event;
use pretty_assertions::assert_eq;
use serde_json::json;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn real_tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

/// Discovery of `GEMINI.md` in `ws` only (no home directory).
fn options(ws: &Path) -> DiscoveryOptions {
    DiscoveryOptions {
        workspace: ws.to_path_buf(),
        home: None,
        file_names: vec!["GEMINI.md".into()],
        max_dirs: 200,
        filtering: FileFiltering::default(),
        workspace_files: true,
        boundary_markers: None,
        include_directories: false,
    }
}

/// The explosion of the report: `GEMINI.md` imports `b.md` sixteen times,
/// `b.md` imports `c.md` sixteen times, … down to `f.md`: six files under
/// 1 KB, five levels, 16⁵ inclusions when nothing bounds them.
fn write_explosion(dir: &Path) {
    let names = ["GEMINI.md", "b.md", "c.md", "d.md", "e.md", "f.md"];
    for (i, name) in names.iter().enumerate() {
        let mut text = format!("# {name}\nSome guidance from {name}.\n");
        if let Some(next) = names.get(i + 1) {
            text.push_str(&format!("@./{next}\n").repeat(16));
        }
        assert!(text.len() < 1024);
        write(&dir.join(name), &text);
    }
}

#[test]
fn an_import_explosion_is_bounded_and_the_warning_names_the_file() {
    let (_d, ws) = real_tempdir();
    write_explosion(&ws);
    let memory = load_memory(&options(&ws), std::slice::from_ref(&ws));
    // Each of the six files is read once; each of the five imported ones
    // is included the bounded number of times, no more.
    assert_eq!(memory.file_reads, 6);
    assert_eq!(memory.includes, 5 * MAX_INCLUDES_PER_FILE);
    assert!(memory.text.len() < 64 * 1024, "{} bytes", memory.text.len());
    for name in ["b.md", "c.md", "d.md", "e.md", "f.md"] {
        let included = memory
            .text
            .matches(&format!("Some guidance from {name}."))
            .count();
        assert_eq!(included, MAX_INCLUDES_PER_FILE, "{name}");
    }
    assert!(
        memory
            .text
            .contains("<!-- File already included often enough: ./b.md -->")
    );
    // One warning per repeated file, naming it and the file importing it.
    assert_eq!(memory.warnings.len(), 5, "{:#?}", memory.warnings);
    let b = ws.join("b.md").display().to_string();
    let about_b: Vec<&String> = memory
        .warnings
        .iter()
        .filter(|w| w.contains(&format!("import {b} ")))
        .collect();
    assert_eq!(about_b.len(), 1, "{:#?}", memory.warnings);
    assert!(
        about_b[0].contains(&format!("first in {}", ws.join("GEMINI.md").display())),
        "{}",
        about_b[0]
    );
    // The tree holds the inclusions only.
    fn count(nodes: &[gd_core::memory::ImportNode]) -> usize {
        nodes.iter().map(|n| 1 + count(&n.imports)).sum()
    }
    assert_eq!(count(&memory.files[0].imports), 5 * MAX_INCLUDES_PER_FILE);
}

#[test]
fn a_diamond_includes_the_shared_file_on_both_branches_as_gemini_cli_does() {
    let (_d, ws) = real_tempdir();
    write(&ws.join("GEMINI.md"), "A\n@./b.md\n@./c.md");
    write(&ws.join("b.md"), "B @./d.md");
    write(&ws.join("c.md"), "C @./d.md");
    write(&ws.join("d.md"), "D");
    let memory = load_memory(&options(&ws), std::slice::from_ref(&ws));
    let d = "<!-- Imported from: ./d.md -->\nD\n<!-- End of import from: ./d.md -->";
    assert_eq!(
        memory.text,
        format!(
            "--- Context from: GEMINI.md ---\nA\n\
             <!-- Imported from: ./b.md -->\nB {d}\n<!-- End of import from: ./b.md -->\n\
             <!-- Imported from: ./c.md -->\nC {d}\n<!-- End of import from: ./c.md -->\n\
             --- End of Context from: GEMINI.md ---"
        )
    );
    assert!(memory.warnings.is_empty(), "{:?}", memory.warnings);
    assert_eq!(memory.file_reads, 4);
    assert_eq!(memory.includes, 4);
}

#[test]
fn a_shared_file_counts_afresh_for_each_context_file() {
    let (_d, ws) = real_tempdir();
    fs::create_dir(ws.join(".git")).unwrap();
    write(&ws.join("shared.md"), "SHARED");
    let imports = "@../shared.md\n".repeat(MAX_INCLUDES_PER_FILE);
    for sub in ["one", "two"] {
        write(&ws.join(sub).join("GEMINI.md"), &imports);
    }
    let memory = load_memory(&options(&ws), std::slice::from_ref(&ws));
    assert_eq!(
        memory.text.matches("SHARED").count(),
        2 * MAX_INCLUDES_PER_FILE
    );
    assert!(memory.warnings.is_empty(), "{:?}", memory.warnings);
    // …and is read from disk once.
    assert_eq!(memory.file_reads, 3);
}

#[test]
fn cycles_with_fan_out_still_stop() {
    let (_d, ws) = real_tempdir();
    write(&ws.join("GEMINI.md"), &"@./b.md\n".repeat(3));
    write(
        &ws.join("b.md"),
        &format!("B\n{}", "@./GEMINI.md\n".repeat(16)),
    );
    let memory = load_memory(&options(&ws), std::slice::from_ref(&ws));
    assert_eq!(memory.includes, 3);
    assert_eq!(
        memory
            .text
            .matches("<!-- File already processed: ./GEMINI.md -->")
            .count(),
        48
    );
}

#[test]
fn the_cap_cuts_the_memory_and_names_the_file_where_it_was_reached() {
    let (_d, ws) = real_tempdir();
    fs::create_dir(ws.join(".git")).unwrap();
    // big.md fits once, not twice.
    write(
        &ws.join("GEMINI.md"),
        "Top.\n@./big.md\n@./big.md\nAfter the big file.",
    );
    write(&ws.join("big.md"), &"0123456789abcdef\n".repeat(180));
    write(&ws.join("later/GEMINI.md"), "Later file.");
    let cap = 4096;
    let memory = load_memory_with(
        &options(&ws),
        std::slice::from_ref(&ws),
        ImportBudget::new(cap, MAX_INCLUDES_PER_FILE),
    );
    let marker = "\n<!-- Memory limit reached: the rest of the memory was left out -->";
    assert!(
        memory.text.len() <= cap + marker.len(),
        "{} bytes",
        memory.text.len()
    );
    assert!(
        memory
            .text
            .starts_with("--- Context from: GEMINI.md ---\nTop.\n")
    );
    assert!(memory.text.contains(marker));
    assert_eq!(
        memory
            .text
            .matches("<!-- Imported from: ./big.md -->")
            .count(),
        2
    );
    assert!(!memory.text.contains("After the big file."));
    assert!(!memory.text.contains("Later file."));
    assert_eq!(memory.warnings.len(), 2, "{:#?}", memory.warnings);
    let big = ws.join("big.md").display().to_string();
    assert!(memory.warnings[0].contains(&big), "{}", memory.warnings[0]);
    assert!(
        memory.warnings[0].contains("4 KiB"),
        "{}",
        memory.warnings[0]
    );
    assert!(
        memory.warnings[1].contains("later/GEMINI.md"),
        "{}",
        memory.warnings[1]
    );
    assert_eq!(memory.files.len(), 1);
}

#[test]
fn a_file_larger_than_the_whole_cap_is_not_read_and_is_reported() {
    let (_d, ws) = real_tempdir();
    write(&ws.join("GEMINI.md"), "Top.\n@./huge.md\nAfter.");
    let huge = fs::File::create(ws.join("huge.md")).unwrap();
    huge.set_len(MAX_MEMORY_BYTES as u64 + 1).unwrap();
    let memory = load_memory(&options(&ws), std::slice::from_ref(&ws));
    assert!(memory.text.contains(
        "<!-- Import failed: ./huge.md - File is larger than the memory limit of 256 KiB -->"
    ));
    assert!(memory.text.contains("After."));
    assert_eq!(memory.warnings.len(), 1);
    let huge = ws.join("huge.md").display().to_string();
    assert!(memory.warnings[0].contains(&huge), "{}", memory.warnings[0]);
}

#[cfg(unix)]
#[test]
fn a_fifo_is_not_read() {
    let (_d, ws) = real_tempdir();
    write(&ws.join("GEMINI.md"), "@./pipe.md");
    let status = std::process::Command::new("mkfifo")
        .arg(ws.join("pipe.md"))
        .status()
        .unwrap();
    assert!(status.success());
    // Reading a FIFO nobody writes to would block forever.
    let memory = load_memory(&options(&ws), std::slice::from_ref(&ws));
    assert!(
        memory
            .text
            .contains("<!-- Import failed: ./pipe.md - Not a regular file -->"),
        "{}",
        memory.text
    );
}

#[tokio::test]
async fn the_session_reports_the_bound_as_a_warning() {
    let (_home_dir, home) = real_tempdir();
    write_explosion(&home.join(".gemini"));
    let mut h = Harness::start_with(json!({"steps": [{"text": "ok"}]}), move |config| {
        config.memory = Some(DiscoveryOptions {
            home: Some(home),
            ..options(&config.workspace_dirs[0])
        });
    });
    let mut warnings = Vec::new();
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(10), h.events.recv())
            .await
            .expect("no MemoryLoaded event")
            .expect("session ended");
        match event {
            Event::Warning { message } => warnings.push(message),
            Event::MemoryLoaded { .. } => break,
            _ => {}
        }
    }
    assert_eq!(warnings.len(), 5, "{warnings:#?}");
    assert!(
        warnings.iter().any(|w| w.contains("/.gemini/b.md")),
        "{warnings:#?}"
    );
}
