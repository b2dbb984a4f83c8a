//! A private D-Bus session bus for the app under test.
//!
//! The app allows one instance per session bus (`tauri-plugin-single-instance` owns a
//! well-known name on it). Tests running in parallel, or on a developer's desktop where an app
//! may already run, would otherwise hand their command line to another instance and exit. A
//! private bus per launched app isolates them, and lets a test start a second instance on the
//! same bus on purpose.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use anyhow::{Context, Result, bail};

use crate::STARTUP_TIMEOUT;
use crate::paths::{DBUS_SEND, find_tools};
use crate::process::GroupChild;

/// A `dbus-daemon --session`, stopped when dropped.
#[derive(Debug)]
pub(crate) struct SessionBus {
    address: String,
    _process: GroupChild,
}

impl SessionBus {
    /// Starts a session bus listening on the socket `socket` and waits until it accepts
    /// connections (`--print-address` writes the address once the bus is ready).
    pub fn start(dbus_daemon: &Path, socket: &Path, log: &Path) -> Result<Self> {
        let log_file =
            std::fs::File::create(log).with_context(|| format!("create {}", log.display()))?;
        let mut process = GroupChild::spawn(
            "dbus-daemon",
            Command::new(dbus_daemon)
                .arg("--session")
                .arg("--nofork")
                .arg("--nopidfile")
                .arg(format!("--address=unix:path={}", socket.display()))
                .arg("--print-address=1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(log_file),
        )?;
        let stdout = process
            .child_mut()
            .stdout
            .take()
            .context("dbus-daemon stdout is piped")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let result = BufReader::new(stdout).read_line(&mut line).map(|_| line);
            let _ = tx.send(result);
        });
        let line = match rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok(result) => result.context("read the bus address from dbus-daemon")?,
            Err(_) => bail!(
                "dbus-daemon did not report its address within {STARTUP_TIMEOUT:?} (log: {})",
                log.display()
            ),
        };
        let address = line.trim().to_owned();
        if !address.starts_with("unix:") {
            bail!(
                "dbus-daemon did not start (exit status {:?}, output {line:?}); log: {}",
                process.exited(),
                log.display()
            );
        }
        Ok(Self {
            address,
            _process: process,
        })
    }

    /// The value for `DBUS_SESSION_BUS_ADDRESS`.
    pub fn address(&self) -> &str {
        &self.address
    }
}

/// Whether `name` has an owner on the bus at `address` (asked with `dbus-send`).
pub(crate) fn name_has_owner(address: &str, name: &str) -> Result<bool> {
    let [dbus_send] = find_tools([DBUS_SEND])?;
    let output = Command::new(dbus_send)
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
        ])
        .arg(format!("string:{name}"))
        .env("DBUS_SESSION_BUS_ADDRESS", address)
        .stderr(Stdio::null())
        .output()
        .context("run dbus-send")?;
    if !output.status.success() {
        bail!("dbus-send NameHasOwner {name} failed ({})", output.status);
    }
    Ok(String::from_utf8_lossy(&output.stdout).contains("boolean true"))
}
