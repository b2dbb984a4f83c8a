//! Tauri commands: the IPC surface the UI calls with `invoke`.
//!
//! Each command stays thin: it reads what it needs from [`AppState`] and delegates real work to
//! the Tauri-free crates under `crates/`. A session is driven by one command, [`submit`], taking
//! any [`Op`]; the others are app-level. To add one:
//! 1. write it here (arguments and results are `serde` types with ts-rs `TS`);
//! 2. declare it in `command_list.rs` (the handler, build.rs's list and the UI's generated
//!    client `ui/src/protocol/commands.ts` come from there);
//! 3. grant `allow-<name>` (underscores become dashes) in `capabilities/default.json` (a test
//!    fails until the capability and the list agree).
//!
//! Streaming results (agent events) use a `tauri::ipc::Channel<T>` argument, which the UI
//! creates with `new Channel()` from `@tauri-apps/api/core`.

use gd_protocol::{
    ApprovalMode, CommandError, CommandErrorKind, ConfirmationOutcome, Event, ModelChoice, Op,
    SessionInfo,
};
use serde::Serialize;
use std::path::PathBuf;

use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State, WebviewWindow};
use tauri_plugin_dialog::DialogExt;

use crate::state::AppState;

/// What `app_info` returns (`AppInfo` in ui/src/protocol).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
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

/// Switches the window to another folder: `path` when given, else the one the user picks in
/// the native folder dialog (`None` when they cancel it). Returns the canonical path. Running
/// sessions are stopped; the UI starts a new one.
#[tauri::command]
pub async fn open_workspace<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
    path: Option<String>,
) -> Result<Option<String>, CommandError> {
    let path = match path {
        Some(path) => PathBuf::from(path),
        None => match pick_folder(&window, state.workspace()).await? {
            Some(path) => path,
            None => return Ok(None),
        },
    };
    let workspace = state
        .set_workspace(&path)
        .map_err(|e| CommandError::new(CommandErrorKind::Input, e.to_string()))?;
    state.sessions.stop_all();
    tracing::info!(workspace = %workspace.display(), "opened workspace");
    Ok(Some(workspace.to_string_lossy().into_owned()))
}

/// Shows the native folder picker over `window`, starting in `start`; `None` when cancelled.
///
/// The dialog plugin's callback API is used (not `blocking_pick_folder`): it runs the dialog
/// from the main thread as GTK requires and hands the answer to a channel, so no runtime
/// thread is blocked while the user browses.
async fn pick_folder<R: Runtime>(
    window: &WebviewWindow<R>,
    start: Option<PathBuf>,
) -> Result<Option<PathBuf>, CommandError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = window
        .dialog()
        .file()
        .set_title("Open a folder")
        .set_parent(window);
    if let Some(start) = start {
        dialog = dialog.set_directory(start);
    }
    dialog.pick_folder(move |picked| {
        let _ = tx.send(picked);
    });
    let picked = rx.await.map_err(|_| {
        CommandError::new(
            CommandErrorKind::Input,
            "The folder dialog closed without an answer.",
        )
    })?;
    picked
        .map(|file| {
            file.into_path().map_err(|e| {
                CommandError::new(
                    CommandErrorKind::Input,
                    format!("The chosen folder is not a local path: {e}"),
                )
            })
        })
        .transpose()
}

/// Starts an agent session on the workspace. Its events arrive on `on_event`
/// in order, starting with `session_configured`. With `resume` (a stored
/// session's id) the session continues that one (`session_resumed` follows).
#[tauri::command]
pub async fn start_session(
    state: State<'_, AppState>,
    history: State<'_, crate::history::History>,
    on_event: Channel<Event>,
    model: Option<String>,
    resume: Option<String>,
) -> Result<SessionInfo, CommandError> {
    let workspace = state.workspace().ok_or_else(|| {
        CommandError::new(
            CommandErrorKind::NoWorkspace,
            "Open a folder to work on first.",
        )
    })?;
    state
        .sessions
        .start(&workspace, model, resume, &history, on_event)
        .await
}

