//! Small things several end-to-end tests need: a second launch run to completion, an X11 tool
//! run against the app's display, and the tool results a request sent to the model.

use std::ffi::OsStr;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;

use crate::App;

impl App {
    /// Runs a second launch of the app with `args` to completion (it hands its command line to
    /// this app and exits); fails after 30 s.
    pub async fn run_second_launch<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Output> {
        let mut command = self.second_launch(args);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        tokio::task::spawn_blocking(move || {
            let mut child = command.spawn().context("start a second instance")?;
            let deadline = Instant::now() + Duration::from_secs(30);
            while child.try_wait()?.is_none() {
                if Instant::now() >= deadline {
                    let _ = child.kill();
                    bail!(
                        "the second launch did not exit within 30 s (it should hand over and exit)"
                    );
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(child.wait_with_output()?)
        })
        .await?
    }
}

impl App {
    /// Runs an X11 tool (`xdotool`, `xprop`: Debian packages xdotool, x11-utils) against the
    /// app's display; returns its trimmed standard output.
    pub async fn x11(&self, tool: &str, args: &[&str]) -> Result<String> {
        let output = tokio::process::Command::new(tool)
            .args(args)
            .env("DISPLAY", self.display())
            .output()
            .await
            .with_context(|| format!("run {tool} (Debian packages xdotool, x11-utils)"))?;
        ensure!(
            output.status.success(),
            "{tool} {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }
}

/// Every `functionResponse` part of a request body's history (`contents`), in order.
pub fn function_responses(body: &Value) -> Vec<Value> {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().into_iter().flatten())
        .filter_map(|p| p.get("functionResponse").cloned())
        .collect()
}

/// A long answer about okapis that never repeats itself (numbers every few words), so the
/// core's loop detection leaves it alone while it streams and only Stop ends it.
pub fn okapi_notes(n: u32) -> String {
    (0..n)
        .map(|i| {
            format!(
                "Okapi note {i}: weight {} kg, height {} cm, range {} km, seen {} times.",
                200 + i * 7,
                150 + i * 11,
                i * 13 + 4,
                i * 17 + 9
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `n` paragraphs, each different all along (numbers every few words), so the core's loop
/// detection does not take them for a model repeating itself.
pub fn paragraphs(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{prefix} paragraph {i}: rows {} and {}, cols {} to {}, sum {}, id {}.",
                i * 7 + 3,
                i * 11 + 5,
                i * 13 + 1,
                i * 17 + 9,
                i * 19 + 2,
                i * 23 + 4
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}
