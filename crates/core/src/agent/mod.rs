//! One user turn: model requests and tool rounds until the model answers
//! without calling tools, the user cancels, or a limit stops it.

use std::sync::Arc;

use chrono::Local;
use gd_gemini::sent::Sent;
use gd_gemini::{Content, Part};
use gd_protocol::{CompressionSkipReason, ErrorKind, Event, TurnStatus, TurnUsage};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info_span, warn};

use crate::chat::{Chat, ChatError, Gate, ModelResponse, ToolCallRequest, not_executed_responses};
use crate::compression::{CompressionOutcome, history_tokens, maybe_compress};
use crate::config::SessionConfig;
use crate::context::session_context_for;
use crate::events::EventSink;
use crate::history::{HistoryRecorder, Recording};
use crate::loop_detection::{LoopDetected, LoopDetector};
use crate::scheduler::{CompletedCall, Scheduler};
use crate::session::context::SharedContext;
use crate::tools::{ToolContext, ToolServices};

mod hooks;
mod input;
mod models;
mod notes;
mod review;
mod turn_end;

pub use input::TurnInput;
pub(crate) use models::usage_from;
pub use notes::NextMessageNotes;

/// The state a session carries from turn to turn.
pub struct Agent {
    pub config: SessionConfig,
    pub chat: Chat,
    pub scheduler: Scheduler,
    services: Arc<ToolServices>,
    loops: LoopDetector,
    /// Model requests made in this session (for `maxSessionTurns`).
    requests_made: u32,
    /// After a compression that did not help, do not try again every turn.
    compression_disabled: bool,
    /// The MCP servers' first discovery is over (or there are none).
    tools_ready: bool,
    /// The tool generation (and approval mode: plan mode's transition
    /// tools are declared by mode) the chat's declarations were taken from.
    /// The skills' generation too: `/skills disable` changes the
    /// `activate_skill` declaration and the skills' prompt section.
    tools_generation: Option<(u64, gd_protocol::ApprovalMode, u64)>,
    /// Records every message into the session history, when set.
    pub history: Option<HistoryRecorder>,
    /// The model `Op::OverrideTurnContext` asked for, read before each
    /// request (the approval mode lives in the policy).
    context: SharedContext,
    /// What the running turn's requests used so far.
    turn_usage: TurnUsage,
    /// What the model must hear with the next user message (reverts,
    /// partly applied reviews): see [`NextMessageNotes`].
    notes: NextMessageNotes,
    /// The pending whole-turn review's staged files (see [`crate::review`]).
    staging: Arc<crate::review::Staging>,
    /// A SessionStart hook's context, for the next prompt.
    start_context: Option<String>,
    /// The session's statistics, stored with each turn's end.
    pub(crate) stats: Option<Arc<std::sync::Mutex<crate::stats::StatsRecorder>>>,
}

/// How long a `/name` that is not known (yet) waits, after the MCP
/// discovery, for the servers to list their prompts before it is sent as
/// text. Listing follows the connection within milliseconds; this only
/// bounds a server that hangs.
pub const PROMPTS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The user-side message a turn is about to add to the chat history, for
/// the recorder.
enum Pending {
    Prompt(String),
    Results(Vec<CompletedCall>),
}

impl Agent {
    pub(crate) fn new(
        config: SessionConfig,
        chat: Chat,
        scheduler: Scheduler,
        services: Arc<ToolServices>,
        context: SharedContext,
    ) -> Self {
        let (config_temp, config_session) = (config.temp_dir.clone(), config.session_id.clone());
        Self {
            config,
            chat,
            scheduler,
            services,
            loops: LoopDetector::new(),
            requests_made: 0,
            compression_disabled: false,
            tools_ready: false,
            tools_generation: None,
            history: None,
            context,
            turn_usage: TurnUsage::default(),
            notes: NextMessageNotes::default(),
            staging: Arc::new(crate::review::Staging::new(Some(
                crate::review::review_store_path(&config_temp, &config_session),
            ))),
            start_context: None,
            stats: None,
        }
    }

