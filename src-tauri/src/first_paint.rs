//! The window is shown once there is something to see. It is created hidden
//! (`"visible": false` in `tauri.conf.json`), so the user never sees the blank
//! frame WebKit shows while the UI's script loads; the UI calls [`ui_ready`]
//! once its first frame with the header is laid out, and the window appears
//! with content. If that report never comes (a broken UI build, a webview
//! that does not run scripts), [`SHOW_TIMEOUT`] after start the window is
//! shown anyway, so the app can never stay invisible.
//!
//! The window-state plugin restores size and position but not visibility
//! (see `lib.rs`), else it would show the window before the UI is ready.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{AppHandle, Manager, Runtime};

use crate::single_instance::MAIN_WINDOW;

/// The longest the window stays hidden after start.
pub const SHOW_TIMEOUT: Duration = Duration::from_secs(3);

/// Whether the main window was shown (managed state: shown once).
#[derive(Debug, Default)]
pub struct FirstPaint {
    shown: AtomicBool,
}

/// Shows and focuses the main window, the first time only; `why` is logged
/// (`first paint` or `timeout`), which the end-to-end test reads.
pub fn show<R: Runtime>(app: &AppHandle<R>, why: &str) {
    let Some(state) = app.try_state::<FirstPaint>() else {
        return;
    };
    let Some(window) = app.get_webview_window(MAIN_WINDOW) else {
        tracing::warn!("no main window to show");
        return;
    };
    if state.shown.swap(true, Ordering::SeqCst) {
        return;
    }
    if let Err(error) = window.show() {
        tracing::warn!(%error, "could not show the window");
    }
    let _ = window.set_focus();
    tracing::info!(why, "window shown");
}

/// Shows the window after [`SHOW_TIMEOUT`] unless the UI did first.
pub fn arm_timeout<R: Runtime>(app: &AppHandle<R>) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SHOW_TIMEOUT).await;
        show(&app, "timeout");
    });
}

/// The UI painted its first frame (header rendered): show the window.
#[tauri::command]
pub fn ui_ready<R: Runtime>(app: AppHandle<R>) {
    show(&app, "first paint");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a mock runtime: the hidden window is shown by the UI's report, once; the
    /// timeout's later call changes nothing.
    #[test]
    fn the_ui_report_shows_the_window_once() {
        let app = tauri::test::mock_builder()
            .manage(FirstPaint::default())
            .build(tauri::test::mock_context(tauri::test::noop_assets()))
            .unwrap();
        let _window = tauri::WebviewWindowBuilder::new(&app, MAIN_WINDOW, Default::default())
            .visible(false)
            .build()
            .unwrap();
        let shown = || app.state::<FirstPaint>().shown.load(Ordering::SeqCst);
        assert!(!shown());
        ui_ready(app.handle().clone());
        assert!(shown());
        show(app.handle(), "timeout");
        assert!(shown());
    }

    #[test]
    fn without_the_state_or_the_window_nothing_happens() {
        let app = tauri::test::mock_builder()
            .build(tauri::test::mock_context(tauri::test::noop_assets()))
            .unwrap();
        show(app.handle(), "first paint");
        let app = tauri::test::mock_builder()
            .manage(FirstPaint::default())
            .build(tauri::test::mock_context(tauri::test::noop_assets()))
            .unwrap();
        show(app.handle(), "first paint");
        // No window yet: not counted as shown, so the real window still will be.
        assert!(!app.state::<FirstPaint>().shown.load(Ordering::SeqCst));
    }
}
