//! The mounts of a policy, in the order bubblewrap must apply them.
//!
//! bubblewrap applies its options in order, and a later mount covers an earlier one at or
//! above its path. All mounts are placed at canonical paths and sorted by depth (the number of
//! path components), shallowest first; at equal paths the stronger rule comes last:
//! `/` read-only < `/dev`, `/proc`, private `/tmp` < writable < protected (read-only) < hidden.
//! So a hidden path inside a writable folder stays hidden, a protected part inside a writable
//! folder stays read-only, and a writable folder inside a hidden one is visible and writable.
//!
//! The read-only remount of the hidden folders' tmpfs comes last of all, so that bubblewrap can
//! still create the mount points of writable folders inside them.

use std::path::{Path, PathBuf};

use crate::error::SandboxError;
use crate::git::{self, Entry, Parts};
use crate::hidden::{self, Environment};
use crate::policy::Policy;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `--dev`, `--proc`, `--tmpfs /tmp`.
    System,
    /// `--bind src dest`.
    Writable,
    /// `--ro-bind dest dest`.
    Protected,
    /// `--tmpfs dest` (then `--remount-ro dest` at the end).
    HiddenDir,
    /// `--ro-bind /dev/null dest`.
    HiddenFile,
}

impl Kind {
    fn rank(self) -> u8 {
        match self {
            Kind::System => 0,
            Kind::Writable => 1,
            Kind::Protected => 2,
            Kind::HiddenDir | Kind::HiddenFile => 3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub kind: Kind,
    /// What is bound there (the host path; for `System`, which of them).
    pub src: PathBuf,
    pub dest: PathBuf,
}

/// The mounts of one command.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// After `--ro-bind / /`, in order.
    pub mounts: Vec<Mount>,
    /// Protected parts to create (empty) on the host before the command.
    pub missing: Vec<(PathBuf, Entry)>,
}

/// Folders under which nothing may be made writable: their contents are the kernel's and the
/// devices' (a host `/proc` would show the host's processes, and their roots).
const NEVER_WRITABLE: &[&str] = &["/proc", "/dev", "/sys"];

/// The plan of `policy`. Reads the filesystem (canonical paths, git folders); changes nothing.
pub fn plan(policy: &Policy, env: &Environment) -> Result<Plan, SandboxError> {
    let workspaces = writable_roots(&policy.writable)?;
    let extra = writable_roots(&policy.extra_writable)?;
    let home = home(policy);
    let hidden = hidden_mounts(&homes(policy), policy, env);

    let mut parts = Parts::default();
    for (_, canonical) in &workspaces {
        git::protect_root(canonical, home.as_deref(), true, &mut parts)?;
    }
    for (_, canonical) in &extra {
        if !workspaces.iter().any(|(_, w)| w == canonical) {
            git::protect_root(canonical, home.as_deref(), false, &mut parts)?;
        }
    }
    let mut roots = workspaces;
    for root in extra {
        if !roots.contains(&root) {
            roots.push(root);
        }
    }

    let explicit: Vec<PathBuf> = roots.iter().map(|(_, c)| c.clone()).collect();
    let mut mounts = vec![system("/dev"), system("/proc"), system("/tmp")];
    mounts.extend(explicit.iter().map(|c| bind(Kind::Writable, c)));
    mounts.extend(parts.writable.iter().map(|p| bind(Kind::Writable, p)));
    mounts.extend(parts.protected.iter().map(|p| bind(Kind::Protected, p)));
    mounts.extend(hidden);
    if explicit.iter().any(|w| w == Path::new("/")) {
        // The whole filesystem writable still leaves the kernel's settings alone.
        mounts.push(bind(Kind::Protected, Path::new("/sys")));
    }

    // What a policy's writable folder did not ask for stays under the rule above it: a git
    // folder's writable part inside a protected part (or at it) stays read-only, and inside a
    // hidden folder nothing is mounted (it would show the hidden contents) — unless a writable
    // folder of the policy lies between, which brings that subtree back.
    let protected: Vec<PathBuf> = parts.protected.clone();
    let hidden_dirs: Vec<PathBuf> = mounts
        .iter()
        .filter(|m| m.kind == Kind::HiddenDir)
        .map(|m| m.dest.clone())
        .collect();
    let brought_back = |above: &Path, at: &Path| {
        explicit
            .iter()
            .any(|w| w.starts_with(above) && w != above && at.starts_with(w))
    };
    mounts.retain(|m| {
        if m.kind == Kind::System || (m.kind == Kind::Writable && explicit.contains(&m.dest)) {
            return true;
        }
        let under_protected = m.kind == Kind::Writable
            && protected.iter().any(|p| m.dest.starts_with(p) && !brought_back(p, &m.dest));
        let under_hidden = hidden_dirs
            .iter()
            .any(|h| m.dest.starts_with(h) && m.dest != *h && !brought_back(h, &m.dest));
        if under_protected || under_hidden {
            tracing::debug!(path = %m.dest.display(), kind = ?m.kind, "not mounted: under a protected or hidden part");
        }
        !under_protected && !under_hidden
    });

    dedup(&mut mounts);
    mounts.sort_by_key(|m| (depth(&m.dest), m.kind.rank()));

    // A writable folder named through a symbolic link: inside the sandbox the name still leads
    // there through the host's link, unless the link is under a mount that replaces the host's
    // view (a hidden folder, the private /tmp). Then the folder is bound at that name too,
    // followed by everything the policy mounts inside it, moved there. (Binding at a name that
    // does resolve would not work anyway: bubblewrap follows links from its own root while it
    // sets up, where an absolute link leads nowhere.)
    for (given, canonical) in roots.iter().filter(|(g, c)| g != c) {
        let covering = mounts.iter().rfind(|m| given.starts_with(&m.dest));
        let replaced = covering.is_some_and(|m| {
            m.kind == Kind::HiddenDir || (m.kind == Kind::System && m.src == Path::new("/tmp"))
        });
        if !replaced {
            continue;
        }
        let mut block = vec![Mount {
            kind: Kind::Writable,
            src: canonical.clone(),
            dest: given.clone(),
        }];
        for m in mounts
            .iter()
            .filter(|m| m.dest.starts_with(canonical) && m.dest != *canonical)
        {
            let Ok(rel) = m.dest.strip_prefix(canonical) else {
                continue;
            };
            block.push(Mount {
                kind: m.kind,
                src: m.src.clone(),
                dest: given.join(rel),
            });
        }
        let at = mounts
            .iter()
            .position(|m| depth(&m.dest) > depth(given))
            .unwrap_or(mounts.len());
        mounts.splice(at..at, block);
    }

    let mut missing = parts.missing;
    let mut seen = std::collections::HashSet::new();
    missing.retain(|(path, _)| seen.insert(path.clone()));
    Ok(Plan { mounts, missing })
}

/// The home folders whose secrets are hidden: the policy's (else `$HOME`), and the one the
/// user database gives this user when it differs — a `$HOME` pointed elsewhere must not
/// uncover the real one's keys.
pub fn homes(policy: &Policy) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = home(policy).into_iter().collect();
    if let Some(real) = passwd_home().filter(|h| h.is_absolute())
        && !out.contains(&real)
    {
        out.push(real);
    }
    out
}

