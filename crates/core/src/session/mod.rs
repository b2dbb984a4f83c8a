//! A running session: an op loop that owns the [`Agent`] and takes every
//! operation ([`op_loop`]), the tasks that change the conversation
//! ([`tasks`]), and a cheap handle to talk to it ([`handle`]).

pub(crate) mod context;
mod extension_ops;
mod handle;
mod hook_ops;
mod mcp_events;
mod op_loop;
mod policy_ops;
mod skill_ops;
mod tasks;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gd_gemini::GeminiClient;
use gd_protocol::Event;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info_span, warn};

use crate::agent::Agent;
use crate::approval::{ApprovalPolicy, Confirmations};
use crate::chat::Chat;
use crate::checkpoint::SessionCheckpoints;
use crate::config::SessionConfig;
use crate::events::EventSink;
use crate::history::HistoryRecorder;
use crate::quota::QuotaWatcher;
use crate::scheduler::Scheduler;
use crate::stats::StatsRecorder;
use crate::tools::services::ModelAccess;
use crate::tools::{LiveTools, SessionTools, ToolServices};
use context::SharedContext;
pub use handle::{SessionError, SessionHandle};
use mcp_events::{emit_snapshot, forward_mcp_events};
use op_loop::{CommandSources, OpLoop};
use tasks::TaskEnv;

/// How long MCP servers get to exit when the session ends before they are
/// killed.
pub const MCP_SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

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
        // A resumed session has taken the stored session's id since launch.
        if config.hooks.has_hooks() {
            let mut env = crate::hooks::load::hook_env(&config);
            env.base_env = crate::hooks::load::base_env();
            config.hooks.set_env(env);
        }
        let mcp = tools.mcp.as_ref().map(|m| m.manager.clone());
        let mcp_events = mcp.as_ref().map(|m| {
            let events = m.subscribe();
            m.start();
            events
        });
        let mut stats = StatsRecorder::new(&config.session_id, &config.model);
        // A reopened conversation counts on from what it had used.
        if let Some(usage) = history.as_mut().and_then(|h| h.take_resumed_usage()) {
            stats.seed(usage);
        }
        let stats = Arc::new(Mutex::new(stats));
        let (sink, events) = EventSink::new();
        let counted = stats.clone();
        let quota = QuotaWatcher::new(client.clone(), sink.downgrade());
        let watcher = quota.clone();
        let sink = sink.observed(Arc::new(move |event: &Event| {
            counted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .record(event);
            watcher.observe(event);
        }));
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let confirmations = Arc::new(Confirmations::default());
        let finished = CancellationToken::new();
        let context = SharedContext::new(
            config.approval_mode,
            &config.model,
            crate::sandbox::state(&config.shell.sandbox),
        );
        let agents = config.agents.clone();
        let skills = config.skills.clone();
        let hooks = config.hooks.clone();
        let handle = SessionHandle {
            session_id: config.session_id.clone(),
            ops: ops_tx,
            confirmations: confirmations.clone(),
            mcp: mcp.clone(),
            finished: finished.clone(),
        };
        let commands = CommandSources {
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
            gd_gemini::models::resolve_model(&config.model),
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
        let resumed_topic = Arc::new(std::sync::Mutex::new(
            crate::tools::topic::TopicState::default(),
        ));
        if let Some(recorder) = history.as_mut() {
            let resumed = recorder.take_initial_history();
            if !resumed.is_empty() {
                sink.emit(Event::SessionResumed {
                    session_id: recorder.session_id().to_owned(),
                    messages: resumed.len() as u32,
                });
                *resumed_topic.lock().unwrap_or_else(|e| e.into_inner()) =
                    crate::tools::topic::TopicState::replay(&resumed);
                chat.set_history(resumed);
            }
        }
        quota.start();
        let span = info_span!("session", session_id = %config.session_id);
        if let (Some(manager), Some(events)) = (&mcp, mcp_events) {
            emit_snapshot(manager, &|e| sink.emit(e));
            tokio::spawn(
                forward_mcp_events(events, tools.clone(), sink.downgrade(), finished.clone())
                    .instrument(span.clone()),
            );
        }
        let checkpoints = open_checkpoints(&config, &sink);
        let scheduler = Scheduler::with_tools(tools, policy.clone(), confirmations.clone())
            .with_checkpoints(checkpoints.clone());
        let running_subagents = Arc::new(crate::subagents::RunningSubagents::default());
        let subagents = (!config.agents.all().is_empty()).then(|| {
            Arc::new(
                crate::subagents::SubagentRuntime::new(
                    config.clone(),
                    scheduler.clone(),
                    client.clone(),
                    running_subagents.clone(),
                )
                .with_memory(memory.as_ref().map_or("", |m| m.text.as_str())),
            )
        });
        let services = Arc::new(ToolServices {
            temp_dir: config.temp_dir.clone(),
            home: crate::launch::home_dir(),
            model: Some(ModelAccess {
                client: client.clone(),
                model: gd_gemini::models::resolve_model(&config.model),
                session_id: config.session_id.clone(),
            }),
            limits: crate::tools::ToolLimits::with_max_output(config.tool_output_limit),
            shell: config.shell.clone(),
            topic: resumed_topic,
            subagents,
            hooks: Some(config.hooks.clone()),
            sandbox_grants: Arc::default(),
        });
        let mut agent = Agent::new(config, chat, scheduler, services, context.clone());
        agent.history = history;
        agent.stats = Some(stats.clone());
        agent.restore_review(&sink);
        let op_loop = OpLoop {
            ops: ops_rx,
            env: TaskEnv {
                sink,
                checkpoints,
                stats,
            },
            agent: Some(agent),
            confirmations,
            mcp,
            commands,
            context,
            policy,
            client,
            finished,
            reported_command_problems: Vec::new(),
            agents,
            running_subagents,
            skills,
            hooks,
        };
        tokio::spawn(op_loop.run().instrument(span));
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
