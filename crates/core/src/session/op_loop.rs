//! One loop per session takes every [`Op`], in the order submitted (as
//! codex-rs's `submission_loop` does). Operations that change the
//! conversation run as a task of their own ([`super::tasks`]), one at a
//! time and in order; everything else (interrupts, confirmations, `/stats`,
//! the command list, MCP operations, turn-context changes, the model list)
//! is taken at once, even while such a task runs.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use gd_gemini::GeminiClient;
use gd_mcp::McpManager;
use gd_protocol::{ErrorKind, Event, McpDiscoveryState, ModelChoice, Op};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error};

use super::MCP_SHUTDOWN_GRACE;
use super::context::SharedContext;
use super::mcp_events::emit_snapshot;
use super::tasks::{self, ConversationOp, TaskEnv};
use crate::agent::Agent;
use crate::approval::{Answer, ApprovalPolicy, Confirmations};
use crate::restore::RestoreChoice;
use crate::stats::StatsRecorder;

/// Where a session's slash commands come from.
#[derive(Debug, Clone)]
pub(super) struct CommandSources {
    pub home: Option<PathBuf>,
    pub workspace: Option<PathBuf>,
    pub checkpointing: bool,
}

/// What waits in the queue for the conversation.
enum Queued {
    Conversation(ConversationOp),
    Shutdown,
}

/// The task that has the agent now.
struct Running {
    cancel: CancellationToken,
    task: JoinHandle<Agent>,
}

/// A session's op loop and everything its immediate operations need.
pub(super) struct OpLoop {
    pub ops: mpsc::UnboundedReceiver<Op>,
    pub env: TaskEnv,
    /// The agent, while no task has it.
    pub agent: Option<Agent>,
    pub confirmations: Arc<Confirmations>,
    pub mcp: Option<McpManager>,
    pub commands: CommandSources,
    pub context: SharedContext,
    pub policy: Arc<dyn ApprovalPolicy>,
    pub client: GeminiClient,
    pub finished: CancellationToken,
    /// Broken command files already reported, so listing again (each `/`
    /// typed) does not repeat the warning.
    pub reported_command_problems: Vec<String>,
    /// The agents `Op::ListAgents` lists (the session's catalog).
    pub agents: Arc<crate::subagents::AgentCatalog>,
    /// The subagents running now (`Op::CancelSubagent` stops one).
    pub running_subagents: Arc<crate::subagents::RunningSubagents>,
    /// The hooks `Op::ListHooks` lists and `Op::SetHookEnabled` changes.
    pub(super) hooks: crate::hooks::Hooks,
    /// The skills `Op::ListSkills` lists and `Op::SetSkillEnabled` changes.
    pub skills: Arc<crate::skills::SkillCatalog>,
}

impl OpLoop {
    /// Runs until `Op::Shutdown` is reached or every handle is gone (then
    /// after the work already submitted), then stops the MCP servers.
    pub async fn run(mut self) {
        let mut queue: VecDeque<Queued> = VecDeque::new();
        if let Some(agent) = &self.agent
            && agent
                .config
                .hooks
                .has(gd_hooks::HookEventName::SessionStart)
        {
            let source = if agent.chat.history().is_empty() {
                "startup"
            } else {
                "resume"
            };
            queue.push_back(Queued::Conversation(ConversationOp::SessionStart {
                source,
            }));
        }
        let mut running: Option<Running> = None;
        let mut turns = 0u64;
        let mut open = true;
        loop {
            if running.is_none() {
                match queue.pop_front() {
                    Some(Queued::Shutdown) => break,
                    Some(Queued::Conversation(op)) => {
                        let Some(agent) = self.agent.take() else {
                            break;
                        };
                        let turn = matches!(
                            op,
                            ConversationOp::UserTurn { .. } | ConversationOp::McpRunPrompt { .. }
                        );
                        if turn {
                            turns += 1;
                        }
                        let cancel = CancellationToken::new();
                        let task = tokio::spawn(tasks::run(
                            agent,
                            op,
                            format!("turn-{turns}"),
                            cancel.clone(),
                            self.env.clone(),
                        ));
                        running = Some(Running { cancel, task });
                        continue;
                    }
                    None if !open => break,
                    None => {}
                }
            }
            tokio::select! {
                op = self.ops.recv(), if open => match op {
                    Some(op) => {
                        if let Some(queued) = self.take(op, running.as_ref()) {
                            queue.push_back(queued);
                        }
                    }
                    // Every handle is gone: finish what was submitted.
                    None => open = false,
                },
                joined = async { (&mut running.as_mut().expect("guarded").task).await }, if running.is_some() => {
                    running = None;
                    match joined {
                        Ok(agent) => self.agent = Some(agent),
                        Err(e) => {
                            error!(error = %e, "a session task failed; ending the session");
                            self.env.sink.emit(Event::Error {
                                kind: ErrorKind::Internal,
                                message: format!("The session stopped after an internal failure: {e}"),
                                status: None,
                                fatal: true,
                            });
                            break;
                        }
                    }
                }
            }
        }
        if let Some(running) = running {
            running.cancel.cancel();
            let _ = running.task.await;
        }
        self.ops.close();
        if let Some(agent) = &self.agent {
            agent.session_end_hook("exit", &self.env.sink).await;
        }
        if let Some(manager) = &self.mcp {
            manager.shutdown(MCP_SHUTDOWN_GRACE).await;
        }
        self.finished.cancel();
    }

