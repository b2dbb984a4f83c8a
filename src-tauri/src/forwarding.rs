//! The commands that only forward one `Op` to a session, kept until the UI sends every op
//! through [`crate::commands::submit`]; then this file and its lines in `command_list.rs` and
//! the capability go.

use gd_protocol::{CommandError, ConfirmationOutcome, Op};
use tauri::{AppHandle, Runtime, State};

use crate::state::AppState;

/// Sends the user's prompt to a session, starting a turn.
#[tauri::command]
pub fn send_prompt(
    state: State<'_, AppState>,
    session_id: String,
    text: String,
) -> Result<(), CommandError> {
    crate::commands::submit(state, session_id, Op::user_text(text))
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
    crate::commands::install_mcp_browser(&app);
    state
        .sessions
        .submit(&session_id, Op::McpAuthenticate { name })
}

/// Asks the session for its workspace's checkpoints (answered by a `checkpoints` event,
/// newest first, or `checkpoint_error`).
#[tauri::command]
pub fn list_checkpoints(
    state: State<'_, AppState>,
    session_id: String,
) -> Result<(), CommandError> {
    state.sessions.submit(&session_id, Op::ListCheckpoints)
}

/// Restores a checkpoint: `code` puts the workspace's files back as they were before the edit,
/// `conversation` truncates the session's history at the prompt of the edit's turn (the
/// session's own checkpoints only), both does the code then the conversation. Answered by
/// `checkpoint_restored` or `checkpoint_error`.
#[tauri::command]
pub fn restore_checkpoint(
    state: State<'_, AppState>,
    session_id: String,
    checkpoint_id: String,
    code: bool,
    conversation: bool,
) -> Result<(), CommandError> {
    state.sessions.submit(
        &session_id,
        Op::RestoreCheckpoint {
            checkpoint_id,
            code,
            conversation,
        },
    )
}
