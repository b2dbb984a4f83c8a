//! `grep_search`'s unit tests (a file of their own: grep.rs stays readable).

use super::*;
use crate::tools::Tool;
use crate::tools::test_support::{text, workspace};
use std::fs;
use std::path::Path;

fn write(root: &Path, path: &str, contents: impl AsRef<[u8]>) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

async fn run(root: &Path, args: Value) -> ToolResult {
    GrepTool::new()
        .execute(args, &ToolContext::new(vec![root.to_path_buf()]))
        .await
}

fn rust_tree() -> (tempfile::TempDir, PathBuf) {
    let (guard, root) = workspace();
    let mut main = String::from("fn main() {\n");
    for _ in 0..8 {
        main.push_str("    let x = 1;\n");
    }
    main.push_str("fn main_loop() {\n");
    write(&root, "src/main.rs", main);
    write(&root, "src/bin/x.rs", "// x\n\n\nfn main() {\n}\n");
    write(&root, "src/lib.ts", "function main() {}\n");
    write(&root, "README.md", "Call fn main to start.\n");
    (guard, root)
}

/// Small files are read whole and searched in memory; a UTF-16 file (BOM)
/// is still transcoded, a file past the in-memory size is streamed and
/// searched to its end, and a binary file is still skipped.
#[tokio::test]
async fn whole_file_and_streamed_reads_find_the_same_matches() {
    let (_guard, root) = workspace();
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "first\nneedle in utf16\n".encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    write(&root, "wide.txt", utf16);
    let mut big = "filler line\n".repeat(WHOLE_FILE_MAX / 12 + 100);
    big.push_str("needle at the end\n");
    assert!(big.len() > WHOLE_FILE_MAX);
    write(&root, "big.txt", big);
    write(&root, "small.txt", "a needle\n");
    write(&root, "blob.bin", b"needle\0binary");
    let result = run(&root, json!({"pattern": "needle"})).await;
    let out = text(&result);
    assert!(out.contains("needle in utf16"), "{out}");
    assert!(out.contains("needle at the end"), "{out}");
    assert!(out.contains("a needle"), "{out}");
    assert!(!out.contains("blob.bin"), "{out}");
}

/// A file larger than the in-memory size is searched from the bytes already
/// read plus the rest of the same file: a line across the boundary is found
/// whole with its number, a UTF-16 file that large is still transcoded (its
/// BOM is in the part already read), and a NUL past the boundary still makes
/// the file binary (skipped).
#[tokio::test]
async fn a_large_file_is_searched_across_the_in_memory_boundary() {
    let (_guard, root) = workspace();
    let filler = "filler line\n";
    let lines_before = WHOLE_FILE_MAX / filler.len();
    let mut across = filler.repeat(lines_before);
    // This line starts a few bytes before the boundary and ends after it.
    across.truncate(WHOLE_FILE_MAX - 4);
    across.push_str("\nneedle across the boundary\n");
    across.push_str(&filler.repeat(100));
    across.push_str("needle at the end\n");
    write(&root, "across.txt", &across);
    let number = across[..across.find("needle across").unwrap()]
        .matches('\n')
        .count()
        + 1;

    let mut wide = vec![0xFF, 0xFE];
    let text = format!("needle first\n{}needle last\n", filler.repeat(lines_before));
    for unit in text.encode_utf16() {
        wide.extend_from_slice(&unit.to_le_bytes());
    }
    assert!(wide.len() > WHOLE_FILE_MAX * 2);
    write(&root, "wide.txt", wide);

    let mut late_binary = filler.repeat(lines_before + 100).into_bytes();
    late_binary.extend_from_slice(b"needle\0binary\n");
    write(&root, "late.bin", late_binary);

    let out = text_of(run(&root, json!({"pattern": "needle"})).await);
    assert!(
        out.contains(&format!("L{number}: needle across the boundary")),
        "{out}"
    );
    assert!(out.contains("needle at the end"), "{out}");
    assert!(out.contains("L1: needle first"), "{out}");
    assert!(out.contains("needle last"), "{out}");
    assert!(!out.contains("late.bin"), "{out}");
}

fn text_of(result: ToolResult) -> String {
    text(&result).to_owned()
}

