//! `read_many_files`: the contents of several files at once, chosen by
//! paths, directories and glob patterns.
//!
//! Text files come back as one text part each, `--- <absolute path> ---`
//! followed by the content, and a final `--- End of content ---` part.
//! Images, audio, video and PDFs are attached as inline data only when they
//! were asked for by name or by extension; other binary files are skipped.
//! The total text is bounded by the session's output limit.

//!
//! * this file: the tool, its arguments and the blocking job;
//! * `select`: which files a call names (paths, globs, exclusions);
//! * `output`: reading them into parts within the output budget.

mod output;
mod select;

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::search_start::FilteringOptions;
use super::{ToolContext, ToolError, ToolErrorKind, ToolResult};
use crate::config::FileFiltering;
use output::read_found;
pub use select::{DEFAULT_EXCLUDED_DIRS, DEFAULT_EXCLUDED_FILES};
use select::{Excludes, Found, collect};

/// Lines read per file; longer files are cut with a note.
pub(super) const MAX_LINES_PER_FILE: usize = 2000;
/// Directory entries visited before the search stops.
pub(super) const MAX_WALK_ENTRIES: usize = 100_000;
/// Skipped files listed by name in the summary.
pub(super) const MAX_LISTED: usize = 10;

/// Reads several files, for overviews and for questions spanning files.
pub struct ReadManyFiles {
    schema: Value,
}

impl ReadManyFiles {
    pub const NAME: &'static str = "read_many_files";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "paths": {
                        "description": "Files, directories or glob patterns to read, relative to the workspace root, e.g. [\"src/main.rs\", \"docs/\", \"src/**/*.ts\"].",
                        "type": "array",
                        "items": {"type": "string", "minLength": 1},
                        "minItems": 1
                    },
                    "include": {
                        "description": "More glob patterns of files to read, e.g. [\"**/*.test.ts\"].",
                        "type": "array",
                        "items": {"type": "string", "minLength": 1}
                    },
                    "exclude": {
                        "description": "Glob patterns of files or directories to leave out, e.g. [\"**/*.log\", \"fixtures\"]. A pattern without '/' matches a name at any depth.",
                        "type": "array",
                        "items": {"type": "string", "minLength": 1}
                    },
                    "recursive": {
                        "description": "Read directories given in paths recursively (default true).",
                        "type": "boolean"
                    },
                    "useDefaultExcludes": {
                        "description": "Skip dependency and build directories (node_modules, .git, target, dist, build...), binaries, lock files and .env (default true).",
                        "type": "boolean"
                    },
                    "file_filtering_options": {
                        "description": "Whether to skip files excluded by ignore files.",
                        "type": "object",
                        "properties": {
                            "respect_git_ignore": {
                                "description": "Skip files matched by .gitignore (default true).",
                                "type": "boolean"
                            },
                            "respect_gemini_ignore": {
                                "description": "Skip files matched by .geminiignore (default true).",
                                "type": "boolean"
                            }
                        }
                    }
                },
                "required": ["paths"]
            }),
        }
    }
}

/// The arguments of a `read_many_files` call.
#[derive(Debug, Deserialize)]
pub struct Params {
    paths: Vec<String>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    recursive: Option<bool>,
    #[serde(default, rename = "useDefaultExcludes")]
    use_default_excludes: Option<bool>,
    #[serde(default)]
    file_filtering_options: Option<FilteringOptions>,
}

/// Everything the blocking part needs.
struct Job {
    patterns: Vec<String>,
    excludes: Excludes,
    recursive: bool,
    filtering: FileFiltering,
    roots: Vec<PathBuf>,
    budget: usize,
    cancel: CancellationToken,
    /// Review mode: files the turn staged are read from here.
    staging: Option<std::sync::Arc<crate::review::Staging>>,
}

crate::tools::tool_info! {
    default ReadManyFiles,
    display: "ReadManyFiles",
    kind: Read,
    description: "Reads several files in one call: give file paths, directories or glob patterns relative to the workspace root. Each text file is returned after a `--- <path> ---` line. Files excluded by .gitignore/.geminiignore, dependency and build directories, lock files and binaries are skipped by default. Images, audio, video and PDFs are included only when named explicitly or by extension (e.g. \"*.png\"). Long files are cut; use read_file to read the rest. Useful to get an overview of a directory or of related files.",
    fn describe_call(&self, args: &Value) -> String {
        let list = |key: &str| -> Vec<String> {
            args.get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut shown = list("paths");
        shown.extend(list("include"));
        let mut text = shown.join(", ");
        let excluded = list("exclude");
        if !excluded.is_empty() {
            text.push_str(&format!(" (excluding {})", excluded.join(", ")));
        }
        text
    }
}

impl crate::tools::TypedTool for ReadManyFiles {
    type Args = Params;

    async fn run(&self, params: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        if params.paths.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::InvalidParams,
                "paths must name at least one file, directory or glob pattern.",
            ));
        }
        let use_defaults = params.use_default_excludes.unwrap_or(true);
        let excludes = match Excludes::new(&params.exclude, use_defaults) {
            Ok(e) => e,
            Err(message) => return Err(ToolError::new(ToolErrorKind::InvalidParams, message)),
        };
        let job = Job {
            patterns: params
                .paths
                .iter()
                .chain(&params.include)
                .filter(|p| !p.trim().is_empty())
                .cloned()
                .collect(),
            excludes,
            recursive: params.recursive.unwrap_or(true),
            filtering: params
                .file_filtering_options
                .unwrap_or_default()
                .over(ctx.file_filtering),
            roots: ctx.workspace_dirs.to_vec(),
            budget: ctx.services.limits.max_output_chars.max(1000),
            cancel: ctx.cancel.clone(),
            staging: ctx.staging.clone(),
        };
        tokio::task::spawn_blocking(move || run(&job))
            .await
            .map_err(|e| {
                ToolError::new(
                    ToolErrorKind::Execution,
                    format!("Error reading files: {e}"),
                )
            })
    }
}

