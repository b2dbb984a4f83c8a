//! `list_directory`: the entries of one directory.

use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::{Value, json};

use super::files::{self, DirEntryInfo};
use super::search_start::{self, FilteringOptions, StartMessages};
use super::{ToolContext, ToolError, ToolErrorKind, ToolResult, walk};
use crate::config::FileFiltering;

/// Lists a directory: folders first, then files with their sizes, and a
/// count of entries hidden by ignore files.
pub struct ListDirectory {
    schema: Value,
}

/// The arguments of a `list_directory` call.
#[derive(Debug, Deserialize)]
pub struct Params {
    dir_path: String,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    file_filtering_options: Option<FilteringOptions>,
}

impl ListDirectory {
    pub const NAME: &'static str = "list_directory";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "dir_path": {
                        "description": "Path of the directory to list, absolute or relative to the workspace root.",
                        "type": "string"
                    },
                    "ignore": {
                        "description": "Glob patterns of entry names to leave out.",
                        "items": {"type": "string"},
                        "type": "array"
                    },
                    "file_filtering_options": {
                        "description": "Whether to hide entries excluded by ignore files.",
                        "type": "object",
                        "properties": {
                            "respect_git_ignore": {
                                "description": "Hide entries matched by .gitignore (default true).",
                                "type": "boolean"
                            },
                            "respect_gemini_ignore": {
                                "description": "Hide entries matched by .geminiignore (default true).",
                                "type": "boolean"
                            }
                        }
                    }
                },
                "required": ["dir_path"]
            }),
        }
    }
}

crate::tools::tool_info! {
    default ListDirectory,
    display: "ReadFolder",
    kind: Read,
    description: "Lists the files and subdirectories directly inside a directory. Folders come first and are marked [DIR]; files show their size. Entries excluded by .gitignore or .geminiignore are hidden and counted. Use it to explore the project before reading or changing files.",
    fn describe_call(&self, args: &Value) -> String {
        args.get("dir_path")
            .and_then(Value::as_str)
            .unwrap_or(".")
            .to_owned()
    }
}

impl crate::tools::TypedTool for ListDirectory {
    type Args = Params;

    async fn run(&self, params: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let (dir, roots) = files::resolve_readable(ctx, &params.dir_path)?;
        let ignore = build_globs(&params.ignore)
            .map_err(|e| ToolError::new(ToolErrorKind::InvalidParams, e))?;
        let filtering = params
            .file_filtering_options
            .unwrap_or_default()
            .over(ctx.file_filtering);
        walk::refuse_ignored_start(&dir, &roots, filtering)?;
        let task_dir = dir.clone();
        let listing = tokio::task::spawn_blocking(move || list(&task_dir, filtering, &ignore))
            .await
            .map_err(|e| {
                ToolError::new(
                    ToolErrorKind::Execution,
                    format!("Error listing directory: {e}"),
                )
            })??;
        Ok(format_listing(&dir, listing))
    }
}

fn build_globs(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob =
            Glob::new(pattern).map_err(|e| format!("Invalid ignore pattern '{pattern}': {e}"))?;
        builder.add(glob);
    }
    builder
        .build()
        .map_err(|e| format!("Invalid ignore patterns: {e}"))
}

struct Listing {
    entries: Vec<DirEntryInfo>,
    ignored: usize,
}

fn list(dir: &Path, filtering: FileFiltering, ignore: &GlobSet) -> Result<Listing, ToolError> {
    search_start::check_start(
        dir,
        false,
        &StartMessages {
            not_found: "Error: Directory not found",
            not_a_dir: "Error: Path is not a directory",
            inaccessible: "Error listing directory",
        },
    )?;
    let all = files::read_dir_classified(dir, filtering, true).map_err(|e| {
        ToolError::new(
            ToolErrorKind::Io,
            format!("Error listing directory {}: {e}", dir.display()),
        )
    })?;
    let mut ignored = 0;
    let mut entries: Vec<DirEntryInfo> = all
        .into_iter()
        .filter(|e| !ignore.is_match(&e.name))
        .filter(|e| {
            if e.ignored {
                ignored += 1;
            }
            !e.ignored
        })
        .collect();
    entries.sort_by(|a, b| {
        b.is_dir
            .cmp(&a.is_dir)
            .then_with(|| files::locale_order(&a.name, &b.name))
    });
    Ok(Listing { entries, ignored })
}

