//! The parts of a writable folder that must stay read-only because something outside the
//! sandbox runs them later, and the git folders a commit needs to write.
//!
//! `W/.gemini` holds the workspace's settings (hooks, MCP servers, tool rules: the next session
//! runs them). Git runs `hooks/*` and whatever `config` names (`core.fsmonitor`,
//! `core.hooksPath`, aliases, filters) every time the user runs git in the folder, prompts
//! included. So, for each writable folder `W`:
//!
//! - `W/.git` a folder: writable (objects, index, refs and logs are written by `git add` and
//!   `git commit`), except `hooks`, `config`, `config.worktree`, the `core.hooksPath` folder,
//!   the pointers of its linked worktrees (`worktrees/*/{commondir,gitdir,config.worktree}`) and
//!   its submodules' git folders' own `hooks`/`config` (`modules/**`).
//! - `W` a bare repository (no `.git`, but `HEAD`, `objects/`, `refs/`): the same, for `W`.
//! - `W/.git` a `gitdir: X` file (a linked worktree): the file itself read-only (else it could
//!   point git at a folder the command wrote), `X` writable except its `commondir`, `gitdir`
//!   and `config.worktree`, and the common git folder (`X/commondir`) writable as above. Only
//!   when `X` proves to belong to `W` (its `gitdir` names `W/.git`, and it sits in the common
//!   folder's `worktrees/`), or for a submodule checkout, when `X/config`'s `core.worktree` is
//!   `W`: a `.git` file is data a previous command may have written, and it must not open
//!   another folder for writing. Otherwise nothing behind it becomes writable.
//!
//! A protected part is a read-only bind mount; a mount point cannot be renamed, removed or
//! replaced (`EBUSY`), and neither can the folders on the way to it, which are bound onto
//! themselves (writable, but now mount points): otherwise `mv .git .git2` would take the
//! read-only hooks along and leave a fresh `.git` to fill. For the same reason a protected part
//! (or a folder on its way) that is a symbolic link cannot be protected — the link itself could
//! be replaced — and the command is refused ([`SandboxError::Path`]).
//!
//! A protected part that does not exist yet is created empty on the host first (an empty folder
//! for `.gemini` and `hooks`, an empty file for a missing `config`, and for `config.worktree`
//! when `extensions.worktreeConfig` is on), then bound read-only: the command cannot create it.
//! Those empty entries stay after the command (git ignores an empty folder).

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::error::SandboxError;

/// What kind of entry a missing protected part is created as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File,
}

/// The mounts the git folders and `.gemini` of the writable folders add.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Parts {
    /// Folders bound writable onto themselves: the git folders outside the writable folders,
    /// and the folders on the way to a protected part (to make them mount points).
    pub writable: Vec<PathBuf>,
    /// Bound read-only onto themselves.
    pub protected: Vec<PathBuf>,
    /// Protected parts to create on the host before the command (empty).
    pub missing: Vec<(PathBuf, Entry)>,
}

/// At most this many mounts for the git folders of one command: a repository with thousands of
/// worktrees or submodules is refused rather than given a command line bubblewrap would take
/// seconds over.
const MAX_PARTS: usize = 4000;
/// How deep submodules' git folders are looked for under `modules/` (names may hold `/`).
const MAX_MODULE_DEPTH: usize = 6;

