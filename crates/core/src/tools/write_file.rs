//! `write_file`: creates a file or replaces its whole content.

use serde::Deserialize;
use serde_json::{Value, json};

use super::fs_write;
use super::planned_edit::PlannedEdit;
use super::{ToolContext, ToolError, ToolResult, text};

/// Writes a whole file, after the user approved the diff.
pub struct WriteFile {
    schema: Value,
}

impl WriteFile {
    pub const NAME: &'static str = "write_file";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {
                        "description": "Path of the file to write.",
                        "type": "string"
                    },
                    "content": {
                        "description": "The complete new content of the file, exactly as it should be saved (not a fragment or a diff).",
                        "type": "string"
                    }
                },
                "required": ["file_path", "content"]
            }),
        }
    }
}

/// The arguments of a `write_file` call.
#[derive(Debug, Deserialize)]
pub struct Params {
    file_path: String,
    content: String,
}

/// What the call would write, computed from the disk each time.
async fn plan(args: Params, ctx: &ToolContext) -> Result<PlannedEdit, ToolError> {
    let Params { file_path, content } = args;
    // In plan mode: the plan file in the plans directory.
    let (path, roots) = crate::plan::resolve_for_edit(ctx, &file_path)?;
    let task_path = path.clone();
    let existing = fs_write::blocking(move || {
        let existing = fs_write::read_for_edit_in(&roots, &task_path)?;
        if existing.is_none() {
            fs_write::check_creatable(&task_path)?;
        }
        Ok(existing)
    })
    .await?;
    // In review mode the file is what the turn staged so far.
    let existing = match &ctx.staging {
        Some(staging) => staging.overlay(&path, existing),
        None => existing,
    };
    // A CRLF file is edited as LF text and written back with CRLF.
    let proposed = match &existing {
        Some(file) if file.line_ending == text::LineEnding::Crlf => {
            text::normalize_newlines(&content)
        }
        _ => content,
    };
    Ok(PlannedEdit {
        path,
        existing,
        new_text: proposed,
    })
}

crate::tools::tool_info! {
    default WriteFile,
    display: "WriteFile",
    kind: Edit,
    description: "Writes the complete content of a file, creating it (and any missing parent directories) or replacing what it holds. The user sees a diff and may approve, edit or reject it. An existing file keeps its line endings, encoding and permissions. For small changes to a large file prefer the replace tool.",
    fn describe_call(&self, args: &Value) -> String {
        args.get("file_path")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    }

    fn modified_args(&self, args: &Value, content: &str) -> Option<Value> {
        let mut args = args.clone();
        args.as_object_mut()?
            .insert("content".to_owned(), Value::String(content.to_owned()));
        Some(args)
    }
}

impl crate::tools::TypedTool for WriteFile {
    type Args = Params;

