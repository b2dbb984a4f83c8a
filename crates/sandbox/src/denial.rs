//! Reading a failed command's output for what the sandbox refused it.
//!
//! Heuristic by nature (the output is whatever the command printed), so it errs on the side of
//! saying nothing: a denial needs a failed exit, a line with one of the refusal messages of the
//! common tools, and — for files — a path named on it that the sandbox really keeps the command
//! from writing (outside every writable folder, or in a protected part), judged against the
//! mounts the policy gives. Paths under a hidden folder are not reported: no grant shows them.
//!
//! Network refusals count only when the policy gives no network. Then the command has a
//! loopback of its own and nothing else: a name does not resolve ("Could not resolve host",
//! "Temporary failure in name resolution", `EAI_AGAIN`), an address off the machine is
//! unreachable (`ENETUNREACH`), and a connection to 127.0.0.1 or localhost is refused, since
//! nothing listens on the sandbox's own loopback. So "Connection refused" (and curl's "Failed
//! to connect", which hides which of the two it was) counts as well, with or without an address
//! on the line: whatever the command wanted on the host's loopback, the sandbox cut it off,
//! whether or not it was running. Not when the line names a Unix socket ("Failed to connect to
//! bus", docker's `unix:///var/run/docker.sock`): the network would not bring those back (a
//! hidden socket answers "Connection refused" too).

mod extract;

use std::path::{Path, PathBuf};

use crate::hidden::Environment;
use crate::mounts::{self, Kind, Plan};
use crate::policy::{Network, Policy};

/// What a sandboxed command was probably refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Denial {
    /// It tried to reach the network and `policy.network` is `None`.
    pub network: bool,
    /// Paths it failed to write that are outside every writable folder of the policy (or in
    /// one of their read-only parts), as the output names them; absolute.
    pub paths: Vec<PathBuf>,
    /// The lines of the output that show it (at most 4, each at most 300 characters), for the
    /// user to see why they are asked.
    pub evidence: String,
}

/// Lowercase markers of a refused write (coreutils, shells, Python, Node, git, Rust tools).
const FILE_MARKERS: &[&str] = &[
    "read-only file system",
    "permission denied",
    "operation not permitted",
    "device or resource busy",
    "erofs",
    "eacces",
    "eperm",
    "ebusy",
    "[errno 30]",
    "[errno 13]",
    "[errno 1]",
    "os error 30)",
    "os error 13)",
    "os error 1)",
];

/// Lowercase markers of a missing file: a refusal only for a path the sandbox's private `/tmp`
/// hides while it exists on the host ([`Checker::hidden_by_tmp`]), e.g. a project folder kept
/// under the host's `/tmp`: inside, it is not there.
const MISSING_MARKERS: &[&str] = &[
    "no such file or directory",
    "enoent",
    "[errno 2]",
    "os error 2)",
];

/// Lowercase markers of a name that did not resolve or an address that could not be reached.
const NETWORK_MARKERS: &[&str] = &[
    "network is unreachable",
    "enetunreach",
    "[errno 101]",
    "os error 101)",
    "could not resolve host",
    "couldn't resolve host",
    "could not resolve hostname",
    "temporary failure in name resolution",
    "name or service not known",
    "no address associated with hostname",
    "eai_again",
    "enotfound",
    "getaddrinfo",
    "failed to lookup address information",
    "nodename nor servname",
    "unknownhostexception",
];

/// Lowercase markers of a refused connection: network ones unless the line names a Unix socket
/// ([`UNIX_SOCKET_WORDS`]).
const REFUSED_MARKERS: &[&str] = &[
    "connection refused",
    "econnrefused",
    "[errno 111]",
    "os error 111)",
    "couldn't connect to server",
    "failed to connect to",
];
const UNIX_SOCKET_WORDS: &[&str] = &["unix", ".sock", "bus", "socket file"];

const MAX_EVIDENCE_LINES: usize = 4;
const MAX_EVIDENCE_CHARS: usize = 300;
const MAX_PATHS: usize = 20;
/// Lines longer than this are read up to it (a minified bundle, a progress bar).
const MAX_LINE: usize = 4096;

