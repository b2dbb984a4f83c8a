//! The settings screen's and the trust prompt's commands. The logic lives
//! in `gd_core::settings_screen`; these read the workspace from the app
//! state and turn errors into [`CommandError`]s (`input` for a value the
//! field should show next to it, `config` for a file problem).

use gd_core::launch::home_dir;
use gd_core::settings_screen::{self, SettingsScreenError};
use gd_protocol::{
    CommandError, CommandErrorKind, SettingsScope, SettingsView, TrustInfo, TrustLevel,
};
use tauri::State;

use crate::state::AppState;

fn workspace(state: &AppState) -> Result<std::path::PathBuf, CommandError> {
    state
        .workspace()
        .ok_or_else(|| CommandError::new(CommandErrorKind::NoWorkspace, "No folder is open."))
}

fn join_error(e: tauri::Error) -> CommandError {
    CommandError::new(
        CommandErrorKind::Config,
        format!("The settings task failed: {e}"),
    )
}

fn screen_error(e: SettingsScreenError) -> CommandError {
    match e {
        SettingsScreenError::Invalid(m) => CommandError::new(CommandErrorKind::Input, m),
        SettingsScreenError::File(m) => CommandError::new(CommandErrorKind::Config, m),
    }
}

/// The open folder's trust: whether to show the trust prompt, and what the
/// folder would load once trusted.
#[tauri::command]
pub async fn trust_status(state: State<'_, AppState>) -> Result<TrustInfo, CommandError> {
    let workspace = workspace(&state)?;
    let home = home_dir();
    tauri::async_runtime::spawn_blocking(move || {
        settings_screen::trust_info(&workspace, home.as_deref())
    })
    .await
    .map_err(join_error)
}

/// Records the user's choice in `~/.gemini/trustedFolders.json`. The UI
/// then reloads the session so the workspace's settings, commands and MCP
/// servers load (or stay off).
#[tauri::command]
pub async fn trust_folder(
    state: State<'_, AppState>,
    level: TrustLevel,
) -> Result<TrustInfo, CommandError> {
    let workspace = workspace(&state)?;
    let home = home_dir();
    tauri::async_runtime::spawn_blocking(move || {
        settings_screen::set_trust(&workspace, home.as_deref(), level)
    })
    .await
    .map_err(join_error)?
    .map_err(screen_error)
}

/// The settings layers and the common keys, read from disk now.
#[tauri::command]
pub async fn settings_get(state: State<'_, AppState>) -> Result<SettingsView, CommandError> {
    let workspace = workspace(&state)?;
    let home = home_dir();
    tauri::async_runtime::spawn_blocking(move || {
        settings_screen::settings_view(&workspace, home.as_deref())
    })
    .await
    .map_err(join_error)
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
    let workspace = workspace(&state)?;
    let home = home_dir();
    tauri::async_runtime::spawn_blocking(move || {
        settings_screen::write(&workspace, home.as_deref(), scope, &key, value.as_ref())
    })
    .await
    .map_err(join_error)?
    .map_err(screen_error)
}
