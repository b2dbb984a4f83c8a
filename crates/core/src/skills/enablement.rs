//! `/skills enable|disable` and `gemini-desktop-cli skills enable|disable`:
//! the skill's name added to or removed from `skills.disabled` in the
//! user's or the workspace's settings.json (comments and the rest of the
//! file kept), as 0.61's `--scope user|workspace`.
//!
//! The lists of the two files add up (0.61's union merge), so disabling
//! writes the chosen scope's file and enabling removes the name from both:
//! a name left in either would keep the skill off ([`change`]).

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

/// Disables `name` in `scope`'s file, or enables it in both files. Returns
/// the files that changed (none: it already was as asked).
pub fn change(
    scope: SettingsScope,
    home: &Path,
    workspace: &Path,
    name: &str,
    enabled: bool,
) -> Result<Vec<PathBuf>, String> {
    let files = if enabled {
        vec![
            settings_file(SettingsScope::Workspace, home, workspace),
            settings_file(SettingsScope::User, home, workspace),
        ]
    } else {
        vec![settings_file(scope, home, workspace)]
    };
    let mut changed = Vec::new();
    for file in files {
        if set_enabled(&file, name, enabled)? {
            changed.push(file);
        }
    }
    Ok(changed)
}

/// What `change` did, in words (the CLI and `/skills` print it).
pub fn describe(name: &str, enabled: bool, changed: &[PathBuf]) -> String {
    let what = if enabled { "enabled" } else { "disabled" };
    if changed.is_empty() {
        return format!("Skill \"{name}\" is already {what}.");
    }
    let files: Vec<String> = changed.iter().map(|f| f.display().to_string()).collect();
    let how = if enabled {
        "removed from the disabled list in"
    } else {
        "added to the disabled list in"
    };
    format!("Skill \"{name}\" {what}: {how} {}.", files.join(" and "))
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

    #[test]
    fn enabling_clears_both_scopes_disabling_writes_one() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let (h, w) = (home.path(), ws.path());
        let user = settings_file(SettingsScope::User, h, w);
        let workspace = settings_file(SettingsScope::Workspace, h, w);
        assert_eq!(
            change(SettingsScope::User, h, w, "s", false).unwrap(),
            std::slice::from_ref(&user)
        );
        assert!(
            !workspace.exists(),
            "disabling for the user leaves the workspace alone"
        );
        assert_eq!(
            change(SettingsScope::Workspace, h, w, "s", false).unwrap(),
            std::slice::from_ref(&workspace)
        );
        // Enabling (whatever the scope) takes it out of both lists.
        let changed = change(SettingsScope::Workspace, h, w, "s", true).unwrap();
        assert_eq!(changed, [workspace.clone(), user.clone()]);
        assert!(disabled_in(&user).unwrap().is_empty());
        assert!(describe("s", true, &changed).contains(" and "));
        assert_eq!(
            change(SettingsScope::User, h, w, "s", true).unwrap(),
            Vec::<PathBuf>::new()
        );
        assert_eq!(describe("s", true, &[]), "Skill \"s\" is already enabled.");
    }
}
