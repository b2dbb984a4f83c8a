//! Finding the context files (`GEMINI.md`, or the names in
//! `context.fileName`), in the order Gemini CLI loads them:
//!
//! 1. the global file(s) in `~/.gemini/`;
//! 2. from the project root (the nearest ancestor with `.git`) down to the
//!    workspace, outermost first; without a project root, from the home
//!    directory down when the workspace lies inside it, else the workspace
//!    alone (never the whole file system);
//! 3. below the workspace, breadth first, visiting at most `max_dirs`
//!    directories (`context.discoveryMaxDirs`, 200 by default), honouring
//!    `.gitignore` (inside git repositories) and `.geminiignore`, never
//!    entering `.git` or `node_modules`, and not following symlinks.
//!    These are sorted by path, as Gemini CLI does.
//!
//! Each file comes with its [`Scope`] (global, an extension's, the
//! workspace's): where it may lead through links and import from, which
//! memory checks as it reads it (see `super::scope`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::config::FileFiltering;
use crate::tools::files::GEMINI_IGNORE_FILE;

/// The context file name when `context.fileName` is not set.
pub const DEFAULT_CONTEXT_FILE_NAME: &str = "GEMINI.md";
/// Directories below the workspace visited at most, by default.
pub const DEFAULT_MAX_DIRS: usize = 200;
/// Directories never searched for context files.
const SKIPPED_DIRS: &[&str] = &[".git", "node_modules"];

/// What discovery looks for and where.
#[derive(Debug, Clone)]
pub struct DiscoveryOptions {
    pub workspace: PathBuf,
    pub home: Option<PathBuf>,
    pub file_names: Vec<String>,
    pub max_dirs: usize,
    pub filtering: FileFiltering,
    /// Whether context files in and around the workspace are read; only
    /// the global `~/.gemini` ones are in an untrusted folder (as in
    /// Gemini CLI).
    pub workspace_files: bool,
    /// `context.memoryBoundaryMarkers`: names whose presence in a folder
    /// makes it the project root, where the upward search stops (`None`:
    /// `.git`, Gemini CLI 0.61's default; empty: no root).
    pub boundary_markers: Option<Vec<String>>,
    /// `context.loadMemoryFromIncludeDirectories`: the other workspace
    /// folders (include directories) are searched like the first one.
    pub include_directories: bool,
}

/// The nearest ancestor of `dir` (itself included) that has a `.git`
/// directory or file.
pub fn find_project_root(dir: &Path) -> Option<PathBuf> {
    find_root_with(dir, &[".git".to_owned()])
}

/// The nearest ancestor of `dir` (itself included) holding one of
/// `markers` (a file or a folder of that name).
pub fn find_root_with(dir: &Path, markers: &[String]) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| markers.iter().any(|m| !m.is_empty() && d.join(m).exists()))
        .map(Path::to_path_buf)
}

/// Where a context file was found, which decides where it may lead
/// through links and import from (see `super::scope`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// `~/.gemini/`: the user's own file.
    Global,
    /// An enabled extension's context file; `root` is the extension's
    /// folder (the linked folder for a link).
    Extension { name: String, root: PathBuf },
    /// Around or below a workspace folder.
    Workspace,
}

/// A context file and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub path: PathBuf,
    pub scope: Scope,
}

/// The context files of the first workspace folder (see [`discover`]),
/// then, with `include_directories`, those around and below each other
/// folder in `workspace_dirs` (the global files only once).
pub fn discover_all(options: &DiscoveryOptions, workspace_dirs: &[PathBuf]) -> Vec<PathBuf> {
    paths(discover_all_files(options, workspace_dirs))
}

/// [`discover_all`] with where each file was found.
pub fn discover_all_files(
    options: &DiscoveryOptions,
    workspace_dirs: &[PathBuf],
) -> Vec<ContextFile> {
    let mut found = discover_files(options);
    if !options.include_directories || !options.workspace_files {
        return found;
    }
    for dir in workspace_dirs.iter().filter(|d| **d != options.workspace) {
        let other = DiscoveryOptions {
            workspace: dir.clone(),
            ..options.clone()
        };
        for file in discover_files(&other) {
            if !found.iter().any(|f| f.path == file.path) {
                found.push(file);
            }
        }
    }
    found
}

/// The context files, in load order, without duplicates.
pub fn discover(options: &DiscoveryOptions) -> Vec<PathBuf> {
    paths(discover_files(options))
}

fn paths(files: Vec<ContextFile>) -> Vec<PathBuf> {
    files.into_iter().map(|f| f.path).collect()
}

