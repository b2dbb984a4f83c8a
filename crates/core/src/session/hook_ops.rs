//! `Op::ListHooks` and `Op::SetHookEnabled` (0.61's `/hooks panel` and
//! `/hooks enable|disable <name>`): answered at once, also while a turn
//! runs; a hook turned off does not run from its next event on.
//!
//! `hooksConfig.disabled` of the user's and the workspace's settings add up
//! (0.61's union merge), so disabling writes the chosen scope's file and
//! enabling removes the name from both.

use std::path::Path;

use gd_hooks::HookRegistry;
use gd_protocol::{Event, Op, SettingsScope};
use gd_settings::write::write_setting;
use gd_settings::{jsonc, layers};
use serde_json::Value;

use crate::events::EventSink;

/// `home`: the session's home folder (its user settings live there), the
/// one its slash commands and skills use, not a fresh read of `$HOME`.
pub(super) fn take(op: Op, hooks: &HookRegistry, home: Option<&Path>, sink: &EventSink) {
    if let Op::SetHookEnabled {
        name,
        enabled,
        scope,
    } = op
    {
        match set(hooks, home, &name, enabled, scope) {
            Ok(()) => {}
            Err(message) => sink.emit(Event::Warning { message }),
        }
    }
    sink.emit(listing(hooks));
}

/// `Event::Hooks` for the registry as it is now.
pub fn listing(hooks: &HookRegistry) -> Event {
    Event::Hooks {
        hooks: hooks.infos(),
        enabled: hooks.is_enabled(),
        errors: Vec::new(),
    }
}

fn set(
    hooks: &HookRegistry,
    home: Option<&Path>,
    name: &str,
    enabled: bool,
    scope: SettingsScope,
) -> Result<(), String> {
    if !hooks
        .infos()
        .iter()
        .any(|h| h.name.as_deref() == Some(name) || h.command == name)
    {
        return Err(format!("There is no hook named \"{name}\"."));
    }
    let env = hooks.env();
    let home = home
        .ok_or_else(|| "This session has no settings folder to save the change in.".to_owned())?;
    let files = if enabled {
        vec![
            layers::workspace_settings_path(&env.cwd),
            layers::user_settings_path(home),
        ]
    } else {
        vec![match scope {
            SettingsScope::User => layers::user_settings_path(home),
            SettingsScope::Workspace => layers::workspace_settings_path(&env.cwd),
        }]
    };
    for file in files {
        set_in(&file, name, enabled)?;
    }
    hooks.set_enabled(name, enabled);
    Ok(())
}

/// Adds (`enabled: false`) or removes `name` in the file's
/// `hooksConfig.disabled`, keeping the rest of the file.
fn set_in(file: &Path, name: &str, enabled: bool) -> Result<(), String> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::from("{}"),
        Err(e) => return Err(format!("Cannot read {}: {e}", file.display())),
    };
    let clean = jsonc::strip_trailing_commas(&jsonc::strip_comments(&text));
    let value: Value = serde_json::from_str(&clean)
        .map_err(|e| format!("{} is not valid JSON: {e}", file.display()))?;
    let mut disabled: Vec<String> = value
        .pointer("/hooksConfig/disabled")
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let present = disabled.iter().any(|n| n == name);
    match (enabled, present) {
        (true, true) => disabled.retain(|n| n != name),
        (false, false) => disabled.push(name.to_owned()),
        _ => return Ok(()),
    }
    write_setting(
        file,
        &["hooksConfig", "disabled"],
        Some(&Value::from(disabled)),
    )
    .map_err(|e| format!("Cannot write {}: {e}", file.display()))
}
