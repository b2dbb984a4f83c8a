//! Paths to the reference data kept in the repository under
//! `tests/fixtures/`: the peer-bench scenarios and workspace, and the
//! request bodies and outputs Gemini CLI 0.61 produced (the wire contract).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// `tests/fixtures/` of the repository.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// `tests/fixtures/peer-bench/scenarios/`.
pub fn scenarios_dir() -> PathBuf {
    fixtures_dir().join("peer-bench/scenarios")
}

/// The peer-bench workspace template (`hello.txt`, `README.md`, `src/main.rs`).
pub fn peer_workspace_dir() -> PathBuf {
    fixtures_dir().join("peer-bench/workspace")
}

/// `tests/fixtures/gemini-cli-0.61/`.
pub fn gemini_cli_fixtures_dir() -> PathBuf {
    fixtures_dir().join("gemini-cli-0.61")
}

/// A peer-bench scenario by name (`a_text`, `b_list_dir`, ...).
pub fn scenario(name: &str) -> Value {
    let path = scenarios_dir().join(format!("{name}.json"));
    crate::scenario_from_file(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

/// A Gemini CLI 0.61 fixture file, parsed as JSON.
pub fn gemini_cli_fixture(name: &str) -> Value {
    let path = gemini_cli_fixtures_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Copies the peer-bench workspace into `parent/work` and returns its
/// canonical path: the same three files Gemini CLI's fixtures were recorded on.
pub fn copy_peer_workspace(parent: &Path) -> PathBuf {
    let target = parent.join("work");
    copy_dir(&peer_workspace_dir(), &target)
        .unwrap_or_else(|e| panic!("copy the peer workspace to {}: {e}", target.display()));
    target.canonicalize().expect("the copied workspace exists")
}

/// Copies a directory tree (regular files and directories).
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
