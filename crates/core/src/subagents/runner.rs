//! The subagent's turn loop (Gemini CLI 0.61's `LocalAgentExecutor`): its
//! own chat (system prompt, tools, model, history), its tool calls through
//! the session's scheduler (same policy, same confirmations, same
//! checkpoints), until it calls `complete_task`, runs out of turns or time,
//! or is stopped. Out of turns, out of time, or silent without
//! `complete_task`, it gets one grace turn to answer, as in 0.61.
//!
//! Every event of its stream goes out wrapped in `Event::Subagent` between
//! `Event::SubagentStarted` and `Event::SubagentFinished`, and is kept
//! (text deltas joined) as the transcript the parent call's record carries.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gd_gemini::{Content, FunctionDeclaration, Part};
use gd_protocol::{Event, RequestRole, SubagentStatus, SubagentTranscript, TurnUsage};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info_span};

use super::runtime::SubagentRuntime;
use super::{AgentDefinition, builtin, tools::subagent_registry};
use crate::chat::{Chat, ChatError, Gate, ToolCallRequest};
use crate::events::EventSink;
use crate::loop_detection::LoopDetector;
use crate::scheduler::error_response;
use crate::tools::{ToolContext, ToolResult};

/// The tool a subagent calls to hand back its answer (0.61's name).
pub const COMPLETE_TASK: &str = "complete_task";

/// How long the grace turn may take (0.61's `GRACE_PERIOD_MS`).
const GRACE_PERIOD: Duration = Duration::from_secs(60);

/// What the parent's call answers when the user stopped only this agent.
pub const STOPPED_BY_USER: &str = "The subagent was stopped by the user before it finished.";

/// Why a run ended, in 0.61's words (`terminate_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Terminate {
    Goal,
    MaxTurns,
    Timeout,
    NoCompleteTask,
    Aborted,
    Error,
}

impl Terminate {
    fn as_str(self) -> &'static str {
        match self {
            Self::Goal => "GOAL",
            Self::MaxTurns => "MAX_TURNS",
            Self::Timeout => "TIMEOUT",
            Self::NoCompleteTask => "ERROR_NO_COMPLETE_TASK_CALL",
            Self::Aborted => "ABORTED",
            Self::Error => "ERROR",
        }
    }
}