    /// Switches to the model the turn context names, if it changed: the
    /// chat (with that model's generation defaults) and the tools that ask
    /// the model use it from the next request on. An `auto*` name sends
    /// the requests to its default model until a prompt is routed.
    fn sync_model(&mut self) {
        let model = self.context.model();
        if model == self.config.model {
            return;
        }
        self.config.model = model.clone();
        self.use_model(gd_gemini::models::resolve_model(&model));
    }

    /// Commits `message` to the history before it enters the chat history.
    async fn record(&mut self, message: &Content, pending: &Pending, sink: &EventSink) {
        let Some(history) = self.history.as_mut() else {
            return;
        };
        let what = match pending {
            Pending::Prompt(typed) => Recording::Prompt { typed },
            Pending::Results(calls) => Recording::ToolResults { calls },
        };
        history.record_user(message, what, sink).await;
    }

    /// Commits `message` before the answer to the request it goes out with
    /// is handled: a prompt commits while the request is in flight (the
    /// chat settles it before the first piece of the answer, see
    /// [`HistoryRecorder::settle`]; the returned [`Sent`] goes with the
    /// request); tool results commit before the request.
    async fn record_before_answer(
        &mut self,
        message: &Content,
        pending: &Pending,
        sink: &EventSink,
    ) -> Option<Sent> {
        match (pending, self.history.as_mut()) {
            (_, None) => None,
            (Pending::Prompt(typed), Some(history)) => {
                history.begin_prompt(message, typed, sink).await
            }
            (Pending::Results(_), Some(_)) => {
                self.record(message, pending, sink).await;
                None
            }
        }
    }

    /// Truncates the conversation at a recorded message: it and everything
    /// after it leave the stored history and the model's context. Returns
    /// how many messages were removed.
    pub async fn rewind(&mut self, message_id: &str) -> Result<usize, String> {
        let Some(history) = self.history.as_mut() else {
            return Err("This session is not recorded, so it cannot be rewound.".into());
        };
        let (removed, contents) = history
            .rewind(message_id)
            .await
            .map_err(|e| format!("Cannot rewind the conversation: {e}"))?;
        self.chat.set_history(contents);
        self.loops.reset();
        Ok(removed)
    }

