//! Paths to the reference data kept in the repository under
//! `tests/fixtures/`: the peer-bench scenarios and workspace, and the
//! request bodies and outputs Gemini CLI 0.61 produced (the wire contract).

use std::path::PathBuf;

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
