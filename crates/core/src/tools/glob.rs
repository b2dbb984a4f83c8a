//! `glob`: files whose paths match a glob pattern, newest first.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use globset::{Candidate, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use ignore::WalkState;
use serde::Deserialize;
use serde_json::{Value, json};

use super::mtime::MtimeReader;
use super::search_start::{self, FilteringOptions, StartMessages};
use super::{ToolContext, ToolError, ToolErrorKind, ToolResult, walk};
use crate::config::FileFiltering;

/// At most this many paths are listed; the header still gives the total.
pub const MAX_LISTED_FILES: usize = 1000;

/// Files modified more recently than this come first, newest first.
const RECENT: Duration = Duration::from_secs(24 * 60 * 60);

/// Finds files by glob pattern with the ignore rules applied.
pub struct GlobTool {
    schema: Value,
}

/// The arguments of a `glob` call.
#[derive(Debug, Deserialize)]
pub struct Params {
    pattern: String,
    #[serde(default)]
    dir_path: Option<String>,
    #[serde(default)]
    case_sensitive: Option<bool>,
    #[serde(flatten)]
    filtering: FilteringOptions,
}

impl GlobTool {
    pub const NAME: &'static str = "glob";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "description": "Glob to match, relative to dir_path, e.g. `**/*.rs`, `src/**/*.{ts,tsx}` or `*.md` (top level only).",
                        "type": "string"
                    },
                    "dir_path": {
                        "description": "Directory to search in, absolute or relative to the workspace root. Defaults to the workspace root.",
                        "type": "string"
                    },
                    "case_sensitive": {
                        "description": "Match letter case exactly (default false).",
                        "type": "boolean"
                    },
                    "respect_git_ignore": {
                        "description": "Skip files excluded by .gitignore inside git repositories (default true).",
                        "type": "boolean"
                    },
                    "respect_gemini_ignore": {
                        "description": "Skip files excluded by .geminiignore (default true).",
                        "type": "boolean"
                    }
                },
                "required": ["pattern"]
            }),
        }
    }
}

crate::tools::tool_info! {
    default GlobTool,
    display: "FindFiles",
    kind: Search,
    description: "Finds files whose paths match a glob pattern such as `**/*.py` or `src/**/*.{ts,tsx}`. `*` stays within one directory, `**` spans any depth, `{a,b}` and `[abc]` are supported. Returns absolute paths: files changed in the last 24 hours first (newest first), then the rest by path. Files excluded by .gitignore or .geminiignore are skipped. Use it to locate files by name or extension.",
    fn describe_call(&self, args: &Value) -> String {
        let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or("");
        match args.get("dir_path").and_then(Value::as_str) {
            Some(dir) => format!("'{pattern}' within {dir}"),
            None => format!("'{pattern}'"),
        }
    }
}

impl crate::tools::TypedTool for GlobTool {
    type Args = Params;

    async fn run(&self, params: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let request = GlobRequest::new(params, ctx)?;
        let cancel = ctx.cancel.clone();
        tokio::task::spawn_blocking(move || request.run(&cancel))
            .await
            .map_err(|e| {
                ToolError::new(
                    ToolErrorKind::Execution,
                    format!("Error during glob search: {e}"),
                )
            })
    }
}

/// A checked `glob` call, ready to run on a blocking thread.
struct GlobRequest {
    pattern: String,
    dir: PathBuf,
    matcher: PatternMatcher,
    filtering: FileFiltering,
}