    /// `/clear`: forgets the conversation and starts a new one, recorded as
    /// a new session in the history (the old one stays there). Returns the
    /// new conversation's id.
    pub async fn clear(&mut self, sink: &EventSink) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        self.chat.start_over(id.clone());
        self.loops.reset();
        self.requests_made = 0;
        self.compression_disabled = false;
        self.config.session_id = id.clone();
        // A pending review goes on under the new conversation's id.
        self.staging
            .set_store(Some(crate::review::review_store_path(
                &self.config.temp_dir,
                &id,
            )));
        if let Some(checkpoints) = self.scheduler.checkpoints() {
            checkpoints.set_session_id(&id);
            checkpoints.set_message_id(None);
        }
        if let Some(history) = self.history.as_mut()
            && let Err(error) = history.start_next(&id, self.chat.model()).await
        {
            warn!(%error, "the new conversation is not recorded");
            sink.emit(Event::Warning {
                message: format!("The new conversation is not saved to the history: {error}"),
            });
            self.history = None;
        }
        id
    }

    /// `/compress`: summarises the history now, whatever its size, and
    /// reports the outcome (`ChatCompressed`, or `CompressionSkipped` with
    /// the reason in Gemini CLI's words).
    pub async fn compress_now(&mut self, cancel: &CancellationToken, sink: &EventSink) {
        self.sync_model();
        let original = history_tokens(&self.chat);
        let threshold = self.config.compression_threshold;
        let nothing = Content::user(Vec::new());
        let skipped = |reason, original_tokens, message: String| {
            sink.emit(Event::CompressionSkipped {
                reason,
                original_tokens,
                message,
            })
        };
        if crate::compression::would_compress(&self.chat, threshold, &nothing, true) {
            self.pre_compress_hook("manual", sink).await;
        }
        match maybe_compress(&mut self.chat, threshold, &nothing, true, cancel, sink).await {
            CompressionOutcome::NotNeeded => skipped(
                CompressionSkipReason::NothingToCompress,
                original,
                "Nothing to compress.".into(),
            ),
            CompressionOutcome::Compressed {
                original_tokens,
                new_tokens,
            } => {
                self.compression_disabled = false;
                self.compressed(original_tokens, new_tokens, sink).await;
            }
            CompressionOutcome::Inflated {
                original_tokens, ..
            } => skipped(
                CompressionSkipReason::NotBeneficial,
                original_tokens,
                if original_tokens < 50_000 {
                    "Compression was not beneficial for this history size.".into()
                } else {
                    "Chat history compression did not reduce its size; the history is unchanged."
                        .into()
                },
            ),
            CompressionOutcome::Failed(_) if cancel.is_cancelled() => skipped(
                CompressionSkipReason::Cancelled,
                original,
                "Compression cancelled; the history is unchanged.".into(),
            ),
            CompressionOutcome::Failed(reason) => skipped(
                CompressionSkipReason::Failed,
                original,
                format!("Failed to compress chat history: {reason}"),
            ),
        }
    }

    /// The chat's history was replaced by a summary: record it and say so.
    async fn compressed(&mut self, original_tokens: u64, new_tokens: u64, sink: &EventSink) {
        if let Some(history) = self.history.as_mut() {
            history.context_replaced(self.chat.history(), sink).await;
        }
        sink.emit(Event::ChatCompressed {
            original_tokens,
            new_tokens,
        });
    }

    /// Brings the chat's declared tools up to date before a model request.
    /// Before the first request it waits until the MCP servers' discovery
    /// is over, as Gemini CLI does. `false` when cancelled while waiting.
    async fn sync_tools(&mut self, cancel: &CancellationToken) -> bool {
        let tools = self.scheduler.tools().clone();
        if !self.tools_ready {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return false,
                _ = tools.ready() => {}
            }
            self.tools_ready = true;
        }
        let generation = (
            tools.generation(),
            self.context.get().approval_mode,
            self.config.skills.generation(),
        );
        if self.tools_generation != Some(generation) {
            let registry = tools.current();
            let mut declarations = crate::plan::declarations(&registry, generation.1);
            let skills = crate::skills::declared_section(&self.config.skills, &mut declarations);
            self.chat.set_tools(declarations);
            let mode = crate::plan::instructions(&self.config, generation.1, &registry);
            self.chat.set_mode_instruction(match (mode, skills) {
                (Some(mode), Some(skills)) => Some(format!("{mode}\n\n{skills}")),
                (mode, skills) => mode.or(skills),
            });
            self.tools_generation = Some(generation);
        }
        true
    }

    /// Runs a user turn to its end and reports how it ended. Every event of
    /// the turn, including the final [`Event::TurnComplete`], goes to `sink`.
    pub async fn run_turn(
        &mut self,
        turn_id: &str,
        input: TurnInput,
        cancel: CancellationToken,
        sink: &EventSink,
    ) -> TurnStatus {
        sink.emit(Event::TurnStarted {
            turn_id: turn_id.to_owned(),
        });
        let started = std::time::Instant::now();
        self.sync_model();
        self.turn_usage = TurnUsage {
            model: self.chat.model().to_owned(),
            ..TurnUsage::default()
        };
        let span = info_span!("turn", turn_id, session_id = %self.config.session_id);
        let (turn_sink, recap) = turn_end::watched(sink);
        let status = self
            .turn_loop(input, &cancel, &turn_sink)
            .instrument(span)
            .await;
        // Whatever the turn staged waits for the user's review.
        self.emit_review(turn_id, false, &turn_sink);
        let mut usage = std::mem::take(&mut self.turn_usage);
        usage.duration_ms = started.elapsed().as_millis() as u64;
        // Stored before the frontend hears the turn is over: what it shows
        // then is what a reopened conversation shows.
        self.record_turn_end(status, &usage, recap, &turn_sink)
            .await;
        sink.emit(Event::TurnComplete {
            turn_id: turn_id.to_owned(),
            status,
            usage,
        });
        status
    }

    async fn turn_loop(
        &mut self,
        input: TurnInput,
        cancel: &CancellationToken,
        sink: &EventSink,
    ) -> TurnStatus {
        self.loops.reset();
        // The prompt as typed, for the history (the model gets it with its @-references
        // expanded).
        let typed = input.typed();
        let mut tool_ctx = ToolContext {
            workspace_dirs: Arc::new(self.config.workspace_dirs.clone()),
            read_only_dirs: Arc::default(),
            file_filtering: self.config.file_filtering,
            cancel: cancel.clone(),
            services: self.services.clone(),
            output: None,
            confirmed: false,
            staging: self.review_staging(),
            plan: Some(Arc::new(crate::plan::for_turn(
                &self.config,
                self.context.clone(),
                self.scheduler.policy().clone(),
                sink.clone(),
            ))),
            sandbox_grant: None,
        };
        let mut parts = match self.prompt_parts(input, &tool_ctx, sink).await {
            Ok(parts) => parts,
            Err(status) => return status,
        };
        if let Some(status) = self.before_agent_hook(&typed, &mut parts, sink).await {
            return status;
        }
        if let Some(context) = self.start_context.take() {
            parts.insert(0, Part::text(context));
        }
        let mut message = self.user_message(parts);
        let mut pending = Pending::Prompt(typed.clone());
        let mut after_agent_retries = 0;
        let prompt_id = self.chat.next_prompt_id();
        loop {
            if let Some(max) = self.config.max_session_turns
                && self.requests_made >= max
            {
                if message.has_function_response() {
                    self.record(&message, &pending, sink).await;
                    self.chat.append(message);
                }
                sink.emit(Event::Error {
                        kind: ErrorKind::TurnLimit,
                        message: format!(
                            "Reached the maximum of {max} model requests for this session. Increase model.maxSessionTurns in settings.json to allow more."
                        ),
                        status: None,
                        fatal: true,
                    });
                return TurnStatus::TurnLimitReached;
            }
            if !self.sync_tools(cancel).await {
                if message.has_function_response() {
                    self.record(&message, &pending, sink).await;
                    self.chat.append(message);
                }
                return TurnStatus::Cancelled;
            }
            self.requests_made += 1;
            self.sync_model();
            self.compress_if_needed(&message, cancel, sink).await;

            let is_prompt = matches!(pending, Pending::Prompt(_));
            if is_prompt {
                self.route_prompt(&message, &prompt_id, cancel, sink).await;
            }

            let model_hooks = self.model_hooks(sink);
            // Committed before any of the answer is handled: a crash from
            // here on loses nothing the user saw.
            let sent = self.record_before_answer(&message, &pending, sink).await;
            let before = self.chat.history().len();
            // Kept to send again if the user accepts a quota fallback.
            let prompt_copy = (is_prompt && self.may_fall_back()).then(|| message.clone());
            let sent = self
                .chat
                .send(
                    message,
                    &prompt_id,
                    cancel,
                    sink,
                    &mut self.loops,
                    Gate {
                        recorder: self.history.as_mut(),
                        sent,
                        model_hooks,
                    },
                )
                .await;
            // Settled by the chat at the answer's first piece; not if the
            // request was cancelled or failed without an answer.
            if let Some(history) = self.history.as_mut() {
                history.settle(sink).await;
            }
            let sent = self
                .retry_after_quota(sent, prompt_copy.as_ref(), &prompt_id, cancel, sink)
                .await;
            if is_prompt && let Some(checkpoints) = self.scheduler.checkpoints() {
                // The turn's edits belong to this recorded prompt: restoring
                // their conversation rewinds to it.
                let recorded = self.history.as_ref().and_then(|h| h.last_prompt_id());
                checkpoints.set_message_id(recorded.map(str::to_owned));
            }
            let response = match sent {
                Ok(response) => response,
                Err(error) => {
                    if is_prompt && let Some(history) = self.history.as_mut() {
                        history.prompt_failed().await;
                    }
                    if matches!(error, ChatError::Cancelled) {
                        return TurnStatus::Cancelled;
                    }
                    if let ChatError::Hook { .. } = error {
                        // 0.61 shows a hook's end of the turn as a warning.
                        sink.emit(Event::Warning {
                            message: error.to_string(),
                        });
                        return TurnStatus::Completed;
                    }
                    report_chat_error(&error, sink);
                    return TurnStatus::Failed;
                }
            };
            // The chat recorded the model message (unless it was empty).
            if self.chat.history().len() == before + 2
                && let Some(history) = self.history.as_mut()
                && let Some(content) = self.chat.history().last()
            {
                history
                    .record_model(content, &response, self.chat.model(), sink)
                    .await;
            }
            self.report_response(&response, sink);
            if let Some(hit) = response.loop_detected.clone() {
                self.stop_for_loop(hit, &response, sink).await;
                return TurnStatus::LoopDetected;
            }
            if response.calls.is_empty() {
                if let Some(again) = self
                    .after_agent_hook(&typed, &response.text, after_agent_retries, sink)
                    .await
                {
                    after_agent_retries += 1;
                    message = self.user_message(vec![Part::text(again.clone())]);
                    pending = Pending::Prompt(again);
                    continue;
                }
                return TurnStatus::Completed;
            }
            if self.config.loop_detection {
                let hit = response
                    .calls
                    .iter()
                    .find_map(|call| self.loops.check_tool_call(&call.name, &call.args));
                if let Some(hit) = hit {
                    self.stop_for_loop(hit, &response, sink).await;
                    return TurnStatus::LoopDetected;
                }
            }
            // An activated skill's folder is readable from the next batch on.
            crate::skills::open_for_reading(&self.config, &mut tool_ctx);
            let batch = self.scheduler.run(&response.calls, &tool_ctx, sink).await;
            for run in batch
                .completed
                .iter()
                .filter_map(|c| c.shown.subagent.as_ref())
            {
                // The turn's totals include its subagents' requests.
                add_turn_usage(&mut self.turn_usage, &run.usage);
            }
            message = Content::user(batch.parts());
            let hook_stop = batch.stopped_by_hook().map(str::to_owned);
            pending = Pending::Results(batch.completed);
            if cancel.is_cancelled() {
                self.record(&message, &pending, sink).await;
                self.chat.append(message);
                return TurnStatus::Cancelled;
            }
            if batch.declined {
                self.record(&message, &pending, sink).await;
                self.chat.append(message);
                return TurnStatus::Declined;
            }
            if let Some(reason) = hook_stop {
                sink.emit(Event::Warning {
                    message: format!("Agent execution stopped: {reason}"),
                });
                self.record(&message, &pending, sink).await;
                self.chat.append(message);
                return TurnStatus::Completed;
            }
        }
    }

    /// The queue of notes the next user message carries (shared: ops that
    /// change files between turns push to it).
    pub fn notes(&self) -> &NextMessageNotes {
        &self.notes
    }

    /// The first message of a session carries the session context; any
    /// message carries the notes queued since the last one, ahead of the
    /// prompt.
    fn user_message(&self, prompt: Vec<Part>) -> Content {
        let mut parts = Vec::with_capacity(prompt.len() + 2);
        if self.chat.history().is_empty() {
            parts.push(Part::text(session_context_for(&self.config, Local::now())));
        }
        if let Some(note) = notes::notes_part(&self.notes.take()) {
            parts.push(Part::text(note));
        }
        parts.extend(prompt);
        Content::user(parts)
    }

    async fn compress_if_needed(
        &mut self,
        pending: &Content,
        cancel: &CancellationToken,
        sink: &EventSink,
    ) {
        if self.compression_disabled {
            return;
        }
        if crate::compression::would_compress(
            &self.chat,
            self.config.compression_threshold,
            pending,
            false,
        ) {
            self.pre_compress_hook("auto", sink).await;
        }
        let outcome = maybe_compress(
            &mut self.chat,
            self.config.compression_threshold,
            pending,
            false,
            cancel,
            sink,
        )
        .await;
        match outcome {
            CompressionOutcome::NotNeeded => {}
            CompressionOutcome::Compressed {
                original_tokens,
                new_tokens,
            } => self.compressed(original_tokens, new_tokens, sink).await,
            CompressionOutcome::Inflated { .. } => {
                self.compression_disabled = true;
                sink.emit(Event::Warning {
                    message: "Chat compression did not reduce the history size; it is off for the rest of this session.".into(),
                });
            }
            CompressionOutcome::Failed(reason) => {
                warn!(%reason, "compression failed");
                sink.emit(Event::Warning {
                    message: format!("Chat compression failed: {reason}"),
                });
            }
        }
    }

    fn report_response(&mut self, response: &ModelResponse, sink: &EventSink) {
        if let Some(usage) = &response.usage {
            let usage = models::usage_from(usage);
            self.turn_usage.add(self.chat.model(), &usage);
            sink.emit(Event::Usage {
                model: self.chat.model().to_owned(),
                latency_ms: response.latency.as_millis() as u64,
                usage,
                role: gd_protocol::RequestRole::Main,
            });
        }
        if let Some(reason) = &response.finish_reason {
            let message = reason.explanation().map(str::to_owned);
            if let Some(message) = &message {
                sink.emit(Event::Warning {
                    message: message.clone(),
                });
            }
            sink.emit(Event::Finished {
                reason: reason.as_str().to_owned(),
                message,
            });
        }
    }

    /// Stops the turn for a loop, answering pending calls so history stays valid.
    async fn stop_for_loop(
        &mut self,
        hit: LoopDetected,
        response: &ModelResponse,
        sink: &EventSink,
    ) {
        if !response.calls.is_empty() {
            let content = not_executed_responses(
                &response.calls,
                "Not executed: the agent was stopped because it was repeating the same actions.",
            );
            self.record_not_executed(&content, &response.calls, sink)
                .await;
            self.chat.append(content);
        }
        sink.emit(Event::LoopDetected {
            kind: hit.kind,
            detail: hit.detail,
        });
    }
}

