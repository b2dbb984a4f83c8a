//! Memory (`GEMINI.md`): discovery, the import processor against every rule
//! of the seed "Memory Import Processor", and the system instruction the
//! model receives — on real temporary directories and, for the wire, the
//! fake Gemini server.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::*;
use gd_core::config::FileFiltering;
use gd_core::memory::imports::{DEFAULT_MAX_DEPTH, find_imports, validate_import_path};
use gd_core::memory::{
    DiscoveryOptions, ImportRules, discover, load_memory, process_imports,
    system_prompt_with_memory,
};
use gd_protocol::{Event, MemoryFileNode, Op};
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

fn rules(root: &Path) -> ImportRules {
    ImportRules::new(vec![root.to_path_buf()])
}

fn process_file(path: &Path, root: &Path) -> gd_core::memory::imports::Processed {
    process_imports(&fs::read_to_string(path).unwrap(), path, &rules(root))
}

fn tree_paths(nodes: &[gd_core::memory::ImportNode], root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(
        nodes: &[gd_core::memory::ImportNode],
        root: &Path,
        depth: usize,
        out: &mut Vec<String>,
    ) {
        for node in nodes {
            let rel = node.path.strip_prefix(root).unwrap().display().to_string();
            out.push(format!("{}{rel}", "  ".repeat(depth)));
            walk(&node.imports, root, depth + 1, out);
        }
    }
    walk(nodes, root, 0, &mut out);
    out
}

#[test]
fn relative_parent_subdirectory_and_absolute_imports() {
    let (_d, root) = real_tempdir();
    write(&root.join("same.md"), "SAME");
    write(&root.join("components/sub.md"), "SUB");
    write(&root.join("docs/GEMINI.md"), "@../up.md");
    write(&root.join("up.md"), "UP");
    write(&root.join("abs.md"), "ABS");
    write(&root.join("plain.md"), "PLAIN");
    let main = root.join("GEMINI.md");
    write(
        &main,
        &format!(
            "# Main\n@./same.md\n@./components/sub.md then @{} and @plain.md\n",
            root.join("abs.md").display()
        ),
    );
    let out = process_file(&main, &root);
    assert_eq!(
        out.content,
        format!(
            "# Main\n<!-- Imported from: ./same.md -->\nSAME\n<!-- End of import from: ./same.md -->\n\
             <!-- Imported from: ./components/sub.md -->\nSUB\n<!-- End of import from: ./components/sub.md --> then \
             <!-- Imported from: {abs} -->\nABS\n<!-- End of import from: {abs} --> and \
             <!-- Imported from: plain.md -->\nPLAIN\n<!-- End of import from: plain.md -->\n",
            abs = root.join("abs.md").display()
        )
    );
    let parent = process_file(&root.join("docs/GEMINI.md"), &root);
    assert!(parent.content.contains("\nUP\n"), "{}", parent.content);
    assert_eq!(
        tree_paths(&out.imports, &root),
        ["same.md", "components/sub.md", "abs.md", "plain.md"]
    );
    assert_eq!(out.imports[0].bytes, 4);
}