fn run(job: &Job) -> ToolResult {
    let mut found = Found::default();
    collect(job, &mut found);
    if job.cancel.is_cancelled() {
        return ToolResult::error(ToolErrorKind::Cancelled, "Reading files was cancelled.");
    }
    read_found(job, found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::LlmContent;
    use crate::tools::Tool;
    use crate::tools::test_support::setup;
    use std::fs;
    use std::path::Path;

    async fn run_tool(ctx: &ToolContext, args: Value) -> ToolResult {
        ReadManyFiles::new().execute(args, ctx).await
    }

    fn texts(result: &ToolResult) -> Vec<String> {
        match &result.llm_content {
            LlmContent::Parts(parts) => parts.iter().filter_map(|p| p.text.clone()).collect(),
            LlmContent::Text(t) => vec![t.clone()],
        }
    }

    fn write(root: &Path, rel: &str, content: &[u8]) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    #[tokio::test]
    async fn reads_files_and_globs_with_separators() {
        let (_d, root, ctx) = setup();
        write(&root, "src/a.rs", b"fn a() {}\n");
        write(&root, "src/sub/b.rs", b"fn b() {}\n");
        write(&root, "src/c.txt", b"c\n");
        write(&root, "README.md", b"# hi\n");
        let result = run_tool(&ctx, json!({"paths": ["README.md", "src/**/*.rs"]})).await;
        assert_eq!(result.error, None);
        assert_eq!(
            texts(&result),
            vec![
                format!("--- {} ---\n\n# hi\n\n\n", root.join("README.md").display()),
                format!(
                    "--- {} ---\n\nfn a() {{}}\n\n\n",
                    root.join("src/a.rs").display()
                ),
                format!(
                    "--- {} ---\n\nfn b() {{}}\n\n\n",
                    root.join("src/sub/b.rs").display()
                ),
                "--- End of content ---".to_owned(),
            ]
        );
        assert_eq!(
            result.display,
            "Read 3 file(s): README.md, src/a.rs, src/sub/b.rs"
        );
        // `*` does not cross directories.
        let top = run_tool(&ctx, json!({"paths": ["src/*.rs"]})).await;
        assert_eq!(texts(&top).len(), 2);
    }

    #[tokio::test]
    async fn directories_default_excludes_and_user_excludes() {
        let (_d, root, ctx) = setup();
        write(&root, "pkg/index.js", b"x\n");
        write(&root, "pkg/node_modules/dep/index.js", b"dep\n");
        write(&root, "pkg/package-lock.json", b"{}\n");
        write(&root, "pkg/deep/d.js", b"d\n");
        write(&root, "pkg/deep/skip.log", b"log\n");
        let result = run_tool(&ctx, json!({"paths": ["pkg"], "exclude": ["*.log"]})).await;
        let all = texts(&result).join("");
        assert!(all.contains("pkg/index.js ---"));
        assert!(all.contains("pkg/deep/d.js ---"));
        assert!(!all.contains("node_modules"));
        assert!(!all.contains("package-lock"));
        assert!(!all.contains("skip.log"));
        let flat = run_tool(&ctx, json!({"paths": ["pkg"], "recursive": false})).await;
        let all = texts(&flat).join("");
        assert!(!all.contains("d.js"));
        let everything =
            run_tool(&ctx, json!({"paths": ["pkg"], "useDefaultExcludes": false})).await;
        let all = texts(&everything).join("");
        assert!(all.contains("node_modules/dep/index.js ---"));
        assert!(all.contains("package-lock.json ---"));
        // Named explicitly, a lock file is read even with default excludes.
        let named = run_tool(&ctx, json!({"paths": ["pkg/package-lock.json"]})).await;
        assert!(texts(&named)[0].contains("{}"));
    }

    #[tokio::test]
    async fn ignore_files_are_respected_unless_disabled() {
        let (_d, root, ctx) = setup();
        fs::create_dir(root.join(".git")).unwrap();
        write(&root, ".gitignore", b"gen/\n");
        write(&root, ".geminiignore", b"*.secret\n");
        write(&root, "gen/out.rs", b"generated\n");
        write(&root, "k.secret", b"key\n");
        write(&root, "main.rs", b"main\n");
        let result = run_tool(&ctx, json!({"paths": ["**/*"]})).await;
        let all = texts(&result).join("");
        assert!(all.contains("main.rs ---"));
        assert!(!all.contains("generated"));
        assert!(!all.contains("key"));
        assert!(!all.contains(".git/"));
        let explicit = run_tool(&ctx, json!({"paths": ["k.secret"]})).await;
        assert!(
            explicit
                .display
                .contains("k.secret (excluded by .gitignore or .geminiignore)")
        );
        let open = run_tool(
            &ctx,
            json!({"paths": ["**/*.rs", "k.secret"], "file_filtering_options": {"respect_git_ignore": false, "respect_gemini_ignore": false}}),
        )
        .await;
        let all = texts(&open).join("");
        assert!(all.contains("generated"));
        assert!(all.contains("key"));
    }

    #[tokio::test]
    async fn media_only_when_asked_for_and_binaries_skipped() {
        let (_d, root, ctx) = setup();
        write(&root, "img/a.png", b"\x89PNG\r\n\x1a\n");
        write(&root, "img/b.pdf", b"%PDF-1.4");
        write(&root, "img/c.dat", b"\0\x01\x02");
        write(&root, "img/notes.txt", b"notes\n");
        let result = run_tool(&ctx, json!({"paths": ["img"]})).await;
        let LlmContent::Parts(parts) = &result.llm_content else {
            panic!("expected parts")
        };
        assert!(parts.iter().all(|p| p.inline_data.is_none()));
        assert!(
            result
                .display
                .contains("img/a.png (media file not asked for"),
            "{}",
            result.display
        );
        assert!(
            result.display.contains("img/c.dat (binary file)"),
            "{}",
            result.display
        );
        assert!(
            result
                .display
                .starts_with("Read 1 file(s): img/notes.txt\nSkipped 3: ")
        );

        let by_ext = run_tool(&ctx, json!({"paths": ["img/*.png", "img/b.pdf"]})).await;
        let LlmContent::Parts(parts) = &by_ext.llm_content else {
            panic!("expected parts")
        };
        let inline: Vec<&str> = parts
            .iter()
            .filter_map(|p| p.inline_data.as_ref().map(|d| d.mime_type.as_str()))
            .collect();
        assert_eq!(inline, vec!["image/png", "application/pdf"]);
        let png = parts.iter().find_map(|p| p.inline_data.as_ref()).unwrap();
        assert_eq!(png.data, "iVBORw0KGgo=");
        assert!(texts(&by_ext)[0].ends_with("[Attached: image/png]\n\n"));
    }

    #[tokio::test]
    async fn escapes_missing_paths_and_bad_arguments() {
        let (_d, root, ctx) = setup();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("s.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("s.txt"), root.join("s-link.txt")).unwrap();
        write(&root, "ok.txt", b"ok\n");
        let result = run_tool(
            &ctx,
            json!({"paths": ["../x", "out/s.txt", "s-link.txt", "missing.txt", "../*.txt", outside.path().join("*.txt").to_str().unwrap(), "*.txt"]}),
        )
        .await;
        let all = texts(&result).join("");
        assert!(!all.contains("secret"), "{all}");
        assert!(all.contains("--- ") && all.contains("ok.txt ---"));
        for expected in [
            "../x (outside the workspace)",
            "out/s.txt (outside the workspace)",
            "missing.txt (not found)",
            "s-link.txt (symlink to outside the workspace)",
        ] {
            assert!(
                result.display.contains(expected),
                "{expected}: {}",
                result.display
            );
        }
        let none = run_tool(&ctx, json!({"paths": ["nothing/*.zz"]})).await;
        assert_eq!(none.error, None);
        assert!(texts(&none)[0].starts_with("No files were read"));
        for args in [
            json!({}),
            json!({"paths": []}),
            json!({"paths": "x"}),
            json!({"paths": ["["]}),
        ] {
            let result = run_tool(&ctx, args.clone()).await;
            let ok = result.error.is_some() || texts(&result)[0].starts_with("No files were read");
            assert!(ok, "{args}: {result:?}");
        }
    }

    #[tokio::test]
    async fn output_is_bounded_and_long_files_are_cut() {
        let (_d, root, mut ctx) = setup();
        let long: String = (1..=2500).map(|i| format!("{i}\n")).collect();
        write(&root, "a_long.txt", long.as_bytes());
        let result = run_tool(&ctx, json!({"paths": ["a_long.txt"]})).await;
        assert!(texts(&result)[0].contains("To read more, call read_file with start_line: 2001."));

        let mut services = crate::tools::ToolServices::default();
        services.limits.max_output_chars = 2000;
        ctx.services = std::sync::Arc::new(services);
        write(&root, "b.txt", b"b\n");
        let result = run_tool(&ctx, json!({"paths": ["*.txt"]})).await;
        let parts = texts(&result);
        assert!(
            parts[0].contains("[Cut to fit the output limit: lines 1-"),
            "{}",
            parts[0]
        );
        assert!(parts.iter().map(|p| p.len()).sum::<usize>() < 2500);
        assert!(
            result
                .display
                .contains("1 more file(s) (output limit reached"),
            "{}",
            result.display
        );
    }
}
