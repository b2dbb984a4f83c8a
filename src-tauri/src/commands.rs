//! Tauri commands: the IPC surface the UI calls with `invoke`.
//!
//! Each command stays thin: it reads what it needs from [`AppState`] and delegates real work to
//! the Tauri-free crates under `crates/`. To add one:
//! 1. write it here (arguments and results are `serde` types, serialised in camelCase);
//! 2. register it in `generate_handler!` in `lib.rs`;
//! 3. add its name to `COMMANDS` in `build.rs` and grant `allow-<name>` (underscores become
//!    dashes) in `capabilities/default.json`, or the IPC layer rejects it.
//!
//! Streaming results (agent events) use a `tauri::ipc::Channel<T>` argument, which the UI
//! creates with `new Channel()` from `@tauri-apps/api/core`.

use gd_protocol::{CommandError, CommandErrorKind, Event, Op, SessionInfo};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};

use crate::state::AppState;

/// What `app_info` returns; mirrored by `AppInfo` in `ui/src/api.ts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    /// The application version.
    pub version: String,
    /// Canonical absolute path of the workspace folder, if any.
    pub workspace: Option<String>,
}

/// Static information about the running app, shown in the header.
#[tauri::command]
pub fn app_info<R: Runtime>(app: AppHandle<R>, state: State<'_, AppState>) -> AppInfo {
    AppInfo {
        version: app.package_info().version.to_string(),
        workspace: state
            .workspace()
            .map(|path| path.to_string_lossy().into_owned()),
    }
}

/// Starts an agent session on the workspace. Its events arrive on `on_event`
/// in order, starting with `session_configured`.
#[tauri::command]
pub async fn start_session(
    state: State<'_, AppState>,
    on_event: Channel<Event>,
) -> Result<SessionInfo, CommandError> {
    let workspace = state.workspace().ok_or_else(|| {
        CommandError::new(
            CommandErrorKind::NoWorkspace,
            "Open a folder to work on first.",
        )
    })?;
    state.sessions.start(workspace, on_event)
}

/// Sends the user's prompt to a session, starting a turn.
#[tauri::command]
pub fn send_prompt(
    state: State<'_, AppState>,
    session_id: String,
    text: String,
) -> Result<(), CommandError> {
    if text.trim().is_empty() {
        return Err(CommandError::new(
            CommandErrorKind::Input,
            "The prompt is empty.",
        ));
    }
    state.sessions.submit(&session_id, Op::user_text(text))
}

/// Cancels the running turn of a session.
#[tauri::command]
pub fn interrupt_turn(state: State<'_, AppState>, session_id: String) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::Interrupt)
}

/// Ends a session.
#[tauri::command]
pub fn stop_session(state: State<'_, AppState>, session_id: String) -> Result<(), CommandError> {
    state.sessions.stop(&session_id)
}
