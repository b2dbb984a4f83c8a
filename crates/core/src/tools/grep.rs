//! `grep_search`: a regular-expression search over file contents, grouped
//! by file. Built on ripgrep's libraries (`ignore`, `grep-searcher`,
//! `grep-regex`), walking and searching on all cores.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{DirEntry, WalkState};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::search_start::{self, StartMessages};
use super::walk::{self, PathFilter};
use super::{ToolContext, ToolError, ToolErrorKind, ToolResult, files};
use crate::config::FileFiltering;

/// Matches reported when the call sets no `total_max_matches`.
pub const DEFAULT_TOTAL_MAX_MATCHES: usize = 20_000;

/// Matched lines longer than this many characters are cut.
pub const MAX_LINE_CHARS: usize = 500;

/// Appended to a cut line.
pub const TRUNCATED_MARKER: &str = "... [truncated]";

/// Searches file contents with a regular expression.
pub struct GrepTool {
    schema: Value,
}

/// The arguments of a `grep_search` call. Numbers arrive as JSON numbers:
/// the schema checked they are whole, but a model may still send `5.0`.
#[derive(Debug, Deserialize)]
pub struct Params {
    pattern: String,
    #[serde(default)]
    dir_path: Option<String>,
    #[serde(default)]
    include_pattern: Option<String>,
    #[serde(default)]
    exclude_pattern: Option<String>,
    #[serde(default)]
    names_only: Option<bool>,
    // Numbers arrive as JSON numbers; the schema already checked that they
    // are integers >= 1 (a model may still send `5.0`).
    #[serde(default)]
    max_matches_per_file: Option<f64>,
    #[serde(default)]
    total_max_matches: Option<f64>,
}

impl GrepTool {
    pub const NAME: &'static str = "grep_search";
    /// The name older Gemini CLI versions (and policies) use for this tool.
    pub const LEGACY_NAME: &'static str = "search_file_content";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "description": "Regular expression (Rust regex syntax) to look for in each line, e.g. `fn\\s+main` or `TODO|FIXME`. Case-insensitive unless it starts with `(?-i)`.",
                        "type": "string"
                    },
                    "dir_path": {
                        "description": "Directory (or single file) to search, absolute or relative to the workspace root. Defaults to the workspace root.",
                        "type": "string"
                    },
                    "include_pattern": {
                        "description": "Only search files matching this glob: without `/` it matches file names at any depth (`*.rs`), with `/` the path relative to dir_path (`src/**/*.{ts,tsx}`).",
                        "type": "string"
                    },
                    "exclude_pattern": {
                        "description": "Skip files and directories matching this glob (same rules as include_pattern), e.g. `*.min.js` or `tests/**`.",
                        "type": "string"
                    },
                    "names_only": {
                        "description": "List only the paths of files that contain a match, without the lines.",
                        "type": "boolean"
                    },
                    "max_matches_per_file": {
                        "description": "Report at most this many matches from each file.",
                        "type": "integer",
                        "minimum": 1
                    },
                    "total_max_matches": {
                        "description": "Report at most this many matches in total (default 20000).",
                        "type": "integer",
                        "minimum": 1
                    }
                },
                "required": ["pattern"]
            }),
        }
    }
}

crate::tools::tool_info! {
    default GrepTool,
    display: "SearchText",
    kind: Search,
    description: "Searches file contents for a regular expression and returns the matching lines with their line numbers, grouped by file (paths relative to dir_path). Case-insensitive by default. Files excluded by .gitignore or .geminiignore, hidden files and binary files are skipped. Narrow the search with include_pattern/exclude_pattern globs; use names_only to list just the files.",
    fn describe_call(&self, args: &Value) -> String {
        let get = |key: &str| args.get(key).and_then(Value::as_str);
        let mut text = format!("'{}'", get("pattern").unwrap_or(""));
        if let Some(dir) = get("dir_path") {
            text.push_str(&format!(" within {dir}"));
        }
        if let Some(include) = get("include_pattern") {
            text.push_str(&format!(" in {include}"));
        }
        text
    }
}

impl crate::tools::TypedTool for GrepTool {
    type Args = Params;

