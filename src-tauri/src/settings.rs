//! The settings screen's and the trust prompt's commands. The logic lives
//! in `gd_core::settings_screen`; these read the workspace from the app
//! state, run the file work off the async runtime and turn errors into
//! [`CommandError`]s (`input` for a value the field should show next to it,
//! `config` for a file problem).

use std::path::{Path, PathBuf};

use gd_core::launch::home_dir;
use gd_core::settings_screen::{self, SettingsScreenError};
use gd_protocol::{
    CommandError, CommandErrorKind, NewMcpServer, SettingsScope, SettingsView, TrustInfo,
    TrustLevel,
};
use tauri::State;

use crate::state::AppState;

fn screen_error(e: SettingsScreenError) -> CommandError {
    match e {
        SettingsScreenError::Invalid(m) => CommandError::new(CommandErrorKind::Input, m),
        SettingsScreenError::File(m) => CommandError::new(CommandErrorKind::Config, m),
    }
}

/// Runs `work` on the open folder and the user's home on a blocking thread.
async fn with_workspace<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce(&Path, Option<&Path>) -> Result<T, SettingsScreenError> + Send + 'static,
) -> Result<T, CommandError> {
    let workspace: PathBuf = state
        .workspace()
        .ok_or_else(|| CommandError::new(CommandErrorKind::NoWorkspace, "No folder is open."))?;
    let home = home_dir();
    tauri::async_runtime::spawn_blocking(move || work(&workspace, home.as_deref()))
        .await
        .map_err(|e| {
            CommandError::new(
                CommandErrorKind::Config,
                format!("The settings task failed: {e}"),
            )
        })?
        .map_err(screen_error)
}

/// The open folder's trust: whether to show the trust prompt, and what the
/// folder would load once trusted.
#[tauri::command]
pub async fn trust_status(state: State<'_, AppState>) -> Result<TrustInfo, CommandError> {
    with_workspace(&state, |ws, home| Ok(settings_screen::trust_info(ws, home))).await
}

/// Records the user's choice in `~/.gemini/trustedFolders.json`. The UI
/// then reloads the session so the workspace's settings, commands and MCP
/// servers load (or stay off).
#[tauri::command]
pub async fn trust_folder(
    state: State<'_, AppState>,
    level: TrustLevel,
) -> Result<TrustInfo, CommandError> {
    with_workspace(&state, move |ws, home| {
        settings_screen::set_trust(ws, home, level)
    })
    .await
}

/// The settings layers and the common keys, read from disk now.
#[tauri::command]
pub async fn settings_get(state: State<'_, AppState>) -> Result<SettingsView, CommandError> {
    with_workspace(&state, |ws, home| {
        Ok(settings_screen::settings_view(ws, home))
    })
    .await
}

/// Writes one key (`value: null` removes it) into the user or workspace
/// settings file, keeping its comments and other keys.
#[tauri::command]
pub async fn settings_set(
    state: State<'_, AppState>,
    scope: SettingsScope,
    key: String,
    value: Option<serde_json::Value>,
) -> Result<SettingsView, CommandError> {
    with_workspace(&state, move |ws, home| {
        settings_screen::write(ws, home, scope, &key, value.as_ref())
    })
    .await
}

/// Adds an MCP server (the MCP panel's form) to the user or workspace
/// settings file through the same in-place writer; the UI then reloads the
/// session, which starts it.
#[tauri::command]
pub async fn settings_add_mcp_server(
    state: State<'_, AppState>,
    scope: SettingsScope,
    server: NewMcpServer,
) -> Result<SettingsView, CommandError> {
    with_workspace(&state, move |ws, home| {
        gd_core::mcp_settings::add_server(ws, home, scope, &server)
    })
    .await
}