#[tokio::test]
async fn groups_by_file_in_path_order_with_line_numbers() {
    let (_guard, root) = rust_tree();
    let result = run(
        &root,
        json!({"pattern": "fn main", "include_pattern": "*.rs"}),
    )
    .await;
    assert_eq!(result.error, None);
    assert_eq!(
        text(&result),
        "Found 3 matches for pattern \"fn main\" in path \".\" (filter: \"*.rs\"):\n---\nFile: src/bin/x.rs\nL4: fn main() {\n---\nFile: src/main.rs\nL1: fn main() {\nL10: fn main_loop() {\n---"
    );
    assert_eq!(result.display, "Found 3 matches");
    for _ in 0..3 {
        let again = run(
            &root,
            json!({"pattern": "fn main", "include_pattern": "*.rs"}),
        )
        .await;
        assert_eq!(text(&again), text(&result));
    }
    let all = run(&root, json!({"pattern": "FN MAIN"})).await;
    assert!(text(&all).starts_with("Found 4 matches for pattern \"FN MAIN\" in path \".\":\n---\nFile: README.md\nL1: Call fn main to start.\n---\nFile: src/bin/x.rs\n"));
    let sensitive = run(&root, json!({"pattern": "(?-i)FN MAIN"})).await;
    assert_eq!(
        text(&sensitive),
        "No matches found for pattern \"(?-i)FN MAIN\" in path \".\"."
    );
    assert_eq!(sensitive.display, "No matches found");
    let one = run(&root, json!({"pattern": "function", "dir_path": "src"})).await;
    assert_eq!(
        text(&one),
        "Found 1 match for pattern \"function\" in path \"src\":\n---\nFile: lib.ts\nL1: function main() {}\n---"
    );
    let file = run(&root, json!({"pattern": "start", "dir_path": "README.md"})).await;
    assert_eq!(
        text(&file),
        "Found 1 match for pattern \"start\" in path \"README.md\":\n---\nFile: README.md\nL1: Call fn main to start.\n---"
    );
}

#[tokio::test]
async fn include_and_exclude_globs() {
    let (_guard, root) = workspace();
    for p in [
        "src/a.ts",
        "src/ui/b.tsx",
        "src/c.js",
        "lib/src/d.ts",
        "tests/e.ts",
        "src/f.test.ts",
    ] {
        write(&root, p, "needle\n");
    }
    let names = |result: &ToolResult| -> Vec<String> {
        text(result).lines().skip(1).map(str::to_owned).collect()
    };
    let ts = run(
        &root,
        json!({"pattern": "needle", "include_pattern": "src/**/*.{ts,tsx}", "names_only": true}),
    )
    .await;
    assert_eq!(
        names(&ts),
        vec!["src/a.ts", "src/f.test.ts", "src/ui/b.tsx"]
    );
    let excluded = run(
        &root,
        json!({"pattern": "needle", "include_pattern": "*.ts", "exclude_pattern": "*.test.ts", "names_only": true}),
    )
    .await;
    assert_eq!(
        names(&excluded),
        vec!["lib/src/d.ts", "src/a.ts", "tests/e.ts"]
    );
    let no_tests = run(
        &root,
        json!({"pattern": "needle", "exclude_pattern": "tests", "names_only": true}),
    )
    .await;
    assert_eq!(names(&no_tests).len(), 5);
    assert!(!names(&no_tests).contains(&"tests/e.ts".to_owned()));
    let bad = run(
        &root,
        json!({"pattern": "needle", "include_pattern": "a[" }),
    )
    .await;
    assert_eq!(bad.error.unwrap().kind, ToolErrorKind::InvalidParams);
}

#[tokio::test]
async fn names_only_lists_files() {
    let (_guard, root) = rust_tree();
    let result = run(&root, json!({"pattern": "main", "names_only": true})).await;
    assert_eq!(
        text(&result),
        "Found 4 files with matches for pattern \"main\" in path \".\":\nREADME.md\nsrc/bin/x.rs\nsrc/lib.ts\nsrc/main.rs"
    );
    assert_eq!(result.display, "Found 4 files");
    let limited = run(
        &root,
        json!({"pattern": "main", "names_only": true, "total_max_matches": 2}),
    )
    .await;
    assert_eq!(
        text(&limited).lines().next().unwrap(),
        "Found 2 files with matches for pattern \"main\" in path \".\" (results limited to 2 matches for performance):"
    );
    assert_eq!(text(&limited).lines().count(), 3);
    assert_eq!(limited.display, "Found 2 files (limited)");
}

#[tokio::test]
async fn caps_per_file_and_in_total_with_notices() {
    let (_guard, root) = workspace();
    let many: String = (1..=50).map(|i| format!("hit {i}\n")).collect();
    write(&root, "a.txt", &many);
    write(&root, "b.txt", &many);
    let per_file = run(&root, json!({"pattern": "hit", "max_matches_per_file": 3})).await;
    assert_eq!(
        text(&per_file),
        "Found 6 matches for pattern \"hit\" in path \".\" (results limited to 3 matches per file):\n---\nFile: a.txt\nL1: hit 1\nL2: hit 2\nL3: hit 3\n---\nFile: b.txt\nL1: hit 1\nL2: hit 2\nL3: hit 3\n---"
    );
    let exact = run(&root, json!({"pattern": "hit", "max_matches_per_file": 50})).await;
    assert!(text(&exact).starts_with("Found 100 matches for pattern \"hit\" in path \".\":"));
    let total = run(
        &root,
        json!({"pattern": "hit 1\\b", "total_max_matches": 1}),
    )
    .await;
    assert_eq!(
        text(&total),
        "Found 1 match for pattern \"hit 1\\b\" in path \".\" (results limited to 1 matches for performance):\n---\nFile: a.txt\nL1: hit 1\n---"
    );
    assert_eq!(total.display, "Found 1 match (limited)");
    let total = run(&root, json!({"pattern": "hit", "total_max_matches": 70})).await;
    let body = text(&total);
    assert!(body.starts_with("Found 70 matches for pattern \"hit\" in path \".\" (results limited to 70 matches for performance):"));
    assert_eq!(body.lines().filter(|l| l.starts_with('L')).count(), 70);
}