/// Adds the parts of writable folder `root` (canonical, an existing folder). `workspace`: it
/// is a workspace folder, whose missing `.gemini` is created empty first, and whose missing
/// `.git` too when it is not a repository (as Gemini CLI 0.61 does: `git init` then fails in
/// the sandbox instead of making a repository whose hooks the user's next `git commit` would
/// run). Other writable folders only keep what exists protected.
pub fn protect_root(
    root: &Path,
    home: Option<&Path>,
    workspace: bool,
    parts: &mut Parts,
) -> Result<(), SandboxError> {
    let create = workspace.then_some(Entry::Dir);
    protect_in(root, Path::new(".gemini"), create, parts)?;
    let dotgit = root.join(".git");
    let Some(meta) = lstat(&dotgit)? else {
        // A bare repository (a local remote): the folder is its own git folder, whose hooks
        // run when the user pushes to it.
        if is_gitdir(root) {
            return protect_gitdir(root, root, home, parts);
        }
        return protect_in(root, Path::new(".git"), create, parts);
    };
    if meta.file_type().is_symlink() {
        return Err(symlink_error(&dotgit));
    }
    if meta.is_dir() {
        parts.writable.push(dotgit.clone());
        return protect_gitdir(&dotgit, root, home, parts);
    }
    if !meta.is_file() {
        return Ok(());
    }
    parts.protected.push(dotgit.clone());
    match resolve_dotgit_file(root, &dotgit) {
        Some(Linked::Worktree { gitdir, common }) => {
            parts.writable.push(gitdir.clone());
            protect_in(&gitdir, Path::new("commondir"), None, parts)?;
            protect_in(&gitdir, Path::new("gitdir"), None, parts)?;
            let create = worktree_config_enabled(&common).then_some(Entry::File);
            protect_in(&gitdir, Path::new("config.worktree"), create, parts)?;
            parts.writable.push(common.clone());
            protect_gitdir(&common, root, home, parts)
        }
        Some(Linked::Standalone { gitdir }) => {
            parts.writable.push(gitdir.clone());
            protect_gitdir(&gitdir, root, home, parts)
        }
        None => {
            tracing::warn!(path = %dotgit.display(), "a .git file that does not prove where it points: its git folder stays read-only");
            Ok(())
        }
    }
}

/// What a `.git` file leads to, once checked.
enum Linked {
    /// A linked worktree's git folder and the common git folder.
    Worktree { gitdir: PathBuf, common: PathBuf },
    /// A git folder of its own elsewhere (a submodule's checkout).
    Standalone { gitdir: PathBuf },
}

fn resolve_dotgit_file(root: &Path, dotgit: &Path) -> Option<Linked> {
    let text = read_small(dotgit)?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if target.is_empty() {
        return None;
    }
    let gitdir = fs::canonicalize(root.join(target)).ok()?;
    if !gitdir.is_dir() || !gitdir.join("HEAD").is_file() {
        return None;
    }
    if let Some(common) = read_small(&gitdir.join("commondir")) {
        let common = fs::canonicalize(gitdir.join(common.trim())).ok()?;
        let back = read_small(&gitdir.join("gitdir"))?;
        let back = fs::canonicalize(Path::new(back.trim())).ok()?;
        let belongs = back == fs::canonicalize(dotgit).ok()?
            && gitdir.parent() == Some(common.join("worktrees").as_path())
            && common.join("HEAD").is_file();
        return belongs.then_some(Linked::Worktree { gitdir, common });
    }
    let worktree = config_value(&read_small(&gitdir.join("config"))?, "core", "worktree")?;
    let worktree = fs::canonicalize(gitdir.join(worktree)).ok()?;
    (worktree == root && gitdir.join("objects").is_dir()).then_some(Linked::Standalone { gitdir })
}

/// The parts of git folder `gitdir` (already writable) of the checkout `worktree` (for a
/// relative `core.hooksPath`, and its submodules' checkouts).
fn protect_gitdir(
    gitdir: &Path,
    worktree: &Path,
    home: Option<&Path>,
    parts: &mut Parts,
) -> Result<(), SandboxError> {
    protect_in(gitdir, Path::new("hooks"), Some(Entry::Dir), parts)?;
    protect_in(gitdir, Path::new("config"), Some(Entry::File), parts)?;
    let worktree_config = worktree_config_enabled(gitdir).then_some(Entry::File);
    protect_in(gitdir, Path::new("config.worktree"), worktree_config, parts)?;
    // Only a linked worktree's git folder has one; here it would make git read another
    // folder's config. Read-only if present (its creation cannot be prevented: an empty one
    // would break git).
    protect_in(gitdir, Path::new("commondir"), None, parts)?;
    protect_hooks_path(gitdir, worktree, home, parts)?;
    for name in subdirs(&gitdir.join("worktrees")) {
        let at = Path::new("worktrees").join(name);
        for file in ["commondir", "gitdir", "config.worktree"] {
            protect_in(gitdir, &at.join(file), None, parts)?;
        }
    }
    protect_modules(gitdir, Path::new("modules"), worktree, 0, parts)?;
    if parts.writable.len() + parts.protected.len() > MAX_PARTS {
        return Err(SandboxError::Path {
            path: gitdir.display().to_string(),
            reason: format!("it has more than {MAX_PARTS} worktrees and submodules to protect"),
        });
    }
    Ok(())
}

