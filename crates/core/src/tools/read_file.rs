//! `read_file`: the content of one file — text (a window of lines), or an
//! image, audio file, video or PDF as inline data.

use std::path::Path;

use base64::Engine as _;
use gd_gemini::Part;
use serde::Deserialize;
use serde_json::{Value, json};

use super::text::{self, MediaKind};
use super::{ToolContext, ToolError, ToolErrorKind, ToolResult, walk};
use crate::config::FileFiltering;

/// Lines shown when no range is given, and at most per call.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Longer lines are cut to this many characters.
pub const MAX_LINE_CHARS: usize = 2000;

/// Reads a file for the model.
pub struct ReadFile {
    schema: Value,
}

impl ReadFile {
    pub const NAME: &'static str = "read_file";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {
                        "description": "Path of the file to read.",
                        "type": "string"
                    },
                    "start_line": {
                        "description": "First line to read, 1-based (default 1). For text files only.",
                        "type": "integer",
                        "minimum": 1
                    },
                    "end_line": {
                        "description": "Last line to read, 1-based and inclusive. For text files only.",
                        "type": "integer",
                        "minimum": 1
                    }
                },
                "required": ["file_path"]
            }),
        }
    }
}

crate::tools::tool_info! {
    default ReadFile,
    display: "ReadFile",
    kind: Read,
    description: "Reads one file from the workspace. Text files come back as text: up to 2000 lines per call (choose a window with start_line and end_line; a note at the top says how to read further when the file is longer), with very long lines shortened. Images (PNG, JPEG, GIF, WEBP, BMP), audio, video and PDF files are returned as media the model can look at. Other binary files are refused.",
    fn describe_call(&self, args: &Value) -> String {
        let path = args.get("file_path").and_then(Value::as_str).unwrap_or("");
        let line = |name: &str| line_number(name, args.get(name).and_then(Value::as_f64));
        match (line("start_line"), line("end_line")) {
            (Ok(Some(start)), Ok(Some(end))) => format!("{path} (lines {start}-{end})"),
            (Ok(Some(start)), _) => format!("{path} (from line {start})"),
            (_, Ok(Some(end))) => format!("{path} (lines 1-{end})"),
            _ => path.to_owned(),
        }
    }
}

impl crate::tools::TypedTool for ReadFile {
    type Args = Params;

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        read_window(args, ctx).await
    }
}

/// The arguments of a `read_file` call. Line numbers arrive as JSON
/// numbers; the schema checked they are integers, but a model may still
/// send `5.0`.
#[derive(Debug, Deserialize)]
pub struct Params {
    file_path: String,
    #[serde(default)]
    start_line: Option<f64>,
    #[serde(default)]
    end_line: Option<f64>,
}

/// A 1-based line argument: a positive whole number, or absent.
fn line_number(name: &str, value: Option<f64>) -> Result<Option<usize>, ToolError> {
    match value {
        None => Ok(None),
        Some(n) if n >= 1.0 && n.fract() == 0.0 => Ok(Some(n.min(usize::MAX as f64) as usize)),
        Some(_) => Err(ToolError::new(
            ToolErrorKind::InvalidParams,
            format!("{name} must be a whole number of at least 1."),
        )),
    }
}

