//! The WebKitGTK floor in the same run as the app: `blank_webkit.py` (a GTK window with one
//! WebKit view showing a two-line static page, Debian's python3-gi) under its own Xvfb, D-Bus
//! session and HOME, with the environment the harness gives the app (X11, no accessibility
//! bus, compositing off as the app's Linux default). It reports its own start → content; its
//! process tree's memory is read like the app's.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// How long the floor gets to start (Xvfb, the bus, the window and its page).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A process group killed when dropped.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(pgid) = libc::pid_t::try_from(self.0.id()) {
            // SAFETY: kill(2) on the process group this child leads (spawned with
            // `process_group(0)`).
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
        let _ = self.0.wait();
    }
}

fn spawn(command: &mut Command) -> Result<Group> {
    command.process_group(0);
    Ok(Group(
        command
            .spawn()
            .with_context(|| format!("start {command:?}"))?,
    ))
}

/// The first line `child` writes to stdout, within [`START_TIMEOUT`].
fn first_line(child: &mut Child, what: &str) -> Result<String> {
    let stdout = child.stdout.take().context("stdout is piped")?;
    let content = what == "content";
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        // Skip anything that is not the awaited line (GTK may print warnings to stdout).
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) if !content || line.starts_with("content ") => {
                    let _ = tx.send(line.clone());
                    break;
                }
                Ok(_) => {}
            }
        }
    });
    rx.recv_timeout(START_TIMEOUT)
        .ok()
        .with_context(|| format!("{what}: no answer within {START_TIMEOUT:?}"))
}

/// A running floor window.
pub struct Floor {
    /// Seconds from the python process's start to its page's content.
    pub start_to_content: f64,
    /// The python process (the UI process; WebKit's processes are its children).
    pub pid: u32,
    // Drop order: the window's session before the display.
    _session: Group,
    _xvfb: Group,
    _home: tempfile::TempDir,
}

impl Floor {
    pub fn launch(script: &Path) -> Result<Self> {
        let home = tempfile::Builder::new()
            .prefix("gd-floor-home-")
            .tempdir()?;
        let mut xvfb = spawn(
            Command::new("Xvfb")
                .args(["-displayfd", "1", "-screen", "0", "1920x1080x24"])
                .args(["-nolisten", "tcp"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        )?;
        let display = format!(":{}", first_line(&mut xvfb.0, "Xvfb")?.trim());
        let h = home.path();
        let runtime = h.join("run");
        std::fs::create_dir(&runtime)?;
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )?;
        let mut session = spawn(
            Command::new("dbus-run-session")
                .arg("--")
                .arg("/usr/bin/python3")
                .arg(script)
                .env("DISPLAY", &display)
                .env("GDK_BACKEND", "x11")
                .env_remove("WAYLAND_DISPLAY")
                .env("HOME", h)
                .env("XDG_CONFIG_HOME", h.join(".config"))
                .env("XDG_DATA_HOME", h.join(".local/share"))
                .env("XDG_CACHE_HOME", h.join(".cache"))
                .env("XDG_STATE_HOME", h.join(".local/state"))
                .env("XDG_RUNTIME_DIR", &runtime)
                .env("NO_AT_BRIDGE", "1")
                .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        )?;
        let line = first_line(&mut session.0, "content")?;
        // Other processes of the session (D-Bus activating the accessibility registry) share
        // the pipe, and their output can land in the middle of the line: read the number only.
        let start_to_content: f64 = line
            .strip_prefix("content ")
            .map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect::<String>()
            })
            .and_then(|number| number.parse().ok())
            .with_context(|| format!("the floor said {line:?}"))?;
        let pid = crate::process_tree(session.0.id()).into_iter().find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim().starts_with("python3"))
        });
        let Some(pid) = pid else {
            bail!("no python3 process under dbus-run-session");
        };
        Ok(Self {
            start_to_content,
            pid,
            _session: session,
            _xvfb: xvfb,
            _home: home,
        })
    }
}
