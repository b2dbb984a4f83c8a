//! What a frontend's settings screen and trust prompt need: the settings
//! layers with the value of each common key and the layer it comes from,
//! writing one key into the user or workspace file, and the workspace's
//! trust (what it would load, and recording the user's decision).
//!
//! Everything here reads the files afresh, so the screen always shows what
//! is on disk, including a file the user just fixed by hand.

use std::path::{Path, PathBuf};

use gd_mcp::enablement::{Enablement, enablement_file};
use gd_protocol::{
    McpServerSetting, SettingChoice, SettingEffect, SettingField, SettingKind, SettingOrigin,
    SettingValue, SettingsLayer, SettingsLayerInfo, SettingsScope, SettingsView, TrustDiscovery,
    TrustInfo, TrustLevel, TrustSource,
};
use gd_settings::layers::{
    LoadOptions, layer_paths, lookup, user_settings_path, workspace_settings_path,
};
use gd_settings::merge::merge_into;
use gd_settings::trust::{self, TrustedFolders};
use gd_settings::write::{WriteError, key_path, write_setting};
use gd_settings::{LayerKind, WorkspaceTrust, parse_file};
use serde_json::Value;

use crate::launch::{Env, TrustOverride, load_workspace};

/// One field of the settings screen, as written in [`FIELDS`].
struct Field {
    key: &'static str,
    label: &'static str,
    help: &'static str,
    kind: SettingKind,
    choices: &'static [(&'static str, &'static str)],
    placeholder: Option<&'static str>,
    applies: &'static str,
    effect: SettingEffect,
}