async fn read_window(args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
    let start = line_number("start_line", args.start_line)?;
    let end = line_number("end_line", args.end_line)?;
    if let (Some(start), Some(end)) = (start, end)
        && end < start
    {
        return Err(ToolError::new(
            ToolErrorKind::InvalidParams,
            format!("end_line ({end}) must not be less than start_line ({start})."),
        ));
    }
    // The session's plans are readable too (0.61 adds the plans directory to the workspace).
    let (path, roots) = crate::plan::resolve_for_read(ctx, &args.file_path)?;
    let filtering = ctx.file_filtering;
    let task_path = path.clone();
    let task_roots = roots.clone();
    // In review mode the turn reads what it staged, not the disk.
    let staged = ctx.staging.as_ref().and_then(|s| s.staged_text(&path));
    let loaded = tokio::task::spawn_blocking(move || {
        if walk::is_ignored(&task_path, &task_roots, filtering) {
            return Err(ToolError::new(
                ToolErrorKind::InvalidParams,
                format!(
                    "File {} is excluded by {} and cannot be read.",
                    task_path.display(),
                    ignore_files(filtering)
                ),
            ));
        }
        load_staged(&task_path, staged.as_deref(), start, end, DEFAULT_MAX_LINES)
    })
    .await
    .map_err(|e| ToolError::new(ToolErrorKind::Execution, format!("Error reading file: {e}")))??;
    let shown = text::display_path(&path, &roots);
    Ok(match loaded {
        Loaded::Text(t) => {
            let display = t.display(&shown);
            ToolResult::success(t.with_notice(&path), display)
        }
        Loaded::Media(m) => {
            let display = format!(
                "Read {} {shown} ({}, {})",
                m.kind.noun(),
                m.mime,
                text::human_size(m.size)
            );
            ToolResult::parts(vec![Part::inline_data(m.mime, m.data_base64)], display)
        }
    })
}

/// The ignore files `filtering` honours, for messages.
pub(crate) fn ignore_files(filtering: FileFiltering) -> &'static str {
    match (
        filtering.respect_git_ignore,
        filtering.respect_gemini_ignore,
    ) {
        (true, true) => ".gitignore or .geminiignore",
        (true, false) => ".gitignore",
        _ => ".geminiignore",
    }
}

/// A file read for the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Loaded {
    Text(TextWindow),
    Media(Media),
}

/// Lines of a text file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TextWindow {
    /// The shown lines, joined with LF.
    pub content: String,
    /// 1-based first and last line shown (`0, 0` for an empty file).
    pub first: usize,
    pub last: usize,
    pub total: usize,
    /// Some lines were longer than [`MAX_LINE_CHARS`] and were cut.
    pub lines_cut: bool,
}

impl TextWindow {
    /// Whether every line is shown in full.
    pub fn is_complete(&self) -> bool {
        !self.lines_cut && self.first <= 1 && self.last == self.total
    }

    /// The content for the model, with a note on top when it is partial.
    pub fn with_notice(&self, path: &Path) -> String {
        if self.is_complete() {
            return self.content.clone();
        }
        let mut notes = Vec::new();
        if self.last < self.total {
            notes.push(format!(
                "[Partial content: lines {}-{} of {} of {}. To read more, call read_file with start_line: {}.]",
                self.first,
                self.last,
                self.total,
                path.display(),
                self.last + 1
            ));
        } else if self.first > 1 {
            notes.push(format!(
                "[Partial content: lines {}-{} of {} of {} (up to the end of the file).]",
                self.first,
                self.last,
                self.total,
                path.display()
            ));
        }
        if self.lines_cut {
            notes.push(format!(
                "[Lines longer than {MAX_LINE_CHARS} characters were cut; each cut is marked.]"
            ));
        }
        format!("{}\n\n{}", notes.join("\n"), self.content)
    }

    /// A short summary: "Read lines 1-120 of 340 from src/main.rs".
    pub fn display(&self, shown_path: &str) -> String {
        if self.total == 0 {
            return format!("Read empty file {shown_path}");
        }
        let mut display = format!(
            "Read lines {}-{} of {} from {shown_path}",
            self.first, self.last, self.total
        );
        if self.lines_cut {
            display.push_str(" (long lines cut)");
        }
        display
    }
}

/// A media file as base64 inline data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Media {
    pub mime: &'static str,
    pub kind: MediaKind,
    pub data_base64: String,
    pub size: u64,
}

