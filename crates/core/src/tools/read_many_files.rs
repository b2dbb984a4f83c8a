//! `read_many_files`: the contents of several files at once, chosen by
//! paths, directories and glob patterns.
//!
//! Text files come back as one text part each, `--- <absolute path> ---`
//! followed by the content, and a final `--- End of content ---` part.
//! Images, audio, video and PDFs are attached as inline data only when they
//! were asked for by name or by extension; other binary files are skipped.
//! The total text is bounded by the session's output limit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use gd_gemini::Part;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::WalkBuilder;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::read_file::{self, Loaded};
use super::search_start::FilteringOptions;
use super::{ToolContext, ToolError, ToolErrorKind, ToolKind, ToolResult, files, text};
use crate::config::FileFiltering;

/// Directories skipped unless `useDefaultExcludes` is false.
pub const DEFAULT_EXCLUDED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "bower_components",
    "target",
    "dist",
    "build",
    "out",
    "coverage",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".next",
    ".nuxt",
    ".gradle",
    ".idea",
    ".vscode",
];

/// File names (glob patterns) skipped unless `useDefaultExcludes` is false:
/// compiled and packed binaries, office documents, fonts, databases, lock
/// files and secrets.
pub const DEFAULT_EXCLUDED_FILES: &[&str] = &[
    "*.exe",
    "*.dll",
    "*.so",
    "*.so.*",
    "*.dylib",
    "*.bin",
    "*.o",
    "*.obj",
    "*.a",
    "*.lib",
    "*.class",
    "*.jar",
    "*.war",
    "*.pyc",
    "*.pyo",
    "*.wasm",
    "*.zip",
    "*.tar",
    "*.gz",
    "*.tgz",
    "*.bz2",
    "*.xz",
    "*.7z",
    "*.rar",
    "*.iso",
    "*.dmg",
    "*.doc",
    "*.docx",
    "*.xls",
    "*.xlsx",
    "*.ppt",
    "*.pptx",
    "*.odt",
    "*.ods",
    "*.odp",
    "*.ttf",
    "*.otf",
    "*.woff",
    "*.woff2",
    "*.eot",
    "*.sqlite",
    "*.sqlite3",
    "*.db",
    "*.min.js",
    "*.map",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "Cargo.lock",
    "poetry.lock",
    "Pipfile.lock",
    "Gemfile.lock",
    "composer.lock",
    "go.sum",
    ".DS_Store",
    ".env",
];

/// Lines read per file; longer files are cut with a note.
const MAX_LINES_PER_FILE: usize = 2000;
/// Directory entries visited before the search stops.
const MAX_WALK_ENTRIES: usize = 100_000;
/// Skipped files listed by name in the summary.
const MAX_LISTED: usize = 10;

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

impl Default for ReadManyFiles {
    fn default() -> Self {
        Self::new()
    }
}

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
}

impl crate::tools::ToolInfo for ReadManyFiles {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn display_name(&self) -> &str {
        "ReadManyFiles"
    }