impl GlobRequest {
    fn new(params: Params, ctx: &ToolContext) -> Result<Self, ToolError> {
        if params.pattern.trim().is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::InvalidParams,
                "The 'pattern' parameter cannot be empty.",
            ));
        }
        let (dir, roots) = search_start::dir_or_readable(ctx, params.dir_path.as_deref())?;
        search_start::check_start(
            &dir,
            false,
            &StartMessages {
                not_found: "Search path does not exist",
                not_a_dir: "Search path is not a directory",
                inaccessible: "Cannot access search path",
            },
        )?;
        let case_sensitive = params.case_sensitive.unwrap_or(false);
        let matcher = PatternMatcher::new(&params.pattern, &dir, case_sensitive).map_err(|e| {
            ToolError::new(
                ToolErrorKind::InvalidParams,
                format!("Invalid glob pattern \"{}\": {e}", params.pattern),
            )
        })?;
        let filtering = params.filtering.over(ctx.file_filtering);
        walk::refuse_ignored_start(&dir, &roots, filtering)?;
        Ok(Self {
            pattern: params.pattern,
            dir,
            matcher,
            filtering,
        })
    }

    fn run(&self, cancel: &tokio_util::sync::CancellationToken) -> ToolResult {
        let mut found = self.find(self.filtering, cancel);
        if cancel.is_cancelled() {
            return ToolResult::error(ToolErrorKind::Cancelled, "The glob search was cancelled.");
        }
        let dir = self.dir.display();
        if found.is_empty() {
            let mut text = format!(
                "No files found matching pattern \"{}\" within {dir}",
                self.pattern
            );
            let filtered =
                self.filtering.respect_git_ignore || self.filtering.respect_gemini_ignore;
            if filtered {
                let unfiltered = FileFiltering {
                    respect_git_ignore: false,
                    respect_gemini_ignore: false,
                };
                let ignored = self.find(unfiltered, cancel).len();
                if ignored > 0 {
                    text.push_str(&format!(" ({ignored} files were ignored)"));
                }
            }
            return ToolResult::success(text, "No files found");
        }
        sort_newest_first(&mut found, SystemTime::now());
        let total = found.len();
        let mut text = format!(
            "Found {total} file(s) matching \"{}\" within {dir}, sorted by modification time (newest first):",
            self.pattern
        );
        text.reserve(
            found
                .iter()
                .take(MAX_LISTED_FILES)
                .map(|f| f.path.as_os_str().len() + 1)
                .sum(),
        );
        for file in found.iter().take(MAX_LISTED_FILES) {
            text.push('\n');
            text.push_str(&file.path.to_string_lossy());
        }
        if total > MAX_LISTED_FILES {
            text.push_str(&format!(
                "\n(Showing the first {MAX_LISTED_FILES} of {total} files. Narrow the pattern or dir_path to see the rest.)"
            ));
        }
        ToolResult::success(text, format!("Found {total} matching file(s)"))
    }

    /// The matching files under the ignore rules given, in no order.
    fn find(
        &self,
        filtering: FileFiltering,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Vec<FoundFile> {
        let walker = walk::walker(&self.dir, filtering, false);
        let matcher = &self.matcher;
        let root = self.dir.as_path();
        walk::collect_parallel(&walker, MtimeReader::default, |mtimes, entry, out| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let depth = entry.depth();
            if depth == 0 {
                return WalkState::Continue;
            }
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                return if matcher.may_contain(depth, entry.file_name()) {
                    WalkState::Continue
                } else {
                    WalkState::Skip
                };
            }
            if !walk::is_file(&entry, true) || !matcher.is_match(entry.path(), root) {
                return WalkState::Continue;
            }
            let modified = mtimes
                .modified(entry.path())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            out.push(FoundFile {
                path: entry.into_path(),
                modified,
            });
            WalkState::Continue
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FoundFile {
    path: PathBuf,
    modified: SystemTime,
}

/// Files modified within the last 24 hours first, newest first; then the
/// rest by path. Ties are broken by path, so the order is deterministic.
fn sort_newest_first(files: &mut [FoundFile], now: SystemTime) {
    // `t > now - 24 h` is `now - t < 24 h` (a future time counts as recent) with one
    // comparison per call instead of a subtraction: the sort calls it ~2 n log n times.
    let cutoff = now.checked_sub(RECENT);
    let is_recent = |t: SystemTime| cutoff.is_none_or(|cutoff| t > cutoff);
    files.sort_unstable_by(|a, b| {
        match (is_recent(a.modified), is_recent(b.modified)) {
            (true, true) => b.modified.cmp(&a.modified),
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
            (false, false) => std::cmp::Ordering::Equal,
        }
        .then_with(|| a.path.cmp(&b.path))
    });
}

/// A compiled `glob` pattern. Relative patterns match the path relative to
/// the search directory; absolute ones the absolute path. Directories that
/// cannot contain a match are pruned from the walk.
struct PatternMatcher {
    set: GlobSet,
    absolute: bool,
    /// Matchers for the leading literal-or-wildcard components before the
    /// first `**`: a directory at depth `d` must match `prefix[d - 1]`.
    prefix: Vec<GlobMatcher>,
    /// Deepest depth a match can have, when the pattern has no `**`.
    max_depth: Option<usize>,
}

impl PatternMatcher {
    fn new(pattern: &str, dir: &Path, case_sensitive: bool) -> Result<Self, globset::Error> {
        let mut pattern = pattern.trim();
        while let Some(rest) = pattern.strip_prefix("./") {
            pattern = rest;
        }
        // An absolute pattern inside the search directory is made relative,
        // so that it gets the same pruning.
        let dir_prefix = format!("{}/", dir.to_string_lossy().trim_end_matches('/'));
        if let Some(rest) = pattern.strip_prefix(&dir_prefix) {
            pattern = rest;
        }
        let absolute = pattern.starts_with('/');
        let build = |glob: &str| {
            GlobBuilder::new(glob)
                .case_insensitive(!case_sensitive)
                .literal_separator(true)
                .build()
        };
        let set = GlobSetBuilder::new().add(build(pattern)?).build()?;
        let mut prefix = Vec::new();
        let mut max_depth = None;
        if !absolute {
            let components: Vec<&str> = pattern.split('/').collect();
            let recursive_at = components.iter().position(|c| *c == "**");
            let dirs = match recursive_at {
                Some(at) => at,
                None => {
                    max_depth = Some(components.len());
                    components.len() - 1
                }
            };
            for component in &components[..dirs] {
                match build(component) {
                    Ok(glob) if !component.is_empty() => prefix.push(glob.compile_matcher()),
                    // e.g. `{a/b,c}` split at its `/`: no pruning.
                    _ => {
                        prefix.clear();
                        max_depth = None;
                        break;
                    }
                }
            }
        }
        Ok(Self {
            set,
            absolute,
            prefix,
            max_depth,
        })
    }

    fn is_match(&self, path: &Path, root: &Path) -> bool {
        if self.absolute {
            self.set.is_match_candidate(&Candidate::new(path))
        } else {
            let relative = walk::relative_path(path, root);
            self.set.is_match_candidate(&Candidate::new(relative))
        }
    }

    /// Whether a directory at `depth` (1 = a child of the search root)
    /// named `name` can contain matches.
    fn may_contain(&self, depth: usize, name: &std::ffi::OsStr) -> bool {
        if self.max_depth.is_some_and(|max| depth >= max) {
            return false;
        }
        match self.prefix.get(depth - 1) {
            Some(component) => component.is_match(name),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;
    use crate::tools::test_support::{text, workspace};
    use std::fs;

    fn touch(path: &Path, contents: &str, age: Duration) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, contents).unwrap();
        let file = fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
    }

    const OLD: Duration = Duration::from_secs(10 * 24 * 60 * 60);

    async fn run(root: &Path, args: Value) -> ToolResult {
        GlobTool::new()
            .execute(args, &ToolContext::new(vec![root.to_path_buf()]))
            .await
    }

    fn listed(result: &ToolResult) -> Vec<String> {
        text(result).lines().skip(1).map(str::to_owned).collect()
    }

    #[tokio::test]
    async fn recent_files_newest_first_then_the_rest_by_path() {
        let (_guard, root) = workspace();
        touch(&root.join("b_old.rs"), "", OLD);
        touch(&root.join("a_old.rs"), "", OLD + Duration::from_secs(60));
        touch(&root.join("src/new.rs"), "", Duration::from_secs(60));
        touch(&root.join("src/newer.rs"), "", Duration::from_secs(5));
        touch(&root.join("notes.txt"), "", Duration::ZERO);
        let result = run(&root, json!({"pattern": "**/*.rs"})).await;
        assert_eq!(result.error, None);
        let r = |p: &str| root.join(p).display().to_string();
        assert_eq!(
            text(&result),
            format!(
                "Found 4 file(s) matching \"**/*.rs\" within {}, sorted by modification time (newest first):\n{}\n{}\n{}\n{}",
                root.display(),
                r("src/newer.rs"),
                r("src/new.rs"),
                r("a_old.rs"),
                r("b_old.rs"),
            )
        );
        assert_eq!(result.display, "Found 4 matching file(s)");
        // Deterministic: the same call gives the same text.
        let again = run(&root, json!({"pattern": "**/*.rs"})).await;
        assert_eq!(text(&again), text(&result));
    }

    #[tokio::test]
    async fn star_stays_in_one_directory_and_double_star_recurses() {
        let (_guard, root) = workspace();
        for p in [
            "README.md",
            "docs/guide.md",
            "docs/deep/x.md",
            "src/a.ts",
            "src/ui/b.tsx",
            "src/ui/c.js",
        ] {
            touch(&root.join(p), "", OLD);
        }
        let top = run(&root, json!({"pattern": "*.md"})).await;
        assert_eq!(
            listed(&top),
            vec![root.join("README.md").display().to_string()]
        );
        let all = run(&root, json!({"pattern": "**/*.md"})).await;
        assert_eq!(listed(&all).len(), 3);
        let ts = run(&root, json!({"pattern": "src/**/*.{ts,tsx}"})).await;
        assert_eq!(
            listed(&ts),
            vec![
                root.join("src/a.ts").display().to_string(),
                root.join("src/ui/b.tsx").display().to_string()
            ]
        );
        let sub = run(&root, json!({"pattern": "*.md", "dir_path": "docs"})).await;
        assert_eq!(
            listed(&sub),
            vec![root.join("docs/guide.md").display().to_string()]
        );
        let absolute = format!("{}/docs/*/*.md", root.display());
        let abs = run(&root, json!({"pattern": absolute})).await;
        assert_eq!(
            listed(&abs),
            vec![root.join("docs/deep/x.md").display().to_string()]
        );
        let dot = run(&root, json!({"pattern": "./docs/*.md"})).await;
        assert_eq!(listed(&dot).len(), 1);
    }

    #[tokio::test]
    async fn case_insensitive_unless_asked() {
        let (_guard, root) = workspace();
        touch(&root.join("Src/Main.RS"), "", OLD);
        let insensitive = run(&root, json!({"pattern": "src/*.rs"})).await;
        assert_eq!(
            listed(&insensitive),
            vec![root.join("Src/Main.RS").display().to_string()]
        );
        let sensitive = run(
            &root,
            json!({"pattern": "src/*.rs", "case_sensitive": true}),
        )
        .await;
        assert!(text(&sensitive).starts_with("No files found matching pattern \"src/*.rs\""));
        let exact = run(
            &root,
            json!({"pattern": "Src/*.RS", "case_sensitive": true}),
        )
        .await;
        assert_eq!(listed(&exact).len(), 1);
    }

    #[tokio::test]
    async fn ignore_rules_and_flags() {
        let (_guard, root) = workspace();
        fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        fs::write(root.join(".geminiignore"), "secret.txt\n").unwrap();
        touch(&root.join("build/out.txt"), "", OLD);
        touch(&root.join("a.log"), "", OLD);
        touch(&root.join("secret.txt"), "", OLD);
        touch(&root.join("keep.txt"), "", OLD);
        let names = |result: &ToolResult| -> Vec<String> {
            let mut names: Vec<String> = listed(result)
                .iter()
                .map(|p| {
                    p.strip_prefix(&format!("{}/", root.display()))
                        .unwrap()
                        .to_owned()
                })
                .collect();
            names.sort();
            names
        };
        let pattern = "**/*.{txt,log}";
        // Outside a git repository .gitignore does not apply.
        let outside = run(&root, json!({"pattern": pattern})).await;
        assert_eq!(names(&outside), vec!["a.log", "build/out.txt", "keep.txt"]);
        // Inside one it does; .git itself is never listed.
        touch(&root.join(".git/HEAD.txt"), "", OLD);
        let inside = run(&root, json!({"pattern": pattern})).await;
        assert_eq!(names(&inside), vec!["keep.txt"]);
        let no_git = run(
            &root,
            json!({"pattern": pattern, "respect_git_ignore": false}),
        )
        .await;
        assert_eq!(names(&no_git), vec!["a.log", "build/out.txt", "keep.txt"]);
        let nothing = json!({"pattern": pattern, "respect_git_ignore": false, "respect_gemini_ignore": false});
        let none = run(&root, nothing).await;
        assert_eq!(
            names(&none),
            vec!["a.log", "build/out.txt", "keep.txt", "secret.txt"]
        );
        // Nothing left: say how many the rules hid.
        let hidden = run(&root, json!({"pattern": "**/*.log"})).await;
        assert_eq!(
            text(&hidden),
            format!(
                "No files found matching pattern \"**/*.log\" within {} (1 files were ignored)",
                root.display()
            )
        );
        assert_eq!(hidden.display, "No files found");
    }

    #[tokio::test]
    async fn caps_the_list_with_a_notice() {
        let (_guard, root) = workspace();
        for i in 0..MAX_LISTED_FILES + 5 {
            touch(&root.join(format!("f{i:04}.txt")), "", OLD);
        }
        let result = run(&root, json!({"pattern": "*.txt"})).await;
        let text = text(&result);
        assert!(text.starts_with(&format!("Found {} file(s)", MAX_LISTED_FILES + 5)));
        assert_eq!(text.lines().count(), MAX_LISTED_FILES + 2);
        assert!(text.ends_with(&format!(
            "\n(Showing the first {MAX_LISTED_FILES} of {} files. Narrow the pattern or dir_path to see the rest.)",
            MAX_LISTED_FILES + 5
        )));
        assert!(text.contains(&format!("{}\n", root.join("f0000.txt").display())));
        assert!(!text.contains("f1004.txt"));
    }

    #[tokio::test]
    async fn errors() {
        let (_guard, root) = workspace();
        touch(&root.join("f.txt"), "", OLD);
        let bad = run(&root, json!({"pattern": "a[b"})).await;
        let error = bad.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::InvalidParams);
        assert!(
            error.message.starts_with("Invalid glob pattern \"a[b\": "),
            "{}",
            error.message
        );
        let empty = run(&root, json!({"pattern": " "})).await;
        assert_eq!(empty.error.unwrap().kind, ToolErrorKind::InvalidParams);
        let escape = run(&root, json!({"pattern": "*", "dir_path": "../"})).await;
        assert_eq!(
            escape.error.unwrap().kind,
            ToolErrorKind::PathNotInWorkspace
        );
        let missing = run(&root, json!({"pattern": "*", "dir_path": "nope"})).await;
        assert_eq!(missing.error.unwrap().kind, ToolErrorKind::NotFound);
        let file = run(&root, json!({"pattern": "*", "dir_path": "f.txt"})).await;
        assert_eq!(file.error.unwrap().kind, ToolErrorKind::NotADirectory);
    }

    #[tokio::test]
    async fn cancelled_before_running() {
        let (_guard, root) = workspace();
        touch(&root.join("a.rs"), "", OLD);
        let ctx = ToolContext::new(vec![root.clone()]);
        ctx.cancel.cancel();
        let result = GlobTool::new()
            .execute(json!({"pattern": "*.rs"}), &ctx)
            .await;
        assert_eq!(result.error.unwrap().kind, ToolErrorKind::Cancelled);
    }

    #[test]
    fn pruning_follows_the_pattern_prefix() {
        let dir = Path::new("/ws");
        let m = PatternMatcher::new("src/*/mod.rs", dir, true).unwrap();
        assert_eq!(m.max_depth, Some(3));
        assert!(m.may_contain(1, "src".as_ref()));
        assert!(!m.may_contain(1, "target".as_ref()));
        assert!(m.may_contain(2, "anything".as_ref()));
        assert!(!m.may_contain(3, "deeper".as_ref()));
        let r = PatternMatcher::new("crates/**/*.rs", dir, false).unwrap();
        assert_eq!(r.max_depth, None);
        assert!(r.may_contain(1, "CRATES".as_ref()));
        assert!(!r.may_contain(1, "ui".as_ref()));
        assert!(r.may_contain(5, "x".as_ref()));
        let braces = PatternMatcher::new("{src/a,lib}/*.rs", dir, false).unwrap();
        assert!(braces.prefix.is_empty() && braces.max_depth.is_none());
    }
}