/// Runs `agent` on `prompt` for the `invoke_agent` call `ctx` executes, and
/// returns that call's result.
pub async fn run(
    runtime: &SubagentRuntime,
    agent: &AgentDefinition,
    prompt: &str,
    ctx: &ToolContext,
) -> ToolResult {
    let Some(output) = ctx.output.clone() else {
        return ToolResult::error(
            crate::tools::ToolErrorKind::Execution,
            "A subagent needs the scheduler's call context.",
        );
    };
    let parent_call_id = output.call_id().to_owned();
    let session_model = ctx
        .services
        .model
        .as_ref()
        .map_or_else(|| runtime.config.model.clone(), |m| m.model.clone());
    let model = gd_gemini::models::resolve_model(&builtin::model_for(agent, &session_model));
    let started = Instant::now();
    // The user's stop (the turn's, or this agent's alone) and the deadline;
    // registered before the start is announced, so a stop sent on seeing
    // it finds the agent.
    let stop = ctx.cancel.child_token();
    runtime.running.start(&parent_call_id, stop.clone());
    output.emit_event(Event::SubagentStarted {
        parent_call_id: parent_call_id.clone(),
        agent_name: agent.name.clone(),
        display_name: agent.display_name.clone(),
        model: model.clone(),
        prompt: prompt.to_owned(),
    });
    let recorded = Arc::new(Mutex::new(Vec::<Event>::new()));
    let confirming = Arc::new(super::deadline::Confirming::new());
    let sink = wrapping_sink(
        &output,
        &parent_call_id,
        &agent.name,
        recorded.clone(),
        confirming.clone(),
    );
    let mut guard = FinishGuard {
        runtime,
        output: output.clone(),
        recorded: recorded.clone(),
        started,
        transcript: Some(SubagentTranscript {
            agent_name: agent.name.clone(),
            display_name: agent.display_name.clone(),
            model: model.clone(),
            prompt: prompt.to_owned(),
            status: SubagentStatus::Cancelled,
            usage: TurnUsage::default(),
            result: None,
            error: None,
            events: Vec::new(),
        }),
        parent_call_id: parent_call_id.clone(),
    };
    let span = info_span!("subagent", agent = %agent.name, parent_call_id = %parent_call_id);
    let mut run = Run {
        runtime,
        agent,
        model: model.clone(),
        sink: sink.clone(),
        usage: TurnUsage {
            model: model.clone(),
            ..TurnUsage::default()
        },
        ctx: ctx.clone(),
        confirming,
    };
    let (reason, result, error) = run.execute(prompt, &stop).instrument(span).await;
    let mut usage = std::mem::take(&mut run.usage);
    usage.duration_ms = started.elapsed().as_millis() as u64;
    let stopped_alone = reason == Terminate::Aborted && !ctx.cancel.is_cancelled();
    let status = match reason {
        Terminate::Goal => SubagentStatus::Completed,
        Terminate::MaxTurns => SubagentStatus::TurnLimit,
        Terminate::Timeout => SubagentStatus::Timeout,
        Terminate::Aborted => SubagentStatus::Cancelled,
        Terminate::NoCompleteTask | Terminate::Error => SubagentStatus::Failed,
    };
    guard.transcript = None;
    output.emit_event(Event::SubagentFinished {
        parent_call_id: parent_call_id.clone(),
        agent_name: agent.name.clone(),
        status,
        usage: usage.clone(),
        result: result.clone(),
        error: error.clone(),
    });
    let events = std::mem::take(&mut *recorded.lock().unwrap_or_else(|e| e.into_inner()));
    runtime.keep_transcript(
        &parent_call_id,
        SubagentTranscript {
            agent_name: agent.name.clone(),
            display_name: agent.display_name.clone(),
            model,
            prompt: prompt.to_owned(),
            status,
            usage,
            result: result.clone(),
            error: error.clone(),
            events: bounded(events),
        },
    );
    let name = &agent.name;
    if stopped_alone {
        return ToolResult::success(
            format!("Subagent '{name}' was stopped by the user. {STOPPED_BY_USER}"),
            format!("{name}: stopped by the user"),
        );
    }
    if let (Terminate::Error, Some(error)) = (reason, &error) {
        return ToolResult::success(
            format!("Subagent '{name}' failed. Error: {error}"),
            format!("{name} failed: {error}"),
        );
    }
    let result = result.unwrap_or_else(|| {
        if reason == Terminate::Goal {
            "Task completed.".to_owned()
        } else {
            "Agent execution was terminated before completion.".to_owned()
        }
    });
    ToolResult::success(
        format!(
            "Subagent '{name}' finished.\nTermination Reason: {}\nResult:\n{result}",
            reason.as_str()
        ),
        format!("{name} finished ({})", reason.as_str()),
    )
}

/// When the run's future is dropped before it ended (the turn was
/// interrupted while the agent worked): emits `SubagentFinished`
/// (cancelled), so a frontend never keeps a card spinning, and keeps what
/// the agent did as the call's transcript (the scheduler takes it right
/// after, for the cancelled call's record).
struct FinishGuard<'a> {
    runtime: &'a SubagentRuntime,
    output: crate::tools::OutputSink,
    recorded: Arc<Mutex<Vec<Event>>>,
    started: Instant,
    /// Still set: the run has not finished.
    transcript: Option<SubagentTranscript>,
    parent_call_id: String,
}

