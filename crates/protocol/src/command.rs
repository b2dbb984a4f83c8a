//! Request/response types of the desktop commands that manage sessions
//! (the event stream itself carries [`crate::Event`]s).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What `start_session` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SessionInfo {
    pub session_id: String,
    pub model: String,
    /// `gemini-api-key`, `vertex-ai` or `code-assist`.
    pub auth: String,
    pub approval_mode: ApprovalMode,
    pub workspace: String,
    /// Problems that did not stop the session (e.g. a broken policy file).
    pub warnings: Vec<String>,
}

/// When tool calls need the user's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ApprovalMode {
    /// Ask before anything that changes state.
    #[default]
    Default,
    /// File edits are approved automatically; other changes still ask.
    AutoEdit,
    /// Everything is approved automatically (deny rules still hold).
    Yolo,
    /// Gemini CLI's plan mode: the model may only research (read-only tools)
    /// and write its plan as markdown in the session's plans directory, then
    /// present it with `exit_plan_mode` for the user's approval.
    Plan,
}

impl ApprovalMode {
    /// Parses the names Gemini CLI uses (`default`, `auto_edit`, `yolo`, `plan`).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "default" => Some(Self::Default),
            "auto_edit" | "autoedit" => Some(Self::AutoEdit),
            "yolo" => Some(Self::Yolo),
            "plan" => Some(Self::Plan),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AutoEdit => "auto_edit",
            Self::Yolo => "yolo",
            Self::Plan => "plan",
        }
    }
}

/// A model the user can pick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ModelChoice {
    /// The id sent to the API, e.g. `gemini-2.5-pro`.
    pub name: String,
    pub display_name: String,
    /// A short explanation, for entries that are not one model (`auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
}

/// Why a command failed, for the UI to explain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CommandError {
    pub kind: CommandErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum CommandErrorKind {
    /// No usable credentials: the user must sign in or set an API key.
    Auth,
    /// A settings or prompt file is broken; the message names it.
    Config,
    /// Something the user gave is wrong.
    Input,
    /// The app was opened without a workspace folder.
    NoWorkspace,
    /// The session id is unknown or the session has ended.
    UnknownSession,
    /// An update could not be checked, verified or installed; the message says why, and
    /// nothing was changed.
    Update,
}

impl CommandError {
    pub fn new(kind: CommandErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CommandError {}
