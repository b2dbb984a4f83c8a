//! One app instance per user session (`tauri-plugin-single-instance`).
//!
//! Launching Gemini Desktop while it already runs does not open a second window: the new
//! process hands its command line and working directory to the running one (over D-Bus on
//! Linux) and exits with status 0. The running instance then:
//! 1. if the new command line names a folder (`gemini-desktop ~/other-project`), opens it as a
//!    new conversation: the window's folder becomes that one (as `open_workspace` does), the
//!    running conversations go on, and the window receives the [`WORKSPACE_CHANGED`] event so
//!    the UI opens and shows a new conversation there (also when it names the same folder
//!    again: a second conversation on it);
//! 2. brings its window to the front (un-minimise, show, focus).
//!
//! A launch without a folder (from a desktop menu, whose working directory is usually `$HOME`)
//! only focuses the window: unlike the first launch, the working directory is not taken as the
//! workspace, so such a launch never replaces the folder the user is working on. A folder that
//! does not exist or is not a directory is refused by the second process itself, before it
//! contacts the first one (see `AppArgs::from_env`).
//!
//! Without a D-Bus session bus the plugin cannot find other instances and every launch opens its
//! own window.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager, Runtime};

use crate::args::{AppArgs, ArgsError};
use crate::state::AppState;

/// Label of the app's window (`tauri.conf.json`).
pub const MAIN_WINDOW: &str = "main";

/// Event sent to the main window when another launch names a folder: open a new conversation
/// there. Payload: [`WorkspaceChanged`], i.e. `{ "workspace": "/abs/path" }`.
/// It is not sent for the UI's own `open_workspace` calls, whose result already says it.
pub const WORKSPACE_CHANGED: &str = "workspace-changed";

/// Payload of [`WORKSPACE_CHANGED`]; mirrored in `ui/src/api.ts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceChanged {
    /// Canonical absolute path of the new workspace folder.
    pub workspace: String,
}

/// The folder a second launch asks for: its first positional argument, resolved against its
/// working directory. `None` when it named none. `argv` is the full command line, program
/// name first (as the plugin passes it).
pub fn requested_workspace(argv: &[String], cwd: &str) -> Result<Option<PathBuf>, ArgsError> {
    let Some(path) = AppArgs::first_positional(argv.iter().skip(1).map(OsString::from)) else {
        return Ok(None);
    };
    let cwd = (!cwd.is_empty()).then(|| Path::new(cwd));
    AppArgs::resolve_workspace(&path, cwd).map(Some)
}

/// What the running instance does when another launch hands over its command line.
pub fn on_second_launch<R: Runtime>(app: &AppHandle<R>, argv: Vec<String>, cwd: String) {
    tracing::info!(?argv, %cwd, "another launch handed over its command line");
    match requested_workspace(&argv, &cwd) {
        Ok(Some(folder)) => switch_workspace(app, &folder),
        Ok(None) => {}
        Err(error) => tracing::warn!(%error, "ignoring the folder of the other launch"),
    }
    focus_main_window(app);
}

/// Makes `folder` the window's folder and tells the window to open a conversation there; the
/// running sessions go on.
fn switch_workspace<R: Runtime>(app: &AppHandle<R>, folder: &Path) {
    let state = app.state::<AppState>();
    let workspace = match state.set_workspace(folder) {
        Ok(workspace) => workspace,
        Err(error) => {
            tracing::warn!(%error, "cannot switch the workspace");
            return;
        }
    };
    tracing::info!(workspace = %workspace.display(), "a new conversation on the folder");
    let payload = WorkspaceChanged {
        workspace: workspace.to_string_lossy().into_owned(),
    };
    if let Err(error) = app.emit_to(MAIN_WINDOW, WORKSPACE_CHANGED, payload) {
        tracing::warn!(%error, "could not tell the window about the new workspace");
    }
}