impl Drop for FinishGuard<'_> {
    fn drop(&mut self) {
        self.runtime.running.finish(&self.parent_call_id);
        let Some(mut transcript) = self.transcript.take() else {
            return;
        };
        let events = std::mem::take(&mut *self.recorded.lock().unwrap_or_else(|e| e.into_inner()));
        transcript.usage.model = transcript.model.clone();
        for event in &events {
            if let Event::Usage { model, usage, .. } = event {
                transcript.usage.add(model, usage);
            }
        }
        transcript.usage.duration_ms = self.started.elapsed().as_millis() as u64;
        transcript.events = bounded(events);
        self.output.emit_event(Event::SubagentFinished {
            parent_call_id: self.parent_call_id.clone(),
            agent_name: transcript.agent_name.clone(),
            status: SubagentStatus::Cancelled,
            usage: transcript.usage.clone(),
            result: None,
            error: None,
        });
        self.runtime
            .keep_transcript(&self.parent_call_id, transcript);
    }
}

/// A sink whose every event goes to the session wrapped in
/// `Event::Subagent`, in order, and into the transcript.
fn wrapping_sink(
    output: &crate::tools::OutputSink,
    parent_call_id: &str,
    agent_name: &str,
    recorded: Arc<Mutex<Vec<Event>>>,
    confirming: Arc<super::deadline::Confirming>,
) -> EventSink {
    let (sink, _unread) = EventSink::new();
    let output = output.clone();
    let (parent_call_id, agent_name) = (parent_call_id.to_owned(), agent_name.to_owned());
    sink.observed(Arc::new(move |event: &Event| {
        confirming.observe(event);
        output.emit_event(Event::Subagent {
            parent_call_id: parent_call_id.clone(),
            agent_name: agent_name.clone(),
            event: Box::new(event.clone()),
        });
        let mut recorded = recorded.lock().unwrap_or_else(|e| e.into_inner());
        join_into(&mut recorded, event.clone());
    }))
}

/// Appends `event`, joining a text delta onto the one before it.
fn join_into(events: &mut Vec<Event>, event: Event) {
    if let (Some(Event::ContentDelta { text: last }), Event::ContentDelta { text }) =
        (events.last_mut(), &event)
    {
        last.push_str(text);
        return;
    }
    events.push(event);
}

/// At most this many events of a transcript are kept in the history.
const TRANSCRIPT_EVENTS: usize = 500;

/// A transcript kept to a bounded size: the first events, then the last
/// (the end holds the answer).
fn bounded(mut events: Vec<Event>) -> Vec<Event> {
    if events.len() <= TRANSCRIPT_EVENTS {
        return events;
    }
    let tail = events.split_off(events.len() - TRANSCRIPT_EVENTS / 2);
    events.truncate(TRANSCRIPT_EVENTS / 2);
    events.push(Event::Warning {
        message: "Part of this subagent's transcript was left out of the history.".into(),
    });
    events.extend(tail);
    events
}

struct Run<'a> {
    runtime: &'a SubagentRuntime,
    agent: &'a AgentDefinition,
    model: String,
    sink: EventSink,
    usage: TurnUsage,
    ctx: ToolContext,
    confirming: Arc<super::deadline::Confirming>,
}

/// How one model request of the loop ended.
enum Step {
    /// Tool results to send next.
    Continue(Content),
    /// The agent called `complete_task` with its answer.
    Done(String),
    /// The agent answered without calling any tool.
    Silent,
    /// Stopped (by the user or the deadline), with the answers of the
    /// calls it had made, if any (cancelled ones included).
    Stopped(Vec<Part>),
    Failed(String),
}

