//! Tauri commands: the IPC surface the UI calls with `invoke`.
//!
//! Each command stays thin: it reads what it needs from [`AppState`] and delegates real work to
//! the Tauri-free crates under `crates/`. A session is driven by one command, [`submit`], taking
//! any [`Op`]; the others are app-level. To add one:
//! 1. write it here (arguments and results are `serde` types with ts-rs `TS`);
//! 2. declare it in `command_list.rs`: the handler, build.rs's list, the capability's
//!    `app-commands` permission set and the UI's generated client
//!    `ui/src/protocol/commands.ts` all come from there.
//!
//! Streaming results (agent events) use a `tauri::ipc::Channel<T>` argument, which the UI
//! creates with `new Channel()` from `@tauri-apps/api/core`.

use gd_protocol::{
    CommandError, CommandErrorKind, Event, InputItem, Op, SessionInfo, SideBySideDiff,
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
    /// The commit it was built from (12 hex digits, or `unknown`; build.rs).
    pub commit: String,
    /// Canonical absolute path of the workspace folder, if any.
    pub workspace: Option<String>,
}

impl AppInfo {
    /// `version` (the app's, `PackageInfo::version`), this build's commit, and `workspace`.
    pub fn new(version: &str, workspace: Option<&std::path::Path>) -> Self {
        Self {
            version: version.into(),
            commit: env!("GD_COMMIT").into(),
            workspace: workspace.map(|path| path.to_string_lossy().into_owned()),
        }
    }
}

/// Static information about the running app, shown in the header and the About view.
#[tauri::command]
pub fn app_info<R: Runtime>(app: AppHandle<R>, state: State<'_, AppState>) -> AppInfo {
    AppInfo::new(
        &app.package_info().version.to_string(),
        state.workspace().as_deref(),
    )
}

/// Switches the window to another folder: `path` when given, else the one the user picks in
/// the native folder dialog (`None` when they cancel it). Returns the canonical path. The
/// window's folder is the shown conversation's (file picker, settings, trust, history follow
/// it); running sessions are not touched: each conversation has its own folder.
#[tauri::command]
pub async fn open_workspace<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
    path: Option<String>,
) -> Result<Option<String>, CommandError> {
    let path = match path {
        Some(path) => PathBuf::from(path),
        None => match pick_folder(&window, state.workspace(), "Open a folder").await? {
            Some(path) => path,
            None => return Ok(None),
        },
    };
    let workspace = state
        .set_workspace(&path)
        .map_err(|e| CommandError::new(CommandErrorKind::Input, e.to_string()))?;
    tracing::info!(workspace = %workspace.display(), "opened workspace");
    Ok(Some(workspace.to_string_lossy().into_owned()))
}

/// Lets the user pick a folder in the native dialog (the Extensions panel's "Browse…" for an
/// extension to install), starting in the window's folder; `None` when they cancel it. Only
/// the path is returned: what is done with it is an op of the session, which checks it.
#[tauri::command]
pub async fn choose_folder<R: Runtime>(
    window: WebviewWindow<R>,
    state: State<'_, AppState>,
    title: String,
) -> Result<Option<String>, CommandError> {
    let picked = pick_folder(&window, state.workspace(), &title).await?;
    Ok(picked.map(|path| path.to_string_lossy().into_owned()))
}

/// Shows the native folder picker over `window`, starting in `start`; `None` when cancelled.
///
/// The dialog plugin's callback API is used (not `blocking_pick_folder`): it runs the dialog
/// from the main thread as GTK requires and hands the answer to a channel, so no runtime
/// thread is blocked while the user browses.
async fn pick_folder<R: Runtime>(
    window: &WebviewWindow<R>,
    start: Option<PathBuf>,
    title: &str,
) -> Result<Option<PathBuf>, CommandError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = window.dialog().file().set_title(title).set_parent(window);
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

/// Starts an agent session on `workspace` (the window's folder when not given:
/// each conversation of the window has its own). Its events arrive on
/// `on_event` in order, starting with `session_configured`. With `resume` (a
/// stored session's id) the session continues that one (`session_resumed`
/// follows).
#[tauri::command]
pub async fn start_session(
    state: State<'_, AppState>,
    history: State<'_, crate::history::History>,
    on_event: Channel<Event>,
    model: Option<String>,
    resume: Option<String>,
    workspace: Option<String>,
) -> Result<SessionInfo, CommandError> {
    let workspace = match workspace {
        Some(path) => crate::args::canonical_dir(std::path::Path::new(&path))
            .map_err(|e| CommandError::new(CommandErrorKind::Input, e.to_string()))?,
        None => state.workspace().ok_or_else(|| {
            CommandError::new(
                CommandErrorKind::NoWorkspace,
                "Open a folder to work on first.",
            )
        })?,
    };
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
            InputItem::Text { text } => text.trim().is_empty(),
        })
    {
        return Err(CommandError::new(
            CommandErrorKind::Input,
            "The prompt is empty.",
        ));
    }
    state.sessions.submit(&session_id, op)
}

/// The side-by-side diff of `proposed` against `original`, computed as the
/// core computes an edit confirmation's (same lines, same hunks): after the
/// user edits a proposal by hand, the confirmation shows their version as
/// hunks to accept or reject, numbered exactly as `Op::ConfirmTool.hunks`
/// will read them.
#[tauri::command]
pub async fn diff_texts(original: Option<String>, proposed: String) -> SideBySideDiff {
    tauri::async_runtime::spawn_blocking(move || {
        gd_core::diff::side_by_side(original.as_deref(), &proposed)
    })
    .await
    .unwrap_or_else(|e| {
        tracing::error!(%e, "diff_texts failed");
        SideBySideDiff {
            hunks: Vec::new(),
            added: 0,
            removed: 0,
        }
    })
}

/// Ends a session.
#[tauri::command]
pub fn stop_session(state: State<'_, AppState>, session_id: String) -> Result<(), CommandError> {
    state.sessions.stop(&session_id)
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
