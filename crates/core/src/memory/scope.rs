//! Where a context file may lead through symbolic links, and where its
//! `@imports` may come from, by where it was found ([`Scope`]).
//!
//! A context file goes into every model request, so one that is a link to
//! `~/.ssh/id_rsa` (an extension's `GEMINI.md -> ../../../.ssh/id_rsa`, or
//! a cloned repository's) sent the key to the model (issue 33). Gemini CLI
//! 0.61 reads such links as they are, and checks imports by the path as
//! written (`path.resolve`, links not followed) against the importing
//! file's project root. Here every check follows links (the real path must
//! lie inside), and:
//!
//! * an extension's file, and what it imports, must lie in the extension's
//!   own folder: installed from someone else, it has no business reading
//!   anything else (not the workspace either);
//! * a workspace file (in, below or above a workspace folder), and what it
//!   imports, must lie in its own folder, its project (the nearest folder
//!   with `.git`) or a workspace folder — but a project root that is the
//!   home folder or above it does not count: with dotfiles kept in git,
//!   `~` is every folder's "project", and a downloaded repository's
//!   `@../../.ssh/id_rsa` would have been allowed;
//! * the global `~/.gemini/GEMINI.md` may itself be a link anywhere: it is
//!   the user's own file, which dotfile managers commonly link into a
//!   dotfiles folder, and only something already able to write the user's
//!   `~/.gemini` could make it one (and could write the key's text there
//!   just as well). Its imports follow the workspace rule from
//!   `~/.gemini`: the model can add lines to that file (`save_memory`), so
//!   what it imports must not reach the rest of the home folder.

use std::path::{Path, PathBuf};

use super::discovery::{ContextFile, DiscoveryOptions, Scope, find_project_root};
use crate::tools::files::{is_within, real_path};

/// The folders `file`'s imports may come from.
pub(super) fn import_roots(
    file: &ContextFile,
    options: &DiscoveryOptions,
    workspace_dirs: &[PathBuf],
) -> Vec<PathBuf> {
    match &file.scope {
        Scope::Extension { root, .. } => vec![root.clone()],
        Scope::Global | Scope::Workspace => {
            let dir = file.path.parent().unwrap_or(Path::new("/"));
            let mut roots = vec![dir.to_path_buf()];
            if let Some(project) = find_project_root(dir)
                && !holds_home(&project, options.home.as_deref())
            {
                roots.push(project);
            }
            roots.extend(workspace_dirs.iter().cloned());
            roots
        }
    }
}

/// Whether `dir` is the home folder or one above it.
fn holds_home(dir: &Path, home: Option<&Path>) -> bool {
    home.is_some_and(|home| real_path(home).starts_with(real_path(dir)))
}

/// The path to read for `file` (where its links lead), or, when they lead
/// outside `roots` (its [`import_roots`]), the warning saying it was
/// skipped. `shown` is the file as the user sees it.
pub(super) fn check(file: &ContextFile, shown: &str, roots: &[PathBuf]) -> Result<PathBuf, String> {
    if file.scope == Scope::Global {
        return Ok(file.path.clone());
    }
    let real = real_path(&file.path);
    if is_within(&real, roots) {
        return Ok(real);
    }
    Err(match &file.scope {
        Scope::Extension { name, .. } => format!(
            "Context file {shown} skipped: it leads to {}, outside the extension \"{name}\" (an extension's context may come only from its own folder).",
            real.display()
        ),
        _ => format!(
            "Context file {shown} skipped: it leads to {}, outside the workspace (a context file may lead only to a file in its own folder, its project or a workspace folder).",
            real.display()
        ),
    })
}
