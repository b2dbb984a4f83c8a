//! End-to-end test harness for Gemini Desktop.
//!
//! [`App::launch`] runs the **real** app binary in a real WebKitGTK webview and drives it over
//! WebDriver:
//!
//! 1. it starts its own X server (`Xvfb -displayfd`, so it picks a free display number and
//!    reports it once it accepts connections); set `GD_E2E_DISPLAY=:N` to use an existing display
//!    instead (for instance to watch the test on your desktop);
//! 2. it starts `tauri-driver` on two free ports (its own and the `WebKitWebDriver` one it
//!    spawns) and waits until both accept connections;
//! 3. it opens a WebDriver session with `tauri:options.application` = the app binary, through
//!    fantoccini (a keep-alive HTTP client: clients sending `Connection: close` fail
//!    intermittently through tauri-driver).
//!
//! Every process is started in its own process group, which is terminated (SIGTERM, then
//! SIGKILL) when the harness is dropped, so the app, `WebKitWebDriver` and `Xvfb` never outlive a
//! test, even a failing one. The app gets fresh `HOME`/`XDG_*` directories.
//!
//! Prerequisites (a missing one fails the test with a message naming it):
//! - the app binary, built **before** the tests: `npm --prefix ui ci && npm --prefix ui run
//!   build && cargo build -p gemini-desktop`. It is looked up next to the test executable
//!   (`<target>/<profile>/gemini-desktop`) unless `GD_E2E_APP` names it;
//! - `tauri-driver` (`cargo install tauri-driver --locked`), on `PATH` or in `$CARGO_HOME/bin`,
//!   or named by `GD_E2E_TAURI_DRIVER`;
//! - `WebKitWebDriver` (Debian package `webkit2gtk-driver`), or `GD_E2E_WEBKIT_DRIVER`;
//! - `Xvfb` (Debian package `xvfb`) unless `GD_E2E_DISPLAY` is set.
//!
//! [`App::launch_with_keyring`] also starts an unlocked throwaway gnome-keyring on the app's bus
//! (needs `gnome-keyring-daemon` and `dbus-send`), and [`App::restart`] quits and starts the app
//! again with the same home, bus and keyring (what survives a restart).
//!
//! Artifacts (screenshots, the driver and app log) go to `<target>/e2e/<test name>/`.

mod app;
mod connected;
mod dbus;
pub mod docs;
mod helpers;
mod keyring;
mod notifications;
mod page;
mod paths;
mod process;
mod xvfb;

pub use app::App;
pub use connected::E2E_MODEL;
pub use helpers::{function_responses, okapi_notes, paragraphs};
pub use notifications::{Notifications, Shown};
pub use page::testid;
pub use paths::{app_binary, target_dir};

use std::time::Duration;

/// How long to wait for a process to come up (Xvfb, tauri-driver, the WebDriver session).
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How long [`App::wait_for_text`] and friends wait for the page to reach the expected state.
pub const UI_TIMEOUT: Duration = Duration::from_secs(20);