impl Run<'_> {
    async fn execute(
        &mut self,
        prompt: &str,
        stop: &CancellationToken,
    ) -> (Terminate, Option<String>, Option<String>) {
        // Its own MCP servers, for this run only: `servers` stops them when
        // it drops, on every way out of this function.
        let servers = self.start_own_servers(stop).await;
        let mut registry = subagent_registry(self.agent, &self.runtime.scheduler.registry());
        if let Some(servers) = &servers {
            registry = servers.offer(&registry);
        }
        let scheduler = self
            .runtime
            .scheduler
            .for_subagent(registry.clone(), &self.agent.name);
        let (output_name, output_schema) = builtin::output(self.agent);
        let mut declarations = registry.declarations();
        declarations.push(complete_task_declaration(output_name, output_schema));
        let mut generation = self.runtime.config.generation_config_for(&self.model);
        builtin::tune(self.agent, &mut generation);
        let mut chat = Chat::new(
            self.runtime.client.clone(),
            self.model.clone(),
            &system_prompt(self.agent, &self.ctx, output_name, &self.runtime.memory),
            declarations,
            generation,
            self.runtime.config.session_id.clone(),
        )
        .with_call_ids(crate::chat::CallIds::PerPrompt);
        // The deadline stops the run like the user does; `timed_out` tells
        // them apart.
        let run_token = stop.child_token();
        let timed_out = Arc::new(AtomicBool::new(false));
        let timer =
            self.confirming
                .deadline(self.agent.timeout, run_token.clone(), timed_out.clone());
        let agent_id = uuid::Uuid::new_v4().to_string();
        let mut ctx = self.ctx.clone();
        ctx.cancel = run_token.clone();
        ctx.output = None;
        let mut message = Content::user(vec![Part::text(builtin::query(self.agent, prompt))]);
        let mut turns = 0u32;
        let reason = loop {
            if turns >= self.agent.max_turns {
                break Terminate::MaxTurns;
            }
            turns += 1;
            let step = self
                .step(
                    &mut chat,
                    message,
                    &format!("{agent_id}#{}", turns - 1),
                    &scheduler,
                    &ctx,
                    output_name,
                )
                .await;
            match step {
                Step::Continue(next) => message = next,
                Step::Done(result) => {
                    timer.abort();
                    return (Terminate::Goal, Some(result), None);
                }
                Step::Silent => {
                    message = Content::user(Vec::new());
                    break Terminate::NoCompleteTask;
                }
                Step::Stopped(parts) if timed_out.load(Ordering::SeqCst) => {
                    message = Content::user(parts);
                    break Terminate::Timeout;
                }
                Step::Stopped(_) => {
                    timer.abort();
                    return (Terminate::Aborted, None, None);
                }
                Step::Failed(error) => {
                    timer.abort();
                    return (Terminate::Error, None, Some(error));
                }
            }
        };
        timer.abort();
        if stop.is_cancelled() {
            return (Terminate::Aborted, None, None);
        }
        // One grace turn: the pending tool results (so the history stays
        // valid) and the warning, with its own short deadline.
        let grace = stop.child_token();
        let grace_timer = tokio::spawn({
            let token = grace.clone();
            async move {
                tokio::select! {
                    _ = token.cancelled() => {}
                    _ = tokio::time::sleep(GRACE_PERIOD) => token.cancel(),
                }
            }
        });
        self.sink.emit(Event::Thought {
            subject: "Execution limit reached".to_owned(),
            description: format!(
                "Execution limit reached ({}). Attempting one final recovery turn with a grace period.",
                reason.as_str()
            ),
        });
        let mut parts = message.parts;
        // A request that was stopped left its message last in the chat:
        // it goes out again with the warning, as one user message.
        if chat
            .history()
            .last()
            .is_some_and(|c| c.role == Some(gd_gemini::Role::User))
        {
            let mut history = chat.history().to_vec();
            if let Some(unanswered) = history.pop() {
                parts.splice(0..0, unanswered.parts);
            }
            chat.set_history(history);
        }
        if chat.history().is_empty() {
            // Stopped on its first request (which the chat took back).
            parts.insert(0, Part::text(builtin::query(self.agent, prompt)));
        }
        parts.push(Part::text(final_warning(reason)));
        ctx.cancel = grace.clone();
        let step = self
            .step(
                &mut chat,
                Content::user(parts),
                &format!("{agent_id}#{turns}"),
                &scheduler,
                &ctx,
                output_name,
            )
            .await;
        grace_timer.abort();
        match step {
            Step::Done(result) => (Terminate::Goal, Some(result), None),
            _ if stop.is_cancelled() => (Terminate::Aborted, None, None),
            _ => {
                let result = match reason {
                    Terminate::Timeout => format!(
                        "Agent timed out after {} minutes.",
                        self.agent.timeout.as_secs() / 60
                    ),
                    Terminate::MaxTurns => {
                        format!("Agent reached max turns limit ({}).", self.agent.max_turns)
                    }
                    _ => format!("Agent stopped calling tools but did not call '{COMPLETE_TASK}'."),
                };
                (reason, Some(result.clone()), Some(result))
            }
        }
    }

    /// Starts the agent's `mcp_servers`, if it has any; the ones that do not
    /// come up are reported (the agent runs without their tools).
    async fn start_own_servers(
        &self,
        stop: &CancellationToken,
    ) -> Option<super::inline_mcp::AgentServers> {
        if self.agent.mcp_servers.is_empty() {
            return None;
        }
        let base = match self.runtime.catalog.own_mcp() {
            super::catalog::OwnMcp::Untrusted => {
                let message = super::inline_mcp::untrusted_message(self.agent);
                tracing::warn!("{message}");
                self.sink.emit(Event::Warning { message });
                return None;
            }
            super::catalog::OwnMcp::Settings(options) => Some(options.as_ref()),
            super::catalog::OwnMcp::Defaults => None,
        };
        let (servers, problems) = super::inline_mcp::AgentServers::start(
            &self.agent.name,
            &self.agent.mcp_servers,
            base,
            self.ctx.workspace_dirs.to_vec(),
            stop,
        )
        .await;
        for message in problems {
            tracing::warn!("{message}");
            self.sink.emit(Event::Warning { message });
        }
        if let Some(policy) = self.runtime.scheduler.policy().as_policy() {
            for server in servers.trusted() {
                let rule = super::approval::trusted_server_rule(&self.agent.name, &server);
                policy.engine().add_session_rule(rule);
            }
        }
        Some(servers)
    }

    /// One model request and the tool calls it made.
    async fn step(
        &mut self,
        chat: &mut Chat,
        message: Content,
        prompt_id: &str,
        scheduler: &crate::scheduler::Scheduler,
        ctx: &ToolContext,
        output_name: &str,
    ) -> Step {
        let mut loops = LoopDetector::new();
        let sent = chat
            .send(
                message,
                prompt_id,
                &ctx.cancel,
                &self.sink,
                &mut loops,
                Gate::default(),
            )
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(ChatError::Cancelled) => return Step::Stopped(Vec::new()),
            Err(error) => return Step::Failed(error.to_string()),
        };
        if let Some(usage) = &response.usage {
            let usage = crate::agent::usage_from(usage);
            self.usage.add(chat.model(), &usage);
            self.sink.emit(Event::Usage {
                model: chat.model().to_owned(),
                latency_ms: response.latency.as_millis() as u64,
                usage,
                role: RequestRole::Subagent,
            });
        }
        if ctx.cancel.is_cancelled() && response.calls.is_empty() {
            return Step::Stopped(Vec::new());
        }
        if response.calls.is_empty() {
            return Step::Silent;
        }
        let (finish, others): (Vec<&ToolCallRequest>, Vec<&ToolCallRequest>) =
            response.calls.iter().partition(|c| c.name == COMPLETE_TASK);
        let others: Vec<ToolCallRequest> = others.into_iter().cloned().collect();
        let batch = scheduler.run(&others, ctx, &self.sink).await;
        let mut answers = batch.completed.into_iter();
        let mut parts = Vec::new();
        let mut result = None;
        // Answers in call order: the scheduler's for its calls, ours for
        // `complete_task`.
        for call in &response.calls {
            if call.name != COMPLETE_TASK {
                if let Some(done) = answers.next() {
                    parts.extend(done.parts);
                }
                continue;
            }
            match submitted(&call.args, output_name) {
                Ok(text) if result.is_none() => {
                    result = Some(text);
                    parts.extend(crate::scheduler::function_response_parts(
                        &call.call_id,
                        COMPLETE_TASK,
                        crate::tools::LlmContent::Text(
                            "Result submitted and task completed.".to_owned(),
                        ),
                    ));
                }
                Ok(_) => parts.push(error_response(
                    &call.call_id,
                    COMPLETE_TASK,
                    "Task already marked complete in this turn.",
                )),
                Err(problem) => parts.push(error_response(&call.call_id, COMPLETE_TASK, &problem)),
            }
        }
        let _ = finish;
        match result {
            Some(text) => Step::Done(text),
            None if ctx.cancel.is_cancelled() => Step::Stopped(parts),
            None => Step::Continue(Content::user(parts)),
        }
    }
}

