//! `replace`: replaces exact text in a file, or creates a file when
//! `old_string` is empty.
//!
//! Matching is exact (on LF text for CRLF files, which are written back with
//! CRLF). When the exact text is not found, one whitespace-flexible attempt
//! is made: whole lines compared with their leading and trailing whitespace
//! trimmed; a single such match is applied with `new_string` re-indented to
//! the file's indentation. `instruction` is informational (no model-based
//! correction of the strings is attempted).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use super::fs_write;
use super::planned_edit::PlannedEdit;
use super::{ToolContext, ToolError, ToolErrorKind, ToolResult, text};

/// Replaces text in a file, after the user approved the diff.
pub struct Replace {
    schema: Value,
}

impl Replace {
    pub const NAME: &'static str = "replace";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {
                        "description": "Path of the file to change.",
                        "type": "string"
                    },
                    "instruction": {
                        "description": "One sentence on what this change does and why, e.g. \"Return an error instead of panicking when the config file is missing.\"",
                        "type": "string"
                    },
                    "old_string": {
                        "description": "The exact text to replace, copied from the file with its whitespace and indentation, and with enough surrounding lines to match only one place. Empty to create a new file.",
                        "type": "string"
                    },
                    "new_string": {
                        "description": "The exact text to put in place of old_string, with the indentation it should have in the file.",
                        "type": "string"
                    },
                    "allow_multiple": {
                        "type": "boolean",
                        "description": "Replace every occurrence of old_string instead of requiring exactly one (default false)."
                    }
                },
                "required": ["file_path", "instruction", "old_string", "new_string"]
            }),
        }
    }
}

/// The edit a call would make, computed from the disk each time.
#[derive(Debug)]
struct Plan {
    edit: PlannedEdit,
    replacements: usize,
    /// Matched ignoring leading and trailing whitespace of each line.
    flexible: bool,
}

/// The arguments of a `replace` call (`instruction` is only shown).
#[derive(Debug, Deserialize)]
pub struct Params {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    allow_multiple: Option<bool>,
}

async fn plan(args: Params, ctx: &ToolContext) -> Result<Plan, ToolError> {
    // In plan mode: the plan file in the plans directory.
    let (path, roots) = crate::plan::resolve_for_edit(ctx, &args.file_path)?;
    let staging = ctx.staging.clone();
    fs_write::blocking(move || {
        let existing = fs_write::read_for_edit_in(&roots, &path)?;
        // In review mode the file is what the turn staged so far.
        let existing = match &staging {
            Some(staging) => staging.overlay(&path, existing),
            None => existing,
        };
        compute(existing, path, &args)
    })
    .await
}

