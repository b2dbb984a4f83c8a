//! Keeps a partial restore's writes and removals inside the workspace.
//!
//! A restore writes the files of a checkpoint back by their paths. If a
//! folder on such a path became a symbolic link after the checkpoint (the
//! agent can make one with a shell command), following it would write or
//! delete a file wherever the link leads. Git refuses paths "beyond a
//! symbolic link" for the same reason; the undo snapshot taken before a
//! restore already stops there, and this check holds at the write itself.

use std::path::Path;

use crate::error::{CheckpointError, Result};

/// Refuses `path` (inside `workspace`) when a folder between the workspace
/// and the file is a symbolic link.
pub(crate) fn no_link_on_the_way(workspace: &Path, path: &Path) -> Result<()> {
    let Ok(relative) = path.strip_prefix(workspace) else {
        return Err(CheckpointError::io(
            path,
            std::io::Error::other("the path is outside the workspace"),
        ));
    };
    let mut dir = workspace.to_path_buf();
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        if components.peek().is_none() {
            break;
        }
        dir.push(component);
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(CheckpointError::io(
                path,
                std::io::Error::other(format!(
                    "{} is a symbolic link; a restore does not write through it",
                    dir.display()
                )),
            ));
        }
    }
    Ok(())
}
