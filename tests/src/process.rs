//! Child processes that are killed, with everything they started, when dropped.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// How long a process group gets to exit after SIGTERM before it is sent SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(3);

/// A child process leading its own process group.
///
/// Dropping it sends SIGTERM to the whole group (the child and every descendant that did not
/// move to another group: for tauri-driver that is WebKitWebDriver, the app and its WebKit
/// processes), waits up to [`TERM_GRACE`] for the child, then sends SIGKILL to the group.
#[derive(Debug)]
pub(crate) struct GroupChild {
    name: &'static str,
    child: Child,
}

impl GroupChild {
    pub fn spawn(name: &'static str, command: &mut Command) -> Result<Self> {
        command.process_group(0);
        let child = command
            .spawn()
            .with_context(|| format!("start {name} ({command:?})"))?;
        Ok(Self { name, child })
    }

    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The exit status if the process has already exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    fn signal_group(&self, signal: libc::c_int) {
        let Ok(pgid) = libc::pid_t::try_from(self.child.id()) else {
            return;
        };
        // SAFETY: kill(2) has no memory-safety preconditions; a negative pid addresses the
        // process group this child leads (it was spawned with `process_group(0)`).
        unsafe {
            libc::kill(-pgid, signal);
        }
    }

    fn terminate(&mut self) -> io::Result<()> {
        self.signal_group(libc::SIGTERM);
        let deadline = Instant::now() + TERM_GRACE;
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        // Also reaches descendants still alive after the leader exited.
        self.signal_group(libc::SIGKILL);
        self.child.wait().map(|_| ())
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        if let Err(error) = self.terminate() {
            eprintln!("gd-e2e: failed to stop {}: {error}", self.name);
        }
    }
}
