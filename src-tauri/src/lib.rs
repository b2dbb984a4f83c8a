//! Gemini Desktop's Tauri shell: window, IPC commands and app state.
//!
//! The agent itself lives in the Tauri-free crates under `crates/`; this crate only wires them
//! to the webview. Module layout:
//! - [`commands`]: the `#[tauri::command]` functions the UI invokes;
//! - [`sessions`]: the agent sessions and the forwarding of their events to the UI;
//! - [`state`]: the state managed by Tauri and the launch options it is built from.

pub mod commands;
pub mod sessions;
pub mod state;

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::state::{AppState, LaunchOptions};

/// Log filter used when `RUST_LOG` is not set.
const DEFAULT_LOG_FILTER: &str = "info";

/// Exit code for an unusable command line (for instance a workspace that is not a directory).
const EXIT_USAGE: i32 = 2;

/// Starts the app and blocks until it exits.
pub fn run() {
    init_tracing();

    let launch = match LaunchOptions::from_env() {
        Ok(launch) => launch,
        Err(error) => {
            tracing::error!("{error}");
            std::process::exit(EXIT_USAGE);
        }
    };
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        workspace = ?launch.workspace,
        "starting Gemini Desktop"
    );

    let result = tauri::Builder::default()
        .manage(AppState::new(launch))
        .invoke_handler(tauri::generate_handler![
            commands::app_info,
            commands::open_workspace,
            commands::start_session,
            commands::send_prompt,
            commands::interrupt_turn,
            commands::confirm_tool,
            commands::get_approval_mode,
            commands::set_approval_mode,
            commands::list_models,
            commands::stop_session,
        ])
        .run(tauri::generate_context!("../tauri.conf.json"));
    if let Err(error) = result {
        tracing::error!("Gemini Desktop failed: {error}");
        std::process::exit(1);
    }
}

/// Logs to stderr, filtered by `RUST_LOG` (e.g. `RUST_LOG=debug` or
/// `RUST_LOG=info,gemini_desktop_lib=trace`). Records from the `log` crate (Tauri, wry) are
/// forwarded too.
fn init_tracing() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
