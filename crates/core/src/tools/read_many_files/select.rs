//! Which files a `read_many_files` call names: literal paths, directories
//! (walked when `recursive`) and glob patterns, minus the user's and the
//! default exclusions and what the ignore files hide. Media files count
//! only when asked for by name or extension ([`media_requested`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::WalkBuilder;

use super::{Job, MAX_WALK_ENTRIES};
use crate::tools::files;

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

/// Exclusion rules: the user's patterns and, optionally, the defaults.
pub(super) struct Excludes {
    user: GlobSet,
    default_files: Option<GlobSet>,
}

impl Excludes {
    pub(super) fn new(patterns: &[String], use_defaults: bool) -> Result<Self, String> {
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

    pub(super) fn by_user(&self, rel: &Path) -> bool {
        self.user.is_match(rel)
    }

    /// Default-excluded file names (directories are pruned while walking).
    pub(super) fn by_default(&self, rel: &Path) -> bool {
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
pub(super) struct Found {
    /// Path → named explicitly (a literal file path).
    pub(super) files: BTreeMap<PathBuf, bool>,
    pub(super) skipped: Vec<(String, String)>,
    pub(super) walk_limit_hit: bool,
}

impl Found {
    pub(super) fn skip(&mut self, what: impl Into<String>, why: impl Into<String>) {
        self.skipped.push((what.into(), why.into()));
    }
}

/// The root containing `path` and the path relative to it.
pub(super) fn relative<'a>(path: &'a Path, roots: &[PathBuf]) -> Option<&'a Path> {
    roots.iter().find_map(|root| path.strip_prefix(root).ok())
}

pub(super) fn collect(job: &Job, found: &mut Found) {
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
    crate::tools::walk::is_ignored(path, &job.roots, job.filtering)
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
pub(super) fn media_requested(path: &Path, explicit: bool, patterns: &[String]) -> bool {
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