/// What the sandbox probably refused a command that exited with `exit_code` (None: killed)
/// and printed `output`, or None when nothing in it points at the sandbox.
pub fn denial(
    output: &str,
    exit_code: Option<i32>,
    cwd: &std::path::Path,
    policy: &Policy,
) -> Option<Denial> {
    if exit_code == Some(0) {
        return None;
    }
    let lines: Vec<&str> = output
        .lines()
        .map(|l| truncate(l.trim_end_matches('\r'), MAX_LINE))
        .collect();
    let mut evidence: Vec<&str> = Vec::new();

    let mut network = false;
    if policy.network == Network::None {
        for line in &lines {
            let lower = line.to_ascii_lowercase();
            let refused = REFUSED_MARKERS.iter().any(|m| lower.contains(m))
                && !UNIX_SOCKET_WORDS.iter().any(|w| lower.contains(w));
            if refused || NETWORK_MARKERS.iter().any(|m| lower.contains(m)) {
                network = true;
                evidence.push(line);
            }
        }
    }

    let marked: Vec<bool> = lines
        .iter()
        .map(|l| {
            let lower = l.to_ascii_lowercase();
            FILE_MARKERS.iter().any(|m| lower.contains(m))
        })
        .collect();
    let missing: Vec<bool> = lines
        .iter()
        .map(|l| {
            let lower = l.to_ascii_lowercase();
            MISSING_MARKERS.iter().any(|m| lower.contains(m))
        })
        .collect();
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut context = false;
    if marked.iter().chain(&missing).any(|m| *m) {
        let checker = Checker::new(policy);
        let home = mounts::home(policy);
        for ((line, marked), missing) in lines.iter().zip(&marked).zip(&missing) {
            let candidates = if *marked || *missing {
                extract::on_marked_line(line)
            } else {
                extract::on_context_line(line)
            };
            let mut kept = false;
            for candidate in candidates {
                let Some(path) = resolve(&candidate, cwd, home.as_deref()) else {
                    continue;
                };
                let refused = if *missing && !*marked {
                    checker.hidden_by_tmp(&path)
                } else {
                    checker.refused(&path)
                };
                if paths.len() < MAX_PATHS && !paths.contains(&path) && refused {
                    paths.push(path);
                    kept = true;
                } else if paths.contains(&path) {
                    kept = true;
                }
            }
            if kept && !evidence.contains(line) {
                evidence.push(line);
                if !*marked {
                    // A name on a line of its own: the message is on another line.
                    context = true;
                }
            }
        }
        if context
            && let Some(cause) = lines
                .iter()
                .zip(&marked)
                .find(|(_, m)| **m)
                .map(|(l, _)| *l)
        {
            evidence.push(cause);
        }
    }

    if !network && paths.is_empty() {
        return None;
    }
    let evidence: Vec<String> = evidence
        .iter()
        .take(MAX_EVIDENCE_LINES)
        .map(|l| {
            let l = l.trim();
            if l.chars().count() > MAX_EVIDENCE_CHARS {
                let mut s: String = l.chars().take(MAX_EVIDENCE_CHARS).collect();
                s.push('…');
                s
            } else {
                l.to_owned()
            }
        })
        .collect();
    tracing::debug!(
        network,
        paths = paths.len(),
        "sandbox denial read from a command's output"
    );
    Some(Denial {
        network,
        paths,
        evidence: evidence.join("\n"),
    })
}

/// Whether the sandbox of a policy keeps a command from writing a path.
struct Checker {
    plan: Option<Plan>,
    writable: Vec<PathBuf>,
}

impl Checker {
    fn new(policy: &Policy) -> Self {
        // The same mounts the command got (read again now; the folders rarely change in
        // between). If they cannot be computed, the writable folders alone decide.
        let plan = mounts::plan(policy, &Environment::current()).ok();
        let writable = policy
            .writable
            .iter()
            .chain(&policy.extra_writable)
            .map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| crate::git::normalize(w)))
            .collect();
        Self { plan, writable }
    }

    /// `path` is under `/tmp`, where the command has a private empty tmpfs, outside every
    /// writable folder, and the host has something there below `/tmp` (the folder the command
    /// was after): a grant of that folder makes it visible and writable.
    fn hidden_by_tmp(&self, path: &Path) -> bool {
        let tmp = Path::new("/tmp");
        if !path.starts_with(tmp) || path == tmp {
            return false;
        }
        let real = canonical_prefix(path);
        if !real.starts_with(tmp) || self.writable.iter().any(|w| real.starts_with(w)) {
            return false;
        }
        let exists_below_tmp = real
            .ancestors()
            .take_while(|a| *a != tmp)
            .any(|a| a.exists());
        exists_below_tmp
            && match &self.plan {
                Some(plan) => matches!(plan.kind_at(&real), Some((Kind::System, _))),
                None => true,
            }
    }

    fn refused(&self, path: &Path) -> bool {
        // The kernel's and the devices' folders: nothing a grant could open.
        if ["/proc", "/dev", "/sys"]
            .iter()
            .any(|p| path.starts_with(p))
        {
            return false;
        }
        let real = canonical_prefix(path);
        match &self.plan {
            Some(plan) => match plan.kind_at(&real) {
                None | Some((Kind::Protected, _)) => true,
                Some((Kind::Writable | Kind::System | Kind::HiddenDir | Kind::HiddenFile, _)) => {
                    false
                }
            },
            None => {
                let protected = |w: &PathBuf| {
                    [".gemini", ".git/hooks", ".git/config"]
                        .iter()
                        .any(|p| real.starts_with(w.join(p)))
                };
                !self.writable.iter().any(|w| real.starts_with(w))
                    || self.writable.iter().any(protected)
            }
        }
    }
}

/// An absolute, normalized path for a name the output gave: `~/` is the home folder, a relative
/// name is relative to `cwd`.
fn resolve(candidate: &str, cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let candidate = candidate.trim();
    if candidate.is_empty() || candidate.contains('\0') {
        return None;
    }
    let path = if let Some(rest) = candidate.strip_prefix("~/") {
        home?.join(rest)
    } else if candidate == "~" {
        home?.to_path_buf()
    } else {
        cwd.join(candidate)
    };
    path.is_absolute().then(|| crate::git::normalize(&path))
}

/// `path` with its longest existing prefix canonicalized (symbolic links followed), the rest
/// appended: where a write to it would land.
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// At most `max` bytes of `s`, cut at a character boundary.
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests;
