//! Recursive directory walks for the search tools (`glob`, `grep_search`):
//! one place that decides which ignore rules apply, so both tools (and the
//! folder listing in [`super::files`]) agree on what is hidden.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};

use super::files::GEMINI_IGNORE_FILE;
use super::{ToolError, ToolErrorKind};
use crate::config::FileFiltering;

/// A walker over `root` honouring the ignore rules as configured:
/// `.gitignore` (and `.git/info/exclude`) only inside git repositories,
/// `.geminiignore` everywhere, in `root` and its parents. `.git` directories
/// are never entered. Symlinks are not followed. `skip_hidden` leaves out
/// dot-files and dot-directories below `root`.
pub fn walker(root: &Path, filtering: FileFiltering, skip_hidden: bool) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(skip_hidden)
        .ignore(false)
        .parents(true)
        .git_ignore(filtering.respect_git_ignore)
        .git_exclude(filtering.respect_git_ignore)
        .git_global(false)
        .require_git(true)
        .follow_links(false)
        .filter_entry(|entry| entry.depth() == 0 || entry.file_name() != ".git");
    if filtering.respect_gemini_ignore {
        builder.add_custom_ignore_filename(GEMINI_IGNORE_FILE);
    }
    builder
}

/// Whether the ignore rules exclude `path`, decided by the same walker
/// `glob` and `grep_search` use, so that every file tool agrees: a walk
/// from the outermost workspace directory holding `path`, entering only
/// the directories on the way to it, either reaches `path` or it does not.
/// So a file in an ignored directory (`private/` covers
/// `private/deeper/x.txt`), negations (`!keep.txt`, which cannot re-include
/// a file below an ignored directory, as in Git) and `.gitignore` (inside
/// git repositories, when `filtering` respects it) count exactly as in a
/// search. `.git` counts as ignored with `.gitignore`, as in Gemini CLI.
/// Symlinks on the way are resolved first (the rules of the real location
/// apply); a path that does not exist is not ignored (the caller reports
/// it missing).
pub fn is_ignored(path: &Path, roots: &[PathBuf], filtering: FileFiltering) -> bool {
    if !filtering.respect_git_ignore && !filtering.respect_gemini_ignore {
        return false;
    }
    let Ok(real) = path.canonicalize() else {
        return false;
    };
    let roots: Vec<PathBuf> = roots.iter().filter_map(|r| r.canonicalize().ok()).collect();
    // A workspace directory itself is never ignored.
    if roots.contains(&real) {
        return false;
    }
    let root = roots
        .into_iter()
        .filter(|r| real.starts_with(r))
        .min_by_key(|r| r.components().count())
        .or_else(|| real.parent().map(Path::to_path_buf));
    let Some(root) = root else {
        return false;
    };
    let depth = real
        .strip_prefix(&root)
        .map_or(1, |r| r.components().count());
    let target = real.clone();
    let skip_git = filtering.respect_git_ignore;
    let mut builder = walker(&root, filtering, false);
    builder.max_depth(Some(depth)).filter_entry(move |entry| {
        entry.depth() == 0
            || (target.starts_with(entry.path()) && !(skip_git && entry.file_name() == ".git"))
    });
    !builder
        .build()
        .filter_map(Result::ok)
        .any(|entry| entry.path() == real)
}

/// Refuses a search or listing that starts inside an ignored directory
/// (`dir_path = "private"` with `private/` in `.geminiignore`): the walker
/// never checks its own starting folder, so without this `glob`,
/// `grep_search` and `list_directory` would show what `read_file` refuses.
pub fn refuse_ignored_start(
    path: &Path,
    roots: &[PathBuf],
    filtering: FileFiltering,
) -> Result<(), ToolError> {
    if is_ignored(path, roots, filtering) {
        return Err(ToolError::new(
            ToolErrorKind::InvalidParams,
            format!(
                "Path {} is excluded by {} and cannot be searched or listed.",
                path.display(),
                super::read_file::ignore_files(filtering)
            ),
        ));
    }
    Ok(())
}