/// Submodules' git folders under `gitdir/rel` (`modules/<name>`, names may contain `/`).
fn protect_modules(
    gitdir: &Path,
    rel: &Path,
    worktree: &Path,
    depth: usize,
    parts: &mut Parts,
) -> Result<(), SandboxError> {
    if depth >= MAX_MODULE_DEPTH {
        return Ok(());
    }
    for name in subdirs(&gitdir.join(rel)) {
        let at = rel.join(&name);
        let dir = gitdir.join(&at);
        if dir.join("HEAD").is_file() {
            // A folder on the way (made a mount point by protect_in) and a git folder.
            protect_in(gitdir, &at.join("hooks"), Some(Entry::Dir), parts)?;
            protect_in(gitdir, &at.join("config"), Some(Entry::File), parts)?;
            protect_in(gitdir, &at.join("config.worktree"), None, parts)?;
            protect_in(gitdir, &at.join("commondir"), None, parts)?;
            protect_checkout_pointer(&dir, worktree, parts)?;
            protect_modules(gitdir, &at.join("modules"), worktree, depth + 1, parts)?;
        } else {
            protect_modules(gitdir, &at, worktree, depth + 1, parts)?;
        }
    }
    Ok(())
}

/// A submodule's checkout inside the writable folder has a `.git` file pointing at its git
/// folder: read-only, like the top one.
fn protect_checkout_pointer(
    module_gitdir: &Path,
    root: &Path,
    parts: &mut Parts,
) -> Result<(), SandboxError> {
    let Some(config) = read_small(&module_gitdir.join("config")) else {
        return Ok(());
    };
    let Some(checkout) = config_value(&config, "core", "worktree") else {
        return Ok(());
    };
    let Ok(checkout) = fs::canonicalize(module_gitdir.join(checkout)) else {
        return Ok(());
    };
    if let Ok(rel) = checkout.strip_prefix(root)
        && rel != Path::new("")
        && lstat(&checkout.join(".git"))?.is_some_and(|m| m.is_file())
    {
        protect_in(root, &rel.join(".git"), None, parts)?;
    }
    Ok(())
}

/// `core.hooksPath`, when the repository's config sets it: those hooks are as much run later as
/// `.git/hooks` (husky's `.husky/_`).
fn protect_hooks_path(
    gitdir: &Path,
    worktree: &Path,
    home: Option<&Path>,
    parts: &mut Parts,
) -> Result<(), SandboxError> {
    let mut value = None;
    for file in ["config", "config.worktree"] {
        if let Some(text) = read_small(&gitdir.join(file))
            && let Some(v) = config_value(&text, "core", "hookspath")
        {
            value = Some(v);
        }
    }
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let path = match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => worktree.join(&value),
    };
    let path = normalize(&path);
    // Anchored at the folder it lies in (the worktree, or the git folder): there its way is
    // made of mount points. Elsewhere it is outside the writable folders (read-only anyway) or
    // under another writable folder, which is not known here: protected read-only where it is.
    for anchor in [gitdir, worktree] {
        if let Ok(rel) = path.strip_prefix(anchor)
            && rel != Path::new("")
        {
            return protect_in(anchor, rel, Some(Entry::Dir), parts);
        }
    }
    if lstat(&path)?.is_some() {
        parts.protected.push(path);
    }
    Ok(())
}

