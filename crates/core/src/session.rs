//! A running session: a task that owns the [`Agent`] and processes
//! operations one at a time, and a cheap handle to talk to it.

use std::sync::{Arc, Mutex};

use gd_gemini::GeminiClient;
use gd_protocol::{Event, Op};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info_span};

use crate::agent::Agent;
use crate::chat::Chat;
use crate::config::SessionConfig;
use crate::events::EventSink;
use crate::scheduler::Scheduler;
use crate::tools::services::ModelAccess;
use crate::tools::{ToolRegistry, ToolServices};

/// Sends operations to a session. Cloneable; the session ends when every
/// handle is dropped or [`Op::Shutdown`] is processed.
#[derive(Clone, Debug)]
pub struct SessionHandle {
    session_id: String,
    ops: mpsc::UnboundedSender<Op>,
    current_turn: Arc<Mutex<Option<CancellationToken>>>,
}

/// The session task is gone.
#[derive(Debug, thiserror::Error)]
#[error("the session has ended")]
pub struct SessionClosed;

impl SessionHandle {
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Queues an operation. [`Op::Interrupt`] takes effect immediately,
    /// even while a turn is running.
    pub fn submit(&self, op: Op) -> Result<(), SessionClosed> {
        if op == Op::Interrupt {
            self.interrupt();
            return Ok(());
        }
        self.ops.send(op).map_err(|_| SessionClosed)
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
    ) -> (SessionHandle, mpsc::UnboundedReceiver<Event>) {
        let (sink, events) = EventSink::new();
        let (ops_tx, mut ops_rx) = mpsc::unbounded_channel();
        let current_turn = Arc::new(Mutex::new(None::<CancellationToken>));
        let handle = SessionHandle {
            session_id: config.session_id.clone(),
            ops: ops_tx,
            current_turn: current_turn.clone(),
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
        let mut agent = Agent::new(config, chat, Scheduler::new(tools), services);
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
