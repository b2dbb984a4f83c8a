//! Conversations in windows of their own (issue 16): the main window can move an idle
//! conversation to a new window and back, without stopping its session.
//!
//! A conversation window is a second webview on the same UI, opened with `?attach=<session id>`:
//! its UI takes the running session over (`attach_session`: the session's events go to the new
//! window's channel from then on) and rebuilds the transcript from the history, as a resumed
//! session does. Closing that window — its "Move back" button or the window manager's close —
//! hands the session back: the main window gets [`CONVERSATION_RETURNED`] and attaches it again.
//! A session is never stopped by moving; only closing its conversation stops it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use gd_protocol::{CommandError, CommandErrorKind, Event, SessionInfo};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter, Manager, Runtime, State, WebviewUrl, WebviewWindowBuilder};

use crate::single_instance::MAIN_WINDOW;
use crate::state::AppState;

/// Event sent to the main window when a conversation window closed: attach its session again.
/// Payload [`ConversationReturned`].
pub const CONVERSATION_RETURNED: &str = "conversation-returned";

/// The label prefix of conversation windows (the capability grants `conversation-*`).
pub const CONVERSATION_WINDOW_PREFIX: &str = "conversation-";

/// Payload of [`CONVERSATION_RETURNED`]; mirrored in `ui/src/api.ts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationReturned {
    pub session_id: String,
}

/// Which session each conversation window hosts, by window label.
#[derive(Debug, Default)]
pub struct ConversationWindows {
    hosted: Mutex<HashMap<String, String>>,
    next: AtomicU32,
}

impl ConversationWindows {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.hosted.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Opens a window of its own for the running session `session_id` (titled `title`); its UI
/// attaches the session. The caller (the main window) forgets the conversation without stopping
/// it.
#[tauri::command]
pub fn conversation_window<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    windows: State<'_, ConversationWindows>,
    session_id: String,
    title: String,
) -> Result<(), CommandError> {
    if !state.sessions.is_running(&session_id) {
        return Err(CommandError::new(
            CommandErrorKind::UnknownSession,
            format!("No running session {session_id}"),
        ));
    }
    let label = format!(
        "{CONVERSATION_WINDOW_PREFIX}{}",
        windows.next.fetch_add(1, Ordering::Relaxed) + 1
    );
    let url = format!("index.html?attach={}", urlencode(&session_id));
    WebviewWindowBuilder::new(&app, &label, WebviewUrl::App(url.into()))
        .title(format!("{title} — Gemini Desktop"))
        .inner_size(900.0, 720.0)
        .min_inner_size(560.0, 420.0)
        .build()
        .map_err(|e| {
            CommandError::new(
                CommandErrorKind::Input,
                format!("Could not open a window: {e}"),
            )
        })?;
    windows.lock().insert(label.clone(), session_id);
    tracing::info!(%label, "moved a conversation to its own window");
    Ok(())
}

/// Sends a running session's events to this window from now on (a conversation window taking
/// its session over, or the main window taking it back) and returns what its start answered.
#[tauri::command]
pub fn attach_session(
    state: State<'_, AppState>,
    session_id: String,
    on_event: Channel<Event>,
) -> Result<SessionInfo, CommandError> {
    state.sessions.attach(&session_id, on_event)
}

/// A conversation window's "Move back": it closes, and its conversation goes back to the main
/// window ([`on_destroyed`]). The main window cannot be closed this way.
#[tauri::command]
pub fn close_conversation_window<R: Runtime>(
    window: tauri::WebviewWindow<R>,
) -> Result<(), CommandError> {
    if !window.label().starts_with(CONVERSATION_WINDOW_PREFIX) {
        return Err(CommandError::new(
            CommandErrorKind::Input,
            "Only a conversation's own window moves back.",
        ));
    }
    window.destroy().map_err(|e| {
        CommandError::new(
            CommandErrorKind::Input,
            format!("Could not close the window: {e}"),
        )
    })
}

/// A window closed: a conversation window hands its session back to the main window.
pub fn on_destroyed<R: Runtime>(app: &AppHandle<R>, label: &str) {
    if !label.starts_with(CONVERSATION_WINDOW_PREFIX) {
        return;
    }
    let Some(session_id) = app.state::<ConversationWindows>().lock().remove(label) else {
        return;
    };
    if !app.state::<AppState>().sessions.is_running(&session_id) {
        return;
    }
    tracing::info!(%label, "a conversation window closed: its conversation goes back");
    if let Err(error) = app.emit_to(
        MAIN_WINDOW,
        CONVERSATION_RETURNED,
        ConversationReturned { session_id },
    ) {
        tracing::warn!(%error, "could not hand the conversation back to the main window");
    }
}

/// Percent-encodes what is not unreserved in a URL query value (session ids are UUIDs, but
/// a resumed Gemini CLI session's id is whatever its file said).
fn urlencode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_query_safe() {
        assert_eq!(urlencode("3f2a-9b_x.~"), "3f2a-9b_x.~");
        assert_eq!(urlencode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
    }

    #[test]
    fn the_returned_payload_is_camel_case() {
        assert_eq!(
            serde_json::to_value(ConversationReturned {
                session_id: "s1".into()
            })
            .unwrap(),
            serde_json::json!({"sessionId": "s1"})
        );
    }
}

/// The app's theme for what GTK draws itself (a `<select>`'s drop-down list, scroll bars, the
/// title bar), which no stylesheet reaches: `"light"` or `"dark"` as `ui.theme` says, none to
/// follow the system again. On Linux the theme is the whole app's, every window's.
#[tauri::command]
pub fn set_window_theme<R: Runtime>(
    window: tauri::WebviewWindow<R>,
    theme: Option<String>,
) -> Result<(), CommandError> {
    let theme = match theme.as_deref() {
        None => None,
        Some("light") => Some(tauri::Theme::Light),
        Some("dark") => Some(tauri::Theme::Dark),
        Some(other) => {
            return Err(CommandError::new(
                CommandErrorKind::Input,
                format!("Unknown theme {other:?}: use \"light\" or \"dark\"."),
            ));
        }
    };
    window.set_theme(theme).map_err(|e| {
        CommandError::new(
            CommandErrorKind::Input,
            format!("Could not set the window's theme: {e}"),
        )
    })
}
