//! Calling the user back: a desktop notification when a conversation needs them (an approval,
//! a finished or failed turn while they look elsewhere), the window's urgency hint and its
//! launcher badge. The UI decides *whether* to call (the setting, which conversation is shown,
//! window focus); this module only delivers, and reports a click on a notification back to the
//! window as [`ATTENTION_OPEN`] so the UI shows that conversation.
//!
//! On Linux the notification goes to the freedesktop notification service through notify-rust
//! directly (what tauri-plugin-notification itself uses there), because only that API lets us
//! wait for the notification's default action, i.e. the click that must open the conversation.
//! `GEMINI_DESKTOP_NOTIFY_LOG` names a file each notification is also appended to as a JSON line:
//! the end-to-end tests read what was sent there (a test hook, not a mock: the real delivery is
//! attempted as well).

use std::io::Write;
use std::path::PathBuf;

use gd_protocol::CommandError;
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Emitter, Manager, Runtime, UserAttentionType, WebviewWindow};

use crate::single_instance::{MAIN_WINDOW, focus_main_window};

/// Event sent to the main window when the user clicked a notification; payload
/// [`AttentionOpen`].
pub const ATTENTION_OPEN: &str = "attention-open";

/// Environment variable naming the file every notification is appended to (tests).
pub const NOTIFY_LOG_ENV: &str = "GEMINI_DESKTOP_NOTIFY_LOG";

/// Payload of [`ATTENTION_OPEN`]; mirrored in `ui/src/api.ts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttentionOpen {
    /// The UI's key of the conversation the notification was about.
    pub conversation: u32,
}

/// One notification as the UI asks for it (and as the log records it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct AttentionRequest {
    /// The UI's key of the conversation (given back on a click).
    pub conversation: u32,
    /// What happened: `approval`, `finished` or `failed`.
    pub reason: String,
    pub title: String,
    pub body: String,
}

/// Tells the user that a conversation needs them: a notification (clicking it opens the
/// conversation), the window's urgency hint and, where the desktop shows one, the launcher
/// badge with `pending` (the approvals waiting in all conversations). A notification service
/// that is missing or refuses is logged, not an error: the hint and the sidebar still say it.
///
/// Everything is about the window that asks (the main window, or a conversation's own window):
/// its urgency hint, and a click brings that window to the front.
#[tauri::command]
pub fn attention_notify<R: Runtime>(
    app: AppHandle<R>,
    window: WebviewWindow<R>,
    request: AttentionRequest,
    pending: u32,
) -> Result<(), CommandError> {
    log_request(&request);
    if let Err(error) = window.request_user_attention(Some(UserAttentionType::Informational)) {
        tracing::debug!(%error, "no urgency hint");
    }
    set_badge(&window, pending);
    show(app, window.label().to_owned(), request);
    Ok(())
}

/// The user is back in the window: the urgency hint goes; the badge shows what still waits.
#[tauri::command]
pub fn attention_clear<R: Runtime>(
    window: WebviewWindow<R>,
    pending: u32,
) -> Result<(), CommandError> {
    if let Err(error) = window.request_user_attention(None) {
        tracing::debug!(%error, "could not clear the urgency hint");
    }
    set_badge(&window, pending);
    Ok(())
}

fn set_badge<R: Runtime>(window: &WebviewWindow<R>, pending: u32) {
    let count = (pending > 0).then_some(i64::from(pending));
    if let Err(error) = window.set_badge_count(count) {
        tracing::debug!(%error, "no launcher badge on this desktop");
    }
}

fn log_request(request: &AttentionRequest) {
    let Some(path) = std::env::var_os(NOTIFY_LOG_ENV).map(PathBuf::from) else {
        return;
    };
    let line = match serde_json::to_string(request) {
        Ok(line) => line,
        Err(error) => {
            tracing::warn!(%error, "cannot log the notification");
            return;
        }
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| writeln!(file, "{line}"));
    if let Err(error) = written {
        tracing::warn!(%error, path = %path.display(), "cannot log the notification");
    }
}

/// Shows the notification and, on a thread of its own, waits for its click (or close).
#[cfg(target_os = "linux")]
fn show<R: Runtime>(app: AppHandle<R>, label: String, request: AttentionRequest) {
    let spawned = std::thread::Builder::new()
        .name("notification".into())
        .spawn(move || {
            let shown = notify_rust::Notification::new()
                .appname("Gemini Desktop")
                .summary(&request.title)
                .body(&request.body)
                .icon("dev.geminidesktop.gemini-desktop")
                .action("default", "Open")
                .show();
            let handle = match shown {
                Ok(handle) => handle,
                Err(error) => {
                    tracing::info!(%error, "no desktop notification (no notification service?)");
                    return;
                }
            };
            handle.wait_for_action(|action| {
                if action == "default" {
                    open(&app, &label, request.conversation);
                }
            });
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start the notification thread");
    }
}

#[cfg(not(target_os = "linux"))]
fn show<R: Runtime>(_app: AppHandle<R>, _label: String, request: AttentionRequest) {
    // Elsewhere the urgency hint (taskbar flash / dock bounce) is what we deliver for now.
    tracing::debug!(title = %request.title, "desktop notifications are Linux-only for now");
}

/// A click on a notification: its window comes to the front and shows the conversation.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn open<R: Runtime>(app: &AppHandle<R>, label: &str, conversation: u32) {
    if label == MAIN_WINDOW {
        focus_main_window(app);
    } else if let Some(window) = app.get_webview_window(label) {
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
    if let Err(error) = app.emit_to(label, ATTENTION_OPEN, AttentionOpen { conversation }) {
        tracing::warn!(%error, "could not tell the window which conversation to open");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_payload_is_what_the_ui_reads() {
        assert_eq!(
            serde_json::to_value(AttentionOpen { conversation: 3 }).unwrap(),
            serde_json::json!({"conversation": 3})
        );
    }
}