/// Reads `path`: media by extension as inline data, binary files refused,
/// text decoded and cut to a window of at most `max_lines` lines starting
/// at `start` (1-based) and ending at `end` (inclusive) when given.
pub(crate) fn load(
    path: &Path,
    start: Option<usize>,
    end: Option<usize>,
    max_lines: usize,
) -> Result<Loaded, ToolError> {
    let metadata = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ToolError::new(
                ToolErrorKind::NotFound,
                format!("File not found: {}", path.display()),
            )
        } else {
            super::fs_write::io_error(path, "reading", &e)
        }
    })?;
    if metadata.is_dir() {
        return Err(ToolError::new(
            ToolErrorKind::IsADirectory,
            format!(
                "Path is a directory, not a file: {}. Use list_directory to see what it contains.",
                path.display()
            ),
        ));
    }
    let size = metadata.len();
    if size > text::MAX_FILE_SIZE {
        return Err(too_large(path, size, text::MAX_FILE_SIZE));
    }
    if let Some((mime, kind)) = text::media_type(path) {
        if size > text::MAX_INLINE_DATA_SIZE {
            return Err(too_large(path, size, text::MAX_INLINE_DATA_SIZE));
        }
        let bytes = read(path)?;
        return Ok(Loaded::Media(Media {
            mime,
            kind,
            data_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
            size,
        }));
    }
    let bytes = read(path)?;
    if text::looks_binary(&bytes) && !text::is_svg(path) {
        return Err(ToolError::new(
            ToolErrorKind::BinaryFile,
            format!("Cannot display content of binary file: {}", path.display()),
        ));
    }
    let (decoded, _) = text::decode(&bytes);
    let content = text::normalize_newlines(&decoded);
    window(path, &content, start, end, max_lines).map(Loaded::Text)
}