/// Brings the window to the front (un-minimise, show, focus).
pub(crate) fn focus_main_window<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window(MAIN_WINDOW) else {
        tracing::warn!("no main window to focus");
        return;
    };
    for (what, result) in [
        ("unminimize", window.unminimize()),
        ("show", window.show()),
        ("focus", window.set_focus()),
    ] {
        if let Err(error) = result {
            tracing::debug!(%error, "{what} failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(list: &[&str]) -> Vec<String> {
        std::iter::once("gemini-desktop")
            .chain(list.iter().copied())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn a_launch_without_a_folder_only_focuses() {
        let cwd = tempfile::tempdir().unwrap();
        let cwd = cwd.path().to_str().unwrap();
        assert_eq!(requested_workspace(&argv(&[]), cwd).unwrap(), None);
        assert_eq!(
            requested_workspace(&argv(&["--some-launcher-flag"]), cwd).unwrap(),
            None
        );
    }

    #[test]
    fn a_relative_folder_is_resolved_against_the_other_launchs_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("other project")).unwrap();
        let got = requested_workspace(
            &argv(&["--flag", "other project"]),
            dir.path().to_str().unwrap(),
        )
        .unwrap();
        assert_eq!(
            got,
            Some(dir.path().join("other project").canonicalize().unwrap())
        );
        // Absolute paths do not depend on the directory.
        let absolute = dir.path().join("other project");
        let got = requested_workspace(&argv(&[absolute.to_str().unwrap()]), "").unwrap();
        assert_eq!(got, Some(absolute.canonicalize().unwrap()));
    }

    #[test]
    fn a_bad_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file.txt");
        std::fs::write(&file, "x").unwrap();
        assert!(requested_workspace(&argv(&[file.to_str().unwrap()]), "").is_err());
        assert!(requested_workspace(&argv(&["missing"]), dir.path().to_str().unwrap()).is_err());
    }

    #[test]
    fn the_event_payload_is_camel_case_json() {
        let payload = WorkspaceChanged {
            workspace: "/w".into(),
        };
        assert_eq!(
            serde_json::to_value(payload).unwrap(),
            serde_json::json!({"workspace": "/w"})
        );
    }

    /// The whole callback against a mock runtime: state, sessions and the emitted event.
    #[test]
    fn a_second_launch_with_a_folder_asks_the_window_for_a_conversation_there() {
        use std::sync::{Arc, Mutex};
        use tauri::Listener;

        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        let app = tauri::test::mock_builder()
            .manage(AppState::new(AppArgs {
                workspace: Some(first.path().canonicalize().unwrap()),
            }))
            .build(tauri::test::mock_context(tauri::test::noop_assets()))
            .unwrap();
        let _window = tauri::WebviewWindowBuilder::new(&app, MAIN_WINDOW, Default::default())
            .build()
            .unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        app.listen_any(WORKSPACE_CHANGED, move |event| {
            sink.lock().unwrap().push(event.payload().to_owned());
        });

        let handle = app.handle().clone();
        // No folder: focus only.
        on_second_launch(&handle, argv(&[]), second.path().to_str().unwrap().into());
        assert!(seen.lock().unwrap().is_empty());
        assert_eq!(
            app.state::<AppState>().workspace(),
            Some(first.path().canonicalize().unwrap())
        );
        // The same folder again: a second conversation on it.
        on_second_launch(
            &handle,
            argv(&[first.path().to_str().unwrap()]),
            String::new(),
        );
        on_second_launch(
            &handle,
            argv(&[second.path().to_str().unwrap()]),
            String::new(),
        );
        let expected = second.path().canonicalize().unwrap();
        assert_eq!(app.state::<AppState>().workspace(), Some(expected.clone()));
        let payloads: Vec<serde_json::Value> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|p| serde_json::from_str(p).unwrap())
            .collect();
        let first = first.path().canonicalize().unwrap();
        assert_eq!(
            payloads,
            [
                serde_json::json!({"workspace": first.to_str().unwrap()}),
                serde_json::json!({"workspace": expected.to_str().unwrap()})
            ]
        );
    }
}