#[test]
fn nested_imports_build_the_tree_in_import_order() {
    let (_d, root) = real_tempdir();
    write(
        &root.join("main.md"),
        "@./header.md @./content.md @./footer.md",
    );
    write(
        &root.join("header.md"),
        "# Project Header\n@./shared/title.md",
    );
    write(&root.join("shared/title.md"), "Title");
    write(&root.join("content.md"), "Content");
    write(&root.join("footer.md"), "Footer");
    let out = process_file(&root.join("main.md"), &root);
    assert_eq!(
        tree_paths(&out.imports, &root),
        ["header.md", "  shared/title.md", "content.md", "footer.md"]
    );
    let order: Vec<usize> = ["Title", "Content", "Footer"]
        .iter()
        .map(|t| out.content.find(t).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{}", out.content);
}

#[test]
fn circular_imports_are_detected_and_not_repeated() {
    let (_d, root) = real_tempdir();
    write(&root.join("file-a.md"), "A\n@./file-b.md");
    write(&root.join("file-b.md"), "B\n@./file-a.md <!-- back -->");
    let out = process_file(&root.join("file-a.md"), &root);
    assert_eq!(out.content.matches("\nB\n").count(), 1);
    assert_eq!(out.content.matches("A\n").count(), 1, "{}", out.content);
    assert!(
        out.content
            .contains("<!-- File already processed: ./file-a.md -->")
    );
    assert_eq!(tree_paths(&out.imports, &root), ["file-b.md"]);
    // A self-import is a cycle too.
    write(&root.join("self.md"), "@./self.md");
    let out = process_file(&root.join("self.md"), &root);
    assert_eq!(out.content, "<!-- File already processed: ./self.md -->");
}

#[test]
fn the_same_file_may_be_imported_on_separate_branches() {
    let (_d, root) = real_tempdir();
    write(&root.join("main.md"), "@./a.md\n@./b.md");
    write(&root.join("a.md"), "@./shared.md");
    write(&root.join("b.md"), "@./shared.md");
    write(&root.join("shared.md"), "SHARED");
    let out = process_file(&root.join("main.md"), &root);
    assert_eq!(out.content.matches("SHARED").count(), 2);
    assert_eq!(
        tree_paths(&out.imports, &root),
        ["a.md", "  shared.md", "b.md", "  shared.md"]
    );
}

#[test]
fn import_depth_stops_at_five_levels() {
    let (_d, root) = real_tempdir();
    // l0 imports l1 … l7; only five levels of imports are followed.
    for i in 0..8 {
        write(
            &root.join(format!("l{i}.md")),
            &format!("L{i}\n@./l{}.md", i + 1),
        );
    }
    assert_eq!(DEFAULT_MAX_DEPTH, 5);
    let out = process_file(&root.join("l0.md"), &root);
    for i in 1..=5 {
        assert!(out.content.contains(&format!("L{i}\n")), "level {i}");
    }
    assert!(!out.content.contains("L6"), "{}", out.content);
    // The fifth level is included as it is, its import untouched.
    assert!(out.content.contains("L5\n@./l6.md"));
    let mut depth = 0;
    let mut node = &out.imports;
    while let Some(first) = node.first() {
        depth += 1;
        node = &first.imports;
    }
    assert_eq!(depth, 5);
}

#[test]
fn imports_in_code_blocks_and_inline_code_are_ignored() {
    let (_d, root) = real_tempdir();
    write(&root.join("real.md"), "REAL");
    let text = "```\n@./real.md\n```\n~~~md\n@./real.md\n~~~\nuse `@./real.md` inline, ``@./real.md`` too\n@./real.md\n";
    write(&root.join("main.md"), text);
    let out = process_file(&root.join("main.md"), &root);
    assert_eq!(out.content.matches("REAL").count(), 1);
    assert!(out.content.starts_with("```\n@./real.md\n```\n~~~md\n@./real.md\n~~~\nuse `@./real.md` inline, ``@./real.md`` too\n"));
    assert_eq!(out.imports.len(), 1);
}

#[test]
fn paths_outside_the_allowed_directories_and_urls_are_refused() {
    let (_d, tmp) = real_tempdir();
    let root = tmp.join("project");
    write(&tmp.join("secret.md"), "SECRET");
    write(
        &root.join("GEMINI.md"),
        &format!(
            "@../secret.md\n@{}\n@https://example.com/x.md\n@file:///etc/passwd",
            tmp.join("secret.md").display()
        ),
    );
    let out = process_file(&root.join("GEMINI.md"), &root);
    assert!(!out.content.contains("SECRET"), "{}", out.content);
    assert_eq!(
        out.content
            .matches("Path is outside the allowed directories")
            .count(),
        4,
        "{}",
        out.content
    );
    assert!(out.imports.is_empty());
    assert!(validate_import_path("./x.md", &root, std::slice::from_ref(&root)).is_some());
    assert!(validate_import_path("../x.md", &root, std::slice::from_ref(&root)).is_none());
    assert!(validate_import_path("HTTP://x/y.md", &root, std::slice::from_ref(&root)).is_none());
}

#[cfg(unix)]
#[test]
fn a_symlink_pointing_outside_is_refused() {
    let (_d, tmp) = real_tempdir();
    let root = tmp.join("project");
    write(&tmp.join("secret.md"), "SECRET");
    write(&root.join("GEMINI.md"), "@./link.md");
    std::os::unix::fs::symlink(tmp.join("secret.md"), root.join("link.md")).unwrap();
    let out = process_file(&root.join("GEMINI.md"), &root);
    assert!(!out.content.contains("SECRET"));
    assert!(out.content.contains("outside the allowed directories"));
}

#[test]
fn missing_and_unreadable_files_become_error_comments() {
    let (_d, root) = real_tempdir();
    fs::create_dir_all(root.join("adir")).unwrap();
    write(
        &root.join("main.md"),
        "before\n@./missing.md\n@./adir\nafter",
    );
    let out = process_file(&root.join("main.md"), &root);
    assert_eq!(
        out.content,
        "before\n<!-- Import failed: ./missing.md - File not found -->\n<!-- Import failed: ./adir - Is a directory -->\nafter"
    );
    assert!(out.imports.is_empty());
}

#[test]
fn only_at_signs_after_whitespace_start_an_import() {
    let text = "mail me@example.com or @./a.md, not @ alone, @1x nor @-x; (@./b.md) \n@c.md";
    let found: Vec<&str> = find_imports(text).into_iter().map(|(_, _, p)| p).collect();
    assert_eq!(found, ["./a.md,", "c.md"]);
}

#[test]
fn discovery_order_global_upward_then_downward() {
    let (_d, tmp) = real_tempdir();
    let home = tmp.join("home");
    let repo = home.join("repo");
    let ws = repo.join("pkg");
    fs::create_dir_all(repo.join(".git")).unwrap();
    write(&home.join(".gemini/GEMINI.md"), "global");
    write(
        &home.join("GEMINI.md"),
        "above the project root: not loaded",
    );
    write(&repo.join("GEMINI.md"), "root");
    write(&ws.join("GEMINI.md"), "ws");
    write(&ws.join("b/GEMINI.md"), "b");
    write(&ws.join("a/deep/GEMINI.md"), "a deep");
    write(&ws.join("node_modules/x/GEMINI.md"), "never");
    write(&ws.join("ignored/GEMINI.md"), "gitignored");
    write(&ws.join("private/GEMINI.md"), "geminiignored");
    write(&repo.join(".gitignore"), "ignored/\n");
    write(&ws.join(".geminiignore"), "private\n");
    let found = discover(&memory_options(&ws, &home));
    let rel: Vec<String> = found
        .iter()
        .map(|p| p.strip_prefix(&home).unwrap().display().to_string())
        .collect();
    assert_eq!(
        rel,
        [
            ".gemini/GEMINI.md",
            "repo/GEMINI.md",
            "repo/pkg/GEMINI.md",
            "repo/pkg/a/deep/GEMINI.md",
            "repo/pkg/b/GEMINI.md"
        ]
    );
    // Without git, the upward walk goes to the home directory.
    fs::remove_dir(repo.join(".git")).unwrap();
    let found = discover(&memory_options(&ws, &home));
    assert!(found.contains(&home.join("GEMINI.md")));
    // The gitignore only counts inside a git repository.
    assert!(found.contains(&ws.join("ignored/GEMINI.md")));
    assert!(!found.contains(&ws.join("private/GEMINI.md")));
}

#[test]
fn memory_boundary_markers_move_the_project_root() {
    let (_d, tmp) = real_tempdir();
    let home = tmp.join("home");
    let mono = home.join("mono");
    let ws = mono.join("services/api");
    fs::create_dir_all(mono.join(".git")).unwrap();
    write(&mono.join("GEMINI.md"), "repo root");
    write(&mono.join("services/package.json"), "{}");
    write(&mono.join("services/GEMINI.md"), "services");
    write(&ws.join("GEMINI.md"), "api");
    let rel = |markers: Option<Vec<String>>| -> Vec<String> {
        let options = DiscoveryOptions {
            boundary_markers: markers,
            ..memory_options(&ws, &home)
        };
        discover(&options)
            .iter()
            .map(|p| p.strip_prefix(&home).unwrap().display().to_string())
            .collect()
    };
    // Default (`.git`): from the repository root down.
    assert_eq!(
        rel(None),
        [
            "mono/GEMINI.md",
            "mono/services/GEMINI.md",
            "mono/services/api/GEMINI.md"
        ]
    );
    // `package.json` marks a nearer root: the search stops there.
    assert_eq!(
        rel(Some(vec!["package.json".into()])),
        ["mono/services/GEMINI.md", "mono/services/api/GEMINI.md"]
    );
}

#[test]
fn include_directories_are_searched_only_when_the_setting_says_so() {
    let (_d, tmp) = real_tempdir();
    let home = tmp.join("home");
    let ws = home.join("app");
    let lib = tmp.join("elsewhere/lib");
    fs::create_dir_all(ws.join(".git")).unwrap();
    fs::create_dir_all(lib.join(".git")).unwrap();
    write(&ws.join("GEMINI.md"), "app rules");
    write(&lib.join("GEMINI.md"), "lib rules");
    write(&lib.join("src/GEMINI.md"), "lib src rules");
    let dirs = [ws.clone(), lib.clone()];
    let off = load_memory(&memory_options(&ws, &home), &dirs);
    assert!(off.text.contains("app rules"));
    assert!(!off.text.contains("lib rules"), "{}", off.text);
    let on = load_memory(
        &DiscoveryOptions {
            include_directories: true,
            ..memory_options(&ws, &home)
        },
        &dirs,
    );
    let app = on.text.find("app rules").unwrap();
    let lib_at = on.text.find("lib rules").unwrap();
    let src_at = on.text.find("lib src rules").unwrap();
    assert!(app < lib_at && lib_at < src_at, "{}", on.text);
}

#[test]
fn discovery_honours_other_file_names_and_the_directory_limit() {
    let (_d, tmp) = real_tempdir();
    let home = tmp.join("home");
    let ws = tmp.join("ws");
    fs::create_dir_all(ws.join(".git")).unwrap();
    write(&ws.join("AGENTS.md"), "agents");
    write(&ws.join("GEMINI.md"), "gemini");
    write(&ws.join("a/AGENTS.md"), "a");
    write(&ws.join("z/y/AGENTS.md"), "deep");
    let mut opts = memory_options(&ws, &home);
    opts.file_names = vec!["AGENTS.md".into()];
    assert_eq!(
        discover(&opts),
        [
            ws.join("AGENTS.md"),
            ws.join("a/AGENTS.md"),
            ws.join("z/y/AGENTS.md")
        ]
    );
    // Breadth first: ws, a, z are visited before z/y.
    opts.max_dirs = 3;
    assert_eq!(
        discover(&opts),
        [ws.join("AGENTS.md"), ws.join("a/AGENTS.md")]
    );
}

#[test]
fn load_memory_concatenates_with_file_boundary_markers() {
    let (_d, tmp) = real_tempdir();
    let home = tmp.join("home");
    let ws = tmp.join("ws");
    fs::create_dir_all(ws.join(".git")).unwrap();
    write(&home.join(".gemini/GEMINI.md"), "  Global rule.\n");
    write(&ws.join("GEMINI.md"), "Project rule.\n@./more.md\n");
    write(&ws.join("more.md"), "More.");
    write(&ws.join("sub/GEMINI.md"), "   \n");
    let memory = load_memory(&memory_options(&ws, &home), std::slice::from_ref(&ws));
    assert_eq!(
        memory.text,
        "--- Context from: ../home/.gemini/GEMINI.md ---\nGlobal rule.\n--- End of Context from: ../home/.gemini/GEMINI.md ---\n\n\
         --- Context from: GEMINI.md ---\nProject rule.\n<!-- Imported from: ./more.md -->\nMore.\n<!-- End of import from: ./more.md -->\n--- End of Context from: GEMINI.md ---"
    );
    // The empty file is listed (it was found) but adds no text.
    let Event::MemoryLoaded { files, chars } = memory.event() else {
        unreachable!()
    };
    assert_eq!(chars, memory.text.chars().count() as u64);
    assert_eq!(
        files,
        vec![
            MemoryFileNode {
                path: home.join(".gemini/GEMINI.md").display().to_string(),
                bytes: 15,
                imports: vec![]
            },
            MemoryFileNode {
                path: ws.join("GEMINI.md").display().to_string(),
                bytes: 25,
                imports: vec![MemoryFileNode {
                    path: ws.join("more.md").display().to_string(),
                    bytes: 5,
                    imports: vec![]
                }]
            },
            MemoryFileNode {
                path: ws.join("sub/GEMINI.md").display().to_string(),
                bytes: 4,
                imports: vec![]
            },
        ]
    );
    assert_eq!(system_prompt_with_memory("Base.", "  "), "Base.");
    assert_eq!(system_prompt_with_memory("Base.", "M"), "Base.\n\n---\n\nM");
}

fn memory_config(home: PathBuf) -> impl FnOnce(&mut gd_core::SessionConfig) {
    move |config| {
        config.memory = Some(DiscoveryOptions {
            workspace: config.workspace_dirs[0].clone(),
            home: Some(home),
            file_names: vec!["GEMINI.md".into()],
            max_dirs: 200,
            filtering: FileFiltering::default(),
            workspace_files: true,
            boundary_markers: None,
            include_directories: false,
        });
    }
}

async fn next_memory_event(h: &mut Harness) -> (Vec<MemoryFileNode>, u64) {
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(10), h.events.recv())
            .await
            .expect("no MemoryLoaded event")
            .expect("session ended");
        if let Event::MemoryLoaded { files, chars } = event {
            return (files, chars);
        }
    }
}

