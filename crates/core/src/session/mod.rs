//! A running session: a task that owns the [`Agent`] and processes
//! operations one at a time, and a cheap handle to talk to it.

pub(crate) mod context;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gd_gemini::GeminiClient;
use gd_mcp::{McpEvent, McpManager};
use gd_protocol::{ConfirmationOutcome, Event, McpDiscoveryState, ModelChoice, Op};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info_span, warn};

use crate::agent::{Agent, TurnInput};
use crate::approval::{Answer, ApprovalPolicy, Confirmations};
use crate::chat::Chat;
use crate::checkpoint::SessionCheckpoints;
use crate::config::SessionConfig;
use crate::events::{EventSink, WeakEventSink};
use crate::history::HistoryRecorder;
use crate::restore::{RestoreChoice, RestoreError};
use crate::scheduler::Scheduler;
use crate::stats::StatsRecorder;
use crate::tools::services::ModelAccess;
use crate::tools::{LiveTools, SessionTools, ToolServices};
use context::SharedContext;

/// How long MCP servers get to exit when the session ends before they are
/// killed.
pub const MCP_SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// Sends operations to a session. Cloneable; the session ends when every
/// handle is dropped or [`Op::Shutdown`] is processed.
#[derive(Clone)]
pub struct SessionHandle {
    session_id: String,
    ops: mpsc::UnboundedSender<Op>,
    current_turn: Arc<Mutex<Option<CancellationToken>>>,
    confirmations: Arc<Confirmations>,
    mcp: Option<McpManager>,
    events: WeakEventSink,
    finished: CancellationToken,
    /// Where custom commands are read from, and whether `/restore` exists.
    commands: CommandSources,
    /// Broken command files already reported, so listing again (each `/`
    /// typed) does not repeat the warning.
    reported_command_problems: Arc<Mutex<Vec<String>>>,
    /// What the session used so far (`/stats`).
    stats: Arc<Mutex<StatsRecorder>>,
    /// The approval mode and model (`Op::OverrideTurnContext`).
    context: SharedContext,
    /// Where the approval mode takes effect.
    policy: Arc<dyn ApprovalPolicy>,
    /// For `Op::ListModels`.
    client: GeminiClient,
    /// The session's runtime, for answers that need I/O (`submit` may be
    /// called from any thread).
    runtime: tokio::runtime::Handle,
}

/// Where a session's slash commands come from.
#[derive(Debug, Clone)]
struct CommandSources {
    home: Option<std::path::PathBuf>,
    workspace: Option<std::path::PathBuf>,
    checkpointing: bool,
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