/// This user's home folder in the user database (`getpwuid_r`).
fn passwd_home() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut size = 16 * 1024;
    for _ in 0..2 {
        let mut buf: Vec<libc::c_char> = vec![0; size];
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids) to be filled in.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: the buffers are valid for the sizes given; the strings `pwd` points to live in
        // `buf`, read before it is dropped.
        let rc = unsafe {
            libc::getpwuid_r(
                libc::getuid(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            )
        };
        if rc == libc::ERANGE {
            size *= 8;
            continue;
        }
        if rc != 0 || result.is_null() || pwd.pw_dir.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated string inside `buf`.
        let dir = unsafe { std::ffi::CStr::from_ptr(pwd.pw_dir) };
        return Some(PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes())));
    }
    None
}

/// `$HOME` unless the policy names the home folder.
pub fn home(policy: &Policy) -> Option<PathBuf> {
    policy
        .home
        .clone()
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
        })
        .filter(|h| h.is_absolute())
}

/// The policy's writable folders: (as given, canonical), checked.
fn writable_roots(writable: &[PathBuf]) -> Result<Vec<(PathBuf, PathBuf)>, SandboxError> {
    let mut out: Vec<(PathBuf, PathBuf)> = Vec::new();
    for given in writable {
        let error = |reason: &str| SandboxError::Path {
            path: given.display().to_string(),
            reason: reason.to_owned(),
        };
        if !given.is_absolute() {
            return Err(error("a writable folder must be an absolute path"));
        }
        let canonical = std::fs::canonicalize(given).map_err(|e| error(&e.to_string()))?;
        if !canonical.is_dir() {
            return Err(error("a writable folder must be a folder"));
        }
        if NEVER_WRITABLE.iter().any(|n| canonical.starts_with(n)) {
            return Err(error(
                "the kernel's and the devices' folders (/proc, /dev, /sys) are never writable in the sandbox",
            ));
        }
        let given = git::normalize(given);
        if !out.iter().any(|(g, c)| *g == given && *c == canonical) {
            out.push((given, canonical));
        }
    }
    Ok(out)
}

/// The hidden paths that exist, as mounts at their canonical paths.
fn hidden_mounts(homes: &[PathBuf], policy: &Policy, env: &Environment) -> Vec<Mount> {
    let mut out = Vec::new();
    for path in hidden::candidates(homes, policy.network, env) {
        let Ok(canonical) = std::fs::canonicalize(&path) else {
            continue;
        };
        if canonical == Path::new("/")
            || NEVER_WRITABLE[..2].iter().any(|n| canonical.starts_with(n))
        {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&canonical) else {
            continue;
        };
        if meta.is_dir() {
            out.push(Mount {
                kind: Kind::HiddenDir,
                src: PathBuf::new(),
                dest: canonical,
            });
        } else {
            out.push(Mount {
                kind: Kind::HiddenFile,
                src: PathBuf::from("/dev/null"),
                dest: canonical,
            });
        }
    }
    out
}

fn system(path: &str) -> Mount {
    Mount {
        kind: Kind::System,
        src: PathBuf::from(path),
        dest: PathBuf::from(path),
    }
}

fn bind(kind: Kind, path: &Path) -> Mount {
    Mount {
        kind,
        src: path.to_path_buf(),
        dest: path.to_path_buf(),
    }
}

/// Removes repeated mounts (the same git folder from two worktrees), keeping the first.
fn dedup(mounts: &mut Vec<Mount>) {
    let mut seen = std::collections::HashSet::new();
    mounts.retain(|m| seen.insert((m.kind, m.src.clone(), m.dest.clone())));
}

/// The number of components after the root.
pub fn depth(path: &Path) -> usize {
    path.components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .count()
}

impl Plan {
    /// What the command sees at `path` (canonical, absolute): the kind of the last mount at or
    /// above it, which is the one on top (mounts are in depth order); None: the read-only root.
    pub fn kind_at(&self, path: &Path) -> Option<(Kind, &Path)> {
        self.mounts
            .iter()
            .rfind(|m| path.starts_with(&m.dest))
            .map(|m| (m.kind, m.src.as_path()))
    }
}

#[cfg(test)]
mod tests;
