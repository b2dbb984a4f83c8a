//! Starting shell processes in their own process group and ending whole
//! groups.
//!
//! Every command runs as `bash -c <command>` (or `sh -c` where bash is
//! missing) in a new session, so it leads its own process group (PGID = its
//! PID) and has no controlling terminal. Its stderr is the same file as its
//! stdout, so both streams arrive interleaved in the order they were
//! written, as in a terminal.

use std::ffi::OsStr;
use std::io;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

/// How long a group gets to exit after SIGTERM before it gets SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_millis(200);

/// The shell to run commands with: the first `bash` on `PATH`, else `sh`.
pub fn shell_program() -> PathBuf {
    find_shell(std::env::var_os("PATH").as_deref())
}

fn find_shell(path_var: Option<&OsStr>) -> PathBuf {
    if let Some(path_var) = path_var {
        for dir in std::env::split_paths(path_var) {
            let candidate = dir.join("bash");
            if is_executable(&candidate) {
                return candidate;
            }
        }
    }
    let bin_bash = Path::new("/bin/bash");
    if is_executable(bin_bash) {
        return bin_bash.to_path_buf();
    }
    PathBuf::from("/bin/sh")
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Starts `<shell> -c <command>` in `cwd` as the leader of a new session and
/// process group, with stdin from /dev/null and stdout and stderr both going
/// to `stdout`. `GEMINI_CLI=1` tells scripts who runs them; pagers are
/// disabled so nothing waits for a key press.
pub fn spawn_shell(command: &str, cwd: &Path, stdout: Stdio) -> io::Result<Child> {
    spawn_shell_with_pager(command, cwd, stdout, "cat")
}

/// [`spawn_shell`] as `tools.shell.*` and
/// `security.environmentVariableRedaction` say: `PAGER` and `GIT_PAGER`
/// set to the pager, the redacted variables removed; inside the sandbox
/// when `sandboxed` is given (bubblewrap is then the group's leader, and
/// the shell runs under it: see [`crate::sandbox::confine`]).
pub fn spawn_shell_with(
    command: &str,
    cwd: &Path,
    stdout: Stdio,
    settings: &crate::tools::ShellSettings,
    sandboxed: Option<&gd_sandbox::Prepared>,
) -> io::Result<Child> {
    let mut child = spawn_command(command, cwd, stdout, &settings.pager, sandboxed);
    if let Some(redaction) = &settings.redaction {
        for name in redaction.redacted_names() {
            child.env_remove(name);
        }
    }
    start(child)
}

/// [`spawn_shell`] with `PAGER` and `GIT_PAGER` set to `pager`.
pub fn spawn_shell_with_pager(
    command: &str,
    cwd: &Path,
    stdout: Stdio,
    pager: &str,
) -> io::Result<Child> {
    start(spawn_command(command, cwd, stdout, pager, None))
}

/// The command, not started yet: `<shell> -c command`, or bubblewrap running it when
/// `sandboxed` (the same environment, stdio and process group either way).
fn spawn_command(
    command: &str,
    cwd: &Path,
    stdout: Stdio,
    pager: &str,
    sandboxed: Option<&gd_sandbox::Prepared>,
) -> Command {
    let mut cmd = match sandboxed {
        Some(prepared) => Command::from(prepared.command()),
        None => {
            let mut cmd = Command::new(shell_program());
            cmd.arg("-c").arg(command);
            cmd
        }
    };
    cmd.current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::null())
        .env("GEMINI_CLI", "1")
        .env("PAGER", pager)
        .env("GIT_PAGER", pager)
        .kill_on_drop(false);
    // SAFETY: the closure runs in the forked child before exec and only calls
    // the async-signal-safe `setsid` and `dup2`.
    unsafe {
        cmd.as_std_mut().pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            // stdio is already in place: send stderr where stdout goes.
            if libc::dup2(1, 2) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

fn start(mut cmd: Command) -> io::Result<Child> {
    cmd.spawn()
}

/// Sends `signal` to every process of group `pgid`. A group that no longer
/// exists is not an error.
pub fn signal_group(pgid: u32, signal: libc::c_int) {
    if pgid > 1 {
        // SAFETY: killpg has no memory-safety preconditions.
        unsafe {
            libc::killpg(pgid as libc::pid_t, signal);
        }
    }
}

/// PIDs of the live processes in group `pgid` (zombies excluded), read from
/// `/proc/<pid>/stat`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            proc_stat(*pid).is_some_and(|s| s.pgrp == pgid && !matches!(s.state, 'Z' | 'X'))
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// Whether `pid` exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
}

struct ProcStat {
    state: char,
    pgrp: u32,
}

fn proc_stat(pid: u32) -> Option<ProcStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp ...`; comm may contain spaces and parens.
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(ProcStat { state, pgrp })
}

/// Ends group `pgid` whose leader is `child`: SIGTERM, up to
/// [`KILL_GRACE`] for the leader to exit, SIGKILL to whatever is left, then
/// waits (bounded) until no live process of the group remains. Returns the
/// leader's exit status.
pub async fn terminate_group(pgid: u32, child: &mut Child) -> Option<ExitStatus> {
    signal_group(pgid, libc::SIGTERM);
    let mut status = tokio::time::timeout(KILL_GRACE, child.wait())
        .await
        .ok()
        .and_then(Result::ok);
    if status.is_none() || !group_members(pgid).is_empty() {
        signal_group(pgid, libc::SIGKILL);
    }
    if status.is_none() {
        status = tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .ok()
            .and_then(Result::ok);
    }
    wait_group_gone(pgid, Duration::from_secs(2)).await;
    status
}

/// Polls `/proc` until group `pgid` has no live process or `limit` passed
/// (processes killed by a signal can take a moment to be reaped).
pub async fn wait_group_gone(pgid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if group_members(pgid).is_empty() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Ends groups without waiting: SIGTERM now and SIGKILL after
/// [`KILL_GRACE`] from a short-lived thread (usable from `Drop`, with or
/// without a runtime).
pub fn terminate_groups_detached(pgids: Vec<u32>) {
    let pgids: Vec<u32> = pgids.into_iter().filter(|p| *p > 1).collect();
    if pgids.is_empty() {
        return;
    }
    for pgid in &pgids {
        signal_group(*pgid, libc::SIGTERM);
    }
    let spawned = std::thread::Builder::new()
        .name("shell-group-kill".into())
        .spawn({
            let pgids = pgids.clone();
            move || {
                std::thread::sleep(KILL_GRACE);
                for pgid in pgids {
                    if !group_members(pgid).is_empty() {
                        signal_group(pgid, libc::SIGKILL);
                    }
                }
            }
        });
    if spawned.is_err() {
        for pgid in pgids {
            signal_group(pgid, libc::SIGKILL);
        }
    }
}

/// Kills a running command's group if the future running it is dropped
/// (the turn was interrupted and the scheduler stopped waiting).
pub struct GroupGuard {
    pgid: Option<u32>,
}

impl GroupGuard {
    pub fn new(pgid: u32) -> Self {
        Self { pgid: Some(pgid) }
    }

    /// The command finished or was ended: nothing to do on drop.
    pub fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            terminate_groups_detached(vec![pgid]);
        }
    }
}

/// Exit code and signal number of a finished process.
pub fn exit_parts(status: &ExitStatus) -> (Option<i32>, Option<i32>) {
    use std::os::unix::process::ExitStatusExt as _;
    (status.code(), status.signal())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn prefers_bash_on_path_and_falls_back() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("bash");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_shell(Some(dir.path().as_os_str())), fake);
        let empty = tempfile::tempdir().unwrap();
        let fallback = find_shell(Some(empty.path().as_os_str()));
        let expected = if is_executable(Path::new("/bin/bash")) {
            "/bin/bash"
        } else {
            "/bin/sh"
        };
        assert_eq!(fallback, PathBuf::from(expected));
    }

    #[test]
    fn reads_our_own_group() {
        let pgid = unsafe { libc::getpgrp() } as u32;
        assert!(group_members(pgid).contains(&std::process::id()));
        assert!(is_alive(std::process::id()));
        assert!(!is_alive(u32::MAX));
    }
}
