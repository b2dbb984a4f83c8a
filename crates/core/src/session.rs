//! A running session: a task that owns the [`Agent`] and processes
//! operations one at a time, and a cheap handle to talk to it.

use std::sync::{Arc, Mutex};

use gd_gemini::GeminiClient;
use gd_protocol::{Event, Op};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info_span};

use crate::agent::Agent;
use crate::approval::{Answer, ApprovalPolicy, Confirmations};
use crate::chat::Chat;
use crate::config::SessionConfig;
use crate::events::EventSink;
use crate::scheduler::Scheduler;
use crate::tools::services::ModelAccess;
use crate::tools::{ToolRegistry, ToolServices};

/// Sends operations to a session. Cloneable; the session ends when every
/// handle is dropped or [`Op::Shutdown`] is processed.
#[derive(Clone)]
pub struct SessionHandle {
    session_id: String,
    ops: mpsc::UnboundedSender<Op>,
    current_turn: Arc<Mutex<Option<CancellationToken>>>,
    confirmations: Arc<Confirmations>,
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

/// Kept for callers that only care that the session is gone.
pub type SessionClosed = SessionError;

impl SessionHandle {
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Queues an operation. [`Op::Interrupt`] and [`Op::ConfirmTool`] take
    /// effect immediately, even while a turn is running.
    pub fn submit(&self, op: Op) -> Result<(), SessionError> {
        match op {
            Op::Interrupt => {
                self.interrupt();
                Ok(())
            }
            Op::ConfirmTool {
                call_id,
                outcome,
                content,
            } => {
                if self
                    .confirmations
                    .answer(&call_id, Answer { outcome, content })
                {
                    Ok(())
                } else {
                    Err(SessionError::NoSuchConfirmation(call_id))
                }
            }
            op => self.ops.send(op).map_err(|_| SessionError::Closed),
        }
    }

    /// Cancels the running turn, if any.
    pub fn interrupt(&self) {
        if let Some(token) = self
            .current_turn
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            token.cancel();
        }
    }
}

pub struct Session;

impl Session {
    /// Starts a session on the current Tokio runtime. The first event is
    /// [`Event::SessionConfigured`].
    pub fn spawn(
        config: SessionConfig,
        client: GeminiClient,
        tools: ToolRegistry,
        policy: Arc<dyn ApprovalPolicy>,
    ) -> (SessionHandle, mpsc::UnboundedReceiver<Event>) {
        let (sink, events) = EventSink::new();
        let (ops_tx, mut ops_rx) = mpsc::unbounded_channel();
        let current_turn = Arc::new(Mutex::new(None::<CancellationToken>));
        let confirmations = Arc::new(Confirmations::default());
        let handle = SessionHandle {
            session_id: config.session_id.clone(),
            ops: ops_tx,
            current_turn: current_turn.clone(),
            confirmations: confirmations.clone(),
        };
        let tools = Arc::new(tools);
        let chat = Chat::new(
            client.clone(),
            config.model.clone(),
            &config.system_prompt,
            tools.declarations(),
            config.effective_generation_config(),
            config.session_id.clone(),
        );
        sink.emit(Event::SessionConfigured {
            session_id: config.session_id.clone(),
            model: config.model.clone(),
            auth: client.backend().kind().to_owned(),
            workspace_dirs: config
                .workspace_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect(),
            tools: tools.names(),
        });
        let span = info_span!("session", session_id = %config.session_id);
        let services = Arc::new(ToolServices {
            temp_dir: config.temp_dir.clone(),
            home: crate::launch::home_dir(),
            model: Some(ModelAccess {
                client: client.clone(),
                model: config.model.clone(),
                session_id: config.session_id.clone(),
            }),
            limits: Default::default(),
        });
        let mut agent = Agent::new(
            config,
            chat,
            Scheduler::new(tools, policy, confirmations),
            services,
        );
        tokio::spawn(
            async move {
                let mut turns = 0u64;
                while let Some(op) = ops_rx.recv().await {
                    match op {
                        Op::UserTurn { items } => {
                            turns += 1;
                            let cancel = CancellationToken::new();
                            *current_turn.lock().unwrap_or_else(|e| e.into_inner()) =
                                Some(cancel.clone());
                            agent
                                .run_turn(&format!("turn-{turns}"), items, cancel, &sink)
                                .await;
                            *current_turn.lock().unwrap_or_else(|e| e.into_inner()) = None;
                        }
                        Op::Interrupt | Op::ConfirmTool { .. } => {}
                        Op::Shutdown => break,
                    }
                }
            }
            .instrument(span),
        );
        (handle, events)
    }
}