fn compute(
    existing: Option<fs_write::TextFile>,
    path: PathBuf,
    request: &Params,
) -> Result<Plan, ToolError> {
    let Some(file) = existing else {
        if !request.old_string.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::NotFound,
                format!(
                    "File not found: {}. To create a new file, call replace with an empty old_string and the whole content as new_string.",
                    path.display()
                ),
            ));
        }
        fs_write::check_creatable(&path)?;
        return Ok(Plan {
            edit: PlannedEdit {
                path,
                existing: None,
                new_text: request.new_string.clone(),
            },
            replacements: 1,
            flexible: false,
        });
    };
    if file.binary {
        return Err(ToolError::new(
            ToolErrorKind::BinaryFile,
            format!("Cannot edit binary file: {}", path.display()),
        ));
    }
    let crlf = file.line_ending == text::LineEnding::Crlf;
    let normalize = |s: &str| {
        if crlf {
            text::normalize_newlines(s)
        } else {
            s.to_owned()
        }
    };
    let old = normalize(&request.old_string);
    let new = normalize(&request.new_string);
    if old.is_empty() {
        // An empty old_string creates a file; an existing but empty file
        // may be filled the same way, nothing is lost.
        if !file.text.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::FileExists,
                format!(
                    "File already exists: {}. An empty old_string only creates new files; to change this file, give the exact text to replace as old_string (use read_file to see it), or use write_file to replace all of it.",
                    path.display()
                ),
            ));
        }
        if new.is_empty() {
            return Err(no_change("old_string and new_string are identical"));
        }
        return Ok(Plan {
            edit: PlannedEdit {
                path,
                existing: Some(file),
                new_text: new,
            },
            replacements: 1,
            flexible: false,
        });
    }
    if old == new {
        return Err(no_change("old_string and new_string are identical"));
    }
    let occurrences = file.text.matches(old.as_str()).count();
    let (new_text, replacements, flexible) = match occurrences {
        0 => match flexible_replace(&file.text, &old, &new) {
            Some(replaced) => (replaced, 1, true),
            None => {
                return Err(ToolError::new(
                    ToolErrorKind::NoOccurrence,
                    format!(
                        "Failed to edit {}: old_string was not found in the file (0 occurrences). Read the file again with read_file and copy the text exactly, including whitespace, indentation and line breaks, without adding escapes.",
                        path.display()
                    ),
                ));
            }
        },
        n if n > 1 && request.allow_multiple != Some(true) => {
            return Err(ToolError::new(
                ToolErrorKind::TooManyOccurrences,
                format!(
                    "Failed to edit {}: old_string occurs {n} times, but only one occurrence may be replaced. Add surrounding lines to old_string so that it matches exactly one place, or set allow_multiple to true to replace all {n}.",
                    path.display()
                ),
            ));
        }
        n => (file.text.replace(old.as_str(), &new), n, false),
    };
    if new_text == file.text {
        return Err(no_change("the file content would stay the same"));
    }
    Ok(Plan {
        edit: PlannedEdit {
            path,
            existing: Some(file),
            new_text,
        },
        replacements,
        flexible,
    })
}

fn no_change(why: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::NoChange,
        format!("No change to apply: {why}."),
    )
}

/// Finds `old` in `text` comparing whole lines with leading and trailing
/// whitespace trimmed. With exactly one match, returns `text` with those
/// lines replaced by `new`, re-indented by the difference between the
/// file's indentation and `old`'s.
fn flexible_replace(text: &str, old: &str, new: &str) -> Option<String> {
    let old_body = old.strip_suffix('\n').unwrap_or(old);
    let old_lines: Vec<&str> = old_body.split('\n').collect();
    let anchor = old_lines.iter().position(|l| !l.trim().is_empty())?;
    // Byte range of each line of the file, with its line break.
    let mut spans = Vec::new();
    let mut offset = 0;
    for piece in text.split_inclusive('\n') {
        spans.push(offset..offset + piece.len());
        offset += piece.len();
    }
    let line = |i: usize| text[spans[i].clone()].trim_end_matches('\n');
    let n = old_lines.len();
    let mut matches = (0..spans.len().saturating_sub(n - 1).min(spans.len()))
        .filter(|&i| (0..n).all(|k| line(i + k).trim() == old_lines[k].trim()));
    let first = matches.next()?;
    if matches.next().is_some() {
        return None;
    }
    let file_indent = leading_whitespace(line(first + anchor));
    let old_indent = leading_whitespace(old_lines[anchor]);
    let start = spans[first].start;
    let end = spans[first + n - 1].end;
    let replacement = if new.is_empty() {
        String::new()
    } else {
        let new_body = new.strip_suffix('\n').unwrap_or(new);
        let mut lines: Vec<String> = new_body
            .split('\n')
            .map(|l| reindent(l, old_indent, file_indent))
            .collect();
        if text[..end].ends_with('\n') {
            lines.push(String::new());
        }
        lines.join("\n")
    };
    Some(format!("{}{replacement}{}", &text[..start], &text[end..]))
}

