//! `/skills enable|disable` and `gemini-desktop-cli skills enable|disable`:
//! the skill's name added to or removed from `skills.disabled` in the
//! user's or the workspace's settings.json (comments and the rest of the
//! file kept), as 0.61's `--scope user|workspace`.

use std::path::{Path, PathBuf};

use gd_protocol::SettingsScope;
use gd_settings::{jsonc, layers, write::write_setting};
use serde_json::Value;

/// The settings file of `scope`.
pub fn settings_file(scope: SettingsScope, home: &Path, workspace: &Path) -> PathBuf {
    match scope {
        SettingsScope::User => layers::user_settings_path(home),
        SettingsScope::Workspace => layers::workspace_settings_path(workspace),
    }
}

/// `skills.disabled` of one settings file as written (empty when the file
/// or the key is missing).
pub fn disabled_in(file: &Path) -> Result<Vec<String>, String> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("Cannot read {}: {e}", file.display())),
    };
    let clean = jsonc::strip_trailing_commas(&jsonc::strip_comments(&text));
    let value: Value = serde_json::from_str(&clean)
        .map_err(|e| format!("{} is not valid JSON: {e}", file.display()))?;
    Ok(value
        .pointer("/skills/disabled")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default())
}

/// Adds (`enabled: false`) or removes `name` in the file's
/// `skills.disabled`. Returns whether the file changed.
pub fn set_enabled(file: &Path, name: &str, enabled: bool) -> Result<bool, String> {
    let mut disabled = disabled_in(file)?;
    let present = disabled.iter().any(|n| n.eq_ignore_ascii_case(name));
    match (enabled, present) {
        (true, true) => disabled.retain(|n| !n.eq_ignore_ascii_case(name)),
        (false, false) => disabled.push(name.to_owned()),
        _ => return Ok(false),
    }
    let value = Value::from(disabled);
    write_setting(file, &["skills", "disabled"], Some(&value))
        .map_err(|e| format!("Cannot write {}: {e}", file.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabling_and_enabling_edits_the_list_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, "{\n  // mine\n  \"model\": {\"name\": \"x\"},\n}\n").unwrap();
        assert!(set_enabled(&file, "a-skill", false).unwrap());
        assert!(
            !set_enabled(&file, "A-SKILL", false).unwrap(),
            "already disabled"
        );
        assert_eq!(disabled_in(&file).unwrap(), ["a-skill"]);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("// mine") && text.contains("\"name\": \"x\""),
            "{text}"
        );
        assert!(set_enabled(&file, "a-skill", true).unwrap());
        assert!(disabled_in(&file).unwrap().is_empty());
    }
}