    /// Queues an operation. [`Op::Interrupt`], [`Op::ConfirmTool`],
    /// [`Op::Stats`], [`Op::ListCommands`] and the MCP operations other than
    /// [`Op::McpRunPrompt`] take effect immediately, even while a turn is
    /// running; their answers and failures arrive as events.
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
                let modified = outcome == ConfirmationOutcome::ModifyWithEditor;
                if self
                    .confirmations
                    .answer(&call_id, Answer { outcome, content })
                {
                    if modified {
                        self.stats().modified(&call_id);
                    }
                    Ok(())
                } else {
                    Err(SessionError::NoSuchConfirmation(call_id))
                }
            }
            Op::McpStatus => {
                self.ensure_open()?;
                match &self.mcp {
                    Some(mcp) => emit_snapshot(mcp, &|e| self.events.emit(e)),
                    None => self.events.emit(Event::McpDiscovery {
                        state: McpDiscoveryState::Completed,
                    }),
                }
                Ok(())
            }
            Op::McpRestartServer { name } => {
                self.ensure_open()?;
                let result = self.with_mcp(&name, |mcp| mcp.restart(&name).map_err(|e| e.to_string()));
                self.report(result);
                Ok(())
            }
            Op::McpSetServerEnabled { name, enabled } => {
                self.ensure_open()?;
                let result = self.with_mcp(&name, |mcp| mcp.set_enabled(&name, enabled).map_err(|e| e.to_string()));
                self.report(result);
                Ok(())
            }
            Op::McpAuthenticate { name } => {
                self.ensure_open()?;
                // Starts the OAuth flow in the background; its progress shows
                // in the server's status events.
                let result = self.with_mcp(&name, |mcp| mcp.start_authentication(&name).map_err(|e| e.to_string()));
                self.report(result);
                Ok(())
            }
            Op::McpServerLog { name } => {
                self.ensure_open()?;
                let result = self.with_mcp(&name, |mcp| {
                    mcp.log(&name)
                        .ok_or_else(|| format!("MCP server '{name}' is not configured"))
                });
                match result {
                    Ok(lines) => self.events.emit(Event::McpServerLog { name, lines }),
                    Err(message) => self.report::<()>(Err(message)),
                }
                Ok(())
            }
            Op::Stats => {
                self.ensure_open()?;
                let stats = self.stats().snapshot();
                self.events.emit(Event::SessionStats { stats });
                Ok(())
            }
            Op::ListCommands => {
                self.ensure_open()?;
                let sources = &self.commands;
                let (commands, problems) = crate::commands::load_commands(
                    sources.home.as_deref(),
                    sources.workspace.as_deref(),
                );
                let mut reported = self
                    .reported_command_problems
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                for message in problems {
                    if !reported.contains(&message) {
                        reported.push(message.clone());
                        self.events.emit(Event::Warning { message });
                    }
                }
                let prompts = self.mcp.as_ref().map(|m| m.prompts()).unwrap_or_default();
                let catalog =
                    crate::commands::Catalog::new(&commands, &prompts, sources.checkpointing);
                self.events.emit(Event::Commands {
                    commands: catalog.infos(),
                });
                Ok(())
            }
            Op::OverrideTurnContext {
                approval_mode,
                model,
            } => {
                self.ensure_open()?;
                for event in self
                    .context
                    .apply(self.policy.as_ref(), approval_mode, model)
                {
                    self.events.emit(event);
                }
                Ok(())
            }
            Op::ListModels => {
                self.ensure_open()?;
                let client = self.client.clone();
                let events = self.events.clone();
                self.runtime.spawn(async move {
                    let models = gd_gemini::models::available_models(&client)
                        .await
                        .into_iter()
                        .map(|m| ModelChoice {
                            name: m.name,
                            display_name: m.display_name,
                        })
                        .collect();
                    events.emit(Event::Models { models });
                });
                Ok(())
            }
            op => self.ops.send(op).map_err(|_| SessionError::Closed),
        }
    }

    fn stats(&self) -> std::sync::MutexGuard<'_, StatsRecorder> {
        self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn ensure_open(&self) -> Result<(), SessionError> {
        if self.ops.is_closed() {
            Err(SessionError::Closed)
        } else {
            Ok(())
        }
    }

    fn with_mcp<T>(
        &self,
        name: &str,
        f: impl FnOnce(&McpManager) -> Result<T, String>,
    ) -> Result<T, String> {
        match &self.mcp {
            Some(mcp) => f(mcp),
            None => Err(format!("MCP server '{name}' is not configured")),
        }
    }

    fn report<T>(&self, result: Result<T, String>) {
        if let Err(message) = result {
            self.events.emit(Event::Warning { message });
        }
    }

    /// The session's MCP servers, if it has any configured.
    pub fn mcp(&self) -> Option<&McpManager> {
        self.mcp.as_ref()
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

    /// Resolves when the session has ended (after [`Op::Shutdown`], its MCP
    /// servers stopped).
    pub async fn closed(&self) {
        self.finished.cancelled().await;
    }
}

/// Every server's status, then the discovery state.
fn emit_snapshot(mcp: &McpManager, emit: &dyn Fn(Event)) {
    for status in mcp.statuses() {
        emit(Event::McpServerStatus { status });
    }
    emit(Event::McpDiscovery {
        state: mcp.discovery_state(),
    });
}

pub struct Session;

impl Session {
    /// Starts a session on the current Tokio runtime. The first event is
    /// [`Event::SessionConfigured`]. MCP servers among `tools` are started
    /// (if `launch` has not already) and stopped when the session ends.
    pub fn spawn(
        config: SessionConfig,
        client: GeminiClient,
        tools: impl Into<SessionTools>,
        policy: Arc<dyn ApprovalPolicy>,
    ) -> (SessionHandle, mpsc::UnboundedReceiver<Event>) {
        Self::spawn_recorded(config, client, tools, policy, None)
    }