/// The settings the screen shows, in its order: the one description of each (the UI renders
/// the screen from [`fields`]; [`default_value`] and [`check_value`] know the same keys).
const FIELDS: &[Field] = &[
    Field {
        key: "model.name",
        label: "Model",
        help: "The model sessions use (unless GEMINI_MODEL is set).",
        kind: SettingKind::Text,
        choices: &[],
        placeholder: Some("gemini-2.5-pro"),
        applies: "The session reloads with it; the conversation continues.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "general.defaultApprovalMode",
        label: "Default approval mode",
        help: "Whether edits ask first. YOLO can only be chosen for a session, in the header.",
        kind: SettingKind::Select,
        choices: &[
            ("default", "Ask first (default)"),
            ("auto_edit", "Auto-edit"),
            ("plan", "Plan (research and plan before any change)"),
        ],
        placeholder: None,
        applies: "Applies to this session now.",
        effect: SettingEffect::Session,
    },
    Field {
        key: "ui.theme",
        label: "Theme",
        help: "Light, dark, or follow the system.",
        kind: SettingKind::Select,
        choices: &[("system", "System"), ("light", "Light"), ("dark", "Dark")],
        placeholder: None,
        applies: "Applies at once.",
        effect: SettingEffect::Window,
    },
    Field {
        key: "ui.desktopNotifications",
        label: "Notifications",
        help: "When a conversation needs you while you look elsewhere: a desktop notification \
               (click it to open the conversation). Gemini Desktop only.",
        kind: SettingKind::Select,
        choices: &[
            ("all", "Approvals, finished and failed turns"),
            ("approvals", "Approvals only"),
            ("off", "Off"),
        ],
        placeholder: None,
        applies: "Applies at once.",
        effect: SettingEffect::Window,
    },
    Field {
        key: "update.manifestUrl",
        label: "Update manifest URL",
        help: "Where Gemini Desktop asks whether a newer, signed version exists (a Tauri update \
               manifest, https). Empty: it never asks. User settings only: a folder cannot set \
               it. Gemini Desktop only.",
        kind: SettingKind::Text,
        choices: &[],
        placeholder: Some("https://example.org/gemini-desktop/latest.json"),
        applies: "Checked at once, then at every start.",
        effect: SettingEffect::Window,
    },
    Field {
        key: "context.fileName",
        label: "Context file names",
        help: "The instruction files read into the system prompt, comma-separated.",
        kind: SettingKind::Names,
        choices: &[],
        placeholder: Some("GEMINI.md, AGENTS.md"),
        applies: "The session reloads and reads them.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "context.includeDirectories",
        label: "Include directories",
        help: "More folders the agent may work in, one per line (relative to the workspace or \
               absolute).",
        kind: SettingKind::Lines,
        choices: &[],
        placeholder: Some("../shared-lib"),
        applies: "The session reloads with them.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "general.checkpointing.enabled",
        label: "Checkpoints before edits",
        help: "Snapshot the files before each edit, so it can be restored.",
        kind: SettingKind::Toggle,
        choices: &[],
        placeholder: None,
        applies: "The session reloads with it.",
        effect: SettingEffect::Reload,
    },
    // Gemini CLI 0.61 keys a user would want to change (issue 18): same
    // meanings and defaults as there (README: "Settings: Gemini CLI 0.61 keys").
    Field {
        key: "general.maxAttempts",
        label: "Retry attempts",
        help: "Attempts per model request when the service fails or is busy, the first included \
               (1 to 10).",
        kind: SettingKind::Number,
        choices: &[],
        placeholder: Some("10"),
        applies: "The session reloads with it.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "tools.truncateToolOutputThreshold",
        label: "Tool output sent to the model",
        help: "Characters of a tool's output the model gets; the whole output is saved to a file \
               it can read. 0 sends everything.",
        kind: SettingKind::Number,
        choices: &[],
        placeholder: Some("40000"),
        applies: "The session reloads with it.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "tools.shell.inactivityTimeout",
        label: "Stop silent commands after (seconds)",
        help: "A shell command with no output for this long is stopped. 0 waits forever.",
        kind: SettingKind::Number,
        choices: &[],
        placeholder: Some("300"),
        applies: "The session reloads with it.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "tools.allowed",
        label: "Tools that run without asking",
        help: "One tool name per line; run_shell_command(git status) allows that command only \
               (other shell commands are then refused).",
        kind: SettingKind::Lines,
        choices: &[],
        placeholder: Some("run_shell_command(git status)"),
        applies: "The session reloads with it.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "security.toolSandboxing",
        label: "Tool sandboxing",
        help: "Commands the agent runs are confined (bubblewrap): they write only in the \
               workspace and a private /tmp, cannot read your keys and credentials, and have no \
               network unless you allow it. A project's settings can turn it on, never off.",
        kind: SettingKind::Toggle,
        choices: &[],
        placeholder: None,
        applies: "The session reloads with it.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "security.disableYoloMode",
        label: "Disable YOLO mode",
        help: "YOLO (approve everything) cannot be chosen, for this app and Gemini CLI.",
        kind: SettingKind::Toggle,
        choices: &[],
        placeholder: None,
        applies: "The session reloads with it.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "general.sessionRetention.enabled",
        label: "Delete old conversations",
        help: "Delete conversations older than the age below (the open one is kept).",
        kind: SettingKind::Toggle,
        choices: &[],
        placeholder: None,
        applies: "Applies when a conversation opens.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "general.sessionRetention.maxAge",
        label: "Delete conversations older than",
        help: "A number and a unit: h (hours), d (days), w (weeks), m (months of 30 days); at \
               least 1d.",
        kind: SettingKind::Text,
        choices: &[],
        placeholder: Some("30d"),
        applies: "Applies when a conversation opens.",
        effect: SettingEffect::Reload,
    },
    Field {
        key: "tools.legacy",
        label: "Legacy tools",
        help: "Tools Gemini CLI no longer offers, turned back on: save_memory (the model now edits \
               GEMINI.md files itself) and read_many_files. Comma-separated.",
        kind: SettingKind::Names,
        choices: &[],
        placeholder: Some("save_memory, read_many_files"),
        applies: "The session reloads with them.",
        effect: SettingEffect::Reload,
    },
];

/// The keys the settings screen shows, in its order.
pub fn common_keys() -> impl Iterator<Item = &'static str> {
    FIELDS.iter().map(|field| field.key)
}

/// The settings screen's fields, in its order (sent in every [`SettingsView`]).
pub fn fields() -> Vec<SettingField> {
    FIELDS
        .iter()
        .map(|field| SettingField {
            key: field.key.to_owned(),
            label: field.label.to_owned(),
            help: field.help.to_owned(),
            kind: field.kind,
            choices: field
                .choices
                .iter()
                .map(|(value, label)| SettingChoice {
                    value: (*value).to_owned(),
                    label: (*label).to_owned(),
                })
                .collect(),
            placeholder: field.placeholder.map(str::to_owned),
            applies: field.applies.to_owned(),
            effect: field.effect,
        })
        .collect()
}

/// Why a setting could not be written (nothing changed on disk).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsScreenError {
    /// The value is not acceptable for the key (shown next to the field).
    #[error("{0}")]
    Invalid(String),
    /// The file is broken, unwritable, or the scope is not available.
    #[error("{0}")]
    File(String),
}

