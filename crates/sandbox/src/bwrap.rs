//! The bubblewrap command line of a policy.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use crate::error::SandboxError;
use crate::git::Entry;
use crate::hidden::Environment;
use crate::mounts::{self, Kind, Plan};
use crate::policy::{Network, Policy};
use crate::seccomp;

/// A command ready to spawn inside the sandbox: run [`Prepared::program`] with
/// [`Prepared::args`] after [`Prepared::configure`], and keep this value alive until the spawn
/// returned (it owns the seccomp program's file descriptor).
///
/// The command runs in new user, mount, PID, IPC, UTS, cgroup (and, without the network,
/// network) namespaces, in the process group of the bubblewrap process (no `--new-session`:
/// the caller's `setsid()` and `killpg()` reach the command and its children). When the command
/// exits, what it left running in the background is killed with it (its PID namespace ends).
#[derive(Debug)]
pub struct Prepared {
    program: PathBuf,
    args: Vec<OsString>,
    seccomp: OwnedFd,
}

impl Prepared {
    /// bubblewrap.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// bubblewrap's options, then `--`, the program and its arguments.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// The command to spawn: bubblewrap with [`Prepared::args`], [`Prepared::configure`]d. The
    /// caller adds the environment, the working folder and the standard streams.
    pub fn command(&self) -> std::process::Command {
        let mut command = std::process::Command::new(&self.program);
        command.args(&self.args);
        self.configure(&mut command);
        command
    }

