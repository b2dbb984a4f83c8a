//! Application state shared by the Tauri commands.

use std::path::{Path, PathBuf};
use std::sync::RwLock;

use crate::args::{AppArgs, ArgsError, canonical_dir};
use crate::picker::Picker;
use crate::sessions::Sessions;
use crate::signin::SignIn;

/// State managed by Tauri (`app.manage`) and read by the commands through `State<AppState>`.
///
/// Everything the commands share lives here; long-lived services (such as agent sessions) are
/// added as fields with interior mutability.
#[derive(Debug)]
pub struct AppState {
    /// The folder the window works on; changed by `open_workspace`.
    workspace: RwLock<Option<PathBuf>>,
    /// The agent sessions this window runs.
    pub sessions: Sessions,
    /// Sign-in: the auth manager and the Google sign-in in progress.
    pub signin: SignIn,
    /// The file picker's index of the workspace (created on first use).
    pub picker: Picker,
}

impl AppState {
    pub fn new(launch: AppArgs) -> Self {
        Self {
            workspace: RwLock::new(launch.workspace),
            sessions: Sessions::default(),
            signin: SignIn::default(),
            picker: Picker::default(),
        }
    }

    /// The workspace folder the app works on, if any.
    pub fn workspace(&self) -> Option<PathBuf> {
        self.workspace
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Switches to another folder (canonicalised; must be a directory).
    pub fn set_workspace(&self, path: &Path) -> Result<PathBuf, ArgsError> {
        let canonical = canonical_dir(path)?;
        *self.workspace.write().unwrap_or_else(|e| e.into_inner()) = Some(canonical.clone());
        Ok(canonical)
    }
}