fn format_listing(dir: &std::path::Path, listing: Listing) -> ToolResult {
    let Listing { entries, ignored } = listing;
    if entries.is_empty() {
        let mut text = format!("Directory {} is empty.", dir.display());
        if ignored > 0 {
            text.push_str(&format!(" ({ignored} ignored)"));
        }
        return ToolResult::success(text.clone(), text);
    }
    let mut text = format!("Directory listing for {}:\n", dir.display());
    let lines: Vec<String> = entries
        .iter()
        .map(|e| {
            if e.is_dir {
                format!("[DIR] {}", e.name)
            } else {
                format!("{} ({} bytes)", e.name, e.size)
            }
        })
        .collect();
    text.push_str(&lines.join("\n"));
    let mut display = format!("Listed {} item(s).", entries.len());
    if ignored > 0 {
        text.push_str(&format!("\n\n({ignored} ignored)"));
        display.push_str(&format!(" ({ignored} ignored)"));
    }
    // People see the entries, one a line, folders with a trailing slash.
    let shown: Vec<String> = entries
        .iter()
        .map(|e| {
            if e.is_dir {
                format!("{}/", e.name)
            } else {
                e.name.clone()
            }
        })
        .collect();
    ToolResult::success(text, display).with_output(shown.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;
    use crate::tools::test_support::text;
    use std::fs;

    fn ctx(root: &std::path::Path) -> ToolContext {
        ToolContext::new(vec![root.to_path_buf()])
    }

    #[tokio::test]
    async fn lists_dirs_first_with_sizes_and_ignored_count() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::write(root.join("hello.txt"), "hello\n").unwrap();
        fs::write(root.join("README.md"), "readme\n").unwrap();
        fs::create_dir(root.join("src")).unwrap();
        fs::write(root.join(".geminiignore"), "*.secret\n").unwrap();
        fs::write(root.join("key.secret"), "k").unwrap();
        let tool = ListDirectory::new();
        let result = tool
            .execute(
                json!({"dir_path": root.to_str().unwrap(), "ignore": [".gemini*"]}),
                &ctx(&root),
            )
            .await;
        assert_eq!(result.error, None);
        assert_eq!(
            text(&result),
            format!(
                "Directory listing for {}:\n[DIR] src\nhello.txt (6 bytes)\nREADME.md (7 bytes)\n\n(1 ignored)",
                root.display()
            )
        );
        assert_eq!(result.display, "Listed 3 item(s). (1 ignored)");
        // The card's entries: one a line, folders marked with a slash.
        assert_eq!(result.output.as_deref(), Some("src/\nhello.txt\nREADME.md"));
    }

    #[tokio::test]
    async fn relative_paths_errors_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir(root.join("empty")).unwrap();
        fs::write(root.join("f.txt"), "x").unwrap();
        let tool = ListDirectory::new();
        let c = ctx(&root);
        let empty = tool.execute(json!({"dir_path": "empty"}), &c).await;
        assert_eq!(
            text(&empty),
            format!("Directory {} is empty.", root.join("empty").display())
        );
        let missing = tool.execute(json!({"dir_path": "nope"}), &c).await;
        assert_eq!(missing.error.unwrap().kind, ToolErrorKind::NotFound);
        let file = tool.execute(json!({"dir_path": "f.txt"}), &c).await;
        assert_eq!(file.error.unwrap().kind, ToolErrorKind::NotADirectory);
        let escape = tool.execute(json!({"dir_path": "../"}), &c).await;
        assert_eq!(
            escape.error.unwrap().kind,
            ToolErrorKind::PathNotInWorkspace
        );
    }
}
