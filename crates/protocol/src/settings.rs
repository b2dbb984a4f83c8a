//! The settings screen and the trust prompt: what the desktop shell tells the
//! UI about the settings layers and the workspace's trust, and what the UI
//! asks it to write.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// A rule's value in `~/.gemini/trustedFolders.json` (Gemini CLI's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[ts(export)]
pub enum TrustLevel {
    /// Trust this folder (and everything below it).
    TrustFolder,
    /// Trust the folder's parent (and so its siblings).
    TrustParent,
    /// Do not trust it: restricted mode, and no prompt next time.
    DoNotTrust,
}

/// Who decided a workspace's trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum TrustSource {
    /// `security.folderTrust.enabled` is false: every folder is trusted.
    Disabled,
    /// `GEMINI_CLI_TRUST_WORKSPACE` or `GEMINI_RESTRICTED_MODE`.
    Env,
    /// A rule in the trusted folders file.
    File,
}

/// What an untrusted workspace would load once trusted (shown in the prompt).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TrustDiscovery {
    /// Custom commands in `.gemini/commands` (as `/name`).
    pub commands: Vec<String>,
    /// MCP servers in `.gemini/settings.json`.
    pub mcp_servers: Vec<String>,
    /// Top-level keys of `.gemini/settings.json` (besides `mcpServers`).
    pub settings: Vec<String>,
    /// Context files (e.g. `GEMINI.md`) in the workspace.
    pub context_files: Vec<String>,
    /// A `.gemini/.env` file is there.
    pub env_file: bool,
}

/// The workspace's trust, for the trust prompt and the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TrustInfo {
    pub workspace: String,
    /// The workspace folder's name and its parent's (for the choices).
    pub folder_name: String,
    pub parent: String,
    pub parent_name: String,
    /// `security.folderTrust.enabled` (user and system settings).
    pub enabled: bool,
    /// `true` trusted, `false` not trusted, `null` not decided yet (the
    /// prompt is shown; the workspace stays restricted meanwhile).
    pub trusted: Option<bool>,
    pub source: Option<TrustSource>,
    /// The rule that decided (its path as written, and its level).
    pub rule_path: Option<String>,
    pub rule_level: Option<TrustLevel>,
    /// The trusted folders file.
    pub file: Option<String>,
    /// The trusted folders file is broken (names its line); nothing is
    /// trusted until it is fixed.
    pub error: Option<String>,
    pub discovered: TrustDiscovery,
}

/// A settings file the app reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum SettingsLayer {
    SystemDefaults,
    User,
    Workspace,
    System,
}

/// Where the settings screen writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum SettingsScope {
    /// `~/.gemini/settings.json`.
    User,
    /// `<workspace>/.gemini/settings.json`.
    Workspace,
}

/// One settings file and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SettingsLayerInfo {
    pub layer: SettingsLayer,
    pub path: String,
    pub exists: bool,
    /// Whether its values are in effect (an untrusted workspace's are not).
    pub loaded: bool,
    /// The file is broken: the message names the file, line and key.
    pub error: Option<String>,
}

/// Where the value in force of a setting comes from: a settings layer, an
/// environment variable that beats the files, or the app's own default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum SettingOrigin {
    /// No file and no variable sets it: the app's built-in default.
    Default,
    SystemDefaults,
    User,
    Workspace,
    System,
    /// An environment variable (or a `.env` file), named in `env_var`.
    Env,
}

impl From<SettingsLayer> for SettingOrigin {
    fn from(layer: SettingsLayer) -> Self {
        match layer {
            SettingsLayer::SystemDefaults => Self::SystemDefaults,
            SettingsLayer::User => Self::User,
            SettingsLayer::Workspace => Self::Workspace,
            SettingsLayer::System => Self::System,
        }
    }
}

/// One setting: its value in force and where it comes from, and what the
/// user and workspace files say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SettingValue {
    /// The key path, e.g. `general.checkpointing.enabled`.
    pub key: String,
    /// The merged value of the settings files; `null` when no layer sets it.
    pub value: Option<Value>,
    /// The layer `value` comes from; `null`: no layer sets it.
    pub source: Option<SettingsLayer>,
    /// The value a session actually uses: an overriding environment
    /// variable, else `value`, else the app's default. Never `null`, so the
    /// screen never shows "off" for something that is on by default.
    pub effective: Value,
    /// Where `effective` comes from.
    pub origin: SettingOrigin,
    /// The variable when `origin` is `env` (e.g. `GEMINI_MODEL`).
    pub env_var: Option<String>,
    pub user: Option<Value>,
    pub workspace: Option<Value>,
}

/// An MCP server from the settings, for the enable/disable switches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct McpServerSetting {
    pub name: String,
    pub source: SettingsLayer,
    /// Not turned off in `~/.gemini/mcp-server-enablement.json`.
    pub enabled: bool,
}

/// How the settings screen edits a setting's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum SettingKind {
    /// One line of text (a string).
    Text,
    /// One of `choices` (a string).
    Select,
    /// Comma-separated names (a string when one, else an array of strings).
    Names,
    /// One entry per line (an array of strings).
    Lines,
    /// On or off (a boolean).
    Toggle,
    /// A whole number.
    Number,
}

/// What a change of the setting does to the running app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum SettingEffect {
    /// The window applies it at once (the theme).
    Window,
    /// The running session applies it at once (the approval mode).
    Session,
    /// The session is reloaded (same conversation) to read it.
    Reload,
}

/// One choice of a `select` setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SettingChoice {
    /// The value written to the file.
    pub value: String,
    pub label: String,
}

/// How the settings screen shows and edits one setting: the screen is rendered from these, so
/// a setting is described once, in the core.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SettingField {
    /// The key path, e.g. `general.checkpointing.enabled`.
    pub key: String,
    pub label: String,
    /// One sentence under the field.
    pub help: String,
    pub kind: SettingKind,
    /// The choices of a `select` field (empty otherwise).
    pub choices: Vec<SettingChoice>,
    /// The input's placeholder, if any.
    pub placeholder: Option<String>,
    /// What a change does, in words ("Applies at once.").
    pub applies: String,
    pub effect: SettingEffect,
}

/// What the settings screen shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SettingsView {
    pub layers: Vec<SettingsLayerInfo>,
    /// The screen's fields, in its order.
    pub fields: Vec<SettingField>,
    /// The fields' values, in the same order.
    pub values: Vec<SettingValue>,
    pub mcp_servers: Vec<McpServerSetting>,
    /// Whether the workspace layer is in effect (and may be written).
    pub workspace_trusted: bool,
}

/// A new MCP server from the MCP panel's "Add server" form: a command line
/// (stdio; split like a shell would) or a URL (HTTP), never both.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct NewMcpServer {
    /// The key under `mcpServers` (letters, digits, `-` and `_`).
    pub name: String,
    /// E.g. `npx -y @modelcontextprotocol/server-everything`.
    pub command_line: Option<String>,
    /// E.g. `http://localhost:8080/mcp` (streamable HTTP, SSE as fallback).
    pub url: Option<String>,
}