/// Walks in parallel and collects what `visit` pushes. Each walker thread
/// gets its own state from `init` (e.g. a reusable searcher) and its own
/// output vector; the vectors are joined once at the end, in no particular
/// order. Entries the walker cannot read are skipped.
pub fn collect_parallel<S, T, I, V>(walk: &WalkBuilder, init: I, visit: V) -> Vec<T>
where
    T: Send,
    S: Send,
    I: Fn() -> S + Sync,
    V: Fn(&mut S, DirEntry, &mut Vec<T>) -> WalkState + Sync,
{
    let results = Mutex::new(Vec::new());
    let mut builder = Collector {
        results: &results,
        init: &init,
        visit: &visit,
    };
    walk.build_parallel().visit(&mut builder);
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}

struct Collector<'a, T, I, V> {
    results: &'a Mutex<Vec<T>>,
    init: &'a I,
    visit: &'a V,
}

impl<'a, S, T, I, V> ParallelVisitorBuilder<'a> for Collector<'a, T, I, V>
where
    T: Send,
    S: Send + 'a,
    I: Fn() -> S + Sync,
    V: Fn(&mut S, DirEntry, &mut Vec<T>) -> WalkState + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(CollectVisitor {
            state: (self.init)(),
            local: Vec::new(),
            results: self.results,
            visit: self.visit,
        })
    }
}

struct CollectVisitor<'a, S, T, V> {
    state: S,
    local: Vec<T>,
    results: &'a Mutex<Vec<T>>,
    visit: &'a V,
}

impl<S, T, V> ParallelVisitor for CollectVisitor<'_, S, T, V>
where
    T: Send,
    S: Send,
    V: Fn(&mut S, DirEntry, &mut Vec<T>) -> WalkState + Sync,
{
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        match entry {
            Ok(entry) => (self.visit)(&mut self.state, entry, &mut self.local),
            Err(_) => WalkState::Continue,
        }
    }
}

impl<S, T, V> Drop for CollectVisitor<'_, S, T, V> {
    fn drop(&mut self) {
        if self.local.is_empty() {
            return;
        }
        let mut results = self.results.lock().unwrap_or_else(|e| e.into_inner());
        if results.is_empty() {
            std::mem::swap(&mut *results, &mut self.local);
        } else {
            results.append(&mut self.local);
        }
    }
}

/// Whether an entry is a regular file; with `follow_symlinks`, a symlink
/// to a regular file counts too.
pub fn is_file(entry: &DirEntry, follow_symlinks: bool) -> bool {
    match entry.file_type() {
        Some(t) if t.is_file() => true,
        Some(t) if t.is_symlink() && follow_symlinks => {
            std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file())
        }
        _ => false,
    }
}

/// The path of `path` relative to `root` with `/` separators, as the
/// search tools report and match it.
pub fn relative_str<'p>(path: &'p Path, root: &Path) -> std::borrow::Cow<'p, str> {
    relative_path(path, root).to_string_lossy()
}

/// `path` relative to `root` (or `path` itself when it is not below it).
///
/// The walker's paths are `root` joined with names, so on Unix a byte
/// prefix check at a `/` boundary says the same as `Path::strip_prefix`,
/// which compares component by component and was a visible share of a
/// 15,000-match glob's time.
pub fn relative_path<'p>(path: &'p Path, root: &Path) -> &'p Path {
    #[cfg(unix)]
    {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let (bytes, prefix) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
        if let Some(rest) = bytes.strip_prefix(prefix) {
            let rest = match rest.strip_prefix(b"/") {
                Some(rest) => Some(rest),
                None if rest.is_empty() || prefix.ends_with(b"/") => Some(rest),
                None => None,
            };
            // `Path` drops `.` components and repeated `/`: leave those to it.
            let plain =
                |rest: &&[u8]| !rest.starts_with(b"/") && !rest.starts_with(b"./") && *rest != b".";
            if let Some(rest) = rest.filter(plain) {
                return Path::new(OsStr::from_bytes(rest));
            }
        }
    }
    path.strip_prefix(root).unwrap_or(path)
}

