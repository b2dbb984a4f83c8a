//! Where unit tests put folders that must lie outside the sandbox's own `/tmp`.

use std::path::PathBuf;

/// The test binary's folder (in the target folder), unless that is under `/tmp` (a checkout in
/// `/tmp`, as a fresh CI clone may be), which the sandbox replaces with a private one: then
/// `/var/tmp`.
pub fn visible_base() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe.parent().expect("a folder").to_path_buf();
    let real = std::fs::canonicalize(&dir).unwrap_or(dir);
    if real.starts_with("/tmp") {
        PathBuf::from("/var/tmp")
    } else {
        real
    }
}