    /// [`Session::spawn`], recording every message into the session
    /// history. A recorder from [`HistoryRecorder::resume`] continues a
    /// stored session: its history is the chat's history, and
    /// [`Event::SessionResumed`] follows [`Event::SessionConfigured`].
    pub fn spawn_recorded(
        config: SessionConfig,
        client: GeminiClient,
        tools: impl Into<SessionTools>,
        policy: Arc<dyn ApprovalPolicy>,
        mut history: Option<HistoryRecorder>,
    ) -> (SessionHandle, mpsc::UnboundedReceiver<Event>) {
        let tools: SessionTools = tools.into();
        let mcp = tools.mcp.as_ref().map(|m| m.manager.clone());
        let mcp_events = mcp.as_ref().map(|m| {
            let events = m.subscribe();
            m.start();
            events
        });
        let stats = Arc::new(Mutex::new(StatsRecorder::new(
            &config.session_id,
            &config.model,
        )));
        let (sink, events) = EventSink::new();
        let counted = stats.clone();
        let sink = sink.observed(Arc::new(move |event: &Event| {
            counted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .record(event);
        }));
        let (ops_tx, mut ops_rx) = mpsc::unbounded_channel();
        let current_turn = Arc::new(Mutex::new(None::<CancellationToken>));
        let confirmations = Arc::new(Confirmations::default());
        let finished = CancellationToken::new();
        let context = SharedContext::new(config.approval_mode, &config.model);
        let handle = SessionHandle {
            session_id: config.session_id.clone(),
            ops: ops_tx,
            current_turn: current_turn.clone(),
            confirmations: confirmations.clone(),
            mcp: mcp.clone(),
            events: sink.downgrade(),
            finished: finished.clone(),
            commands: CommandSources {
                home: config
                    .memory
                    .as_ref()
                    .and_then(|m| m.home.clone())
                    .or_else(crate::launch::home_dir),
                // An untrusted folder's commands are not read.
                workspace: config
                    .workspace_trusted
                    .then(|| config.workspace_dirs[0].clone()),
                checkpointing: config.checkpointing.is_some(),
            },
            reported_command_problems: Arc::default(),
            stats: stats.clone(),
            context: context.clone(),
            policy: policy.clone(),
            client: client.clone(),
            runtime: tokio::runtime::Handle::current(),
        };
        let tools = Arc::new(LiveTools::new(tools));
        let current = tools.current();
        // Reading the context files is quick (bounded discovery), so the
        // first request already carries them.
        let memory = config
            .memory
            .as_ref()
            .map(|options| crate::memory::load_memory(options, &config.workspace_dirs));
        let mut chat = Chat::new(
            client.clone(),
            config.model.clone(),
            &crate::memory::system_prompt_with_memory(
                &config.system_prompt,
                memory.as_ref().map_or("", |m| m.text.as_str()),
            ),
            current.declarations(),
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
            tools: current.names(),
        });
        sink.emit(context.get().event());
        if let Some(memory) = &memory {
            for event in memory.events() {
                sink.emit(event);
            }
        }
        if let Some(recorder) = history.as_mut() {
            let resumed = recorder.take_initial_history();
            if !resumed.is_empty() {
                sink.emit(Event::SessionResumed {
                    session_id: recorder.session_id().to_owned(),
                    messages: resumed.len() as u32,
                });
                chat.set_history(resumed);
            }
        }
        let span = info_span!("session", session_id = %config.session_id);
        if let (Some(manager), Some(events)) = (&mcp, mcp_events) {
            emit_snapshot(manager, &|e| sink.emit(e));
            tokio::spawn(
                forward_mcp_events(events, tools.clone(), sink.downgrade(), finished.clone())
                    .instrument(span.clone()),
            );
        }
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
        let checkpoints = open_checkpoints(&config, &sink);
        let mut agent = Agent::new(
            config,
            chat,
            Scheduler::with_tools(tools, policy, confirmations)
                .with_checkpoints(checkpoints.clone()),
            services,
            context,
        );
        agent.history = history;
        tokio::spawn(
            async move {
                let mut turns = 0u64;
                while let Some(op) = ops_rx.recv().await {
                    let input = match op {
                        Op::UserTurn { items } => TurnInput::Items(items),
                        Op::McpRunPrompt {
                            server,
                            name,
                            arguments,
                        } => TurnInput::McpPrompt {
                            server,
                            name,
                            arguments,
                        },
                        Op::Clear => {
                            let id = agent.clear(&sink).await;
                            stats.lock().unwrap_or_else(|e| e.into_inner()).reset(&id);
                            sink.emit(Event::ConversationCleared { session_id: id });
                            continue;
                        }
                        Op::Compress => {
                            let cancel = CancellationToken::new();
                            *current_turn.lock().unwrap_or_else(|e| e.into_inner()) =
                                Some(cancel.clone());
                            agent.compress_now(&cancel, &sink).await;
                            *current_turn.lock().unwrap_or_else(|e| e.into_inner()) = None;
                            continue;
                        }
                        Op::ListCheckpoints => {
                            list_checkpoints(checkpoints.as_ref(), &sink).await;
                            continue;
                        }
                        Op::RestoreCheckpoint {
                            checkpoint_id,
                            code,
                            conversation,
                        } => {
                            restore_checkpoint(
                                &mut agent,
                                checkpoints.as_ref(),
                                checkpoint_id,
                                RestoreChoice { code, conversation },
                                &sink,
                            )
                            .await;
                            continue;
                        }
                        Op::RefreshMemory => {
                            refresh_memory(&mut agent, &sink).await;
                            continue;
                        }
                        Op::AddMemory { text } => {
                            // The home the memory is read from (a test's
                            // stand-in, or `$HOME`).
                            let home = agent
                                .config
                                .memory
                                .as_ref()
                                .and_then(|m| m.home.clone())
                                .or_else(crate::launch::home_dir);
                            let added = match home {
                                Some(home) => crate::memory::add_global_memory(&home, &text),
                                None => {
                                    Err("Cannot find the home directory to save the memory."
                                        .to_owned())
                                }
                            };
                            match added {
                                Ok(_) => refresh_memory(&mut agent, &sink).await,
                                Err(message) => sink.emit(Event::Warning { message }),
                            }
                            continue;
                        }
                        Op::Shutdown => break,
                        _ => continue,
                    };
                    turns += 1;
                    let cancel = CancellationToken::new();
                    *current_turn.lock().unwrap_or_else(|e| e.into_inner()) = Some(cancel.clone());
                    agent
                        .run_turn(&format!("turn-{turns}"), input, cancel, &sink)
                        .await;
                    *current_turn.lock().unwrap_or_else(|e| e.into_inner()) = None;
                }
                ops_rx.close();
                if let Some(manager) = &mcp {
                    manager.shutdown(MCP_SHUTDOWN_GRACE).await;
                }
                finished.cancel();
            }
            .instrument(span),
        );
        (handle, events)
    }
}

