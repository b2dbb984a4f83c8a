//! Operations: what a frontend asks a session to do.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ConfirmationOutcome;

/// A command sent to a running session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum Op {
    /// Start a turn with the user's input.
    UserTurn { items: Vec<InputItem> },
    /// Abort the running turn: the in-flight request is dropped, running
    /// tools are cancelled and history is left valid.
    Interrupt,
    /// End the session after the current turn has been interrupted.
    Shutdown,
    /// Answer a [`crate::Event::ToolConfirmationRequest`]. Takes effect
    /// immediately, while the turn waits for it.
    ConfirmTool {
        call_id: String,
        outcome: ConfirmationOutcome,
        /// The user's edited content, with `ModifyWithEditor`.
        content: Option<String>,
    },
}

/// One piece of user input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum InputItem {
    Text { text: String },
}

impl Op {
    /// A user turn made of one text item.
    pub fn user_text(text: impl Into<String>) -> Self {
        Op::UserTurn {
            items: vec![InputItem::Text { text: text.into() }],
        }
    }
}
