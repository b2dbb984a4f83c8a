//! Ignored directories hold for every way of reading a file: `read_file`,
//! `read_many_files` and `@path` references refuse a file inside a
//! directory `.geminiignore` (or `.gitignore`) excludes, as `glob` and
//! `grep_search` leave it out — one matcher decides for all of them.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use gd_core::chat::ToolCallRequest;
use gd_core::events::EventSink;
use gd_core::scheduler::{CompletedCall, Scheduler};
use gd_core::tools::{ToolContext, ToolRegistry};
use gd_protocol::{Event, ToolCallStatus};
use serde_json::{Value, json};

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A workspace whose `.geminiignore` excludes the directory `private/`.
fn private_workspace() -> (tempfile::TempDir, PathBuf, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    write(&root.join(".geminiignore"), "private/\n");
    write(&root.join("private/secret.txt"), "TOP SECRET");
    write(&root.join("private/deeper/x.txt"), "DEEP SECRET");
    write(&root.join("public.txt"), "PUBLIC");
    let ctx = ToolContext::new(vec![root.clone()]);
    (dir, root, ctx)
}

async fn call(ctx: &ToolContext, name: &str, args: Value) -> CompletedCall {
    let scheduler = Scheduler::new(
        Arc::new(ToolRegistry::with_all_builtins()),
        Arc::new(gd_core::approval::AllowAll),
        Arc::new(gd_core::approval::Confirmations::default()),
    );
    let (sink, _events) = EventSink::new();
    let request = ToolCallRequest {
        call_id: "c1".into(),
        name: name.into(),
        args,
    };
    scheduler
        .run(&[request], ctx, &sink)
        .await
        .completed
        .remove(0)
}

fn response(done: &CompletedCall) -> String {
    serde_json::to_string(&done.parts).unwrap()
}

async fn refused(ctx: &ToolContext, path: &str) -> String {
    let done = call(ctx, "read_file", json!({ "file_path": path })).await;
    assert_eq!(
        done.status,
        ToolCallStatus::Error,
        "{path}: {}",
        response(&done)
    );
    let text = response(&done);
    assert!(!text.contains("SECRET"), "{text}");
    text
}

#[tokio::test]
async fn read_file_refuses_files_inside_an_ignored_directory() {
    let (_d, root, ctx) = private_workspace();
    for path in ["private/secret.txt", "private/deeper/x.txt"] {
        let text = refused(&ctx, path).await;
        let shown = root.join(path).display().to_string();
        assert!(
            text.contains(&format!(
                "File {shown} is excluded by .gitignore or .geminiignore and cannot be read."
            )),
            "{text}"
        );
    }
    // An absolute path and a detour through `..` are the same file.
    let absolute = root.join("private/secret.txt").display().to_string();
    refused(&ctx, &absolute).await;
    refused(&ctx, "public/../private/deeper/x.txt").await;
    let done = call(&ctx, "read_file", json!({"file_path": "public.txt"})).await;
    assert_eq!(done.status, ToolCallStatus::Success);
    assert!(response(&done).contains("PUBLIC"));
    // With .geminiignore switched off the file is readable again.
    let mut open = ctx.clone();
    open.file_filtering.respect_gemini_ignore = false;
    let done = call(
        &open,
        "read_file",
        json!({"file_path": "private/secret.txt"}),
    )
    .await;
    assert_eq!(done.status, ToolCallStatus::Success);
    assert!(response(&done).contains("TOP SECRET"));
}

#[tokio::test]
async fn a_symlink_into_an_ignored_directory_is_refused_too() {
    let (_d, root, ctx) = private_workspace();
    std::os::unix::fs::symlink(root.join("private"), root.join("alias")).unwrap();
    std::os::unix::fs::symlink(root.join("private/secret.txt"), root.join("link.txt")).unwrap();
    refused(&ctx, "alias/secret.txt").await;
    refused(&ctx, "link.txt").await;
}