/// A file filter in ripgrep's `--glob` style: a pattern without `/`
/// matches the file name at any depth (`*.rs`); one with `/` matches the
/// whole path relative to the search root (`src/**/*.{ts,tsx}`); a leading
/// `/` or `./` anchors it to the root explicitly; a trailing `/` selects
/// everything below such a directory. `*` never crosses a `/`.
#[derive(Debug, Clone)]
pub struct PathFilter {
    set: GlobSet,
}

impl PathFilter {
    pub fn new(pattern: &str) -> Result<Self, globset::Error> {
        let mut pattern = pattern.trim();
        while let Some(rest) = pattern.strip_prefix("./") {
            pattern = rest;
        }
        // `dir/` means everything below a directory `dir`, as in gitignore.
        let trimmed = pattern.trim_end_matches('/');
        let below = trimmed.len() < pattern.len();
        let mut full = match trimmed.strip_prefix('/') {
            Some(anchored) => anchored.to_owned(),
            None if trimmed.contains('/') => trimmed.to_owned(),
            None => format!("**/{trimmed}"),
        };
        if below {
            full.push_str("/**");
        }
        let glob = GlobBuilder::new(&full).literal_separator(true).build()?;
        let set = GlobSetBuilder::new().add(glob).build()?;
        Ok(Self { set })
    }

    /// Whether `relative` (a path relative to the search root) matches.
    pub fn is_match(&self, relative: &str) -> bool {
        self.set.is_match_candidate(&Candidate::new(relative))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_path_says_what_strip_prefix_says() {
        let cases = [
            ("/a/b/c.rs", "/a/b"),
            ("/a/b/c.rs", "/a/b/"),
            ("/a/bc/x", "/a/b"),
            ("/a/b", "/a/b"),
            ("/a/b//c", "/a/b"),
            ("/a/b/./c", "/a/b"),
            ("/x", "/"),
            ("./a", "."),
            ("a/b", ""),
            ("/elsewhere/f", "/a/b"),
            ("/a/./b/c", "/a/b"),
        ];
        for (path, root) in cases {
            let (path, root) = (Path::new(path), Path::new(root));
            let expected = path.strip_prefix(root).unwrap_or(path);
            assert_eq!(
                relative_path(path, root),
                expected,
                "{path:?} under {root:?}"
            );
        }
    }

    #[test]
    fn path_filters_follow_ripgrep_glob_rules() {
        let rs = PathFilter::new("*.rs").unwrap();
        assert!(rs.is_match("main.rs"));
        assert!(rs.is_match("src/bin/x.rs"));
        assert!(!rs.is_match("src/main.rsx"));
        let ts = PathFilter::new("src/**/*.{ts,tsx}").unwrap();
        assert!(ts.is_match("src/a.ts"));
        assert!(ts.is_match("src/x/y/b.tsx"));
        assert!(!ts.is_match("lib/src/a.ts"));
        let anchored = PathFilter::new("/*.md").unwrap();
        assert!(anchored.is_match("README.md"));
        assert!(!anchored.is_match("docs/a.md"));
        assert!(
            PathFilter::new("./docs/*.md")
                .unwrap()
                .is_match("docs/a.md")
        );
        let below = PathFilter::new("tests/").unwrap();
        assert!(below.is_match("tests/a.rs"));
        assert!(below.is_match("crates/x/tests/deep/b.rs"));
        assert!(!below.is_match("tests.rs"));
        assert!(PathFilter::new("/src/").unwrap().is_match("src/a/b.rs"));
        assert!(!PathFilter::new("/src/").unwrap().is_match("x/src/b.rs"));
        assert!(PathFilter::new("a[").is_err());
    }
}
