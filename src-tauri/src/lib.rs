//! Gemini Desktop's Tauri shell: window, IPC commands, plugins and app state.
//!
//! The agent itself lives in the Tauri-free crates under `crates/`; this crate only wires them
//! to the webview. Module layout:
//! - [`commands`]: the `#[tauri::command]` functions the UI invokes;
//! - [`boot`]: the app's version and workspace, handed to the page before its first IPC call;
//! - [`sessions`]: the agent sessions and the forwarding of their events to the UI;
//! - [`checkpoints`]: listing and restoring the workspace checkpoints taken before edits;
//! - [`picker`]: the file-tree context picker (gd-workspace-index);
//! - [`settings`]: the settings screen and the trust prompt (gd-core's `settings_screen`);
//! - [`signin`]: the sign-in screen's and the auth status view's commands (gd-auth);
//! - [`history`]: the session history commands (list, search, pages, rename, delete, export);
//! - [`state`]: the state managed by Tauri and the launch options it is built from;
//! - [`single_instance`]: what a second launch does to the running app;
//! - [`logging`]: `tracing` to stderr and to a rolling file in the app's log directory;
//! - [`renderer`]: WebKitGTK's compositing choice (off unless `GEMINI_DESKTOP_GPU=1`);
//! - [`first_paint`]: the window starts hidden and is shown at the UI's first paint.
//!
//! Plugins (all Tauri 2.x):
//! - `single-instance`: one app per user session, see [`single_instance`];
//! - `window-state`: the window's size, position and maximised state are saved on exit and
//!   restored at start (`.window-state.json` in the app's config directory); not its
//!   visibility, which [`first_paint`] decides;
//! - `dialog`: the native folder picker behind `open_workspace` (used from Rust only);
//! - `opener`: links in the UI open in the system browser (`plugin:opener|open_url`; the
//!   capability only allows `http(s)://` URLs with the default browser); Google sign-in's
//!   authorization URL is opened from Rust (see [`signin`]).

pub mod boot;
pub mod checkpoints;
pub mod commands;
pub mod first_paint;
pub mod history;
pub mod logging;
pub mod picker;
pub mod renderer;
pub mod sessions;
pub mod settings;
pub mod signin;
pub mod single_instance;
pub mod state;

use tauri::Manager;

use crate::state::{AppState, LaunchOptions};

/// Exit code for an unusable command line (for instance a workspace that is not a directory).
const EXIT_USAGE: i32 = 2;

/// Starts the app and blocks until it exits.
pub fn run() {
    renderer::configure();
    logging::init();

    let launch = match LaunchOptions::from_env() {
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
        .plugin(boot::plugin(&commands::AppInfo {
            version: env!("CARGO_PKG_VERSION").into(),
            workspace: launch
                .workspace
                .as_ref()
                .map(|path| path.to_string_lossy().into_owned()),
        }))
        .manage(AppState::new(launch.clone()))
        .manage(history::History::default())
        .manage(first_paint::FirstPaint::default())
        .setup(move |app| {
            match app.path().app_log_dir() {
                Ok(dir) => match logging::attach_log_file(&dir) {
                    Ok(dir) => tracing::debug!(dir = %dir.display(), "logging to a file"),
                    Err(error) => tracing::warn!("no log file: {error}"),
                },
                Err(error) => tracing::warn!(%error, "no log directory"),
            }
            tracing::info!(
                version = env!("CARGO_PKG_VERSION"),
                workspace = ?launch.workspace,
                "starting Gemini Desktop"
            );
            first_paint::arm_timeout(app.handle());
            Ok(())
        })
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
            commands::mcp_status,
            commands::refresh_memory,
            commands::add_memory,
            commands::list_commands,
            commands::mcp_restart_server,
            commands::mcp_set_server_enabled,
            commands::mcp_server_log,
            commands::mcp_authenticate,
            commands::clear_conversation,
            commands::compress_conversation,
            commands::session_stats,
            commands::mcp_run_prompt,
            checkpoints::list_checkpoints,
            checkpoints::restore_checkpoint,
            checkpoints::history_checkpoints,
            signin::auth_status,
            signin::auth_validate_api_key,
            signin::auth_set_api_key,
            signin::auth_set_vertex,
            signin::auth_start_google_login,
            signin::auth_wait_google_login,
            signin::auth_cancel_google_login,
            signin::auth_submit_login_code,
            signin::auth_list_projects,
            signin::auth_pick_project,
            signin::auth_retry_setup,
            signin::auth_select_method,
            signin::auth_sign_out,
            history::history_list,
            history::history_search,
            history::history_page,
            history::history_message,
            history::history_rename,
            history::history_delete,
            history::history_export,
            history::history_last_session,
            history::history_gemini_cli_sessions,
            picker::picker_open,
            picker::picker_list_dir,
            picker::picker_search,
            picker::picker_estimate,
            picker::picker_watch,
            history::history_import_gemini_cli,
            settings::trust_status,
            settings::trust_folder,
            settings::settings_get,
            settings::settings_set,
            first_paint::ui_ready,
            settings::settings_add_mcp_server,
        ])
        .run(tauri::generate_context!("../tauri.conf.json"));
    if let Err(error) = result {
        tracing::error!("Gemini Desktop failed: {error}");
        std::process::exit(1);
    }
}
