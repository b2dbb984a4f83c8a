//! Servers the user turned off, persisted where Gemini CLI 0.61 keeps them
//! (`gemini mcp disable NAME`): `~/.gemini/mcp-server-enablement.json`,
//! `{"<name, trimmed and lower-cased>": {"enabled": false}}`. The user's
//! settings.json is never rewritten; entries for other servers and unknown
//! keys in the file are kept as they are.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::names::normalize_server_id;

pub const ENABLEMENT_FILE: &str = "mcp-server-enablement.json";

/// The enablement file under a home directory.
pub fn enablement_file(home: &Path) -> PathBuf {
    home.join(".gemini").join(ENABLEMENT_FILE)
}

#[derive(Debug, Clone)]
pub struct Enablement {
    file: Option<PathBuf>,
}

impl Enablement {
    /// `None` keeps nothing (tests, no home directory).
    pub fn new(file: Option<PathBuf>) -> Self {
        Self { file }
    }

    fn read(&self) -> Map<String, Value> {
        let Some(file) = &self.file else {
            return Map::new();
        };
        match std::fs::read_to_string(file) {
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(map)) => map,
                _ => {
                    tracing::warn!(file = %file.display(), "the MCP enablement file is not a JSON object; ignored");
                    Map::new()
                }
            },
            Err(_) => Map::new(),
        }
    }

    /// Whether the user turned `name` off.
    pub fn is_disabled(&self, name: &str) -> bool {
        self.read()
            .get(&normalize_server_id(name))
            .and_then(|state| state.get("enabled"))
            .and_then(Value::as_bool)
            == Some(false)
    }

    /// Records the user's choice (enabled servers are simply not listed).
    pub fn set_enabled(&self, name: &str, enabled: bool) -> std::io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut map = self.read();
        let id = normalize_server_id(name);
        if enabled {
            if map.remove(&id).is_none() {
                return Ok(());
            }
        } else {
            map.insert(id, json!({"enabled": false}));
        }
        let text = serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default();
        gd_settings::write::atomic_write(file, text.as_bytes(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_other_entries() {
        let dir = tempfile::tempdir().unwrap();
        let file = enablement_file(dir.path());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            r#"{"other": {"enabled": false}, "x": {"enabled": true}}"#,
        )
        .unwrap();
        let e = Enablement::new(Some(file.clone()));
        assert!(e.is_disabled("other") && !e.is_disabled("Tiny"));
        e.set_enabled("Tiny", false).unwrap();
        assert!(e.is_disabled("tiny"));
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(saved["tiny"], json!({"enabled": false}));
        assert_eq!(saved["other"], json!({"enabled": false}));
        e.set_enabled("tiny", true).unwrap();
        assert!(!e.is_disabled("tiny"));
        assert!(Enablement::new(None).set_enabled("a", false).is_ok());
    }
}
