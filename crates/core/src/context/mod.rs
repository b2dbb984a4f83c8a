//! The context the model gets about its surroundings at the start of a
//! session: date, OS, workspace directories and their folder structure.

pub mod environment;
pub mod folder_structure;

use std::path::{Path, PathBuf};

pub use environment::{session_context, session_context_for};
pub use folder_structure::folder_structure;

/// The per-project directory for the agent's temporary files:
/// `$XDG_CACHE_HOME/gemini-desktop/tmp/<folder name>` (or `~/.cache/...`).
pub fn project_temp_dir(workspace: &Path) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let name = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    cache.join("gemini-desktop").join("tmp").join(name)
}
