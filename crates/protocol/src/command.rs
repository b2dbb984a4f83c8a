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
    /// Problems that did not stop the session (e.g. a broken policy file).
    pub warnings: Vec<String>,
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