#[tokio::test]
async fn long_lines_are_cut_and_binary_files_skipped() {
    let (_guard, root) = workspace();
    let long = format!("{}needle{}\r\n", "é".repeat(300), "x".repeat(400));
    write(&root, "long.txt", &long);
    write(&root, "data.bin", b"needle\0\x01\x02needle\n");
    let result = run(&root, json!({"pattern": "needle"})).await;
    let body = text(&result);
    assert!(body.starts_with("Found 1 match "), "{body}");
    assert!(!body.contains("data.bin"));
    let line = body.lines().find(|l| l.starts_with("L1: ")).unwrap();
    let shown = line.strip_prefix("L1: ").unwrap();
    assert_eq!(
        shown,
        format!(
            "{}needle{}{TRUNCATED_MARKER}",
            "é".repeat(300),
            "x".repeat(194)
        )
    );
}

#[tokio::test]
async fn ignore_rules_hidden_files_and_git_dir() {
    let (_guard, root) = workspace();
    write(&root, ".gitignore", "build/\n");
    write(&root, ".geminiignore", "secret.txt\n");
    write(&root, "build/out.txt", "needle\n");
    write(&root, "secret.txt", "needle\n");
    write(&root, "keep.txt", "needle\n");
    write(&root, ".github/ci.yml", "needle\n");
    let names = |result: &ToolResult| -> Vec<String> {
        text(result).lines().skip(1).map(str::to_owned).collect()
    };
    let args = json!({"pattern": "needle", "names_only": true});
    assert_eq!(
        names(&run(&root, args.clone()).await),
        vec!["build/out.txt", "keep.txt"]
    );
    write(&root, ".git/config", "needle\n");
    assert_eq!(names(&run(&root, args.clone()).await), vec!["keep.txt"]);
    let hidden = json!({"pattern": "needle", "names_only": true, "include_pattern": ".github/**"});
    assert_eq!(names(&run(&root, hidden).await), vec![".github/ci.yml"]);
    let mut ctx = ToolContext::new(vec![root.clone()]);
    ctx.file_filtering = FileFiltering {
        respect_git_ignore: false,
        respect_gemini_ignore: false,
    };
    let unfiltered = GrepTool::new().execute(args, &ctx).await;
    assert_eq!(
        names(&unfiltered),
        vec!["build/out.txt", "keep.txt", "secret.txt"]
    );
}

#[tokio::test]
async fn errors() {
    let (_guard, root) = workspace();
    let bad = run(&root, json!({"pattern": "fn ("})).await;
    let error = bad.error.unwrap();
    assert_eq!(error.kind, ToolErrorKind::InvalidParams);
    assert!(
        error
            .message
            .starts_with("Invalid regular expression pattern provided: fn (. Error: "),
        "{}",
        error.message
    );
    let escape = run(&root, json!({"pattern": "x", "dir_path": "../.."})).await;
    assert_eq!(
        escape.error.unwrap().kind,
        ToolErrorKind::PathNotInWorkspace
    );
    let missing = run(&root, json!({"pattern": "x", "dir_path": "nope"})).await;
    let error = missing.error.unwrap();
    assert_eq!(error.kind, ToolErrorKind::NotFound);
    assert_eq!(
        error.message,
        format!("Path does not exist: {}", root.join("nope").display())
    );
    let empty = run(&root, json!({"pattern": ""})).await;
    assert_eq!(empty.error.unwrap().kind, ToolErrorKind::InvalidParams);
}

#[test]
fn the_walk_stops_once_the_total_is_reached() {
    let (_guard, root) = workspace();
    for i in 0..200 {
        write(&root, &format!("d{}/f{i:03}.txt", i % 10), "needle\n");
    }
    let ctx = ToolContext::new(vec![root.clone()]);
    let params = |names_only: bool| -> Params {
        serde_json::from_value(json!({
            "pattern": "needle", "total_max_matches": 3, "names_only": names_only
        }))
        .unwrap()
    };
    for names_only in [false, true] {
        let search = GrepSearch::new(params(names_only), &ctx).unwrap();
        let result = search.run();
        assert!(result.display.ends_with("(limited)"), "{}", result.display);
        // Each walker thread may finish the file it is on, no more.
        let searched = search.found.load(Ordering::Relaxed);
        assert!(searched <= 3 + 1 + 12, "searched {searched} files");
    }
}

#[tokio::test]
async fn cancelled_before_running() {
    let (_guard, root) = rust_tree();
    let ctx = ToolContext::new(vec![root.clone()]);
    ctx.cancel.cancel();
    let result = GrepTool::new()
        .execute(json!({"pattern": "main"}), &ctx)
        .await;
    assert_eq!(result.error.unwrap().kind, ToolErrorKind::Cancelled);
}