fn leading_whitespace(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Moves `line` from `old_indent` to `new_indent`, keeping its indentation
/// relative to `old_indent`.
fn reindent(line: &str, old_indent: &str, new_indent: &str) -> String {
    if line.trim().is_empty() {
        return line.to_owned();
    }
    if let Some(rest) = line.strip_prefix(old_indent) {
        return format!("{new_indent}{rest}");
    }
    let lead = leading_whitespace(line);
    if old_indent.starts_with(lead) {
        // Less indented than old_string's anchor line: outdent as much.
        let less = old_indent.len() - lead.len();
        let keep = new_indent.len().saturating_sub(less);
        return format!("{}{}", &new_indent[..keep], line.trim_start());
    }
    line.to_owned()
}

crate::tools::tool_info! {
    default Replace,
    display: "Edit",
    kind: Edit,
    description: "Replaces text in a file. old_string must be copied exactly from the current file (read it first), including whitespace and indentation, with enough context lines before and after to match exactly one place; set allow_multiple to replace every occurrence instead. new_string is the exact replacement. With an empty old_string and a path that does not exist yet, creates the file with new_string as its content. The user sees a diff and may approve, edit or reject it.",
    fn describe_call(&self, args: &Value) -> String {
        let path = args.get("file_path").and_then(Value::as_str).unwrap_or("");
        match args.get("instruction").and_then(Value::as_str) {
            Some(instruction) if !instruction.trim().is_empty() => {
                format!("{path}: {}", instruction.trim())
            }
            _ => path.to_owned(),
        }
    }

    /// Arguments that turn the file into exactly `content`: `old_string` is
    /// the whole current file (empty for a missing or empty file, which
    /// `replace` then creates or fills). Should the file change before the
    /// call runs, `old_string` no longer matches and the call fails rather
    /// than overwrite the change. Needs an absolute `file_path` (there is
    /// no workspace here to resolve a relative one).
    fn modified_args(&self, args: &Value, content: &str) -> Option<Value> {
        let file_path = args.get("file_path")?.as_str()?;
        let path = Path::new(file_path);
        if !path.is_absolute() {
            return None;
        }
        let current = match fs_write::read_for_edit(path).ok()? {
            None => String::new(),
            Some(file) if file.binary => return None,
            Some(file) => file.text,
        };
        let mut modified = args.as_object()?.clone();
        modified.insert("old_string".to_owned(), Value::String(current));
        modified.insert("new_string".to_owned(), Value::String(content.to_owned()));
        modified.insert("allow_multiple".to_owned(), Value::Bool(false));
        Some(Value::Object(modified))
    }
}

impl crate::tools::TypedTool for Replace {
    type Args = Params;

    async fn prepare(&self, args: Params, ctx: &ToolContext) -> crate::tools::typed::Prepared {
        Ok(Some(plan(args, ctx).await?.edit.confirmation(ctx, "Edit")))
    }

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let Plan {
            edit,
            replacements,
            flexible,
        } = plan(args, ctx).await?;
        let path = edit.path.clone();
        let written = edit.write(ctx).await?;
        let mut message = if written.created {
            format!(
                "Created new file: {} with provided content.",
                path.display()
            )
        } else {
            format!(
                "Successfully modified file: {} ({replacements} replacements).",
                path.display()
            )
        };
        if flexible {
            message.push_str(
                " Note: old_string did not match exactly; it matched one place when leading and trailing whitespace of each line was ignored, and new_string was re-indented to the file's indentation.",
            );
        }
        Ok(ToolResult::success(message, written.summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::{assert_wrote, setup, text as text_of};
    use crate::tools::{Tool, ToolInfo};
    use gd_protocol::ConfirmationDetails;
    use pretty_assertions::assert_eq;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn args(path: &Path, old: &str, new: &str) -> Value {
        json!({
            "file_path": path.to_str().unwrap(),
            "instruction": "test edit",
            "old_string": old,
            "new_string": new
        })
    }

    async fn replace(ctx: &ToolContext, args: Value) -> ToolResult {
        Replace::new().execute(args, ctx).await
    }

    #[tokio::test]
    async fn replaces_exactly_one_occurrence() {
        let (_d, root, ctx) = setup();
        let path = root.join("a.rs");
        fs::write(&path, "fn a() {\n    1\n}\n").unwrap();
        let result = replace(&ctx, args(&path, "    1\n", "    2\n")).await;
        assert_wrote(
            &result,
            &format!(
                "Successfully modified file: {} (1 replacements).",
                path.display()
            ),
            "Updated a.rs (+1 \u{2212}1)",
            &path,
            "fn a() {\n    2\n}\n",
        );
    }

    #[tokio::test]
    async fn zero_and_many_occurrences_are_errors() {
        let (_d, root, ctx) = setup();
        let path = root.join("m.txt");
        fs::write(&path, "x = 1\ny = 1\nz = 1\n").unwrap();
        let none = replace(&ctx, args(&path, "w = 1", "w = 2")).await;
        let error = none.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::NoOccurrence);
        assert!(error.message.contains("0 occurrences"), "{}", error.message);
        assert!(error.message.contains("read_file"));
        assert!(error.message.contains("whitespace, indentation"));

        let many = replace(&ctx, args(&path, "= 1", "= 2")).await;
        let error = many.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::TooManyOccurrences);
        assert!(
            error.message.contains("occurs 3 times"),
            "{}",
            error.message
        );
        assert!(error.message.contains("allow_multiple"));
        assert_eq!(fs::read_to_string(&path).unwrap(), "x = 1\ny = 1\nz = 1\n");

        let mut all = args(&path, "= 1", "= 2");
        all["allow_multiple"] = json!(true);
        let result = replace(&ctx, all).await;
        assert_eq!(result.error, None);
        assert!(text_of(&result).ends_with("(3 replacements)."));
        assert_eq!(fs::read_to_string(&path).unwrap(), "x = 2\ny = 2\nz = 2\n");
    }

    #[tokio::test]
    async fn identical_strings_and_bad_arguments() {
        let (_d, root, ctx) = setup();
        let path = root.join("s.txt");
        fs::write(&path, "same\n").unwrap();
        let result = replace(&ctx, args(&path, "same", "same")).await;
        assert_eq!(result.error.unwrap().kind, ToolErrorKind::NoChange);
        let mut bad = args(&path, "same", "other");
        bad["allow_multiple"] = json!("yes");
        assert_eq!(
            replace(&ctx, bad).await.error.unwrap().kind,
            ToolErrorKind::InvalidParams
        );
        let missing_new = json!({"file_path": "s.txt", "instruction": "", "old_string": "same"});
        assert_eq!(
            replace(&ctx, missing_new).await.error.unwrap().kind,
            ToolErrorKind::InvalidParams
        );
    }

    #[tokio::test]
    async fn empty_old_string_creates_new_files_only() {
        let (_d, root, ctx) = setup();
        let path = root.join("new/file.txt");
        let result = replace(&ctx, args(&path, "", "hello\n")).await;
        assert_wrote(
            &result,
            &format!(
                "Created new file: {} with provided content.",
                path.display()
            ),
            "Created new/file.txt (+1)",
            &path,
            "hello\n",
        );

        let again = replace(&ctx, args(&path, "", "other\n")).await;
        let error = again.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::FileExists);
        assert!(error.message.starts_with("File already exists"));

        let missing = replace(&ctx, args(&root.join("nope.txt"), "x", "y")).await;
        let error = missing.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::NotFound);
        assert!(
            error.message.contains("empty old_string"),
            "{}",
            error.message
        );

        // An existing empty file can be filled.
        let empty = root.join("empty.txt");
        fs::write(&empty, "").unwrap();
        let result = replace(&ctx, args(&empty, "", "filled\n")).await;
        assert_eq!(result.error, None);
        assert_eq!(fs::read_to_string(&empty).unwrap(), "filled\n");
    }

    #[tokio::test]
    async fn crlf_files_match_on_lf_and_stay_crlf() {
        let (_d, root, ctx) = setup();
        let path = root.join("w.txt");
        fs::write(&path, "one\r\ntwo\r\nthree\r\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        let result = replace(&ctx, args(&path, "one\ntwo\n", "one\n2\n")).await;
        assert_eq!(result.error, None);
        assert_eq!(fs::read(&path).unwrap(), b"one\r\n2\r\nthree\r\n");
        // CRLF in the strings works too.
        let result = replace(&ctx, args(&path, "2\r\nthree", "two\r\nthree")).await;
        assert_eq!(result.error, None);
        assert_eq!(fs::read(&path).unwrap(), b"one\r\ntwo\r\nthree\r\n");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[tokio::test]
    async fn utf16_and_latin1_files_keep_their_encoding() {
        let (_d, root, ctx) = setup();
        let path = root.join("u16.txt");
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(
            "größe\r\nzwei\r\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        );
        fs::write(&path, bytes).unwrap();
        let result = replace(&ctx, args(&path, "zwei", "drei")).await;
        assert_eq!(result.error, None);
        let mut expected = vec![0xFF, 0xFE];
        expected.extend(
            "größe\r\ndrei\r\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        );
        assert_eq!(fs::read(&path).unwrap(), expected);

        let latin1 = root.join("l1.txt");
        fs::write(&latin1, b"caf\xE9 noir\n").unwrap();
        let result = replace(&ctx, args(&latin1, "café noir", "café crème")).await;
        assert_eq!(result.error, None);
        assert_eq!(fs::read(&latin1).unwrap(), b"caf\xE9 cr\xE8me\n");
    }

    #[tokio::test]
    async fn whitespace_flexible_match_reindents() {
        let (_d, root, ctx) = setup();
        let path = root.join("f.rs");
        fs::write(&path, "fn main() {\n    if a {\n        b();\n    }\n}\n").unwrap();
        // Two-space indentation instead of four, and trailing spaces.
        let old = "  if a {  \n      b();\n  }";
        let new = "  if a {\n      b();\n      c();\n  }";
        let result = replace(&ctx, args(&path, old, new)).await;
        assert_eq!(result.error, None, "{result:?}");
        assert!(text_of(&result).contains("did not match exactly"));
        assert!(text_of(&result).contains("(1 replacements)"));
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "fn main() {\n    if a {\n        b();\n        c();\n    }\n}\n"
        );
    }

    #[test]
    fn flexible_match_needs_exactly_one_place() {
        let text = "a\n  x\nb\n  x\n";
        assert_eq!(flexible_replace(text, "x", "y"), None);
        assert_eq!(
            flexible_replace("a\n  x\nb\n", "x", "y").as_deref(),
            Some("a\n  y\nb\n")
        );
        // Deleting lines removes them entirely.
        assert_eq!(
            flexible_replace("a\n  x\nb", " x \n", "").as_deref(),
            Some("a\nb")
        );
        // The last line without a newline stays without one.
        assert_eq!(
            flexible_replace("a\n\tx", "x", "y\nz").as_deref(),
            Some("a\n\ty\n\tz")
        );
        assert_eq!(flexible_replace("a\nb\n", "   \n", "c"), None);
        assert_eq!(flexible_replace("", "x", "y"), None);
        assert_eq!(flexible_replace("a\n", "a\nb\nc", "y"), None);
        // Less-indented lines of new_string keep their relative indentation.
        assert_eq!(reindent("x", "  ", "    "), "  x");
        assert_eq!(reindent("    y", "  ", "\t"), "\t  y");
    }

    #[tokio::test]
    async fn prepare_shows_the_edit_and_surfaces_errors_before_asking() {
        let (_d, root, ctx) = setup();
        let path = root.join("p.txt");
        fs::write(&path, "alpha\nbeta\n").unwrap();
        let tool = Replace::new();
        let Some(ConfirmationDetails::Edit {
            title,
            original,
            proposed,
            unified_diff,
            is_new_file,
            ..
        }) = tool
            .prepare(&args(&path, "beta", "gamma"), &ctx)
            .await
            .unwrap()
        else {
            panic!("expected an edit confirmation")
        };
        assert_eq!(title, "Edit p.txt");
        assert_eq!(original.as_deref(), Some("alpha\nbeta\n"));
        assert_eq!(proposed, "alpha\ngamma\n");
        assert_eq!(
            unified_diff,
            "--- a/p.txt\n+++ b/p.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n"
        );
        assert!(!is_new_file);
        assert_eq!(fs::read_to_string(&path).unwrap(), "alpha\nbeta\n");
        let err = tool
            .prepare(&args(&path, "delta", "x"), &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::NoOccurrence);
        let err = tool
            .prepare(&args(&root.join("../x"), "", "x"), &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::PathNotInWorkspace);
    }

    #[tokio::test]
    async fn modified_args_write_exactly_the_edited_content() {
        let (_d, root, ctx) = setup();
        let tool = Replace::new();
        // An existing file (CRLF), an empty file and a new file.
        let existing = root.join("e.txt");
        fs::write(&existing, "one\r\ntwo\r\n").unwrap();
        let empty = root.join("empty.txt");
        fs::write(&empty, "").unwrap();
        let new = root.join("sub/new.txt");
        for (path, content, expected) in [
            (&existing, "user text\n", b"user text\r\n".to_vec()),
            (&empty, "filled\n", b"filled\n".to_vec()),
            (&new, "created\n", b"created\n".to_vec()),
            (&root.join("blank.txt"), "", Vec::new()),
        ] {
            let original = args(path, "model old", "model new");
            let modified = tool.modified_args(&original, content).unwrap();
            assert_eq!(modified["instruction"], "test edit");
            assert_eq!(modified["new_string"], content);
            assert_eq!(modified["allow_multiple"], false);
            let confirmation = tool.prepare(&modified, &ctx).await;
            assert!(confirmation.is_ok(), "{path:?}: {confirmation:?}");
            let result = tool.execute(modified, &ctx).await;
            assert_eq!(result.error, None, "{path:?}");
            assert_eq!(fs::read(path).unwrap(), expected, "{path:?}");
        }
        // The file changed after the user edited: the call fails instead of
        // overwriting.
        let modified = tool
            .modified_args(&args(&existing, "a", "b"), "mine\n")
            .unwrap();
        fs::write(&existing, "someone else\n").unwrap();
        let result = tool.execute(modified, &ctx).await;
        assert_eq!(result.error.unwrap().kind, ToolErrorKind::NoOccurrence);
        assert_eq!(fs::read_to_string(&existing).unwrap(), "someone else\n");
        // Relative paths cannot be resolved here.
        assert_eq!(
            tool.modified_args(&json!({"file_path": "rel.txt"}), "x"),
            None
        );
    }

    #[tokio::test]
    async fn binary_files_and_symlinks_out_are_refused() {
        let (_d, root, ctx) = setup();
        let bin = root.join("b.bin");
        fs::write(&bin, b"ab\0cd").unwrap();
        let result = replace(&ctx, args(&bin, "ab", "xy")).await;
        assert_eq!(result.error.unwrap().kind, ToolErrorKind::BinaryFile);
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("t.txt");
        fs::write(&target, "secret").unwrap();
        std::os::unix::fs::symlink(&target, root.join("l.txt")).unwrap();
        let result = replace(&ctx, args(&root.join("l.txt"), "secret", "changed")).await;
        assert_eq!(
            result.error.unwrap().kind,
            ToolErrorKind::PathNotInWorkspace
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "secret");
    }
}
