//! A private X server for the app under test.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use anyhow::{Context, Result, anyhow, bail};

use crate::STARTUP_TIMEOUT;
use crate::process::GroupChild;

/// Screen of the private X server: the app window (1100x760) and the 1440 px wide windows of
/// the documentation screenshots (`docs_screenshots.rs`) fit in it.
const SCREEN: &str = "1920x1080x24";

/// An `Xvfb` server, stopped when dropped.
#[derive(Debug)]
pub(crate) struct Xvfb {
    display: String,
    _process: GroupChild,
}

impl Xvfb {
    /// Starts `Xvfb` on a free display. With `-displayfd 1` the server picks the display number
    /// itself and writes it to stdout once it accepts connections, so there is no guessing of
    /// free numbers and no sleeping. `-noreset`: by default an X server resets itself when its
    /// last client leaves, and refuses connections meanwhile; the app is often its only client,
    /// so an app restarted by a test (`App::restart`) could find no display ("Failed to
    /// initialize GTK", topics test under load).
    pub fn start(xvfb: &Path, log: &Path) -> Result<Self> {
        let log_file =
            std::fs::File::create(log).with_context(|| format!("create {}", log.display()))?;
        let mut process = GroupChild::spawn(
            "Xvfb",
            Command::new(xvfb)
                .args([
                    "-displayfd",
                    "1",
                    "-screen",
                    "0",
                    SCREEN,
                    "-nolisten",
                    "tcp",
                    "-noreset",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(log_file),
        )?;
        let stdout = process
            .child_mut()
            .stdout
            .take()
            .context("Xvfb stdout is piped")?;

        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let result = BufReader::new(stdout).read_line(&mut line).map(|_| line);
            let _ = tx.send(result);
        });
        let line = match rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok(result) => result.context("read the display number from Xvfb")?,
            Err(_) => bail!(
                "Xvfb did not report a display within {STARTUP_TIMEOUT:?} (log: {})",
                log.display()
            ),
        };
        let number: u32 = line.trim().parse().map_err(|_| {
            let status = process.exited();
            anyhow!(
                "Xvfb did not start (exit status {status:?}, output {line:?}); log: {}",
                log.display()
            )
        })?;
        Ok(Self {
            display: format!(":{number}"),
            _process: process,
        })
    }

    pub fn display(&self) -> &str {
        &self.display
    }
}