#[tokio::test]
async fn the_first_request_carries_the_memory_and_refresh_updates_it() {
    let (_home_dir, home) = real_tempdir();
    write(&home.join(".gemini/GEMINI.md"), "Call me Ada.");
    let mut h = Harness::start_with(
        json!({"steps": [{"text": "ok"}, {"text": "ok again"}]}),
        memory_config(home.clone()),
    );
    write(&h.workspace.join("GEMINI.md"), "Use tabs.\n");
    let (files, _) = next_memory_event(&mut h).await;
    // The workspace file was written after the session loaded its memory.
    assert_eq!(files.len(), 1);
    h.turn("hi").await;
    let first = &h.bodies()[0];
    let system = first["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    let global = gd_core::memory::display_path(&home.join(".gemini/GEMINI.md"), &h.workspace);
    assert_eq!(
        system,
        format!(
            "{SYSTEM_PROMPT}\n\n---\n\n--- Context from: {global} ---\nCall me Ada.\n--- End of Context from: {global} ---"
        )
    );
    // The memory is in the system instruction, not in the conversation.
    assert!(!first["contents"].to_string().contains("Call me Ada."));

    h.handle.submit(Op::RefreshMemory).unwrap();
    let (files, _) = next_memory_event(&mut h).await;
    assert_eq!(files.len(), 2);
    h.handle
        .submit(Op::AddMemory {
            text: "- prefers short answers".into(),
        })
        .unwrap();
    let _ = next_memory_event(&mut h).await;
    h.turn("again").await;
    let second = &h.bodies()[1];
    let system = second["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        system.contains(
            "--- Context from: GEMINI.md ---\nUse tabs.\n--- End of Context from: GEMINI.md ---"
        ),
        "{system}"
    );
    assert!(
        system.contains("## Gemini Added Memories\n- prefers short answers"),
        "{system}"
    );
}