impl From<WriteError> for SettingsScreenError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Invalid(e) => Self::Invalid(e.to_string()),
            other => Self::File(other.to_string()),
        }
    }
}

fn layer_of(kind: LayerKind) -> SettingsLayer {
    match kind {
        LayerKind::SystemDefaults => SettingsLayer::SystemDefaults,
        LayerKind::User => SettingsLayer::User,
        LayerKind::Workspace => SettingsLayer::Workspace,
        LayerKind::System => SettingsLayer::System,
    }
}

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The workspace's trust, or why it cannot be decided (a broken trusted
/// folders file: untrusted until fixed).
fn decide(workspace: &Path, home: Option<&Path>) -> (WorkspaceTrust, Option<String>) {
    let options = LoadOptions {
        home: home.map(Path::to_path_buf),
        workspace: workspace.to_path_buf(),
        env: &process_env,
        workspace_trusted: false,
    };
    match gd_settings::workspace_trust(&options) {
        Ok(trust) => (trust, None),
        Err(e) => {
            let mut trust = WorkspaceTrust::assumed(workspace);
            trust.trusted = Some(false);
            trust.enabled = true;
            trust.source = None;
            trust.file = trust::trusted_folders_path(&process_env, home);
            (trust, Some(e.to_string()))
        }
    }
}

/// The settings layers and the common keys' values for `workspace`.
pub fn settings_view(workspace: &Path, home: Option<&Path>) -> SettingsView {
    let (trust, _) = decide(workspace, home);
    let trusted = trust.is_trusted();
    let env = Env::load(workspace, home, trusted);
    let getter = |name: &str| env.get(name);
    let options = LoadOptions {
        home: home.map(Path::to_path_buf),
        workspace: workspace.to_path_buf(),
        env: &getter,
        workspace_trusted: trusted,
    };
    let mut layers = Vec::new();
    // (layer, its raw value, in effect)
    let mut values: Vec<(SettingsLayer, Value, bool)> = Vec::new();
    for (kind, path) in layer_paths(&options) {
        let loaded = kind != LayerKind::Workspace || trusted;
        let (exists, error) = match std::fs::read_to_string(&path) {
            Ok(text) => match parse_file(&path, &text) {
                Ok(value) => {
                    values.push((layer_of(kind), value, loaded));
                    (true, None)
                }
                Err(e) => (true, Some(e.to_string())),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (false, None),
            Err(e) => (true, Some(format!("cannot read {}: {e}", path.display()))),
        };
        layers.push(SettingsLayerInfo {
            layer: layer_of(kind),
            path: path.display().to_string(),
            exists,
            loaded: loaded && error.is_none(),
            error,
        });
    }
    let in_effect = || values.iter().filter(|(_, _, loaded)| *loaded);
    let mut merged = Value::Object(Default::default());
    for (_, value, _) in in_effect() {
        merge_into(&mut merged, value);
    }
    let of_layer = |layer: SettingsLayer, key: &[&str]| {
        values
            .iter()
            .find(|(l, _, _)| *l == layer)
            .and_then(|(_, v, _)| lookup(v, key).cloned())
    };
    let setting = |key: &str| {
        let path = key_path(key);
        let value = lookup(&merged, &path).cloned();
        let source = in_effect()
            .rfind(|(_, v, _)| lookup(v, &path).is_some())
            .map(|(l, _, _)| *l);
        let (effective, origin, env_var) = in_force(key, value.as_ref(), source, &getter);
        SettingValue {
            key: key.to_owned(),
            value,
            source,
            effective,
            origin,
            env_var,
            user: of_layer(SettingsLayer::User, &path),
            workspace: of_layer(SettingsLayer::Workspace, &path),
        }
    };
    let enablement = Enablement::new(home.map(enablement_file));
    let mut mcp_servers: Vec<McpServerSetting> = Vec::new();
    for (layer, value, _) in in_effect() {
        let Some(Value::Object(servers)) = value.get("mcpServers") else {
            continue;
        };
        for name in servers.keys() {
            mcp_servers.retain(|s| &s.name != name);
            mcp_servers.push(McpServerSetting {
                name: name.clone(),
                source: *layer,
                enabled: !enablement.is_disabled(name),
            });
        }
    }
    mcp_servers.sort_by(|a, b| a.name.cmp(&b.name));
    SettingsView {
        layers,
        fields: fields(),
        values: common_keys().map(setting).collect(),
        mcp_servers,
        workspace_trusted: trusted,
    }
}

/// The environment variable that beats the settings files for `key`, as
/// [`crate::launch`] reads it.
fn env_override(key: &str) -> Option<&'static str> {
    match key {
        "model.name" => Some("GEMINI_MODEL"),
        _ => None,
    }
}