    async fn prepare(&self, args: Params, ctx: &ToolContext) -> crate::tools::typed::Prepared {
        Ok(Some(plan(args, ctx).await?.confirmation(ctx, "Overwrite")))
    }

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let edit = plan(args, ctx).await?;
        let path = edit.path.clone();
        let written = edit.write(ctx).await?;
        let message = if written.created {
            format!(
                "Successfully created and wrote to new file: {}.",
                path.display()
            )
        } else {
            format!("Successfully overwrote file: {}.", path.display())
        };
        Ok(ToolResult::success(message, written.summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolErrorKind;
    use crate::tools::test_support::{assert_wrote, setup, text as text_of};
    use crate::tools::{Tool, ToolInfo};
    use gd_protocol::ConfirmationDetails;
    use gd_protocol::DiffRowKind;
    use pretty_assertions::assert_eq;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[tokio::test]
    async fn creates_new_files_with_parents() {
        let (_d, root, ctx) = setup();
        let tool = WriteFile::new();
        let args = json!({"file_path": "src/deep/new.rs", "content": "fn a() {}\nfn b() {}\n"});
        let Some(ConfirmationDetails::Edit {
            title,
            file_path,
            file_name,
            original,
            proposed,
            unified_diff,
            side_by_side,
            is_new_file,
        }) = tool.prepare(&args, &ctx).await.unwrap()
        else {
            panic!("expected an edit confirmation");
        };
        let path = root.join("src/deep/new.rs");
        assert_eq!(title, "Create src/deep/new.rs");
        assert_eq!(file_path, path.display().to_string());
        assert_eq!(file_name, "new.rs");
        assert_eq!(original, None);
        assert_eq!(proposed, "fn a() {}\nfn b() {}\n");
        assert!(
            unified_diff.starts_with("--- /dev/null\n+++ b/src/deep/new.rs\n@@ -0,0 +1,2 @@\n")
        );
        assert_eq!(side_by_side.added, 2);
        assert!(is_new_file);
        // Preparing wrote nothing.
        assert!(!root.join("src").exists());

        let result = tool.execute(args, &ctx).await;
        assert_wrote(
            &result,
            &format!(
                "Successfully created and wrote to new file: {}.",
                path.display()
            ),
            "Created src/deep/new.rs (+2)",
            &path,
            "fn a() {}\nfn b() {}\n",
        );
    }

    #[tokio::test]
    async fn overwrites_keeping_mode_crlf_and_encoding() {
        let (_d, root, ctx) = setup();
        let path = root.join("run.cmd");
        fs::write(&path, b"caf\xE9\r\nold\r\nsame\r\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        let tool = WriteFile::new();
        let args =
            json!({"file_path": path.to_str().unwrap(), "content": "café\nnew\nsame\nmore\n"});
        let Some(ConfirmationDetails::Edit {
            original,
            side_by_side,
            is_new_file,
            title,
            ..
        }) = tool.prepare(&args, &ctx).await.unwrap()
        else {
            panic!("expected an edit confirmation");
        };
        assert_eq!(original.as_deref(), Some("café\nold\nsame\n"));
        assert!(!is_new_file);
        assert_eq!(title, "Overwrite run.cmd");
        assert_eq!((side_by_side.added, side_by_side.removed), (2, 1));
        assert_eq!(
            side_by_side.hunks[0]
                .rows
                .iter()
                .map(|r| r.kind)
                .collect::<Vec<_>>(),
            vec![
                DiffRowKind::Equal,
                DiffRowKind::Changed,
                DiffRowKind::Equal,
                DiffRowKind::Added
            ]
        );
        let result = tool.execute(args, &ctx).await;
        assert_eq!(result.error, None);
        assert_eq!(
            text_of(&result),
            format!("Successfully overwrote file: {}.", path.display())
        );
        assert_eq!(result.display, "Updated run.cmd (+2 \u{2212}1)");
        assert_eq!(
            fs::read(&path).unwrap(),
            b"caf\xE9\r\nnew\r\nsame\r\nmore\r\n"
        );
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        let leftovers: Vec<_> = fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "run.cmd")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[tokio::test]
    async fn execute_reads_the_disk_again() {
        let (_d, root, ctx) = setup();
        let tool = WriteFile::new();
        let args = json!({"file_path": "f.txt", "content": "x\n"});
        let confirmation = tool.prepare(&args, &ctx).await.unwrap();
        assert!(matches!(
            confirmation,
            Some(ConfirmationDetails::Edit {
                is_new_file: true,
                ..
            })
        ));
        // The file appears between the confirmation and the execution.
        fs::write(root.join("f.txt"), "a\r\nb\r\n").unwrap();
        let result = tool.execute(args, &ctx).await;
        assert_eq!(result.display, "Updated f.txt (+1 \u{2212}2)");
        assert_eq!(fs::read(root.join("f.txt")).unwrap(), b"x\r\n");
    }

    #[tokio::test]
    async fn refuses_outside_paths_directories_and_files_as_parents() {
        let (_d, root, ctx) = setup();
        let tool = WriteFile::new();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        for path in ["../escape.txt", "out/x.txt", "/etc/gd-test.txt"] {
            let args = json!({"file_path": path, "content": "x"});
            let err = tool.prepare(&args, &ctx).await.unwrap_err();
            assert_eq!(err.kind, ToolErrorKind::PathNotInWorkspace, "{path}");
            let result = tool.execute(args, &ctx).await;
            assert_eq!(
                result.error.unwrap().kind,
                ToolErrorKind::PathNotInWorkspace
            );
        }
        assert!(fs::read_dir(outside.path()).unwrap().next().is_none());
        fs::create_dir(root.join("dir")).unwrap();
        let err = tool
            .prepare(&json!({"file_path": "dir", "content": "x"}), &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::IsADirectory);
        fs::write(root.join("file"), "x").unwrap();
        let err = tool
            .prepare(&json!({"file_path": "file/sub.txt", "content": "x"}), &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::NotADirectory);
        let err = tool
            .prepare(&json!({"file_path": "a.txt"}), &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::InvalidParams);
    }

    #[tokio::test]
    async fn modified_args_replace_the_content() {
        let (_d, root, ctx) = setup();
        let tool = WriteFile::new();
        let args = json!({"file_path": "m.txt", "content": "model\n"});
        let modified = tool.modified_args(&args, "user\n").unwrap();
        assert_eq!(modified, json!({"file_path": "m.txt", "content": "user\n"}));
        tool.execute(modified, &ctx).await;
        assert_eq!(fs::read_to_string(root.join("m.txt")).unwrap(), "user\n");
        assert_eq!(tool.modified_args(&json!("x"), "c"), None);
    }
}
