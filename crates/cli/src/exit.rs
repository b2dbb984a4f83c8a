//! Exit codes (Gemini CLI's) and the fatal errors that lead to them.

use thiserror::Error;

pub const SUCCESS: i32 = 0;
pub const GENERAL_ERROR: i32 = 1;
pub const AUTH_ERROR: i32 = 41;
pub const INPUT_ERROR: i32 = 42;
pub const CONFIG_ERROR: i32 = 52;
pub const TURN_LIMIT: i32 = 53;
/// The folder is not trusted (Gemini CLI's `FatalUntrustedWorkspaceError`).
pub const UNTRUSTED_WORKSPACE: i32 = 55;
pub const INTERRUPTED: i32 = 130;

/// A failure that ends the run, with the exit code and the error type name
/// reported in JSON output.
#[derive(Debug, Error)]
#[error("{message}")]
pub struct Fatal {
    pub code: i32,
    pub kind: &'static str,
    pub message: String,
}

impl Fatal {
    pub fn auth(message: impl Into<String>) -> Self {
        Self {
            code: AUTH_ERROR,
            kind: "FatalAuthenticationError",
            message: message.into(),
        }
    }

    pub fn input(message: impl Into<String>) -> Self {
        Self {
            code: INPUT_ERROR,
            kind: "FatalInputError",
            message: message.into(),
        }
    }

    pub fn config(message: impl Into<String>) -> Self {
        Self {
            code: CONFIG_ERROR,
            kind: "FatalConfigError",
            message: message.into(),
        }
    }

    pub fn untrusted(message: impl Into<String>) -> Self {
        Self {
            code: UNTRUSTED_WORKSPACE,
            kind: "FatalUntrustedWorkspaceError",
            message: message.into(),
        }
    }

    pub fn turn_limit(message: impl Into<String>) -> Self {
        Self {
            code: TURN_LIMIT,
            kind: "FatalTurnLimitedError",
            message: message.into(),
        }
    }

    pub fn cancelled() -> Self {
        Self {
            code: INTERRUPTED,
            kind: "FatalCancellationError",
            message: "Operation cancelled.".into(),
        }
    }

    pub fn general(kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            code: GENERAL_ERROR,
            kind,
            message: message.into(),
        }
    }
}
