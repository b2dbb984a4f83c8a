//! Extensions (Gemini CLI 0.61's `gemini-extension.json` folders in
//! `~/.gemini/extensions`, installed copies and linked folders): what a
//! frontend is told about them, and the consent summary shown before one is
//! installed.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How an extension came to be installed (its
/// `.gemini-extension-install.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ExtensionInstallKind {
    /// Copied from a local folder.
    Local,
    /// Cloned from a git URL with the user's git.
    Git,
    /// A link to a local folder, read in place (`extensions link`).
    Link,
    /// A GitHub release archive (recognised in metadata; installing one
    /// needs the network, so we install the repository with git instead).
    GithubRelease,
}

/// Where an installed extension came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ExtensionInstall {
    pub kind: ExtensionInstallKind,
    /// The path or URL it was installed from.
    pub source: String,
    /// `--ref` (branch, tag or commit) for git installs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub git_ref: Option<String>,
    pub auto_update: bool,
}

/// One of an extension's MCP servers, as the consent screen shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ExtensionServer {
    pub name: String,
    /// What will run: the command line (with `${extensionPath}` resolved),
    /// or the URL it connects to.
    pub launches: String,
    /// Another definition wins over this one (a `settings.json` server, or
    /// an earlier extension's, of the same name); said in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub shadowed_by: Option<String>,
}

/// One `settings` entry of a manifest (a value the user provides, kept in
/// the extension's `.env`, or in the keyring when `sensitive`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ExtensionSetting {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    pub env_var: String,
    pub sensitive: bool,
    /// A value is stored for the user (never the value itself).
    pub is_set: bool,
    /// A value is stored for this workspace; it wins over the user's.
    #[serde(default)]
    pub set_here: bool,
}

/// Everything an extension adds, for the Extensions panel and the consent
/// screen. Names are as the user will meet them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ExtensionContributions {
    pub mcp_servers: Vec<ExtensionServer>,
    /// Slash commands, as typed (`/deploy`, `/gcs:sync`, or `/gcp.deploy`
    /// when the name is taken).
    pub commands: Vec<String>,
    /// Context files read into memory (`contextFileName`, or `GEMINI.md`).
    pub context_files: Vec<String>,
    /// `excludeTools` entries.
    pub exclude_tools: Vec<String>,
    /// Policy rules, one line each (`ask_user run_shell_command priority
    /// 100`); `allow` rules are listed with the note that they are ignored.
    pub policy_rules: Vec<String>,
    pub skills: Vec<String>,
    pub agents: Vec<String>,
    /// Hooks from `hooks/hooks.json`, one line each (`BeforeTool
    /// write_file: <command>`).
    pub hooks: Vec<String>,
    pub settings: Vec<ExtensionSetting>,
    /// Theme names (`shades-of-green (my-extension)`); recognised, not
    /// applied: the app's look is its own.
    pub themes: Vec<String>,
}

/// One extension, installed or about to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ExtensionInfo {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// Its folder (for a link, the linked folder).
    pub path: String,
    /// Absent for a folder found without install metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub install: Option<ExtensionInstall>,
    /// Active in this workspace (the user-level and workspace-level
    /// choices together).
    pub enabled: bool,
    /// The user-level choice (every workspace).
    pub enabled_for_user: bool,
    /// The choice for this workspace, when one was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub enabled_for_workspace: Option<bool>,
    pub contributes: ExtensionContributions,
    /// `migratedTo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub migrated_to: Option<String>,
    /// Conflicts and skipped parts, in words (a command renamed, a server
    /// shadowed, an `allow` rule ignored, an unreadable file).
    pub notes: Vec<String>,
}

/// What [`crate::Op::InstallExtension`] installs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ExtensionSourceSpec {
    /// A local folder or a git URL.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub git_ref: Option<String>,
    /// Link the folder in place instead of copying it.
    #[serde(default)]
    pub link: bool,
    #[serde(default)]
    pub auto_update: bool,
}