/// What a desktop session uses when nothing sets `key`: the same defaults
/// [`crate::launch::prepare`] applies for an interactive session (so
/// checkpoints are on, as every edit card's Restore shows).
pub fn default_value(key: &str) -> Value {
    match key {
        "model.name" => Value::String(crate::launch::DEFAULT_MODEL.to_owned()),
        "general.defaultApprovalMode" => Value::String("default".to_owned()),
        "ui.theme" => Value::String("system".to_owned()),
        "ui.desktopNotifications" => Value::String("all".to_owned()),
        // No URL: the app never asks anyone about updates until the user sets one.
        "update.manifestUrl" => Value::String(String::new()),
        "context.fileName" => Value::Array(vec![Value::String(
            crate::memory::DEFAULT_CONTEXT_FILE_NAME.to_owned(),
        )]),
        "context.includeDirectories" => Value::Array(Vec::new()),
        // `launch::checkpointing`: unset means on when someone can restore.
        "general.checkpointing.enabled" => Value::Bool(true),
        "general.maxAttempts" => Value::from(crate::launch::MAX_ATTEMPTS),
        "tools.truncateToolOutputThreshold" => {
            Value::from(crate::tools::services::DEFAULT_MAX_OUTPUT_CHARS)
        }
        "tools.shell.inactivityTimeout" => {
            Value::from(crate::tools::services::DEFAULT_INACTIVITY_TIMEOUT_SECS)
        }
        "tools.allowed" => Value::Array(Vec::new()),
        "security.disableYoloMode" => Value::Bool(false),
        "security.toolSandboxing" => Value::Bool(false),
        // Off here unless set (the app never deletes history on its own).
        "general.sessionRetention.enabled" => Value::Bool(false),
        "general.sessionRetention.maxAge" => Value::String("30d".to_owned()),
        "tools.legacy" => Value::Array(Vec::new()),
        _ => Value::Null,
    }
}

/// The value in force for `key` and where it comes from: an overriding
/// environment variable, else the files' merged `value` (from `source`),
/// else the default.
pub fn in_force(
    key: &str,
    value: Option<&Value>,
    source: Option<SettingsLayer>,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Value, SettingOrigin, Option<String>) {
    if let Some((var, set)) = env_override(key)
        .and_then(|var| env(var).filter(|v| !v.trim().is_empty()).map(|v| (var, v)))
    {
        return (Value::String(set), SettingOrigin::Env, Some(var.to_owned()));
    }
    match (value, source) {
        (Some(value), Some(layer)) if !value.is_null() => (value.clone(), layer.into(), None),
        _ => (default_value(key), SettingOrigin::Default, None),
    }
}