/// Sends an operation to a session: a prompt, a confirmation, an interrupt, an MCP or memory
/// request... Answers arrive as events on the session's channel. An empty prompt is refused.
#[tauri::command]
pub fn submit(state: State<'_, AppState>, session_id: String, op: Op) -> Result<(), CommandError> {
    if let Op::UserTurn { items } = &op
        && items.iter().all(|item| match item {
            gd_protocol::InputItem::Text { text } => text.trim().is_empty(),
        })
    {
        return Err(CommandError::new(
            CommandErrorKind::Input,
            "The prompt is empty.",
        ));
    }
    state.sessions.submit(&session_id, op)
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

/// Answers a tool confirmation. `content` carries the user's edited text
/// with `modify_with_editor`.
#[tauri::command]
pub fn confirm_tool(
    state: State<'_, AppState>,
    session_id: String,
    call_id: String,
    outcome: ConfirmationOutcome,
    content: Option<String>,
) -> Result<(), CommandError> {
    state.sessions.submit(
        &session_id,
        Op::ConfirmTool {
            call_id,
            outcome,
            content,
        },
    )
}

/// The approval mode of a session.
#[tauri::command]
pub fn get_approval_mode(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<ApprovalMode, CommandError> {
    state.sessions.approval_mode(&session_id)
}

/// Changes the approval mode of a session for its next tool calls.
#[tauri::command]
pub fn set_approval_mode(
    state: State<'_, AppState>,
    session_id: String,
    mode: ApprovalMode,
) -> Result<(), CommandError> {
    state.sessions.set_approval_mode(&session_id, mode)
}

/// The models the session's credentials can use.
#[tauri::command]
pub async fn list_models(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<Vec<ModelChoice>, CommandError> {
    state.sessions.models(&session_id).await
}

/// Ends a session.
#[tauri::command]
pub fn stop_session(state: State<'_, AppState>, session_id: String) -> Result<(), CommandError> {
    state.sessions.stop(&session_id)
}

/// Asks the session for every MCP server's status: the answers arrive on the
/// session's event channel (`mcp_server_status` each, then `mcp_discovery`),
/// like the live updates that follow, so the panel has one code path.
#[tauri::command]
pub fn mcp_status(state: State<'_, AppState>, session_id: String) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::McpStatus)
}

/// Reads the context files (GEMINI.md…) again; the `memory_loaded` event
/// with the import tree follows on the session's channel.
#[tauri::command]
pub fn refresh_memory(state: State<'_, AppState>, session_id: String) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::RefreshMemory)
}

/// Remembers a fact in `~/.gemini/GEMINI.md` (as `save_memory` does), then
/// refreshes the memory (`memory_loaded` follows).
#[tauri::command]
pub fn add_memory(
    state: State<'_, AppState>,
    session_id: String,
    text: String,
) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::AddMemory { text })
}

/// Asks for the slash commands (built-in and custom) for the composer's
/// autocomplete; answered by a `commands` event.
#[tauri::command]
pub fn list_commands(state: State<'_, AppState>, session_id: String) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::ListCommands)
}

/// `/clear`: the session starts a fresh conversation (recorded as a new
/// session in the history); `conversation_cleared` follows on the
/// session's channel.
#[tauri::command]
pub fn clear_conversation(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::Clear)
}

/// `/compress`: summarise the conversation now; `chat_compressed` or
/// `compression_skipped` follows on the session's channel.
#[tauri::command]
pub fn compress_conversation(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::Compress)
}

/// `/stats`: the session's statistics arrive as a `session_stats` event.
#[tauri::command]
pub fn session_stats(state: State<'_, AppState>, session_id: String) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::Stats)
}

/// Runs an MCP prompt with these arguments: its text is sent to the model
/// as the user's next turn (typing `/prompt args` does the same).
#[tauri::command]
pub fn mcp_run_prompt(
    state: State<'_, AppState>,
    session_id: String,
    server: String,
    name: String,
    arguments: std::collections::BTreeMap<String, String>,
) -> Result<(), CommandError> {
    state.sessions.submit(
        &session_id,
        Op::McpRunPrompt {
            server,
            name,
            arguments,
        },
    )
}

/// Stops an MCP server and starts it again; its status events follow on
/// the session's channel.
#[tauri::command]
pub fn mcp_restart_server(
    state: State<'_, AppState>,
    session_id: String,
    name: String,
) -> Result<(), CommandError> {
    state
        .sessions
        .submit(&session_id, Op::McpRestartServer { name })
}

/// Turns an MCP server off or on without touching its settings entry: the
/// choice is persisted in `~/.gemini/mcp-server-enablement.json` (Gemini
/// CLI's file), so it holds for the next sessions and for Gemini CLI too.
#[tauri::command]
pub fn mcp_set_server_enabled(
    state: State<'_, AppState>,
    session_id: String,
    name: String,
    enabled: bool,
) -> Result<(), CommandError> {
    state
        .sessions
        .submit(&session_id, Op::McpSetServerEnabled { name, enabled })
}

/// Asks for the latest stderr lines of an MCP server (answered by an
/// `mcp_server_log` event on the session's channel).
#[tauri::command]
pub fn mcp_server_log(
    state: State<'_, AppState>,
    session_id: String,
    name: String,
) -> Result<(), CommandError> {
    state
        .sessions
        .submit(&session_id, Op::McpServerLog { name })
}

/// Signs in to an HTTP MCP server with OAuth. The browser opens on the
/// authorization page; the server's status events follow on the session's
/// channel (`authenticating` with the page's URL, then `connected`, or
/// `needs_auth` with the reason). Asking again while a sign-in runs joins it.
#[tauri::command]
pub fn mcp_authenticate<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    session_id: String,
    name: String,
) -> Result<(), CommandError> {
    install_mcp_browser(&app);
    state
        .sessions
        .submit(&session_id, Op::McpAuthenticate { name })
}

/// Makes MCP sign-ins open the system browser through the opener plugin
/// (`GEMINI_DESKTOP_BROWSER`, a command taking the URL, wins: tests use it
/// to play the browser). Installed at start-up, when the app handle is at
/// hand; later calls change nothing.
pub fn install_mcp_browser<R: Runtime>(app: &AppHandle<R>) {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let app = app.clone();
        gd_mcp::McpOAuth::set_default_opener(std::sync::Arc::new(move |url: &str| {
            crate::signin::open_in_browser(&app, url)
        }));
    });
}
