//! Gemini Desktop's Tauri shell: window, IPC commands, plugins and app state.
//!
//! The agent itself lives in the Tauri-free crates under `crates/`; this crate only wires them
//! to the webview. Module layout:
//! - [`commands`]: the `#[tauri::command]` functions the UI invokes; every command of every
//!   module is declared once in `command_list.rs` (handler, build.rs's list, capability check
//!   and the UI's generated client `ui/src/protocol/commands.ts` all come from it);
//! - [`boot`]: the app's version and workspace, handed to the page before its first IPC call;
//! - [`sessions`]: the agent sessions and the forwarding of their events to the UI;
//! - [`picker`]: the file-tree context picker (gd-workspace-index);
//! - [`settings`]: the settings screen and the trust prompt (gd-core's `settings_screen`);
//! - [`signin`]: the sign-in screen's and the auth status view's commands (gd-auth);
//! - [`history`]: the session history commands (list, search, pages, rename, delete, export,
//!   a stored session's checkpoints);
//! - [`worktrees`]: "New conversation in a worktree": create, diff, merge, discard
//!   (gd-worktree);
//! - [`args`]: the app's command line (the workspace to open);
//! - [`state`]: the state managed by Tauri;
//! - [`single_instance`]: what a second launch does to the running app;
//! - [`logging`]: `tracing` to stderr and to a rolling file in the app's log directory;
//! - [`renderer`]: WebKitGTK's compositing choice (off unless `GEMINI_DESKTOP_GPU=1`);
//! - [`first_paint`]: the window starts hidden and is shown at the UI's first paint;
//! - [`allocator`]: glibc malloc's arenas, capped (memory of the app's own threads);
//! - [`updates`]: the About view's version and the signed updates (off until a manifest URL is
//!   set).
//!
//! Plugins (all Tauri 2.x):
//! - `single-instance`: one app per user session, see [`single_instance`];
//! - `window-state`: the window's size, position and maximised state are saved on exit and
//!   restored at start (`.window-state.json` in the app's config directory); not its
//!   visibility, which [`first_paint`] decides;
//! - `dialog`: the native folder picker behind `open_workspace` (used from Rust only);
//! - `opener`: links in the UI open in the system browser (`plugin:opener|open_url`; the
//!   capability only allows `http(s)://` URLs with the default browser); Google sign-in's
//!   authorization URL is opened from Rust (see [`signin`]);
//! - `updater`: checks a signed update manifest and installs the package, driven from Rust by
//!   [`updates`] (the plugin's own IPC commands are granted to no window).

pub mod allocator;
pub mod args;
pub mod attention;
pub mod boot;
#[cfg(test)]
mod command_client;
pub mod commands;
pub mod first_paint;
pub mod history;
pub mod logging;
pub mod picker;
pub mod policies;
pub mod renderer;
pub mod sessions;
pub mod settings;
pub mod signin;
pub mod single_instance;
pub mod state;
pub mod updates;
pub mod windows;
pub mod worktrees;

use tauri::Manager;

use crate::args::AppArgs;
use crate::state::AppState;

/// Turns the command table (`command_list.rs`, also read by build.rs and the TS client's
/// generator) into the IPC handler.
macro_rules! app_commands {
    ($($module:ident :: $name:ident ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?;)*) => {
        tauri::generate_handler![$($module::$name),*]
    };
}

/// Exit code for an unusable command line (for instance a workspace that is not a directory).
const EXIT_USAGE: i32 = 2;

/// Starts the app and blocks until it exits.
pub fn run() {
    // The version is the bundle's (tauri.conf.json's `version` when set, else the crate's): the
    // one the updater compares and the package manager knows.
    let context = tauri::generate_context!("../tauri.conf.json");
    let version = context.package_info().version.to_string();
    if let Some(request) = args::InfoRequest::find(std::env::args_os().skip(1)) {
        print!("{}", request.text(&version));
        if request == args::InfoRequest::Version {
            println!();
        }
        return;
    }
    allocator::configure();
    renderer::configure();
    logging::init();

    let launch = match AppArgs::from_env() {
        Ok(launch) => launch,
        Err(error) => {
            tracing::error!("{error}");
            std::process::exit(EXIT_USAGE);
        }
    };

    let result = tauri::Builder::default()
        // First, so that a second launch hands over its command line and exits before any
        // other plugin or window is set up.
        .plugin(tauri_plugin_single_instance::init(
            single_instance::on_second_launch,
        ))
        .plugin(
            tauri_plugin_window_state::Builder::default()
                .with_state_flags(
                    tauri_plugin_window_state::StateFlags::all()
                        - tauri_plugin_window_state::StateFlags::VISIBLE,
                )
                .build(),
        )
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_updater::Builder::new().build())
        .plugin(boot::plugin(&commands::AppInfo::new(
            &version,
            launch.workspace.as_deref(),
        )))
        .manage(AppState::new(launch.clone()))
        .manage(history::History::default())
        .manage(updates::Updates::default())
        .manage(first_paint::FirstPaint::default())
        .manage(windows::ConversationWindows::default())
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::Destroyed = event {
                windows::on_destroyed(window.app_handle(), window.label());
            }
        })
        .setup(move |app| {
            match app.path().app_log_dir() {
                Ok(dir) => match logging::attach_log_file(&dir) {
                    Ok(dir) => tracing::debug!(dir = %dir.display(), "logging to a file"),
                    Err(error) => tracing::warn!("no log file: {error}"),
                },
                Err(error) => tracing::warn!(%error, "no log directory"),
            }
            tracing::info!(
                version = %app.package_info().version,
                workspace = ?launch.workspace,
                "starting Gemini Desktop"
            );
            first_paint::arm_timeout(app.handle());
            commands::install_mcp_browser(app.handle());
            Ok(())
        })
        .invoke_handler(include!("command_list.rs"))
        .run(context);
    if let Err(error) = result {
        tracing::error!("Gemini Desktop failed: {error}");
        std::process::exit(1);
    }
}
