//! The cheap, cloneable side of a session: it only sends [`Op`]s to the
//! session's op loop (see [`super::op_loop`]); every answer and failure
//! arrives as an event.

use std::sync::Arc;

use gd_mcp::McpManager;
use gd_protocol::Op;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::approval::Confirmations;

/// Sends operations to a session. Cloneable; the session ends when every
/// handle is dropped or [`Op::Shutdown`] is processed.
#[derive(Clone)]
pub struct SessionHandle {
    pub(super) session_id: String,
    pub(super) ops: mpsc::UnboundedSender<Op>,
    /// Read (never answered) here, so a `ConfirmTool` nobody waits for is
    /// refused to the caller at once, as a frontend expects.
    pub(super) confirmations: Arc<Confirmations>,
    pub(super) mcp: Option<McpManager>,
    pub(super) finished: CancellationToken,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHandle")
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

/// Why an operation was not accepted.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("the session has ended")]
    Closed,
    #[error("no confirmation is waiting for tool call {0}")]
    NoSuchConfirmation(String),
}

impl SessionHandle {
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Sends an operation to the session's op loop. It takes
    /// [`Op::Interrupt`], [`Op::ConfirmTool`], [`Op::Stats`],
    /// [`Op::ListCommands`], [`Op::OverrideTurnContext`], [`Op::ListModels`]
    /// and the MCP operations other than [`Op::McpRunPrompt`] at once, even
    /// while a turn runs; the others are queued behind the running turn, in
    /// order. Refused: anything once the session has ended, and a
    /// `ConfirmTool` for a call no confirmation waits for.
    pub fn submit(&self, op: Op) -> Result<(), SessionError> {
        if let Op::ConfirmTool { call_id, .. } | Op::AnswerPlan { call_id, .. } = &op
            && !self.confirmations.is_waiting(call_id)
        {
            return Err(SessionError::NoSuchConfirmation(call_id.clone()));
        }
        self.ops.send(op).map_err(|_| SessionError::Closed)
    }

    /// The session's MCP servers, if it has any configured.
    pub fn mcp(&self) -> Option<&McpManager> {
        self.mcp.as_ref()
    }

    /// Cancels the running turn, if any ([`Op::Interrupt`]).
    pub fn interrupt(&self) {
        // A session that has ended has no turn to cancel.
        let _ = self.ops.send(Op::Interrupt);
    }

    /// Resolves when the session has ended (after [`Op::Shutdown`], its MCP
    /// servers stopped).
    pub async fn closed(&self) {
        self.finished.cancelled().await;
    }
}