impl Agent {
    async fn record_not_executed(
        &mut self,
        content: &Content,
        calls: &[ToolCallRequest],
        sink: &EventSink,
    ) {
        if let Some(history) = self.history.as_mut() {
            history
                .record_user(content, Recording::NotExecuted { calls }, sink)
                .await;
        }
    }
}

/// Reports why a turn cannot go on (a command that cannot run) and ends it.
fn fail_turn(sink: &EventSink, message: String) -> TurnStatus {
    end_turn(sink, ErrorKind::Internal, message)
}

/// Ends a turn whose input cannot be used (nothing was sent).
fn input_error(sink: &EventSink, message: String) -> TurnStatus {
    end_turn(sink, ErrorKind::Input, message)
}

fn end_turn(sink: &EventSink, kind: ErrorKind, message: String) -> TurnStatus {
    sink.emit(Event::Error {
        kind,
        message,
        status: None,
        fatal: true,
    });
    TurnStatus::Failed
}

fn report_chat_error(error: &ChatError, sink: &EventSink) {
    let (kind, status) = match error {
        ChatError::Api(e) => {
            let kind = if e.is_auth() {
                ErrorKind::Auth
            } else {
                match e.root() {
                    gd_gemini::GeminiError::Network(_) => ErrorKind::Network,
                    gd_gemini::GeminiError::StreamInterrupted(_) => ErrorKind::StreamInterrupted,
                    gd_gemini::GeminiError::Api(_) => ErrorKind::Api,
                    gd_gemini::GeminiError::Credentials(_) => ErrorKind::Auth,
                    _ => ErrorKind::InvalidResponse,
                }
            };
            (kind, e.api_status())
        }
        ChatError::Blocked { .. } => (ErrorKind::Blocked, None),
        ChatError::InvalidResponse(_) => (ErrorKind::InvalidResponse, None),
        ChatError::Cancelled | ChatError::Hook { .. } => (ErrorKind::Internal, None),
    };
    sink.emit(Event::Error {
        kind,
        message: error.to_string(),
        status,
        fatal: true,
    });
}

/// Adds a subagent's totals to the parent turn's (the turn's model stays
/// the parent's).
fn add_turn_usage(turn: &mut TurnUsage, sub: &TurnUsage) {
    turn.requests += sub.requests;
    turn.prompt_tokens += sub.prompt_tokens;
    turn.cached_tokens += sub.cached_tokens;
    turn.output_tokens += sub.output_tokens;
    turn.thoughts_tokens += sub.thoughts_tokens;
    turn.total_tokens += sub.total_tokens;
    turn.tool_tokens += sub.tool_tokens;
}