    fn description(&self) -> &str {
        "Reads several files in one call: give file paths, directories or glob patterns relative to the workspace root. Each text file is returned after a `--- <path> ---` line. Files excluded by .gitignore/.geminiignore, dependency and build directories, lock files and binaries are skipped by default. Images, audio, video and PDFs are included only when named explicitly or by extension (e.g. \"*.png\"). Long files are cut; use read_file to read the rest. Useful to get an overview of a directory or of related files."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn parameter_schema(&self) -> &Value {
        &self.schema
    }

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

/// Exclusion rules: the user's patterns and, optionally, the defaults.
struct Excludes {
    user: GlobSet,
    default_files: Option<GlobSet>,
}

impl Excludes {
    fn new(patterns: &[String], use_defaults: bool) -> Result<Self, String> {
        let mut user = GlobSetBuilder::new();
        for pattern in patterns {
            let pattern = pattern
                .trim()
                .trim_start_matches("./")
                .trim_end_matches('/');
            if pattern.is_empty() {
                continue;
            }
            let base = if pattern.contains('/') {
                pattern.to_owned()
            } else {
                format!("**/{pattern}")
            };
            for p in [base.clone(), format!("{base}/**")] {
                user.add(
                    glob(&p).map_err(|e| format!("Invalid exclude pattern '{pattern}': {e}"))?,
                );
            }
        }
        let default_files = if use_defaults {
            let mut set = GlobSetBuilder::new();
            for pattern in DEFAULT_EXCLUDED_FILES {
                set.add(Glob::new(pattern).map_err(|e| e.to_string())?);
            }
            Some(set.build().map_err(|e| e.to_string())?)
        } else {
            None
        };
        Ok(Self {
            user: user.build().map_err(|e| e.to_string())?,
            default_files,
        })
    }

    fn by_user(&self, rel: &Path) -> bool {
        self.user.is_match(rel)
    }

    /// Default-excluded file names (directories are pruned while walking).
    fn by_default(&self, rel: &Path) -> bool {
        self.default_files
            .as_ref()
            .is_some_and(|set| rel.file_name().is_some_and(|name| set.is_match(name)))
    }
}

fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(true).build()
}

fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

/// Files found, and items skipped with the reason.
#[derive(Default)]
struct Found {
    /// Path → named explicitly (a literal file path).
    files: BTreeMap<PathBuf, bool>,
    skipped: Vec<(String, String)>,
    walk_limit_hit: bool,
}

impl Found {
    fn skip(&mut self, what: impl Into<String>, why: impl Into<String>) {
        self.skipped.push((what.into(), why.into()));
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

/// The root containing `path` and the path relative to it.
fn relative<'a>(path: &'a Path, roots: &[PathBuf]) -> Option<&'a Path> {
    roots.iter().find_map(|root| path.strip_prefix(root).ok())
}

fn collect(job: &Job, found: &mut Found) {
    let mut globs = GlobSetBuilder::new();
    let mut glob_starts: BTreeSet<PathBuf> = BTreeSet::new();
    let mut any_glob = false;
    for pattern in &job.patterns {
        let pattern = pattern.trim();
        // A pattern naming an existing file is that file, even when its name
        // has glob characters (`report[1].txt`), as in Gemini CLI.
        if !is_glob(pattern) || files::resolve(&job.roots[0], pattern).is_file() {
            collect_literal(job, pattern, found);
            continue;
        }
        // Globs are matched relative to the workspace directories: an
        // absolute one in the directory it names, a relative one in each.
        let (roots, relative_pattern): (Vec<&PathBuf>, String) = if Path::new(pattern).is_absolute()
        {
            match job
                .roots
                .iter()
                .find_map(|r| Path::new(pattern).strip_prefix(r).ok().map(|rel| (r, rel)))
            {
                Some((root, rel)) => (vec![root], rel.to_string_lossy().into_owned()),
                None => {
                    found.skip(pattern, "outside the workspace");
                    continue;
                }
            }
        } else {
            (
                job.roots.iter().collect(),
                pattern.trim_start_matches("./").to_owned(),
            )
        };
        if Path::new(&relative_pattern)
            .components()
            .any(|c| c == Component::ParentDir)
        {
            found.skip(pattern, "patterns may not leave the workspace with '..'");
            continue;
        }
        match glob(&relative_pattern) {
            Ok(g) => {
                globs.add(g);
                any_glob = true;
            }
            Err(e) => {
                found.skip(pattern, format!("invalid glob pattern: {e}"));
                continue;
            }
        }
        // Walk only below the pattern's literal leading directories.
        let literal: PathBuf = Path::new(&relative_pattern)
            .components()
            .take_while(|c| !is_glob(&c.as_os_str().to_string_lossy()))
            .collect();
        for root in roots {
            let start = if literal.as_os_str().is_empty() {
                root.clone()
            } else {
                root.join(&literal)
            };
            if files::is_within(&start, &job.roots) {
                glob_starts.insert(start);
            } else {
                found.skip(pattern, "outside the workspace");
            }
        }
    }
    if !any_glob {
        return;
    }
    let Ok(globs) = globs.build() else {
        return;
    };
    // Drop starts inside other starts: their files are walked already.
    let starts: Vec<PathBuf> = glob_starts
        .iter()
        .filter(|s| {
            !glob_starts
                .iter()
                .any(|other| other != *s && s.starts_with(other))
        })
        .cloned()
        .collect();
    for start in starts {
        walk(job, &start, None, found, &|rel| globs.is_match(rel));
    }
}

fn collect_literal(job: &Job, pattern: &str, found: &mut Found) {
    let path = files::resolve(&job.roots[0], pattern);
    if !files::is_within(&path, &job.roots) {
        found.skip(pattern, "outside the workspace");
        return;
    }
    match std::fs::metadata(&path) {
        Ok(m) if m.is_dir() && ignored(&path, job) => {
            found.skip(pattern, "excluded by .gitignore or .geminiignore");
        }
        Ok(m) if m.is_dir() => {
            let depth = if job.recursive { None } else { Some(1) };
            walk(job, &path, depth, found, &|_| true);
        }
        Ok(_) => {
            if ignored(&path, job) {
                found.skip(pattern, "excluded by .gitignore or .geminiignore");
            } else {
                found.files.insert(path, true);
            }
        }
        Err(_) => found.skip(pattern, "not found"),
    }
}

/// Whether the ignore rules exclude `path` (a file, or a directory and so
/// everything below it), decided as the search tools decide.
fn ignored(path: &Path, job: &Job) -> bool {
    super::walk::is_ignored(path, &job.roots, job.filtering)
}

/// Walks `start`, adding the files `matches` accepts (by their path
/// relative to the workspace directory) that no ignore file, default or
/// user exclusion removes.
fn walk(
    job: &Job,
    start: &Path,
    max_depth: Option<usize>,
    found: &mut Found,
    matches: &dyn Fn(&Path) -> bool,
) {
    // The walk checks what lies below `start`, not `start` itself.
    if ignored(start, job) {
        return;
    }
    let mut builder = WalkBuilder::new(start);
    builder
        .max_depth(max_depth)
        .hidden(false)
        .ignore(false)
        .parents(true)
        .follow_links(false)
        .git_ignore(job.filtering.respect_git_ignore)
        .git_exclude(job.filtering.respect_git_ignore)
        .git_global(false)
        .require_git(true);
    if job.filtering.respect_gemini_ignore {
        builder.add_custom_ignore_filename(files::GEMINI_IGNORE_FILE);
    }
    let roots = job.roots.clone();
    let excludes_dirs = job.excludes.default_files.is_some();
    let user = job.excludes.user.clone();
    let respect_git = job.filtering.respect_git_ignore;
    builder.filter_entry(move |entry| {
        if entry.depth() == 0 || !entry.file_type().is_some_and(|t| t.is_dir()) {
            return true;
        }
        let name = entry.file_name().to_string_lossy();
        if respect_git && name == ".git" {
            return false;
        }
        let rel = relative(entry.path(), &roots).unwrap_or(entry.path());
        !((excludes_dirs && DEFAULT_EXCLUDED_DIRS.contains(&name.as_ref())) || user.is_match(rel))
    });
    let mut visited = 0usize;
    for entry in builder.build() {
        visited += 1;
        if visited > MAX_WALK_ENTRIES {
            found.walk_limit_hit = true;
            break;
        }
        if visited.is_multiple_of(256) && job.cancel.is_cancelled() {
            return;
        }
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let is_file = if file_type.is_symlink() {
            std::fs::metadata(path).is_ok_and(|m| m.is_file())
        } else {
            file_type.is_file()
        };
        if !is_file {
            continue;
        }
        let Some(rel) = relative(path, &job.roots) else {
            continue;
        };
        if !matches(rel) || job.excludes.by_user(rel) || job.excludes.by_default(rel) {
            continue;
        }
        if file_type.is_symlink() && !files::is_within(path, &job.roots) {
            found.skip(
                rel.display().to_string(),
                "symlink to outside the workspace",
            );
            continue;
        }
        found.files.entry(path.to_path_buf()).or_insert(false);
    }
}

/// Whether a media file was asked for: named explicitly, or its extension
/// appears in a pattern (`*.png`, `**/*.{png,jpg}`).
fn media_requested(path: &Path, explicit: bool, patterns: &[String]) -> bool {
    if explicit {
        return true;
    }
    let Some(ext) = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
    else {
        return false;
    };
    patterns.iter().any(|p| {
        let p = p.to_ascii_lowercase();
        p.contains(&format!(".{ext}"))
            || p.contains(&format!("{{{ext}"))
            || p.contains(&format!(",{ext}"))
    })
}

fn read_found(job: &Job, mut found: Found) -> ToolResult {
    let mut parts: Vec<Part> = Vec::new();
    let mut read: Vec<String> = Vec::new();
    let mut remaining = job.budget;
    let mut out_of_budget = 0usize;
    let files = std::mem::take(&mut found.files);
    for (path, explicit) in files {
        if job.cancel.is_cancelled() {
            return ToolResult::error(ToolErrorKind::Cancelled, "Reading files was cancelled.");
        }
        let shown = text::display_path(&path, &job.roots);
        if explicit
            && let Some(rel) = relative(&path, &job.roots)
            && job.excludes.by_user(rel)
        {
            found.skip(shown, "excluded by a pattern");
            continue;
        }
        let media = text::media_type(&path);
        if media.is_some() && !media_requested(&path, explicit, &job.patterns) {
            found.skip(
                shown,
                "media file not asked for; name it or its extension to include it",
            );
            continue;
        }
        if remaining == 0 {
            out_of_budget += 1;
            continue;
        }
        let header = format!("--- {} ---\n\n", path.display());
        match read_file::load(&path, None, None, MAX_LINES_PER_FILE) {
            Ok(Loaded::Media(m)) => {
                parts.push(Part::text(format!("{header}[Attached: {}]\n\n", m.mime)));
                parts.push(Part::inline_data(m.mime, m.data_base64));
                read.push(shown);
            }
            Ok(Loaded::Text(window)) => {
                let mut body = window.with_notice(&path);
                let full = header.len() + body.chars().count() + 2;
                if full > remaining {
                    body =
                        cut_to_budget(&path, &window, remaining.saturating_sub(header.len() + 200));
                    remaining = 0;
                } else {
                    remaining -= full;
                }
                parts.push(Part::text(format!("{header}{body}\n\n")));
                read.push(shown);
            }
            Err(error) => {
                let why = match error.kind {
                    ToolErrorKind::BinaryFile => "binary file".to_owned(),
                    ToolErrorKind::FileTooLarge => {
                        format!("larger than {}", text::human_size(text::MAX_FILE_SIZE))
                    }
                    _ => error.message,
                };
                found.skip(shown, why);
            }
        }
    }
    if out_of_budget > 0 {
        found.skip(
            format!("{out_of_budget} more file(s)"),
            "output limit reached; read them in another call",
        );
    }
    if found.walk_limit_hit {
        found.skip(
            "the rest of the search",
            format!("stopped after {MAX_WALK_ENTRIES} directory entries; use narrower patterns"),
        );
    }
    let skipped_summary = summarize_skipped(&found.skipped);
    if read.is_empty() {
        let mut message = "No files were read: nothing matched the paths and patterns, or every match was skipped.".to_owned();
        if !skipped_summary.is_empty() {
            message.push('\n');
            message.push_str(&skipped_summary);
        }
        let display = if skipped_summary.is_empty() {
            "No files read".to_owned()
        } else {
            format!("No files read\n{skipped_summary}")
        };
        return ToolResult::success(message, display);
    }
    parts.push(Part::text("--- End of content ---"));
    let mut display = format!("Read {} file(s): {}", read.len(), list(&read));
    if !skipped_summary.is_empty() {
        display.push('\n');
        display.push_str(&skipped_summary);
    }
    ToolResult::parts(parts, display)
}

/// A text file cut to about `budget` characters, whole lines only.
fn cut_to_budget(path: &Path, window: &read_file::TextWindow, budget: usize) -> String {
    let mut used = 0usize;
    let mut lines = Vec::new();
    for line in window.content.split('\n') {
        let len = line.chars().count() + 1;
        if used + len > budget {
            break;
        }
        used += len;
        lines.push(line);
    }
    let shown = lines.len();
    let last = window.first.max(1) + shown.saturating_sub(1);
    let note = if shown == 0 {
        format!(
            "[Not shown: the output limit was reached. Use read_file on {} to read it.]",
            path.display()
        )
    } else {
        format!(
            "[Cut to fit the output limit: lines {}-{last} of {} shown. To read more, call read_file on {} with start_line: {}.]",
            window.first.max(1),
            window.total,
            path.display(),
            last + 1
        )
    };
    format!("{note}\n\n{}", lines.join("\n"))
}

fn list(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(MAX_LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > MAX_LISTED {
        text.push_str(&format!(" and {} more", items.len() - MAX_LISTED));
    }
    text
}

fn summarize_skipped(skipped: &[(String, String)]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = skipped
        .iter()
        .map(|(what, why)| format!("{what} ({why})"))
        .collect();
    format!("Skipped {}: {}", skipped.len(), list(&shown))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::LlmContent;
    use crate::tools::Tool;
    use std::fs;

    fn setup() -> (tempfile::TempDir, PathBuf, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ctx = ToolContext::new(vec![root.clone()]);
        (dir, root, ctx)
    }

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