/// The session's checkpoints when `config.checkpointing` is set; a warning
/// (and no checkpoints) when the shadow repository cannot be opened.
fn open_checkpoints(config: &SessionConfig, sink: &EventSink) -> Option<Arc<SessionCheckpoints>> {
    let settings = config.checkpointing.as_ref()?;
    match SessionCheckpoints::open(settings, config.primary_workspace(), &config.session_id) {
        Ok(checkpoints) => {
            checkpoints.start_baseline();
            Some(Arc::new(checkpoints))
        }
        Err(e) => {
            warn!(error = %e, "checkpoints are off");
            sink.emit(Event::Warning {
                message: format!("Checkpoints are off for this session: {e}"),
            });
            None
        }
    }
}

async fn list_checkpoints(checkpoints: Option<&Arc<SessionCheckpoints>>, sink: &EventSink) {
    let Some(checkpoints) = checkpoints else {
        sink.emit(Event::Checkpoints {
            checkpoints: Vec::new(),
        });
        return;
    };
    match checkpoints.list().await {
        Ok(list) => sink.emit(Event::Checkpoints { checkpoints: list }),
        Err(e) => sink.emit(Event::CheckpointError {
            checkpoint_id: None,
            message: format!("Cannot list the checkpoints: {e}"),
        }),
    }
}

