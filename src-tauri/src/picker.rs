//! The file-tree context picker's commands (gd-workspace-index behind IPC).
//!
//! The index of the current workspace (plus `context.includeDirectories`)
//! is created on first use, built in the background and kept current by a
//! file watcher; opening another workspace replaces it. Picked files reach
//! the model the way typed references do: the UI adds `@path` tokens to the
//! prompt text, which the core expands.
//!
//! Commands: `picker_open` (roots, starts the index), `picker_list_dir` (one
//! folder level), `picker_search` (fuzzy results streamed on a Channel),
//! `picker_estimate` (tokens of a selection), `picker_watch` (index events
//! on a Channel).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gd_protocol::{CommandError, CommandErrorKind};
use gd_workspace_index::{
    Entry, FileIndex, Filtering, IndexEvent, SearchUpdate, SelectionEstimate, Watcher,
    estimate_selection, list_dir,
};
use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;

use crate::state::AppState;

/// Results per search update: more than a picker list shows.
const MAX_RESULTS: usize = 200;

/// The picker's index for the current workspace.
#[derive(Default)]
pub struct Picker {
    active: Mutex<Option<Arc<Active>>>,
}

impl std::fmt::Debug for Picker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Picker").finish_non_exhaustive()
    }
}

struct Active {
    workspace: PathBuf,
    index: FileIndex,
    /// Live updates; `None` if the watch could not start (e.g. inotify
    /// limits), in which case the index is only as fresh as its build.
    _watcher: Option<Watcher>,
}

impl Picker {
    /// The index of `workspace`, created (and its build started) on first
    /// use or when the workspace changed.
    fn for_workspace(&self, workspace: &Path) -> Arc<Active> {
        let mut active = self.active.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(current) = active.as_ref().filter(|a| a.workspace == workspace) {
            return current.clone();
        }
        let home = gd_core::launch::home_dir();
        let (roots, filtering) = picker_config(workspace, home);
        let index = FileIndex::new(roots, filtering);
        index.start_build();
        let watcher = match Watcher::new(&index) {
            Ok(watcher) => Some(watcher),
            Err(error) => {
                tracing::warn!(%error, "the file picker will not see live changes");
                None
            }
        };
        let created = Arc::new(Active {
            workspace: workspace.to_path_buf(),
            index,
            _watcher: watcher,
        });
        *active = Some(created.clone());
        created
    }
}

/// The roots (workspace first, then include directories that exist) and
/// the ignore settings, read from the settings layers like a session does.
fn picker_config(workspace: &Path, home: Option<PathBuf>) -> (Vec<PathBuf>, Filtering) {
    let mut roots = vec![workspace.to_path_buf()];
    let mut filtering = Filtering::default();
    // An untrusted folder's own settings (and so its include directories)
    // are not read, as for a session.
    match gd_core::launch::load_workspace(
        workspace,
        home.as_deref(),
        gd_core::launch::TrustOverride::Decide,
    ) {
        Ok(loaded) => {
            let context = &loaded.settings().context;
            for dir in &context.include_directories {
                // As the session reads them (`~` is the home directory).
                match gd_core::tools::files::existing_dir(workspace, dir, home.as_deref()) {
                    Some(path) if !roots.contains(&path) => roots.push(path),
                    _ => {}
                }
            }
            filtering.respect_git_ignore =
                context.file_filtering.respect_git_ignore.unwrap_or(true);
            filtering.respect_gemini_ignore =
                context.file_filtering.respect_gemini_ignore.unwrap_or(true);
        }
        Err(error) => tracing::warn!(%error, "file picker: settings unreadable, using defaults"),
    }
    (roots, filtering)
}

fn active(state: &AppState) -> Result<Arc<Active>, CommandError> {
    let workspace = state
        .workspace()
        .ok_or_else(|| CommandError::new(CommandErrorKind::NoWorkspace, "Open a folder first."))?;
    Ok(state.picker.for_workspace(&workspace))
}

fn internal(error: impl std::fmt::Display) -> CommandError {
    CommandError::new(CommandErrorKind::Input, error.to_string())
}

/// What `picker_open` returns (`PickerInfo` in ui/src/protocol).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct PickerInfo {
    /// Absolute paths of the roots; the first is the workspace.
    pub roots: Vec<String>,
    pub building: bool,
    pub files: usize,
}