/// [`discover`] with where each file was found.
pub fn discover_files(options: &DiscoveryOptions) -> Vec<ContextFile> {
    let mut found: Vec<ContextFile> = Vec::new();
    let push = |path: PathBuf, scope: Scope, found: &mut Vec<ContextFile>| {
        if !found.iter().any(|f| f.path == path) {
            found.push(ContextFile { path, scope });
        }
    };
    let global_dir = options.home.as_ref().map(|h| h.join(".gemini"));
    if let Some(dir) = &global_dir {
        for name in &options.file_names {
            let path = dir.join(name);
            if path.is_file() {
                push(path, Scope::Global, &mut found);
            }
        }
    }
    // The enabled extensions' context files (`contextFileName` or
    // GEMINI.md), read each time so enabling one applies at once.
    for (path, name, root) in
        crate::extensions::context_files(options.home.as_deref(), &options.workspace)
    {
        push(path, Scope::Extension { name, root }, &mut found);
    }
    if !options.workspace_files {
        return found;
    }
    let root = match &options.boundary_markers {
        Some(markers) => find_root_with(&options.workspace, markers),
        None => find_project_root(&options.workspace),
    };
    for dir in upward_dirs(&options.workspace, root.as_deref(), options.home.as_deref()) {
        for name in &options.file_names {
            let path = dir.join(name);
            if path.is_file() {
                push(path, Scope::Workspace, &mut found);
            }
        }
    }
    for path in downward(options, root.as_deref()) {
        push(path, Scope::Workspace, &mut found);
    }
    found
}

/// The directories from the stop directory down to the workspace.
fn upward_dirs(workspace: &Path, root: Option<&Path>, home: Option<&Path>) -> Vec<PathBuf> {
    let stop = match (root, home) {
        (Some(root), _) => root,
        (None, Some(home)) if workspace.starts_with(home) => home,
        _ => workspace,
    };
    let mut dirs: Vec<PathBuf> = workspace
        .ancestors()
        .take_while(|d| d.starts_with(stop))
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}

/// One directory's ignore rules, chained to its parent's.
struct Rules {
    matcher: Gitignore,
    parent: Option<Rc<Rules>>,
}

fn is_ignored(rules: &Option<Rc<Rules>>, path: &Path, is_dir: bool) -> bool {
    let mut current = rules.as_ref();
    while let Some(layer) = current {
        match layer.matcher.matched(path, is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => current = layer.parent.as_ref(),
        }
    }
    false
}

/// The ignore rules `dir` adds, chained to `parent`.
fn rules_for(
    dir: &Path,
    filtering: FileFiltering,
    in_git: bool,
    parent: &Option<Rc<Rules>>,
) -> Option<Rc<Rules>> {
    let mut files = Vec::new();
    if filtering.respect_git_ignore && in_git {
        files.push(dir.join(".gitignore"));
    }
    if filtering.respect_gemini_ignore {
        files.push(dir.join(GEMINI_IGNORE_FILE));
    }
    let files: Vec<PathBuf> = files.into_iter().filter(|f| f.is_file()).collect();
    if files.is_empty() {
        return parent.clone();
    }
    let mut builder = GitignoreBuilder::new(dir);
    for file in &files {
        if let Some(error) = builder.add(file) {
            tracing::warn!(file = %file.display(), %error, "ignore file partly unreadable");
        }
    }
    match builder.build() {
        Ok(matcher) => Some(Rc::new(Rules {
            matcher,
            parent: parent.clone(),
        })),
        Err(error) => {
            tracing::warn!(dir = %dir.display(), %error, "ignore rules skipped");
            parent.clone()
        }
    }
}

/// Context files below the workspace (not in it: [`upward_dirs`] has it).
fn downward(options: &DiscoveryOptions, root: Option<&Path>) -> Vec<PathBuf> {
    let in_git = root.is_some();
    // The rules of the directories from the project root to the workspace.
    let mut rules = None;
    let outer = root.unwrap_or(&options.workspace);
    for dir in options
        .workspace
        .ancestors()
        .take_while(|d| d.starts_with(outer))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        rules = rules_for(dir, options.filtering, in_git, &rules);
    }
    let mut found = Vec::new();
    let mut queue = VecDeque::from([(options.workspace.clone(), rules)]);
    let mut visited = 0usize;
    while let Some((dir, rules)) = queue.pop_front() {
        if visited >= options.max_dirs {
            break;
        }
        visited += 1;
        let rules = if dir == options.workspace {
            rules
        } else {
            rules_for(&dir, options.filtering, in_git, &rules)
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut subdirs = Vec::new();
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let path = entry.path();
            if kind.is_dir() {
                if SKIPPED_DIRS.iter().any(|s| name == *s) || is_ignored(&rules, &path, true) {
                    continue;
                }
                subdirs.push(path);
            } else if dir != options.workspace
                && kind.is_file()
                && options.file_names.iter().any(|n| name == n.as_str())
                && !is_ignored(&rules, &path, false)
            {
                found.push(path);
            }
        }
        subdirs.sort();
        queue.extend(subdirs.into_iter().map(|d| (d, rules.clone())));
    }
    found.sort();
    found
}