/// The answer a `complete_task` call submits, or why it is not one.
fn submitted(args: &Value, output_name: &str) -> Result<String, String> {
    match args.get(output_name) {
        None | Some(Value::Null) => Err(format!(
            "Missing required \"{output_name}\" argument. You must provide your findings when calling {COMPLETE_TASK}."
        )),
        Some(Value::String(text)) if text.trim().is_empty() => Err(format!(
            "Missing required \"{output_name}\" argument. You must provide your findings when calling {COMPLETE_TASK}."
        )),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(other) => Ok(serde_json::to_string_pretty(other).unwrap_or_default()),
    }
}

fn complete_task_declaration(output_name: &str, schema: Value) -> FunctionDeclaration {
    let description = if output_name == "result" {
        "Call this tool to submit your final findings and complete the task. This is the ONLY way to finish."
    } else {
        "Call this tool to submit your final answer and complete the task. This is the ONLY way to finish."
    };
    FunctionDeclaration {
        name: COMPLETE_TASK.to_owned(),
        description: Some(description.to_owned()),
        parameters_json_schema: Some(json!({
            "type": "object",
            // 0.61 offers `wait_for_previous` on every tool, this one too.
            "properties": {
                output_name: schema,
                "wait_for_previous": crate::tools::schema::wait_for_previous()
            },
            "required": [output_name]
        })),
        ..Default::default()
    }
}