    /// Takes an operation: at once, or (`Some`) queued for the
    /// conversation.
    fn take(&mut self, op: Op, running: Option<&Running>) -> Option<Queued> {
        let conversation = match op {
            Op::UserTurn { items } => ConversationOp::UserTurn { items },
            Op::McpRunPrompt {
                server,
                name,
                arguments,
            } => ConversationOp::McpRunPrompt {
                server,
                name,
                arguments,
            },
            Op::Clear => ConversationOp::Clear,
            Op::Compress => ConversationOp::Compress,
            Op::ListCheckpoints => ConversationOp::ListCheckpoints,
            Op::RestoreCheckpoint {
                checkpoint_id,
                code,
                conversation,
            } => ConversationOp::RestoreCheckpoint {
                checkpoint_id,
                choice: RestoreChoice { code, conversation },
            },
            Op::RefreshMemory => ConversationOp::RefreshMemory,
            Op::AddMemory { text } => ConversationOp::AddMemory { text },
            Op::RevertEdit {
                call_id,
                hunks,
                resolved,
            } => ConversationOp::RevertEdit(crate::revert::RevertRequest {
                call_id,
                hunks,
                resolved,
            }),
            Op::ApplyTurnReview { decisions } => ConversationOp::ApplyTurnReview { decisions },
            Op::Shutdown => return Some(Queued::Shutdown),
            Op::Interrupt => {
                if let Some(running) = running {
                    running.cancel.cancel();
                }
                return None;
            }
            Op::ConfirmTool {
                call_id,
                outcome,
                content,
                hunks,
            } => {
                self.confirm(
                    call_id,
                    Answer {
                        outcome,
                        content,
                        hunks,
                        plan: None,
                    },
                );
                return None;
            }
            Op::AnswerPlan { call_id, approval } => {
                self.confirm(
                    call_id,
                    Answer {
                        outcome: gd_protocol::ConfirmationOutcome::ProceedOnce,
                        content: None,
                        hunks: None,
                        plan: Some(approval),
                    },
                );
                return None;
            }
            Op::Stats => {
                let stats = self.stats().snapshot();
                self.env.sink.emit(Event::SessionStats { stats });
                return None;
            }
            Op::ListCommands => {
                self.list_commands();
                return None;
            }
            Op::OverrideTurnContext {
                approval_mode,
                model,
                review_mode,
            } => {
                for event in
                    self.context
                        .apply(self.policy.as_ref(), approval_mode, model, review_mode)
                {
                    self.env.sink.emit(event);
                }
                return None;
            }
            Op::ListModels => {
                self.list_models();
                return None;
            }
            Op::McpStatus => {
                match &self.mcp {
                    Some(mcp) => emit_snapshot(mcp, &|e| self.env.sink.emit(e)),
                    None => self.env.sink.emit(Event::McpDiscovery {
                        state: McpDiscoveryState::Completed,
                    }),
                }
                return None;
            }
            Op::McpRestartServer { name } => {
                let result =
                    self.with_mcp(&name, |mcp| mcp.restart(&name).map_err(|e| e.to_string()));
                self.report(result);
                return None;
            }
            Op::McpSetServerEnabled { name, enabled } => {
                let result = self.with_mcp(&name, |mcp| {
                    mcp.set_enabled(&name, enabled).map_err(|e| e.to_string())
                });
                self.report(result);
                return None;
            }
            Op::McpAuthenticate { name } => {
                // Starts the OAuth flow in the background; its progress shows
                // in the server's status events.
                let result = self.with_mcp(&name, |mcp| {
                    mcp.start_authentication(&name).map_err(|e| e.to_string())
                });
                self.report(result);
                return None;
            }
            Op::McpServerLog { name } => {
                let result = self.with_mcp(&name, |mcp| {
                    mcp.log(&name)
                        .ok_or_else(|| format!("MCP server '{name}' is not configured"))
                });
                match result {
                    Ok(lines) => self.env.sink.emit(Event::McpServerLog { name, lines }),
                    Err(message) => self.report::<()>(Err(message)),
                }
                return None;
            }
            Op::AnswerFallback { choice } => {
                if !self.context.1.answer(choice) {
                    debug!(?choice, "no fallback prompt waits for an answer");
                }
                return None;
            }
            Op::ListAgents => {
                let (agents, errors) = crate::subagents::listing::listing(&self.agents);
                self.env.sink.emit(Event::Agents { agents, errors });
                return None;
            }
            Op::CancelSubagent { parent_call_id } => {
                if !self.running_subagents.cancel(&parent_call_id) {
                    self.env.sink.emit(Event::Warning {
                        message: format!("No subagent is running for the call {parent_call_id}."),
                    });
                }
                return None;
            }
            Op::ListSkills | Op::SetSkillEnabled { .. } => {
                super::skill_ops::take(op, &self.skills, &self.commands, &self.env.sink);
                return None;
            }
            Op::ListPolicies | Op::ReloadPolicies | Op::PolicyDryRun { .. } => {
                super::policy_ops::take(op, self.policy.as_ref(), &self.env.sink);
                return None;
            }
            Op::ListHooks | Op::SetHookEnabled { .. } => {
                let home = self.commands.home.as_deref();
                super::hook_ops::take(op, &self.hooks, home, &self.env.sink);
                return None;
            }
            Op::ListExtensions
            | Op::PreviewExtension { .. }
            | Op::InstallExtension { .. }
            | Op::DiscardExtensionPreview { .. }
            | Op::UninstallExtension { .. }
            | Op::SetExtensionEnabled { .. }
            | Op::UpdateExtension { .. }
            | Op::SetExtensionSetting { .. } => {
                // Installing may clone a repository: off the op loop, so
                // confirmations and interrupts are still taken meanwhile.
                let (skills, sink) = (self.skills.clone(), self.env.sink.clone());
                let mut sources = self.commands.clone();
                // An untrusted folder reads no commands, but its extensions
                // can still be listed and switched for it.
                if sources.workspace.is_none() {
                    sources.workspace =
                        Some(self.hooks.env().cwd).filter(|d| !d.as_os_str().is_empty());
                }
                tokio::task::spawn_blocking(move || {
                    super::extension_ops::take(op, &skills, &sources, &sink)
                });
                return None;
            }
        };
        Some(Queued::Conversation(conversation))
    }