/// Checks what the typed settings cannot: the values the app understands
/// for the common keys.
pub fn check_value(key: &str, value: &Value) -> Result<(), SettingsScreenError> {
    let invalid = |m: &str| Err(SettingsScreenError::Invalid(m.to_owned()));
    match (key, value) {
        ("general.defaultApprovalMode", Value::String(mode))
            if !["default", "auto_edit", "plan"].contains(&mode.as_str()) =>
        {
            invalid(
                "The default approval mode is `default`, `auto_edit` or `plan` (YOLO can only be chosen for a session).",
            )
        }
        ("ui.desktopNotifications", Value::String(mode))
            if !["all", "approvals", "off"].contains(&mode.as_str()) =>
        {
            invalid("Notifications are `all`, `approvals` or `off`.")
        }
        ("model.name", Value::String(name))
            if name.trim().is_empty() || name.contains(char::is_whitespace) =>
        {
            invalid("A model name has no spaces, e.g. gemini-2.5-pro.")
        }
        ("update.manifestUrl", Value::String(url)) if !is_manifest_url(url) => invalid(
            "Write the manifest's full address, starting with https:// (http:// only for this \
             machine's own test servers).",
        ),
        ("context.fileName", Value::String(name)) => check_file_names(&[name]),
        ("context.fileName", Value::Array(names)) => {
            let strings: Option<Vec<&String>> = names
                .iter()
                .map(|n| match n {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect();
            match strings {
                Some(strings) => check_file_names(&strings),
                None => invalid("Context file names are strings."),
            }
        }
        ("general.maxAttempts", value)
            if !value.as_i64().is_some_and(|n| (1..=10).contains(&n)) =>
        {
            invalid("Retry attempts are a whole number from 1 to 10.")
        }
        ("tools.truncateToolOutputThreshold" | "tools.shell.inactivityTimeout", value)
            if value.as_i64().is_none() =>
        {
            invalid("Enter a whole number (0 for no limit).")
        }
        ("general.sessionRetention.maxAge", Value::String(age)) if !is_retention_age(age) => {
            invalid(
                "Write an age as a number and a unit: 24h, 30d, 2w or 6m (months); at least 1d.",
            )
        }
        ("tools.allowed", Value::Array(names))
            if names
                .iter()
                .any(|n| n.as_str().is_none_or(|n| n.trim().is_empty())) =>
        {
            invalid(
                "Each allowed tool is a tool name, e.g. read_file or run_shell_command(git status).",
            )
        }
        ("context.includeDirectories", Value::Array(dirs))
            if dirs
                .iter()
                .any(|d| d.as_str().is_none_or(|d| d.trim().is_empty())) =>
        {
            invalid("Each include directory is a non-empty path.")
        }
        ("tools.legacy", Value::Array(names))
            if names.iter().any(|n| {
                n.as_str()
                    .is_none_or(|n| !crate::tools::registry::LEGACY_TOOLS.contains(&n.trim()))
            }) =>
        {
            invalid("Legacy tools are save_memory and read_many_files.")
        }
        _ => Ok(()),
    }
}

/// An `http(s)://host/...` address with no spaces (the updater refuses plain http in a release
/// build; a debug build allows it for tests against a local server).
fn is_manifest_url(url: &str) -> bool {
    let url = url.trim();
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|rest| {
        !rest.is_empty() && !rest.starts_with('/') && !rest.contains(char::is_whitespace)
    })
}

/// `24h`, `30d`, `2w`, `6m` and at least a day (Gemini CLI 0.61's
/// default `minRetention`; gd-store refuses shorter ages and deletes
/// nothing).
fn is_retention_age(age: &str) -> bool {
    let age = age.trim();
    let Some(unit) = age.chars().last() else {
        return false;
    };
    let Ok(number) = age[..age.len() - unit.len_utf8()].parse::<u64>() else {
        return false;
    };
    let hours = match unit {
        'h' => number,
        'd' => number.saturating_mul(24),
        'w' => number.saturating_mul(24 * 7),
        'm' => number.saturating_mul(24 * 30),
        _ => return false,
    };
    hours >= 24
}

fn check_file_names(names: &[&String]) -> Result<(), SettingsScreenError> {
    if names.is_empty() {
        return Err(SettingsScreenError::Invalid(
            "Name at least one context file, e.g. GEMINI.md.".into(),
        ));
    }
    match names
        .iter()
        .find(|n| n.trim().is_empty() || n.contains(['/', '\\']))
    {
        Some(bad) => Err(SettingsScreenError::Invalid(format!(
            "`{bad}` is not a file name: context file names have no folders in them."
        ))),
        None => Ok(()),
    }
}

/// The settings file of `scope`.
pub fn scope_file(
    scope: SettingsScope,
    workspace: &Path,
    home: Option<&Path>,
) -> Result<PathBuf, SettingsScreenError> {
    match scope {
        SettingsScope::User => home.map(user_settings_path).ok_or_else(|| {
            SettingsScreenError::File("There is no home directory for user settings.".into())
        }),
        SettingsScope::Workspace => Ok(workspace_settings_path(workspace)),
    }
}

/// Writes `key` (`None` removes it) into the `scope` file, keeping the
/// rest of the file as it is. The workspace file is only written in a
/// trusted folder: an untrusted one's settings would not take effect.
pub fn write(
    workspace: &Path,
    home: Option<&Path>,
    scope: SettingsScope,
    key: &str,
    value: Option<&Value>,
) -> Result<SettingsView, SettingsScreenError> {
    let path = key_path(key);
    if path.is_empty() {
        return Err(SettingsScreenError::Invalid("No setting named.".into()));
    }
    if scope == SettingsScope::Workspace && key == "update.manifestUrl" {
        return Err(SettingsScreenError::File(
            "Where updates come from is a user setting: a folder's settings cannot choose it."
                .into(),
        ));
    }
    if scope == SettingsScope::Workspace && !decide(workspace, home).0.is_trusted() {
        return Err(SettingsScreenError::File(
            "This folder is not trusted, so its settings are not used. Trust it first.".into(),
        ));
    }
    if let Some(value) = value {
        check_value(key, value)?;
    }
    write_setting(&scope_file(scope, workspace, home)?, &path, value)?;
    tracing::info!(key, ?scope, "setting written");
    Ok(settings_view(workspace, home))
}

/// The workspace's trust and what it would load once trusted.
pub fn trust_info(workspace: &Path, home: Option<&Path>) -> TrustInfo {
    let (trust, error) = decide(workspace, home);
    let parent = workspace.parent().unwrap_or(workspace);
    let name = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    TrustInfo {
        workspace: workspace.display().to_string(),
        folder_name: name(workspace),
        parent: parent.display().to_string(),
        parent_name: name(parent),
        enabled: trust.enabled,
        trusted: trust.trusted,
        source: trust.source.map(|s| match s {
            gd_settings::TrustSource::Disabled => TrustSource::Disabled,
            gd_settings::TrustSource::Env => TrustSource::Env,
            gd_settings::TrustSource::File => TrustSource::File,
        }),
        rule_path: trust.rule.as_ref().map(|r| r.path.clone()),
        rule_level: trust.rule.as_ref().map(|r| level_out(r.level)),
        file: trust.file.as_ref().map(|f| f.display().to_string()),
        error,
        discovered: discover(workspace, home),
    }
}

fn level_out(level: gd_settings::TrustLevel) -> TrustLevel {
    match level {
        gd_settings::TrustLevel::TrustFolder => TrustLevel::TrustFolder,
        gd_settings::TrustLevel::TrustParent => TrustLevel::TrustParent,
        gd_settings::TrustLevel::DoNotTrust => TrustLevel::DoNotTrust,
    }
}

/// Records the user's decision for `workspace` in the trusted folders file
/// (`TRUST_PARENT` is written on the workspace's path, as Gemini CLI does)
/// and returns the new state.
pub fn set_trust(
    workspace: &Path,
    home: Option<&Path>,
    level: TrustLevel,
) -> Result<TrustInfo, SettingsScreenError> {
    let file = trust::trusted_folders_path(&process_env, home).ok_or_else(|| {
        SettingsScreenError::File("There is no home directory for the trusted folders file.".into())
    })?;
    let level = match level {
        TrustLevel::TrustFolder => gd_settings::TrustLevel::TrustFolder,
        TrustLevel::TrustParent => gd_settings::TrustLevel::TrustParent,
        TrustLevel::DoNotTrust => gd_settings::TrustLevel::DoNotTrust,
    };
    TrustedFolders::set(&file, workspace, level)?;
    tracing::info!(workspace = %workspace.display(), level = level.as_str(), "folder trust recorded");
    Ok(trust_info(workspace, home))
}

/// What the workspace would load once trusted: its commands, MCP servers,
/// settings, context files and `.gemini/.env` (like Gemini CLI's list in
/// its trust dialog).
fn discover(workspace: &Path, home: Option<&Path>) -> TrustDiscovery {
    let gemini = workspace.join(".gemini");
    let mut found = TrustDiscovery {
        env_file: gemini.join(".env").is_file(),
        ..TrustDiscovery::default()
    };
    let (commands, _) = crate::commands::load_commands(None, Some(workspace));
    found.commands = commands.keys().map(|n| format!("/{n}")).collect();
    let settings = workspace_settings_path(workspace);
    if let Some(Value::Object(map)) = std::fs::read_to_string(&settings)
        .ok()
        .and_then(|text| parse_file(&settings, &text).ok())
    {
        if let Some(Value::Object(servers)) = map.get("mcpServers") {
            found.mcp_servers = servers.keys().cloned().collect();
        }
        found.settings = map
            .keys()
            .filter(|k| !["mcpServers", "$schema"].contains(&k.as_str()))
            .cloned()
            .collect();
    }
    // Which context file names apply is the user's choice (their settings).
    let names = load_workspace(workspace, home, TrustOverride::Decide)
        .map(|w| crate::launch::context_file_names(w.settings()))
        .unwrap_or_else(|_| vec![crate::memory::DEFAULT_CONTEXT_FILE_NAME.to_owned()]);
    found.context_files = names
        .into_iter()
        .filter(|n| workspace.join(n).is_file())
        .collect();
    found
}

#[cfg(test)]
#[path = "settings_screen_tests.rs"]
mod tests;