    async fn run(&self, params: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let search = GrepSearch::new(params, ctx)?;
        tokio::task::spawn_blocking(move || search.run())
            .await
            .map_err(|e| {
                ToolError::new(
                    ToolErrorKind::Execution,
                    format!("Error during grep search operation: {e}"),
                )
            })
    }
}

/// A checked `grep_search` call, ready to run on a blocking thread.
struct GrepSearch {
    pattern: String,
    /// `dir_path` as the model gave it (or `.`), for the messages.
    shown_dir: String,
    root: PathBuf,
    root_is_file: bool,
    matcher: RegexMatcher,
    include_text: Option<String>,
    include: Option<PathFilter>,
    exclude: Option<PathFilter>,
    skip_hidden: bool,
    names_only: bool,
    per_file: Option<usize>,
    total: usize,
    filtering: FileFiltering,
    cancel: CancellationToken,
    /// Matches (files, with `names_only`) kept so far, across threads.
    found: AtomicUsize,
}

/// The matches of one file: its formatted `L<n>: ...` lines, and where
/// each ends, so the output can be cut at any match.
struct FileHits {
    path: String,
    lines: String,
    ends: Vec<usize>,
    /// More matches than `max_matches_per_file` were in the file.
    capped: bool,
}

impl GrepSearch {
    fn new(params: Params, ctx: &ToolContext) -> Result<Self, ToolError> {
        let invalid = |message: String| ToolError::new(ToolErrorKind::InvalidParams, message);
        if params.pattern.is_empty() {
            return Err(invalid("The 'pattern' parameter cannot be empty.".into()));
        }
        let shown_dir = params
            .dir_path
            .clone()
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| ".".to_owned());
        let (root, roots) = files::resolve_readable(ctx, &shown_dir)?;
        let root_is_file = search_start::check_start(
            &root,
            true,
            &StartMessages {
                not_found: "Path does not exist",
                not_a_dir: "Path is not a valid directory or file",
                inaccessible: "Failed to access path stats for",
            },
        )?;
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(true)
            .line_terminator(Some(b'\n'))
            .build(&params.pattern)
            .map_err(|e| {
                invalid(format!(
                    "Invalid regular expression pattern provided: {}. Error: {e}",
                    params.pattern
                ))
            })?;
        let filter =
            |pattern: &Option<String>, what: &str| -> Result<Option<PathFilter>, ToolError> {
                match pattern.as_deref().map(str::trim) {
                    None | Some("") => Ok(None),
                    Some(p) => PathFilter::new(p)
                        .map(Some)
                        .map_err(|e| invalid(format!("Invalid {what} \"{p}\": {e}"))),
                }
            };
        let include = filter(&params.include_pattern, "include_pattern")?;
        let exclude = filter(&params.exclude_pattern, "exclude_pattern")?;
        // Hidden files are skipped unless the include glob names one.
        let skip_hidden = !params.include_pattern.as_deref().is_some_and(|p| {
            p.split('/')
                .any(|c| c.starts_with('.') && c != "." && c != "..")
        });
        walk::refuse_ignored_start(&root, &roots, ctx.file_filtering)?;
        let count = |n: Option<f64>| n.map(|n| n.max(1.0) as usize);
        Ok(Self {
            pattern: params.pattern,
            shown_dir,
            root,
            root_is_file,
            matcher,
            include_text: params.include_pattern.filter(|p| !p.trim().is_empty()),
            include,
            exclude,
            skip_hidden,
            names_only: params.names_only.unwrap_or(false),
            per_file: count(params.max_matches_per_file),
            total: count(params.total_max_matches).unwrap_or(DEFAULT_TOTAL_MAX_MATCHES),
            filtering: ctx.file_filtering,
            cancel: ctx.cancel.clone(),
            found: AtomicUsize::new(0),
        })
    }

    fn should_stop(&self) -> bool {
        self.found.load(Ordering::Relaxed) > self.total || self.cancel.is_cancelled()
    }

    fn run(&self) -> ToolResult {
        let walker = walk::walker(&self.root, self.filtering, self.skip_hidden);
        let searcher = || {
            SearcherBuilder::new()
                .line_number(true)
                .binary_detection(BinaryDetection::quit(0))
                .build()
        };
        let mut hits = walk::collect_parallel(
            &walker,
            || (searcher(), self.matcher.clone(), Vec::new()),
            |(searcher, matcher, buffer), entry, out| {
                self.visit(searcher, matcher, buffer, entry, out)
            },
        );
        if self.cancel.is_cancelled() {
            return ToolResult::error(ToolErrorKind::Cancelled, "The search was cancelled.");
        }
        hits.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        self.format(&hits)
    }

    fn visit(
        &self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        buffer: &mut Vec<u8>,
        entry: DirEntry,
        out: &mut Vec<FileHits>,
    ) -> WalkState {
        if self.should_stop() {
            return WalkState::Quit;
        }
        let depth = entry.depth();
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            if depth > 0
                && let Some(exclude) = &self.exclude
                && exclude.is_match(&walk::relative_str(entry.path(), &self.root))
            {
                return WalkState::Skip;
            }
            return WalkState::Continue;
        }
        let path: Cow<'_, str> = if depth == 0 {
            if !self.root_is_file {
                return WalkState::Continue;
            }
            entry.file_name().to_string_lossy()
        } else {
            if !walk::is_file(&entry, false) {
                return WalkState::Continue;
            }
            let relative = walk::relative_str(entry.path(), &self.root);
            if self
                .include
                .as_ref()
                .is_some_and(|f| !f.is_match(&relative))
                || self.exclude.as_ref().is_some_and(|f| f.is_match(&relative))
            {
                return WalkState::Continue;
            }
            relative
        };
        let mut sink = Collect {
            search: self,
            lines: String::new(),
            ends: Vec::new(),
            capped: false,
            binary: false,
        };
        let searched = match read_whole(entry.path(), buffer) {
            Ok(Loaded::Whole(len)) => searcher.search_slice(matcher, &buffer[..len], &mut sink),
            // Larger than the buffer: the rest is streamed, as ripgrep does, after what was
            // already read (not read again).
            Ok(Loaded::Started(len, rest)) => {
                let whole = std::io::Read::chain(std::io::Cursor::new(&buffer[..len]), rest);
                searcher.search_reader(matcher, whole, &mut sink)
            }
            Err(e) => Err(e),
        };
        let count = sink.ends.len();
        if searched.is_err() || sink.binary {
            self.found.fetch_sub(count, Ordering::Relaxed);
        } else if count > 0 {
            out.push(FileHits {
                path: path.into_owned(),
                lines: sink.lines,
                ends: sink.ends,
                capped: sink.capped,
            });
        }
        WalkState::Continue
    }

    fn format(&self, hits: &[FileHits]) -> ToolResult {
        let filter = match &self.include_text {
            Some(include) => format!(" (filter: \"{include}\")"),
            None => String::new(),
        };
        let location = format!(
            "for pattern \"{}\" in path \"{}\"",
            self.pattern, self.shown_dir
        );
        if hits.is_empty() {
            let text = format!("No matches found {location}{filter}.");
            return ToolResult::success(text, "No matches found");
        }
        let limited_note = format!(
            " (results limited to {} matches for performance)",
            self.total
        );
        if self.names_only {
            let limited = hits.len() > self.total;
            let shown = &hits[..hits.len().min(self.total)];
            let mut text = format!(
                "Found {} files with matches {location}{filter}{}:",
                shown.len(),
                if limited { limited_note.as_str() } else { "" }
            );
            for file in shown {
                text.push('\n');
                text.push_str(&file.path);
            }
            let display = format!(
                "Found {} files{}",
                shown.len(),
                if limited { " (limited)" } else { "" }
            );
            return ToolResult::success(text, display);
        }
        let found: usize = hits.iter().map(|h| h.ends.len()).sum();
        let limited = found > self.total;
        let shown = found.min(self.total);
        let term = if shown == 1 { "match" } else { "matches" };
        let mut text = format!("Found {shown} {term} {location}{filter}");
        if limited {
            text.push_str(&limited_note);
        }
        if let Some(per_file) = self.per_file
            && hits.iter().any(|h| h.capped)
        {
            let _ = write!(text, " (results limited to {per_file} matches per file)");
        }
        text.push_str(":\n---\n");
        text.reserve(hits.iter().map(|h| h.path.len() + h.lines.len() + 11).sum());
        let mut left = shown;
        for file in hits {
            if left == 0 {
                break;
            }
            let take = file.ends.len().min(left);
            left -= take;
            text.push_str("File: ");
            text.push_str(&file.path);
            text.push('\n');
            text.push_str(&file.lines[..file.ends[take - 1]]);
            text.push_str("---\n");
        }
        text.truncate(text.trim_end().len());
        let display = format!(
            "Found {shown} {term}{}",
            if limited { " (limited)" } else { "" }
        );
        ToolResult::success(text, display)
    }
}