/// [`load`], or the window of `staged` (the content a review-mode turn
/// staged for `path`) when there is one.
pub(crate) fn load_staged(
    path: &Path,
    staged: Option<&str>,
    start: Option<usize>,
    end: Option<usize>,
    max_lines: usize,
) -> Result<Loaded, ToolError> {
    match staged {
        Some(content) => window(path, content, start, end, max_lines).map(Loaded::Text),
        None => load(path, start, end, max_lines),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, ToolError> {
    std::fs::read(path).map_err(|e| super::fs_write::io_error(path, "reading", &e))
}

fn too_large(path: &Path, size: u64, limit: u64) -> ToolError {
    ToolError::new(
        ToolErrorKind::FileTooLarge,
        format!(
            "File is too large to read: {} ({}; the limit is {}).",
            path.display(),
            text::human_size(size),
            text::human_size(limit)
        ),
    )
}

fn window(
    path: &Path,
    content: &str,
    start: Option<usize>,
    end: Option<usize>,
    max_lines: usize,
) -> Result<TextWindow, ToolError> {
    let mut lines: Vec<&str> = content.split('\n').collect();
    if content.ends_with('\n') || content.is_empty() {
        lines.pop();
    }
    let total = lines.len();
    let first = start.unwrap_or(1);
    if total == 0 {
        if first > 1 {
            return Err(beyond_end(path, first, total));
        }
        return Ok(TextWindow {
            content: String::new(),
            first: 0,
            last: 0,
            total,
            lines_cut: false,
        });
    }
    if first > total {
        return Err(beyond_end(path, first, total));
    }
    let last = end
        .unwrap_or(total)
        .min(total)
        .min(first.saturating_add(max_lines.max(1) - 1));
    let mut lines_cut = false;
    let shown: Vec<String> = lines[first - 1..last]
        .iter()
        .map(|line| {
            let (kept, cut) = text::cut_line(line, MAX_LINE_CHARS);
            if cut {
                lines_cut = true;
                let rest = line[kept.len()..].chars().count();
                format!("{kept}... [line cut: {rest} more characters]")
            } else {
                (*line).to_owned()
            }
        })
        .collect();
    let whole = first == 1 && last == total && !lines_cut;
    Ok(TextWindow {
        // A whole file keeps its final newline (or lack of one).
        content: if whole {
            content.to_owned()
        } else {
            shown.join("\n")
        },
        first,
        last,
        total,
        lines_cut,
    })
}

fn beyond_end(path: &Path, start: usize, total: usize) -> ToolError {
    ToolError::new(
        ToolErrorKind::InvalidParams,
        format!(
            "start_line {start} is beyond the end of {} ({total} line{}).",
            path.display(),
            if total == 1 { "" } else { "s" }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::LlmContent;
    use crate::tools::test_support::setup;
    use crate::tools::{Tool, ToolInfo};
    use pretty_assertions::assert_eq;
    use std::fs;

    async fn read(ctx: &ToolContext, args: Value) -> ToolResult {
        ReadFile::new().execute(args, ctx).await
    }

    fn text(result: &ToolResult) -> &str {
        match &result.llm_content {
            LlmContent::Text(t) => t,
            LlmContent::Parts(_) => panic!("expected text, got {result:?}"),
        }
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[tokio::test]
    async fn whole_small_file_is_returned_unchanged() {
        let (_d, root, ctx) = setup();
        fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        let result = read(&ctx, json!({"file_path": "a.txt"})).await;
        assert_eq!(result.error, None);
        assert_eq!(text(&result), "one\ntwo\n");
        assert_eq!(result.display, "Read lines 1-2 of 2 from a.txt");
    }

    #[tokio::test]
    async fn windows_and_continuation_notice() {
        let (_d, root, ctx) = setup();
        let path = root.join("big.txt");
        fs::write(&path, numbered(2500)).unwrap();
        let result = read(&ctx, json!({"file_path": path.to_str().unwrap()})).await;
        let out = text(&result);
        let notice = format!(
            "[Partial content: lines 1-2000 of 2500 of {}. To read more, call read_file with start_line: 2001.]\n\nline 1\n",
            path.display()
        );
        assert!(out.starts_with(&notice), "{out}");
        assert!(out.ends_with("line 2000"), "{}", &out[out.len() - 20..]);
        assert_eq!(result.display, "Read lines 1-2000 of 2500 from big.txt");

        let result = read(&ctx, json!({"file_path": "big.txt", "start_line": 2001})).await;
        let out = text(&result);
        assert!(out.starts_with("[Partial content: lines 2001-2500 of 2500 of "));
        assert!(out.contains("(up to the end of the file).]\n\nline 2001\n"));
        assert!(out.ends_with("line 2500"));

        let result = read(
            &ctx,
            json!({"file_path": "big.txt", "start_line": 10, "end_line": 12}),
        )
        .await;
        assert!(
            text(&result).ends_with("start_line: 13.]\n\nline 10\nline 11\nline 12"),
            "{}",
            text(&result)
        );
        assert_eq!(result.display, "Read lines 10-12 of 2500 from big.txt");
    }

    #[tokio::test]
    async fn range_errors() {
        let (_d, root, ctx) = setup();
        fs::write(root.join("s.txt"), numbered(5)).unwrap();
        let beyond = read(&ctx, json!({"file_path": "s.txt", "start_line": 6})).await;
        let error = beyond.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::InvalidParams);
        assert!(
            error
                .message
                .starts_with("start_line 6 is beyond the end of"),
            "{}",
            error.message
        );
        assert!(error.message.ends_with("(5 lines)."));
        let reversed = read(
            &ctx,
            json!({"file_path": "s.txt", "start_line": 4, "end_line": 2}),
        )
        .await;
        assert_eq!(reversed.error.unwrap().kind, ToolErrorKind::InvalidParams);
        // end_line past the end is clamped, start_line as a float works.
        let clamped = read(
            &ctx,
            json!({"file_path": "s.txt", "start_line": 4.0, "end_line": 99}),
        )
        .await;
        assert!(text(&clamped).ends_with("\n\nline 4\nline 5"));
        let zero = read(&ctx, json!({"file_path": "s.txt", "start_line": 0})).await;
        assert_eq!(zero.error.unwrap().kind, ToolErrorKind::InvalidParams);
    }

    #[tokio::test]
    async fn long_lines_are_cut_with_a_marker() {
        let (_d, root, ctx) = setup();
        let long = "é".repeat(MAX_LINE_CHARS + 5);
        fs::write(root.join("long.txt"), format!("short\n{long}\n")).unwrap();
        let result = read(&ctx, json!({"file_path": "long.txt"})).await;
        let out = text(&result);
        assert!(out.starts_with(
            "[Lines longer than 2000 characters were cut; each cut is marked.]\n\nshort\n"
        ));
        let expected = format!("{}... [line cut: 5 more characters]", "é".repeat(2000));
        assert!(out.ends_with(&expected));
        assert_eq!(
            result.display,
            "Read lines 1-2 of 2 from long.txt (long lines cut)"
        );
    }

    #[tokio::test]
    async fn encodings_and_crlf() {
        let (_d, root, ctx) = setup();
        fs::write(root.join("latin1.txt"), b"caf\xE9\nna\xEFve\n").unwrap();
        let result = read(&ctx, json!({"file_path": "latin1.txt"})).await;
        assert_eq!(text(&result), "café\nnaïve\n");
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(
            "größe\r\n日本\r\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        );
        fs::write(root.join("utf16.txt"), utf16).unwrap();
        let result = read(&ctx, json!({"file_path": "utf16.txt"})).await;
        assert_eq!(text(&result), "größe\n日本\n");
        fs::write(root.join("bom.txt"), b"\xEF\xBB\xBFhi\r\nthere").unwrap();
        let result = read(&ctx, json!({"file_path": "bom.txt"})).await;
        assert_eq!(text(&result), "hi\nthere");
        assert_eq!(result.display, "Read lines 1-2 of 2 from bom.txt");
    }

    #[tokio::test]
    async fn images_become_inline_data() {
        let (_d, root, ctx) = setup();
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        fs::create_dir(root.join("img")).unwrap();
        fs::write(root.join("img/logo.png"), png).unwrap();
        let result = read(&ctx, json!({"file_path": "img/logo.png"})).await;
        assert_eq!(result.error, None);
        assert_eq!(
            result.llm_content,
            LlmContent::Parts(vec![Part::inline_data(
                "image/png",
                base64::engine::general_purpose::STANDARD.encode(png)
            )])
        );
        assert_eq!(result.display, "Read image img/logo.png (image/png, 16 B)");
        fs::write(root.join("doc.PDF"), b"%PDF-1.4").unwrap();
        let result = read(&ctx, json!({"file_path": "doc.PDF"})).await;
        let LlmContent::Parts(parts) = &result.llm_content else {
            panic!("expected parts")
        };
        assert_eq!(
            parts[0].inline_data.as_ref().unwrap().mime_type,
            "application/pdf"
        );
        assert_eq!(parts[0].inline_data.as_ref().unwrap().data, "JVBERi0xLjQ=");
    }

    #[tokio::test]
    async fn svg_is_text_and_binaries_are_refused() {
        let (_d, root, ctx) = setup();
        fs::write(root.join("i.svg"), "<svg/>\n").unwrap();
        let result = read(&ctx, json!({"file_path": "i.svg"})).await;
        assert_eq!(text(&result), "<svg/>\n");
        fs::write(root.join("data.bin"), b"\x7fELF\x02\x01\x01\0\0\0").unwrap();
        let result = read(&ctx, json!({"file_path": "data.bin"})).await;
        let error = result.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::BinaryFile);
        assert_eq!(
            error.message,
            format!(
                "Cannot display content of binary file: {}",
                root.join("data.bin").display()
            )
        );
    }

    #[tokio::test]
    async fn missing_directories_huge_and_empty_files() {
        let (_d, root, ctx) = setup();
        let missing = read(&ctx, json!({"file_path": "nope.txt"})).await;
        let error = missing.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::NotFound);
        assert_eq!(
            error.message,
            format!("File not found: {}", root.join("nope.txt").display())
        );
        fs::create_dir(root.join("src")).unwrap();
        let dir = read(&ctx, json!({"file_path": "src"})).await;
        assert_eq!(dir.error.unwrap().kind, ToolErrorKind::IsADirectory);
        let huge = fs::File::create(root.join("huge.txt")).unwrap();
        huge.set_len(text::MAX_FILE_SIZE + 1).unwrap();
        let result = read(&ctx, json!({"file_path": "huge.txt"})).await;
        let error = result.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::FileTooLarge);
        assert!(error.message.contains("20.0 MB"), "{}", error.message);
        fs::write(root.join("empty.txt"), "").unwrap();
        let empty = read(&ctx, json!({"file_path": "empty.txt"})).await;
        assert_eq!(text(&empty), "");
        assert_eq!(empty.display, "Read empty file empty.txt");
        let past = read(&ctx, json!({"file_path": "empty.txt", "start_line": 2})).await;
        assert_eq!(past.error.unwrap().kind, ToolErrorKind::InvalidParams);
    }

    #[tokio::test]
    async fn refuses_escapes_symlinks_out_and_gemini_ignored_files() {
        let (_d, root, ctx) = setup();
        let outside_dir = tempfile::tempdir().unwrap();
        let secret = outside_dir.path().join("secret.txt");
        fs::write(&secret, "secret").unwrap();
        std::os::unix::fs::symlink(&secret, root.join("link.txt")).unwrap();
        let linked = read(&ctx, json!({"file_path": "link.txt"})).await;
        assert_eq!(
            linked.error.unwrap().kind,
            ToolErrorKind::PathNotInWorkspace
        );
        let dotdot = read(&ctx, json!({"file_path": "../x.txt"})).await;
        assert_eq!(
            dotdot.error.unwrap().kind,
            ToolErrorKind::PathNotInWorkspace
        );
        let absolute = read(&ctx, json!({"file_path": secret.to_str().unwrap()})).await;
        assert_eq!(
            absolute.error.unwrap().kind,
            ToolErrorKind::PathNotInWorkspace
        );

        fs::write(root.join(".geminiignore"), "*.key\n").unwrap();
        fs::write(root.join("api.key"), "k").unwrap();
        let ignored = read(&ctx, json!({"file_path": "api.key"})).await;
        let error = ignored.error.unwrap();
        assert!(error.message.contains(".geminiignore"), "{}", error.message);
        let mut open = ctx.clone();
        open.file_filtering.respect_gemini_ignore = false;
        let allowed = read(&open, json!({"file_path": "api.key"})).await;
        assert_eq!(text(&allowed), "k");
    }

    #[tokio::test]
    async fn odd_arguments_never_panic() {
        let (_d, _root, ctx) = setup();
        for args in [
            json!({}),
            json!({"file_path": 5}),
            json!({"file_path": ""}),
            json!({"file_path": "x", "start_line": -3}),
            json!({"file_path": "x", "start_line": "2"}),
            json!({"file_path": "x", "end_line": 1e300}),
            json!({"file_path": "\0"}),
        ] {
            let result = read(&ctx, args.clone()).await;
            assert!(result.error.is_some(), "{args}");
        }
    }

    #[test]
    fn describes_calls() {
        let tool = ReadFile::new();
        assert_eq!(tool.describe_call(&json!({"file_path": "a.rs"})), "a.rs");
        assert_eq!(
            tool.describe_call(&json!({"file_path": "a.rs", "start_line": 3, "end_line": 9})),
            "a.rs (lines 3-9)"
        );
    }
}