    /// Makes the seccomp program's descriptor survive the exec of bubblewrap (and only in the
    /// child being spawned: it is close-on-exec everywhere else), and every other descriptor
    /// above the standard streams close on that exec: bubblewrap passes on whatever it gets, and
    /// a descriptor some library of the caller left inheritable (a directory, a socket) would be
    /// a way out of the sandbox. The command gets its standard streams and nothing else.
    ///
    /// Call it once per spawn, before spawning: it also rewinds the descriptor, which
    /// bubblewrap reads to its end (one `Prepared` may serve several spawns one after the
    /// other, not at the same time).
    pub fn configure(&self, command: &mut std::process::Command) {
        let fd: RawFd = self.seccomp.as_raw_fd();
        // SAFETY: lseek on a descriptor this value owns.
        unsafe {
            libc::lseek(fd, 0, libc::SEEK_SET);
        }
        // SAFETY: the closure runs in the forked child before exec and only makes system calls
        // (close_range, getrlimit, fcntl), which are async-signal-safe; it allocates nothing (a
        // raw OS error is not boxed).
        unsafe {
            command.pre_exec(move || {
                close_on_exec_above(3, fd);
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags == -1 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Marks every descriptor from `from` on close-on-exec, except `keep` (which the caller then
/// clears): `close_range(CLOSE_RANGE_CLOEXEC)` (Linux 5.11), else one `fcntl` per possible
/// descriptor up to the limit (at most 65,536). Async-signal-safe.
fn close_on_exec_above(from: RawFd, keep: RawFd) {
    let ranges = [
        (from, keep.saturating_sub(1)),
        (keep.saturating_add(1), RawFd::MAX),
    ];
    for (first, last) in ranges {
        if first > last || first < 0 {
            continue;
        }
        #[cfg(target_os = "linux")]
        // SAFETY: a system call with integer arguments.
        let done = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                last as libc::c_uint,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        } == 0;
        #[cfg(not(target_os = "linux"))]
        let done = false;
        if done {
            continue;
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct given.
        let max = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            limit.rlim_cur.min(65_536) as RawFd
        } else {
            65_536
        };
        for n in first..=last.min(max) {
            // SAFETY: fcntl on any number is harmless (EBADF when not open).
            unsafe {
                let flags = libc::fcntl(n, libc::F_GETFD);
                if flags != -1 {
                    libc::fcntl(n, libc::F_SETFD, flags | libc::FD_CLOEXEC);
                }
            }
        }
    }
}

/// The command line of `program args` in `cwd` under `policy`.
///
/// Host-side effect: a protected part of a writable folder that does not exist yet (`.gemini`,
/// a git folder's `hooks`, a missing `config`, a `core.hooksPath` folder, `config.worktree`
/// when `extensions.worktreeConfig` is on) is created empty on the host before the command, so
/// that it can be mounted read-only and the command cannot create it; it stays afterwards.
/// Nothing else on the host is changed.
pub(crate) fn prepare(
    bwrap: &Path,
    policy: &Policy,
    program: &Path,
    args: &[OsString],
    cwd: &Path,
) -> Result<Prepared, SandboxError> {
    if !cwd.is_absolute() {
        return Err(SandboxError::Path {
            path: cwd.display().to_string(),
            reason: "the working folder must be an absolute path".to_owned(),
        });
    }
    if program.as_os_str().is_empty() {
        return Err(SandboxError::Path {
            path: String::new(),
            reason: "no program to run".to_owned(),
        });
    }
    let plan = mounts::plan(policy, &Environment::current())?;
    create_missing(&plan.missing)?;
    let seccomp = seccomp_fd(&seccomp::bytes()).map_err(SandboxError::Seccomp)?;
    let args = command_line(
        &plan,
        policy.network,
        seccomp.as_raw_fd(),
        program,
        args,
        cwd,
    );
    tracing::debug!(
        bwrap = %bwrap.display(),
        mounts = plan.mounts.len(),
        created = plan.missing.len(),
        network = ?policy.network,
        "sandboxed command prepared"
    );
    Ok(Prepared {
        program: bwrap.to_path_buf(),
        args,
        seccomp,
    })
}

/// bubblewrap's arguments.
pub(crate) fn command_line(
    plan: &Plan,
    network: Network,
    seccomp_fd: RawFd,
    program: &Path,
    args: &[OsString],
    cwd: &Path,
) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    let mut push = |items: &[&std::ffi::OsStr]| out.extend(items.iter().map(|s| s.to_os_string()));
    push(&["--unshare-all".as_ref()]);
    if network == Network::All {
        push(&["--share-net".as_ref()]);
    }
    // No `--new-session` (the caller owns the session and kills by process group; TIOCSTI
    // is refused by the seccomp filter instead). As root, the command would otherwise keep
    // every capability inside its user namespace.
    push(&[
        "--die-with-parent".as_ref(),
        "--cap-drop".as_ref(),
        "ALL".as_ref(),
    ]);
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    for m in &plan.mounts {
        let dest = m.dest.as_os_str();
        match m.kind {
            Kind::System if m.src == Path::new("/dev") => push(&["--dev".as_ref(), dest]),
            Kind::System if m.src == Path::new("/proc") => push(&["--proc".as_ref(), dest]),
            Kind::System => push(&["--tmpfs".as_ref(), dest]),
            Kind::Writable => push(&["--bind".as_ref(), m.src.as_os_str(), dest]),
            Kind::Protected => push(&["--ro-bind".as_ref(), m.src.as_os_str(), dest]),
            Kind::HiddenDir => push(&["--tmpfs".as_ref(), dest]),
            Kind::HiddenFile => push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), dest]),
        }
    }
    for m in plan.mounts.iter().filter(|m| m.kind == Kind::HiddenDir) {
        push(&["--remount-ro".as_ref(), m.dest.as_os_str()]);
    }
    push(&["--setenv".as_ref(), "TMPDIR".as_ref(), "/tmp".as_ref()]);
    let fd = seccomp_fd.to_string();
    push(&["--seccomp".as_ref(), fd.as_ref()]);
    push(&["--chdir".as_ref(), cwd.as_os_str()]);
    push(&["--".as_ref(), program.as_os_str()]);
    out.extend(args.iter().cloned());
    out
}

/// Creates the missing protected parts, empty, in order (folders on the way first).
fn create_missing(missing: &[(PathBuf, Entry)]) -> Result<(), SandboxError> {
    for (path, entry) in missing {
        let made = match entry {
            Entry::Dir => std::fs::create_dir(path),
            Entry::File => std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map(drop),
        };
        match made {
            Ok(()) => tracing::debug!(path = %path.display(), "created empty to keep it read-only"),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(SandboxError::Path {
                    path: path.display().to_string(),
                    reason: format!(
                        "it must stay read-only and does not exist; creating it empty (so that it \
                         can be mounted read-only) failed: {e}"
                    ),
                });
            }
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn seccomp_fd(_program: &[u8]) -> std::io::Result<OwnedFd> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// The program in a sealed memfd (close-on-exec, at offset 0, at 3 or above so that the
/// child's standard streams never take its number).
#[cfg(target_os = "linux")]
pub(crate) fn seccomp_fd(program: &[u8]) -> std::io::Result<OwnedFd> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: a NUL-terminated name and flags; the result is checked.
    let raw = unsafe {
        libc::memfd_create(
            c"gd-sandbox-seccomp".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if raw == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor nothing else owns.
    let mut fd = unsafe { OwnedFd::from_raw_fd(raw) };
    if raw < 3 {
        // SAFETY: fcntl on an owned descriptor; the result is checked.
        let high = unsafe { libc::fcntl(raw, libc::F_DUPFD_CLOEXEC, 3) };
        if high == -1 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a new descriptor nothing else owns.
        fd = unsafe { OwnedFd::from_raw_fd(high) };
    }
    let mut file = std::fs::File::from(fd);
    file.write_all(program)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl and lseek on an owned descriptor; the results are checked.
    unsafe {
        if libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) == -1 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::lseek(file.as_raw_fd(), 0, libc::SEEK_SET) == -1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(OwnedFd::from(file))
}

#[cfg(test)]
mod tests;