/// Files up to this size are read whole into the walker thread's buffer and
/// searched as a slice; larger ones are streamed.
const WHOLE_FILE_MAX: usize = 256 * 1024;

/// What [`read_whole`] got of a file.
enum Loaded {
    /// The whole file, this many bytes of the buffer.
    Whole(usize),
    /// The file is larger than [`WHOLE_FILE_MAX`]: this many bytes of the
    /// buffer, then the rest of the open file.
    Started(usize, std::fs::File),
}

/// Reads the file at `path` whole into `buffer` (reused across files, never
/// shrunk, so it is zeroed once per thread, not per file), or its first
/// [`WHOLE_FILE_MAX`] + 1 bytes when it is larger.
///
/// Why: `search_path` reads a file through a BOM-sniffing decoder, which costs
/// a 3-byte `read` before the real one: a syscall per file, a third of the
/// reads of a search over many small source files (what the agent mostly
/// searches), on machines where each syscall costs ~1.5 µs. `search_slice`
/// sniffs the BOM in memory (UTF-16 files are still transcoded), and binary
/// detection behaves the same on a slice. A larger file is searched from what
/// was read plus the rest of the same open file: in a real source tree (the
/// cargo registry: 43 of ~25k files, a fifth of the bytes) opening and reading
/// its start a second time was 11 MB of reads and 43 `open`s for nothing.
fn read_whole(path: &std::path::Path, buffer: &mut Vec<u8>) -> std::io::Result<Loaded> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path)?;
    if buffer.len() <= WHOLE_FILE_MAX {
        buffer.resize(WHOLE_FILE_MAX + 1, 0);
    }
    let mut filled = 0;
    // Until `read` says end of file: a short read is not taken for one.
    loop {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => {
                filled += n;
                if filled > WHOLE_FILE_MAX {
                    return Ok(Loaded::Started(filled, file));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Loaded::Whole(filled))
}

/// Collects the matches of one file.
struct Collect<'a> {
    search: &'a GrepSearch,
    lines: String,
    ends: Vec<usize>,
    capped: bool,
    binary: bool,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let search = self.search;
        if search.names_only {
            self.ends.push(0);
            search.found.fetch_add(1, Ordering::Relaxed);
            return Ok(false);
        }
        if search.per_file.is_some_and(|max| self.ends.len() >= max) {
            self.capped = true;
            return Ok(false);
        }
        push_line(&mut self.lines, mat.line_number().unwrap_or(0), mat.bytes());
        self.ends.push(self.lines.len());
        // One match beyond the limit is kept, so we know there were more.
        let found = search.found.fetch_add(1, Ordering::Relaxed) + 1;
        Ok(found <= search.total)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// Appends `L<number>: <line>\n`, without trailing whitespace and cut to
/// [`MAX_LINE_CHARS`] characters.
fn push_line(out: &mut String, number: u64, line: &[u8]) {
    let line = String::from_utf8_lossy(line.trim_ascii_end());
    let _ = write!(out, "L{number}: ");
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) if line.len() > MAX_LINE_CHARS => {
            out.push_str(&line[..cut]);
            out.push_str(TRUNCATED_MARKER);
        }
        _ => out.push_str(&line),
    }
    out.push('\n');
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