/// Protects `anchor/rel` (`anchor` is a mount point): the folders on the way become mount points
/// (bound writable onto themselves), the entry read-only; missing, it is created as `create`
/// says, or left alone (`None`). A symbolic link on the way is refused.
fn protect_in(
    anchor: &Path,
    rel: &Path,
    create: Option<Entry>,
    parts: &mut Parts,
) -> Result<(), SandboxError> {
    let names: Vec<_> = rel.components().collect();
    if names.is_empty() || !names.iter().all(|c| matches!(c, Component::Normal(_))) {
        return Ok(());
    }
    let mut at = anchor.to_path_buf();
    for (i, name) in names.iter().enumerate() {
        at.push(name);
        let last = i + 1 == names.len();
        match lstat(&at)? {
            Some(meta) if meta.file_type().is_symlink() => return Err(symlink_error(&at)),
            Some(_) if last => parts.protected.push(at.clone()),
            Some(meta) if meta.is_dir() => parts.writable.push(at.clone()),
            // A file where a folder should be: nothing under it can exist.
            Some(_) => return Ok(()),
            None => {
                let Some(entry) = create else {
                    return Ok(());
                };
                parts
                    .missing
                    .push((at.clone(), if last { entry } else { Entry::Dir }));
                if last {
                    parts.protected.push(at.clone());
                } else {
                    parts.writable.push(at.clone());
                }
            }
        }
    }
    Ok(())
}

/// Whether `dir` looks like a git folder (`HEAD`, `objects/`, `refs/`).
fn is_gitdir(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

fn symlink_error(path: &Path) -> SandboxError {
    SandboxError::Path {
        path: path.display().to_string(),
        reason: "it is a symbolic link inside a writable folder, so the sandbox cannot keep the \
                 command from replacing it (and what git or Gemini runs from it later); replace \
                 the link with the real folder or file (for hooks: `git config core.hooksPath \
                 <folder>`), or run without the sandbox knowingly"
            .to_owned(),
    }
}

/// `symlink_metadata`, `None` when the path does not exist; other errors refuse the command
/// (what cannot be looked at cannot be proven safe).
fn lstat(path: &Path) -> Result<Option<fs::Metadata>, SandboxError> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(SandboxError::Path {
            path: path.display().to_string(),
            reason: e.to_string(),
        }),
    }
}

/// The names of the folders in `dir` (none if it cannot be read), sorted.
fn subdirs(dir: &Path) -> Vec<std::ffi::OsString> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name())
        .collect();
    names.sort();
    names
}

/// A small text file (a pointer or a config); `None` past 1 MiB or unreadable.
fn read_small(path: &Path) -> Option<String> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return None;
    }
    fs::read_to_string(path).ok()
}

fn worktree_config_enabled(common: &Path) -> bool {
    read_small(&common.join("config"))
        .and_then(|text| config_value(&text, "extensions", "worktreeconfig"))
        .is_some_and(|v| {
            matches!(
                v.to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1" | ""
            )
        })
}

/// The last value of `section.key` in a git config text (section and key case-insensitive, no
/// subsection; quotes and backslash escapes of the value undone; `include`s not followed).
pub fn config_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut current = String::new();
    let mut found = None;
    for line in text.lines() {
        let mut line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let (header, after) = rest.split_once(']').unwrap_or((rest, ""));
            current = if header.contains(['"', ' ', '\t']) {
                String::new()
            } else {
                header.to_ascii_lowercase()
            };
            // `[core] hooksPath = x` is valid: a key may follow the header.
            line = after.trim();
            if line.is_empty() {
                continue;
            }
        }
        if !current.eq_ignore_ascii_case(section) || line.starts_with(['#', ';']) {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v)),
            None => (line, None),
        };
        if name.eq_ignore_ascii_case(key) {
            found = Some(value.map(parse_value).unwrap_or_default());
        }
    }
    found
}

fn parse_value(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            },
            '#' | ';' if !quoted => break,
            _ => out.push(c),
        }
    }
    if quoted {
        out
    } else {
        out.trim_end().to_owned()
    }
}

/// `path` with `.` and `..` resolved lexically (`..` at the root stays at the root).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if out.parent().is_some() {
                    out.pop();
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