#[tokio::test]
async fn negations_and_gitignore_follow_git_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    fs::create_dir(root.join(".git")).unwrap();
    write(
        &root.join(".geminiignore"),
        "*.log\n!keep.log\nprivate/\n!private/ok.txt\nnotes/*\n!notes/ok.txt\n",
    );
    write(&root.join(".gitignore"), "build/\n");
    for path in [
        "keep.log",
        "other.log",
        "private/ok.txt",
        "notes/ok.txt",
        "notes/no.txt",
        "build/out/SECRET.txt",
        "src/build/y.txt",
    ] {
        write(&root.join(path), "content");
    }
    let ctx = ToolContext::new(vec![root.clone()]);
    let readable = |path: &'static str| {
        let ctx = ctx.clone();
        async move {
            call(&ctx, "read_file", json!({ "file_path": path }))
                .await
                .status
                == ToolCallStatus::Success
        }
    };
    assert!(readable("keep.log").await);
    assert!(!readable("other.log").await);
    // As in Git, a file below an excluded directory cannot be re-included…
    assert!(!readable("private/ok.txt").await);
    // …but one in a directory whose contents are excluded can.
    assert!(readable("notes/ok.txt").await);
    assert!(!readable("notes/no.txt").await);
    // .gitignore counts inside a git repository, at any depth.
    assert!(!readable("build/out/SECRET.txt").await);
    assert!(!readable("src/build/y.txt").await);
    let mut no_git = ctx.clone();
    no_git.file_filtering.respect_git_ignore = false;
    let done = call(
        &no_git,
        "read_file",
        json!({"file_path": "build/out/SECRET.txt"}),
    )
    .await;
    assert_eq!(done.status, ToolCallStatus::Success);
}

#[tokio::test]
async fn read_many_files_skips_ignored_directories_named_in_any_form() {
    let (_d, _root, ctx) = private_workspace();
    let done = call(
        &ctx,
        "read_many_files",
        json!({"paths": ["private/secret.txt", "private/deeper/x.txt", "private", "private/deeper/", "public.txt"]}),
    )
    .await;
    let text = response(&done);
    assert!(text.contains("PUBLIC"), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
    let done = call(
        &ctx,
        "read_many_files",
        json!({"paths": ["private/**/*.txt"]}),
    )
    .await;
    assert!(!response(&done).contains("SECRET"), "{}", response(&done));
}

#[tokio::test]
async fn at_references_to_an_ignored_directory_are_not_sent() {
    let mut h = Harness::start(json!({"steps": [{"text": "ok"}]}));
    write(&h.workspace.join(".geminiignore"), "private/\n");
    write(&h.workspace.join("private/secret.txt"), "TOP SECRET");
    write(&h.workspace.join("private/deeper/x.txt"), "DEEP SECRET");
    let events = h
        .turn("read @private/secret.txt and @private/deeper/x.txt and @private/ and @hello.txt")
        .await;
    let body = h.bodies()[0].to_string();
    assert!(!body.contains("SECRET"), "{body}");
    assert!(body.contains("Content from @hello.txt"), "{body}");
    let warnings: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("private/secret.txt") && w.contains("excluded")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn searches_and_listings_cannot_start_inside_an_ignored_directory() {
    let (_d, _root, ctx) = private_workspace();
    for (tool, args) in [
        ("glob", json!({"pattern": "*.txt", "dir_path": "private"})),
        (
            "glob",
            json!({"pattern": "**/*", "dir_path": "private/deeper"}),
        ),
        (
            "grep_search",
            json!({"pattern": "SECRET", "dir_path": "private"}),
        ),
        (
            "grep_search",
            json!({"pattern": "SECRET", "dir_path": "private/secret.txt"}),
        ),
        ("list_directory", json!({"dir_path": "private"})),
        ("list_directory", json!({"dir_path": "private/deeper"})),
    ] {
        let done = call(&ctx, tool, args.clone()).await;
        let text = response(&done);
        assert_eq!(done.status, ToolCallStatus::Error, "{tool} {args}: {text}");
        assert!(
            !text.contains("SECRET") && !text.contains("secret.txt\\n"),
            "{text}"
        );
        assert!(text.contains("cannot be searched or listed"), "{text}");
    }
    // The workspace itself is still searched, without the ignored folder.
    let done = call(&ctx, "grep_search", json!({"pattern": "SECRET|PUBLIC"})).await;
    assert_eq!(done.status, ToolCallStatus::Success);
    let text = response(&done);
    assert!(
        text.contains("L1: PUBLIC") && !text.contains("TOP SECRET"),
        "{text}"
    );
}
