//! A throwaway gnome-keyring on the app's private session bus, for tests that keep secrets in
//! a real Secret Service (the sign-in tests).
//!
//! The daemon runs in the foreground (so the harness owns and stops it), with only the
//! `secrets` component, and is unlocked with a dummy password given on stdin: it creates the
//! `login` keyring under the app's private `XDG_DATA_HOME`, so the developer's own keyring is
//! never touched. The harness waits until the daemon owns `org.freedesktop.secrets` before the
//! app starts: otherwise the bus could D-Bus-activate a second, locked daemon.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::STARTUP_TIMEOUT;
use crate::dbus::name_has_owner;
use crate::paths::{GNOME_KEYRING, find_tools};
use crate::process::GroupChild;

/// A running, unlocked gnome-keyring-daemon; stopped when dropped.
#[derive(Debug)]
pub(crate) struct Keyring {
    _process: GroupChild,
}

impl Keyring {
    /// Starts the daemon for the bus at `bus_address`, keeping its data under `data_home`
    /// (`XDG_DATA_HOME`) and its control socket under `runtime_dir`.
    pub fn start(
        bus_address: &str,
        runtime_dir: &Path,
        home: &Path,
        data_home: &Path,
        log: &Path,
    ) -> Result<Self> {
        let [daemon] = find_tools([GNOME_KEYRING])?;
        std::fs::create_dir_all(data_home)
            .with_context(|| format!("create {}", data_home.display()))?;
        let log_file =
            std::fs::File::create(log).with_context(|| format!("create {}", log.display()))?;
        let mut process = GroupChild::spawn(
            "gnome-keyring-daemon",
            Command::new(daemon)
                .args(["--foreground", "--unlock", "--components=secrets"])
                .env("DBUS_SESSION_BUS_ADDRESS", bus_address)
                .env("XDG_RUNTIME_DIR", runtime_dir)
                .env("XDG_DATA_HOME", data_home)
                .env("HOME", home)
                .stdin(Stdio::piped())
                .stdout(log_file.try_clone().context("duplicate the log handle")?)
                .stderr(log_file),
        )?;
        {
            // The password ends at EOF: the pipe is closed when `stdin` is dropped.
            let mut stdin = process
                .child_mut()
                .stdin
                .take()
                .context("gnome-keyring-daemon stdin is piped")?;
            stdin
                .write_all(b"gd-e2e-throwaway-password")
                .context("unlock gnome-keyring")?;
        }
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if name_has_owner(bus_address, "org.freedesktop.secrets")? {
                return Ok(Self { _process: process });
            }
            if let Some(status) = process.exited() {
                bail!(
                    "gnome-keyring-daemon exited ({status}) before serving secrets; log: {}",
                    log.display()
                );
            }
            if Instant::now() >= deadline {
                bail!(
                    "gnome-keyring-daemon did not serve org.freedesktop.secrets within \
                     {STARTUP_TIMEOUT:?}; log: {}",
                    log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}