/// The agent's system prompt, then what every agent is told (as 0.61
/// appends it): where it works, that nobody can answer its questions, and
/// how to finish.
fn system_prompt(
    agent: &AgentDefinition,
    ctx: &ToolContext,
    output_name: &str,
    memory: &str,
) -> String {
    let dirs: Vec<String> = ctx
        .workspace_dirs
        .iter()
        .map(|d| format!("- {}", d.display()))
        .collect();
    let mut prompt = crate::memory::system_prompt_with_memory(&agent.system_prompt, memory);
    prompt.push_str(&format!(
        "\n\n# Environment Context\nThe workspace folders (work inside them):\n{}\nOperating system: {}.",
        dirs.join("\n"),
        std::env::consts::OS
    ));
    if let Some(plan) = ctx.plan.as_ref().filter(|p| p.is_planning()) {
        prompt.push_str(&format!(
            "\n\n# Execution Constraints\nThe session is in Plan Mode: your write tools may only change plan (.md) files in the plans directory, {}/. Do not change source code.",
            plan.plans_dir().display()
        ));
    }
    prompt.push_str(&format!(
        "\nImportant Rules:\n\
* Nobody can answer you while you work: do not ask for input or clarification.\n\
* Work step by step with the tools you have.\n\
* Use absolute paths for files, built from the Environment Context.\n\
* If the user rejects one of your tool calls, accept it and try another way; do not repeat the rejected call.\n\
* When the task is done, call the `{COMPLETE_TASK}` tool with your complete findings in its \"{output_name}\" argument: this is the only way to finish, and an answer given without it is lost.\n\
* Call no other tool in the same turn as `{COMPLETE_TASK}`."
    ));
    prompt
}

/// The grace turn's message (0.61's final warning, in our words).
fn final_warning(reason: Terminate) -> String {
    let why = match reason {
        Terminate::Timeout => "You have run out of time.",
        Terminate::MaxTurns => "You have used all your turns.",
        _ => "You stopped calling tools without finishing.",
    };
    format!(
        "{why} This is your last chance, with a short grace period: call `{COMPLETE_TASK}` now with your best answer, say that your work was cut short, and call no other tool."
    )
}
