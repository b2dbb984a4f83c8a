//! The checkpoint root is owner-only.
//!
//! Shadow repositories hold a copy of every workspace file the agent snapshotted; git creates
//! them with the umask (0755 folders, 0644 objects). A 0700 root keeps all of it from other
//! accounts without touching git's own modes; a root made before this rule is tightened when
//! a repository under it opens.

use std::io;
use std::path::Path;

/// Creates `root` (0700, with missing parents) or removes group/other access from it.
pub(crate) fn ensure_private_root(root: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        if !root.is_dir() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(root)?;
        }
        let mode = std::fs::metadata(root)?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::info!(root = %root.display(), "making the checkpoint folder private (0700)");
            std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(root)
}
