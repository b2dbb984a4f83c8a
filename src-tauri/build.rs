//! Build script of the Tauri shell.
//!
//! `tauri.conf.json` lives at the repository root (next to `ui/` and `icons/`), so the config
//! path is given to tauri-build explicitly; paths inside the config (`frontendDist`, icons) are
//! relative to the config file. `src/lib.rs` points `generate_context!` at the same file.

use std::path::Path;

/// The app's own commands. Listing them here makes tauri-build generate an `allow-<command>`
/// permission for each one and makes the IPC layer deny any command that no capability grants
/// (see `capabilities/default.json`). A command registered in `lib.rs` but not listed here is
/// rejected at runtime, so keep the two in sync.
const COMMANDS: &[&str] = &[
    "app_info",
    "open_workspace",
    "start_session",
    "send_prompt",
    "interrupt_turn",
    "confirm_tool",
    "get_approval_mode",
    "set_approval_mode",
    "list_models",
    "stop_session",
    "mcp_status",
    "refresh_memory",
    "add_memory",
    "list_commands",
    "mcp_restart_server",
    "mcp_set_server_enabled",
    "mcp_server_log",
    "mcp_authenticate",
    "clear_conversation",
    "compress_conversation",
    "session_stats",
    "mcp_run_prompt",
    "trust_status",
    "trust_folder",
    "settings_get",
    "settings_set",
    "ui_ready",
    "settings_add_mcp_server",
    "list_checkpoints",
    "restore_checkpoint",
    "history_checkpoints",
    "auth_status",
    "auth_validate_api_key",
    "auth_set_api_key",
    "auth_set_vertex",
    "auth_start_google_login",
    "auth_wait_google_login",
    "auth_cancel_google_login",
    "auth_submit_login_code",
    "auth_list_projects",
    "auth_pick_project",
    "auth_retry_setup",
    "auth_select_method",
    "auth_sign_out",
    "history_list",
    "history_search",
    "history_page",
    "history_message",
    "history_rename",
    "history_delete",
    "history_export",
    "history_last_session",
    "history_gemini_cli_sessions",
    "picker_open",
    "picker_list_dir",
    "picker_search",
    "picker_estimate",
    "picker_watch",
    "history_import_gemini_cli",
];

/// Shown by the app when the frontend has not been built, so `cargo check`/`clippy` of the
/// workspace keep working on machines without Node.js.
const PLACEHOLDER_INDEX: &str = r#"<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <meta name="gemini-desktop-placeholder" content="ui-not-built" />
    <title>Gemini Desktop (UI not built)</title>
  </head>
  <body>
    <h1>Gemini Desktop: the UI has not been built</h1>
    <p>Run <code>npm --prefix ui ci &amp;&amp; npm --prefix ui run build</code>, then rebuild the app.</p>
  </body>
</html>
"#;

fn main() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .expect("src-tauri has a parent directory");
    let config = root.join("tauri.conf.json");
    let dist = root.join("ui").join("dist");

    println!("cargo:rerun-if-changed={}", config.display());
    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("capabilities").display()
    );
    // A directory here makes cargo rerun this script (and so re-embed the assets) whenever any
    // file below it changes.
    println!("cargo:rerun-if-changed={}", dist.display());

    if !dist.join("index.html").exists() {
        println!(
            "cargo:warning=ui/dist is missing: embedding a placeholder page. Build the UI with \
             `npm --prefix ui ci && npm --prefix ui run build` and rebuild."
        );
        std::fs::create_dir_all(&dist).expect("create ui/dist");
        std::fs::write(dist.join("index.html"), PLACEHOLDER_INDEX).expect("write placeholder");
    }

    let attributes = tauri_build::Attributes::new()
        .config_path(&config)
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(error) = tauri_build::try_build(attributes) {
        panic!("tauri-build failed: {error:#}");
    }
}
