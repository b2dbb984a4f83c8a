//! The sandbox commands run in (issue 36): whether a session has it, and what one command ran
//! with.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Whether the session's commands run in the sandbox. Part of [`crate::Event::TurnContext`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SandboxState {
    /// `security.toolSandboxing` (Gemini CLI 0.61) or `security.sandbox.enabled`.
    pub enabled: bool,
    /// Enabled, but no sandbox can start on this machine: why, and the fix. Commands are
    /// refused (never run unconfined) until it is fixed or the sandbox is turned off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unavailable: Option<String>,
    /// Every command reaches the network (`security.sandbox.network: "all"`).
    #[serde(default)]
    pub network: bool,
    /// What this means for the user, in one or two sentences (the mode menu and settings show
    /// it; with YOLO and no sandbox it says what YOLO then allows).
    pub summary: String,
}

/// What one command ran with. Part of [`crate::Event::ToolCallResponse`] for
/// `run_shell_command`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SandboxUse {
    /// It ran in the sandbox (false: unconfined, the sandbox being off).
    pub sandboxed: bool,
    /// It was granted the network (for this command, or by the settings).
    #[serde(default)]
    pub network: bool,
    /// Folders outside the workspace it was granted to write in, absolute.
    #[serde(default)]
    pub granted_paths: Vec<String>,
}