/// Opens the picker: starts the index if needed and names the roots.
#[tauri::command]
pub fn picker_open(state: State<'_, AppState>) -> Result<PickerInfo, CommandError> {
    let active = active(&state)?;
    Ok(PickerInfo {
        roots: active
            .index
            .roots()
            .iter()
            .map(|r| r.to_string_lossy().into_owned())
            .collect(),
        building: active.index.is_building(),
        files: active.index.len(),
    })
}

/// One folder level of root `root` (0 = the workspace); `path` is relative
/// to it (`""` for the root).
#[tauri::command]
pub async fn picker_list_dir(
    state: State<'_, AppState>,
    root: usize,
    path: String,
    show_ignored: bool,
) -> Result<Vec<Entry>, CommandError> {
    let active = active(&state)?;
    let root_path = active
        .index
        .roots()
        .get(root)
        .cloned()
        .ok_or_else(|| CommandError::new(CommandErrorKind::Input, "No such picker root."))?;
    let filtering = active.index.filtering();
    tauri::async_runtime::spawn_blocking(move || {
        list_dir(&root_path, &path, filtering, show_ignored)
            .map_err(|e| CommandError::new(CommandErrorKind::Input, e.to_string()))
    })
    .await
    .map_err(internal)?
}

/// Fuzzy-searches the index; updates stream on `on_update` until the final
/// one (`done`). A newer search ends an older one early.
#[tauri::command]
pub async fn picker_search(
    state: State<'_, AppState>,
    query: String,
    on_update: Channel<SearchUpdate>,
) -> Result<(), CommandError> {
    let active = active(&state)?;
    tauri::async_runtime::spawn_blocking(move || {
        active
            .index
            .search(&query, MAX_RESULTS, |update| on_update.send(update).is_ok());
    })
    .await
    .map_err(internal)
}

/// Token estimate of a selection (index keys: workspace-relative paths, or
/// absolute paths inside include directories).
#[tauri::command]
pub async fn picker_estimate(
    state: State<'_, AppState>,
    paths: Vec<String>,
) -> Result<SelectionEstimate, CommandError> {
    let active = active(&state)?;
    tauri::async_runtime::spawn_blocking(move || {
        estimate_selection(active.index.roots(), &paths, active.index.filtering())
    })
    .await
    .map_err(internal)
}

/// Streams index events (built, files added/removed, folders changed) on
/// `on_event` until the workspace changes or the UI drops the channel.
#[tauri::command]
pub fn picker_watch(
    state: State<'_, AppState>,
    on_event: Channel<IndexEvent>,
) -> Result<(), CommandError> {
    let active = active(&state)?;
    let events = active.index.subscribe();
    drop(active);
    std::thread::Builder::new()
        .name("picker-events".into())
        .spawn(move || {
            while let Ok(event) = events.recv() {
                if on_event.send(event).is_err() {
                    break;
                }
            }
        })
        .map_err(internal)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_and_filtering_come_from_the_settings() {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().join("home");
        let ws = temp.path().join("ws");
        let shared = temp.path().join("shared");
        for dir in [&home.join(".gemini"), &ws.join(".gemini"), &shared] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(
            ws.join(".gemini/settings.json"),
            r#"{"context": {"includeDirectories": ["../shared", "../missing", "~/notes", "~"],
                "fileFiltering": {"respectGitIgnore": false}}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(home.join("notes")).unwrap();
        let ws = ws.canonicalize().unwrap();
        // Folder trust is on: a workspace's settings are read once it is trusted.
        std::fs::write(
            home.join(".gemini/trustedFolders.json"),
            serde_json::json!({ ws.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
        )
        .unwrap();
        let (roots, filtering) = picker_config(&ws, Some(home.clone()));
        assert_eq!(
            roots,
            [
                ws.clone(),
                shared.canonicalize().unwrap(),
                home.join("notes").canonicalize().unwrap(),
                home.canonicalize().unwrap()
            ]
        );
        assert!(!filtering.respect_git_ignore && filtering.respect_gemini_ignore);

        // Broken settings: the workspace alone, default rules.
        std::fs::write(ws.join(".gemini/settings.json"), "{ not json").unwrap();
        let (roots, filtering) = picker_config(&ws, Some(home));
        assert_eq!(roots, [ws]);
        assert_eq!(filtering, Filtering::default());
    }
}