    /// Delivers the user's answer to the waiting turn. `submit` refused
    /// calls nobody waited for; one withdrawn since (the turn was
    /// cancelled) needs no answer any more.
    fn confirm(&mut self, call_id: String, answer: Answer) {
        if !self.confirmations.answer(&call_id, answer) {
            debug!(call_id, "the confirmation was withdrawn before the answer");
        }
    }

    /// `Op::ListCommands`: built-in commands, the MCP servers' prompts and
    /// the custom commands (read from disk each time).
    fn list_commands(&mut self) {
        let sources = &self.commands;
        let (commands, problems) =
            crate::commands::load_commands(sources.home.as_deref(), sources.workspace.as_deref());
        for message in problems {
            if !self.reported_command_problems.contains(&message) {
                self.reported_command_problems.push(message.clone());
                self.env.sink.emit(Event::Warning { message });
            }
        }
        let prompts = self.mcp.as_ref().map(|m| m.prompts()).unwrap_or_default();
        let catalog = crate::commands::Catalog::new(&commands, &prompts, sources.checkpointing);
        self.env.sink.emit(Event::Commands {
            commands: catalog.infos(),
        });
    }

    /// `Op::ListModels`: asking the API takes a request, so the answer
    /// comes from a task of its own.
    fn list_models(&self) {
        let client = self.client.clone();
        let sink = self.env.sink.downgrade();
        tokio::spawn(async move {
            let models = gd_gemini::models::available_models(&client)
                .await
                .into_iter()
                .map(|m| ModelChoice {
                    name: m.name,
                    display_name: m.display_name,
                    description: m.description,
                })
                .collect();
            sink.emit(Event::Models { models });
        });
    }

    fn stats(&self) -> std::sync::MutexGuard<'_, StatsRecorder> {
        self.env.stats.lock().unwrap_or_else(|e| e.into_inner())
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
            self.env.sink.emit(Event::Warning { message });
        }
    }
}