/// `Op::RestoreCheckpoint`: the code, the conversation or both (see
/// [`crate::restore`]); the conversation is rewound in the stored history
/// and in the model's context.
async fn restore_checkpoint(
    agent: &mut Agent,
    checkpoints: Option<&Arc<SessionCheckpoints>>,
    checkpoint_id: String,
    choice: RestoreChoice,
    sink: &EventSink,
) {
    let result = match checkpoints {
        None => Err(RestoreError::CheckpointsOff),
        Some(checkpoints) => {
            let store = agent.history.as_ref().map(|h| h.store().clone());
            let session_id = agent.config.session_id.clone();
            crate::restore::restore(
                checkpoints.checkpointer().repo(),
                &checkpoint_id,
                choice,
                Some(&session_id),
                store.as_ref(),
                async |point| agent.rewind(&point.message_id).await,
            )
            .await
        }
    };
    match result {
        Ok(restored) => sink.emit(Event::CheckpointRestored {
            checkpoint_id: restored.checkpoint_id,
            files: restored.files,
            undo_checkpoint_id: restored.undo_checkpoint_id,
            conversation: restored.conversation,
        }),
        Err(error) => {
            warn!(%error, checkpoint_id, "restore failed");
            sink.emit(Event::CheckpointError {
                checkpoint_id: Some(checkpoint_id),
                message: error.to_string(),
            })
        }
    }
}

/// Reads the context files again and puts them into the system instruction
/// of the next request; reports them with [`Event::MemoryLoaded`].
async fn refresh_memory(agent: &mut Agent, sink: &EventSink) {
    let options = agent.config.memory.clone().unwrap_or_else(|| {
        // A session configured without memory discovery still reloads the
        // global file, so `/memory add` shows up.
        crate::memory::DiscoveryOptions {
            workspace: agent.config.workspace_dirs[0].clone(),
            home: crate::launch::home_dir(),
            file_names: vec![crate::memory::DEFAULT_CONTEXT_FILE_NAME.to_owned()],
            max_dirs: crate::memory::DEFAULT_MAX_DIRS,
            filtering: agent.config.file_filtering,
            workspace_files: agent.config.workspace_trusted,
        }
    });
    let dirs = agent.config.workspace_dirs.clone();
    let loaded =
        tokio::task::spawn_blocking(move || crate::memory::load_memory(&options, &dirs)).await;
    match loaded {
        Ok(memory) => {
            agent
                .chat
                .set_system_prompt(&crate::memory::system_prompt_with_memory(
                    &agent.config.system_prompt,
                    &memory.text,
                ));
            for event in memory.events() {
                sink.emit(event);
            }
        }
        Err(error) => sink.emit(Event::Warning {
            message: format!("Refreshing the memory failed: {error}"),
        }),
    }
}

/// Passes the MCP servers' status changes on as session events, and tells
/// the frontend when the declared tools changed.
async fn forward_mcp_events(
    mut events: broadcast::Receiver<McpEvent>,
    tools: Arc<LiveTools>,
    sink: WeakEventSink,
    finished: CancellationToken,
) {
    let mut declared = tools.current().names();
    loop {
        let event = tokio::select! {
            _ = finished.cancelled() => return,
            event = events.recv() => event,
        };
        match event {
            Ok(McpEvent::Status(status)) => sink.emit(Event::McpServerStatus { status }),
            Ok(McpEvent::Discovery(state)) => sink.emit(Event::McpDiscovery { state }),
            Ok(McpEvent::LogChanged(name)) => sink.emit(Event::McpServerLogChanged { name }),
            Ok(McpEvent::ToolsChanged) => {
                let names = tools.current().names();
                if names != declared {
                    declared = names.clone();
                    sink.emit(Event::ToolsChanged { tools: names });
                }
            }
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                warn!(missed, "MCP events were dropped; sending a fresh snapshot");
                if let Some(mcp) = tools.mcp() {
                    emit_snapshot(&mcp.manager, &|e| sink.emit(e));
                }
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
