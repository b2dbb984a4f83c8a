//! Recording a session into the history store, and resuming one from it.
//!
//! The [`HistoryRecorder`] is a synchronous hook of the turn loop, not an
//! event listener: the agent awaits each commit before it sends the next
//! model request, so whatever the user saw is on disk (WAL, committed)
//! before anything else can happen. The prompt is the exception that keeps
//! the rule: it commits while its request goes out, and the chat waits for
//! that commit ([`HistoryRecorder::settle`]) before it handles any of the
//! answer, so nothing of the answer is shown before the prompt is on disk
//! (see [`slot`]; a new run also opens, even creates, the database then). Every message the chat history gains is
//! recorded exactly as the model sees it (`parts` JSON), so resuming rebuilds
//! the same `Content` list and the next request carries the full history.
//!
//! A store that fails (disk full, permissions) must not stop the chat: the
//! failure becomes one warning and recording stops for the session.

use gd_gemini::sent::Sent;
use gd_gemini::{Content, Part, Role as GeminiRole};
use gd_protocol::{Event, ToolCallStatus};
use gd_store::gemini_cli::{DISPLAY_CHARS, cut, output_summary};
use gd_store::{
    McpToolName, MessageKind, MessageRef, NewMessage, NewSession, Role, Store, StoreError,
    ThoughtRecord, TokenUsage, ToolCallRecord, title_from,
};
use serde_json::Value;
use tracing::warn;

mod resumed;
mod slot;
mod turn_end;

pub use resumed::ResumedUsage;
pub use slot::{AfterStart, StoreOpener};
use slot::{Committed, Opened, StoreSlot};
pub use turn_end::{TurnEnd, TurnRecap};

use crate::chat::{ModelResponse, ToolCallRequest, not_executed_responses};
use crate::events::EventSink;
use crate::scheduler::CompletedCall;

/// The answer a resumed session gives to calls its model made just before
/// the app stopped.
pub const INTERRUPTED_CALL: &str = "Not executed: the session ended before this tool call ran.";

/// Longest tool-argument text indexed for search.
const ARGS_SEARCH_CHARS: usize = 500;

/// What a recorder needs to know about a message it is about to commit.
#[derive(Debug, Clone)]
pub enum Recording<'a> {
    /// The user's prompt; `typed` is what the user wrote (the content may
    /// also carry the session context, which is not searchable text).
    Prompt { typed: &'a str },
    /// Results of tool calls that ran (or were cancelled or declined).
    ToolResults { calls: &'a [CompletedCall] },
    /// Responses for calls that were never executed (loop detection, turn
    /// limit), all with one reason.
    NotExecuted { calls: &'a [ToolCallRequest] },
}

/// Records one session into the store.
pub struct HistoryRecorder {
    store: StoreSlot,
    session_id: String,
    /// The resumed history, handed to the chat when the session starts.
    initial: Vec<Content>,
    /// The last recorded prompt (taken out of context if its request fails).
    last_prompt: Option<String>,
    /// Set after the store failed once: stop trying, the user was warned.
    failed: bool,
    /// Starts a deferred commit that waits for its request to go out, when
    /// fired or dropped (by [`Self::settle`]).
    settle_trigger: Option<tokio::sync::oneshot::Sender<()>>,
    /// The running turn recorded its prompt (see [`Self::record_turn_end`]).
    turn_prompted: bool,
    /// A resumed session's usage so far, handed to its statistics once.
    resumed_usage: Option<ResumedUsage>,
}

impl std::fmt::Debug for HistoryRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryRecorder")
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

/// Why a session cannot be resumed or rewound.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the stored history cannot be read: {0}")]
    Corrupt(String),
    #[error("history task failed: {0}")]
    Task(String),
}

/// Why the history of a session about to start could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum LaunchHistoryError {
    /// The new session could not be created in the store (it can still
    /// run, unrecorded).
    #[error(transparent)]
    Start(HistoryError),
    /// The stored session to continue cannot be read.
    #[error("Cannot resume session {id}: {source}")]
    Resume {
        id: String,
        #[source]
        source: HistoryError,
    },
}

/// The recorder of a session about to start, the same way for every
/// frontend: with `resume` (a stored session's id) that session is
/// continued (its id becomes `config.session_id`, its in-context messages
/// the chat's history); else a new session is recorded under
/// `config.session_id` in `workspace` (the key the frontend lists sessions
/// by). Pass the recorder to [`crate::Session::spawn_recorded`].
pub async fn open_for_launch(
    store: Store,
    config: &mut crate::SessionConfig,
    workspace: &str,
    resume: Option<&str>,
) -> Result<HistoryRecorder, LaunchHistoryError> {
    match resume {
        Some(id) => {
            let recorder = HistoryRecorder::resume(store, id).await.map_err(|source| {
                LaunchHistoryError::Resume {
                    id: id.to_owned(),
                    source,
                }
            })?;
            id.clone_into(&mut config.session_id);
            Ok(recorder)
        }
        None => HistoryRecorder::start(store, &config.session_id, workspace, &config.model)
            .await
            .map_err(LaunchHistoryError::Start),
    }
}

/// A new session of this app in `workspace`, titled by its first prompt.
fn new_session(session_id: &str, workspace: &str, model: &str) -> NewSession {
    NewSession {
        id: session_id.to_owned(),
        workspace: workspace.to_owned(),
        title: String::new(),
        model: Some(model.to_owned()),
        created_ms: gd_store::now_ms(),
        source: gd_store::SOURCE_DESKTOP.to_owned(),
        origin: None,
    }
}

/// Runs a blocking store call off the async runtime.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, HistoryError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| HistoryError::Task(e.to_string()))?
        .map_err(HistoryError::from)
}

impl HistoryRecorder {
    /// Starts recording a new session (created in the store now, titled by
    /// its first prompt).
    pub async fn start(
        store: Store,
        session_id: &str,
        workspace: &str,
        model: &str,
    ) -> Result<Self, HistoryError> {
        let session = new_session(session_id, workspace, model);
        let s = store.clone();
        blocking(move || s.create_session(&session)).await?;
        Ok(Self::new(store, session_id, Vec::new()))
    }

    /// Starts recording a new session whose store is opened by `opener`
    /// (the session created in it, then `after` run) on the blocking pool,
    /// once the first prompt's request has gone out (or when something
    /// needs the store first): the session starts and sends its first
    /// request without waiting for the database. If the opening fails, the
    /// session runs unrecorded and the user is warned when the first message
    /// would have been recorded; `after`'s warnings are shown then too.
    pub fn start_deferred(
        opener: StoreOpener,
        after: AfterStart,
        session_id: &str,
        workspace: &str,
        model: &str,
    ) -> Self {
        let session = new_session(session_id, workspace, model);
        Self {
            store: StoreSlot::deferred(opener, session, after),
            ..Self::new_in(StoreSlot::Gone, session_id, Vec::new())
        }
    }

    /// Continues a stored session: its in-context messages become the
    /// chat's history. Use the session's id as the new session's id.
    pub async fn resume(store: Store, session_id: &str) -> Result<Self, HistoryError> {
        let s = store.clone();
        let id = session_id.to_owned();
        let context = blocking(move || {
            if s.session(&id)?.is_none() {
                return Err(StoreError::NoSuchSession(id));
            }
            Ok((s.load_context(&id)?, s.usage_records(&id)?))
        })
        .await?;
        let (context, usage_records) = context;
        let mut history = to_contents(context)?;
        // Killed while a tool ran: the model's calls have no answers, and
        // the API rejects such a history. Answer them as not executed.
        if let Some(last) = history.last()
            && last.role == Some(GeminiRole::Model)
        {
            let calls: Vec<ToolCallRequest> = last
                .parts
                .iter()
                .filter_map(|p| p.function_call.as_ref())
                .map(|c| ToolCallRequest {
                    call_id: c.id.clone().unwrap_or_default(),
                    name: c.name.clone(),
                    args: c.args.clone().unwrap_or(Value::Null),
                })
                .collect();
            if !calls.is_empty() {
                let content = not_executed_responses(&calls, INTERRUPTED_CALL);
                let mut message = NewMessage::new(
                    Role::User,
                    MessageKind::ToolResult,
                    parts_json(&content),
                    String::new(),
                );
                message.tool_calls = calls
                    .iter()
                    .map(|c| not_executed_record(c, INTERRUPTED_CALL))
                    .collect();
                let (s, id) = (store.clone(), session_id.to_owned());
                blocking(move || s.append_message(&id, &message)).await?;
                history.push(content);
            }
        }
        let mut recorder = Self::new(store, session_id, history);
        recorder.resumed_usage = Some(resumed::rebuild(&usage_records));
        Ok(recorder)
    }

    /// A resumed session's usage so far (the turns and statistics it had
    /// when it was last used); taken once.
    pub fn take_resumed_usage(&mut self) -> Option<ResumedUsage> {
        self.resumed_usage.take()
    }

    /// Records from now on into a new session `session_id` of the same
    /// workspace, model and source (`/clear`): the current one stays in the
    /// history as it is.
    pub async fn start_next(&mut self, session_id: &str, model: &str) -> Result<(), HistoryError> {
        let store = self.ready_store(None).await?;
        let (s, current) = (store.clone(), self.session_id.clone());
        let previous = blocking(move || s.session(&current)).await?;
        let session = NewSession {
            id: session_id.to_owned(),
            workspace: previous
                .as_ref()
                .map(|p| p.workspace.clone())
                .unwrap_or_default(),
            title: String::new(),
            model: Some(model.to_owned()),
            created_ms: gd_store::now_ms(),
            source: previous
                .map(|p| p.source)
                .unwrap_or_else(|| gd_store::SOURCE_DESKTOP.to_owned()),
            origin: None,
        };
        let s = store.clone();
        blocking(move || s.create_session(&session)).await?;
        self.session_id = session_id.to_owned();
        self.last_prompt = None;
        self.failed = false;
        Ok(())
    }

    fn new(store: Store, session_id: &str, initial: Vec<Content>) -> Self {
        Self::new_in(StoreSlot::Ready(store), session_id, initial)
    }

    fn new_in(store: StoreSlot, session_id: &str, initial: Vec<Content>) -> Self {
        Self {
            store,
            session_id: session_id.to_owned(),
            initial,
            last_prompt: None,
            failed: false,
            settle_trigger: None,
            turn_prompted: false,
            resumed_usage: None,
        }
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The store, once open (waiting for the opening or a prompt commit
    /// still running); none if it could not be opened.
    pub async fn store(&mut self) -> Option<Store> {
        self.ready_store(None).await.ok()
    }

    /// Waits for the store's opening and the prompt commit started by
    /// [`Self::begin_prompt`], if they are still running, and reports their
    /// outcome: [`Event::MessageRecorded`] for the prompt, or a warning that
    /// the session is not (or no longer) saved. The chat calls it before it
    /// handles the first piece of the model's answer; calling it again does
    /// nothing.
    pub async fn settle(&mut self, sink: &EventSink) {
        self.settle_with(Some(sink)).await;
    }

    async fn settle_with(&mut self, sink: Option<&EventSink>) {
        // A commit waiting for its request to go out starts now.
        self.settle_trigger.take();
        match std::mem::replace(&mut self.store, StoreSlot::Gone) {
            StoreSlot::Deferred(deferred) => {
                let opened = StoreSlot::open_now(deferred).await;
                self.opened(opened, sink);
            }
            StoreSlot::Committing(commit) => {
                let Committed { opened, prompt } = commit.await.unwrap_or_else(|e| Committed {
                    opened: Err(HistoryError::Task(e.to_string())),
                    prompt: None,
                });
                self.opened(opened, sink);
                match prompt {
                    Some(Ok(r)) => {
                        if let Some(sink) = sink {
                            sink.emit(Event::MessageRecorded {
                                message_id: r.id.clone(),
                                seq: r.seq,
                                kind: MessageKind::Prompt.as_str().to_owned(),
                                call_ids: Vec::new(),
                            });
                        }
                        self.last_prompt = Some(r.id);
                    }
                    Some(Err(e)) => self.fail_with(e, sink),
                    None => {}
                }
            }
            other => self.store = other,
        }
    }

    /// Takes the outcome of an opening: the store, or recording stops.
    fn opened(&mut self, opened: Result<Opened, HistoryError>, sink: Option<&EventSink>) {
        match opened {
            Ok(Opened { store, notes }) => {
                self.store = StoreSlot::Ready(store);
                for message in notes {
                    warn!(%message, "history");
                    if let Some(sink) = sink {
                        sink.emit(Event::Warning { message });
                    }
                }
            }
            Err(error) => {
                warn!(%error, "the session history cannot be opened");
                self.store = StoreSlot::Gone;
                self.failed = true;
                if let Some(sink) = sink {
                    sink.emit(Event::Warning {
                        message: format!("This session is not saved to the history: {error}"),
                    });
                }
            }
        }
    }

    /// The open store, after whatever was still running.
    async fn ready_store(&mut self, sink: Option<&EventSink>) -> Result<Store, HistoryError> {
        self.settle_with(sink).await;
        match &self.store {
            StoreSlot::Ready(store) => Ok(store.clone()),
            _ => Err(HistoryError::Task(
                "the session history is not available".into(),
            )),
        }
    }

    /// Starts committing the user's prompt and returns without waiting: the
    /// request goes out meanwhile, and [`Self::settle`], before the answer
    /// is handled, finishes it. The commit is the same as
    /// [`Self::record_user`]'s (`Recording::Prompt`). Give the returned
    /// [`Sent`] to the prompt's request ([`gd_gemini::GeminiClient::stream_notifying`]):
    /// a store not opened yet is opened once the request has gone out.
    pub async fn begin_prompt(
        &mut self,
        content: &Content,
        typed: &str,
        sink: &EventSink,
    ) -> Option<Sent> {
        // A commit still running (none in a turn loop) is finished first.
        if matches!(self.store, StoreSlot::Committing(_)) {
            self.settle(sink).await;
        }
        if self.failed {
            return None;
        }
        let message = NewMessage::new(
            Role::User,
            MessageKind::Prompt,
            parts_json(content),
            typed.to_owned(),
        );
        let title = title_from(&message.text);
        self.turn_prompted();
        let (sent, settle_trigger, triggers) = slot::triggers();
        self.settle_trigger = Some(settle_trigger);
        let slot = std::mem::replace(&mut self.store, StoreSlot::Gone);
        self.store = slot.commit_prompt(message, title, self.session_id.clone(), triggers);
        Some(sent)
    }

    /// The stored id of the last recorded prompt (the running turn's, once
    /// it is committed), until its request fails or the history is rewound.
    pub fn last_prompt_id(&self) -> Option<&str> {
        self.last_prompt.as_deref()
    }

    /// The resumed history (empty for a new session); taken once.
    pub fn take_initial_history(&mut self) -> Vec<Content> {
        std::mem::take(&mut self.initial)
    }

    /// Commits a user-side message (prompt or tool results) that is about
    /// to enter the chat history.
    pub async fn record_user(&mut self, content: &Content, what: Recording<'_>, sink: &EventSink) {
        let (kind, text, calls) = match what {
            Recording::Prompt { typed } => (MessageKind::Prompt, typed.to_owned(), Vec::new()),
            Recording::ToolResults { calls } => {
                let records: Vec<ToolCallRecord> = calls.iter().map(result_record).collect();
                (MessageKind::ToolResult, summaries(&records), records)
            }
            Recording::NotExecuted { calls } => {
                let records: Vec<ToolCallRecord> = calls
                    .iter()
                    .map(|c| not_executed_record(c, "Not executed."))
                    .collect();
                (MessageKind::ToolResult, String::new(), records)
            }
        };
        let mut message = NewMessage::new(Role::User, kind, parts_json(content), text);
        message.tool_calls = calls;
        let title = (kind == MessageKind::Prompt).then(|| title_from(&message.text));
        let recorded = self.commit(message, title, sink).await;
        if kind == MessageKind::Prompt {
            if recorded.is_some() {
                self.turn_prompted();
            }
            self.last_prompt = recorded.map(|r| r.id);
        }
    }

    /// Commits the model message a response added to the chat history.
    pub async fn record_model(
        &mut self,
        content: &Content,
        response: &ModelResponse,
        model: &str,
        sink: &EventSink,
    ) {
        let mut text = response.text.clone();
        for call in &response.calls {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&call.name);
            text.push(' ');
            if call.name == crate::tools::topic::UpdateTopic::NAME {
                // Topics are what history search finds a conversation by:
                // their whole title, summary and intent are indexed.
                text.push_str(&cut(
                    &crate::tools::topic::search_text(&call.args),
                    crate::tools::topic::SEARCH_CHARS,
                ));
            } else {
                text.push_str(&cut(&args_text(&call.args), ARGS_SEARCH_CHARS));
            }
        }
        let mut message =
            NewMessage::new(Role::Model, MessageKind::Model, parts_json(content), text);
        message.model = Some(model.to_owned());
        message.tool_calls = response
            .calls
            .iter()
            .map(|c| ToolCallRecord {
                call_id: c.call_id.clone(),
                name: c.name.clone(),
                args: Some(c.args.clone()),
                ..ToolCallRecord::default()
            })
            .collect();
        message.thoughts = response
            .thoughts
            .iter()
            .map(|(subject, description)| ThoughtRecord {
                subject: subject.clone(),
                description: description.clone(),
            })
            .collect();
        message.usage = response.usage.as_ref().map(|u| TokenUsage {
            prompt: u.prompt_token_count,
            output: u.candidates_token_count,
            cached: u.cached_content_token_count,
            thoughts: u.thoughts_token_count,
            tool: u.tool_use_prompt_token_count,
            total: u.total_token_count,
        });
        self.commit(message, None, sink).await;
    }

    /// The last prompt's request failed: the chat dropped it, so it leaves
    /// the model's context too (it stays in the transcript).
    pub async fn prompt_failed(&mut self) {
        // The agent settled the prompt's commit already (reporting it).
        self.settle_with(None).await;
        let Some(id) = self.last_prompt.take() else {
            return;
        };
        if self.failed {
            return;
        }
        let Ok(s) = self.ready_store(None).await else {
            return;
        };
        if let Err(e) = blocking(move || s.exclude_from_context(&id)).await {
            warn!(error = %e, "cannot mark a failed prompt in the history");
        }
    }

    /// After a compression: the chat's new history replaces the context.
    pub async fn context_replaced(&mut self, history: &[Content], sink: &EventSink) {
        if self.failed {
            return;
        }
        let messages: Vec<NewMessage> = history
            .iter()
            .map(|c| {
                let role = if c.role == Some(GeminiRole::Model) {
                    Role::Model
                } else {
                    Role::User
                };
                let text = c
                    .parts
                    .iter()
                    .filter(|p| !p.is_thought())
                    .filter_map(|p| p.text.as_deref())
                    .collect::<Vec<_>>()
                    .join("");
                NewMessage::new(role, MessageKind::Summary, parts_json(c), text)
            })
            .collect();
        let Ok(s) = self.ready_store(Some(sink)).await else {
            return;
        };
        let id = self.session_id.clone();
        if let Err(e) = blocking(move || s.replace_context(&id, &messages)).await {
            self.fail(e, sink);
        }
    }

    /// Truncates the stored history at `message_id` and returns how many
    /// messages went and the history the model sees from now on.
    pub async fn rewind(
        &mut self,
        message_id: &str,
    ) -> Result<(usize, Vec<Content>), HistoryError> {
        let s = self.ready_store(None).await?;
        let session = self.session_id.clone();
        let target = message_id.to_owned();
        let (removed, context) = blocking(move || {
            let removed = s.rewind(&session, &target)?;
            Ok((removed, s.load_context(&session)?))
        })
        .await?;
        self.last_prompt = None;
        Ok((removed, to_contents(context)?))
    }

    async fn commit(
        &mut self,
        message: NewMessage,
        title: Option<String>,
        sink: &EventSink,
    ) -> Option<MessageRef> {
        if self.failed {
            return None;
        }
        let kind = message.kind;
        let call_ids: Vec<String> = message
            .tool_calls
            .iter()
            .map(|c| c.call_id.clone())
            .collect();
        let s = match self.ready_store(Some(sink)).await {
            Ok(store) => store,
            // Opening failed: reported by `ready_store` already.
            Err(_) if self.failed => return None,
            Err(e) => {
                self.fail(e, sink);
                return None;
            }
        };
        let id = self.session_id.clone();
        let result = blocking(move || {
            let r = s.append_message(&id, &message)?;
            if let Some(title) = title.filter(|t| !t.is_empty()) {
                s.set_title_if_empty(&id, &title)?;
            }
            Ok(r)
        })
        .await;
        match result {
            Ok(r) => {
                sink.emit(Event::MessageRecorded {
                    message_id: r.id.clone(),
                    seq: r.seq,
                    kind: kind.as_str().to_owned(),
                    call_ids,
                });
                Some(r)
            }
            Err(e) => {
                self.fail(e, sink);
                None
            }
        }
    }

    fn fail(&mut self, error: HistoryError, sink: &EventSink) {
        self.fail_with(error, Some(sink));
    }

    fn fail_with(&mut self, error: HistoryError, sink: Option<&EventSink>) {
        warn!(error = %error, "session history recording failed");
        self.failed = true;
        if let Some(sink) = sink {
            sink.emit(Event::Warning {
                message: format!("This session is no longer being saved to the history: {error}"),
            });
        }
    }
}

/// A call's argument values as words for search (paths, commands, patterns),
/// not JSON: search snippets show this text to people.
fn args_text(args: &Value) -> String {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.split_whitespace().collect::<Vec<_>>().join(" ")),
            Value::Number(n) => out.push(n.to_string()),
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            Value::Bool(_) | Value::Null => {}
        }
    }
    let mut words = Vec::new();
    walk(args, &mut words);
    words.retain(|w| !w.is_empty());
    words.join(" ")
}

fn parts_json(content: &Content) -> Value {
    serde_json::to_value(&content.parts).unwrap_or_else(|_| Value::Array(Vec::new()))
}

/// The stored record of a call that never ran, saying `why`.
fn not_executed_record(call: &ToolCallRequest, why: &str) -> ToolCallRecord {
    ToolCallRecord {
        call_id: call.call_id.clone(),
        name: call.name.clone(),
        args: None,
        status: Some("cancelled".into()),
        summary: Some(why.into()),
        error: Some(why.into()),
        ..ToolCallRecord::default()
    }
}

fn result_record(call: &CompletedCall) -> ToolCallRecord {
    let status = match call.status {
        ToolCallStatus::Success => "success",
        ToolCallStatus::Error => "error",
        ToolCallStatus::Cancelled => "cancelled",
    };
    let summary = call
        .parts
        .iter()
        .find_map(|p| p.function_response.as_ref())
        .map(|r| output_summary(&r.response))
        .or_else(|| call.error.clone())
        .or_else(|| call.display.clone());
    ToolCallRecord {
        call_id: call.request.call_id.clone(),
        name: call.request.name.clone(),
        args: None,
        status: Some(status.to_owned()),
        summary,
        // What the live card showed, so a reopened session shows the same.
        display: call.display.as_deref().map(|d| cut(d, DISPLAY_CHARS)),
        error: call.error.as_deref().map(|e| cut(e, DISPLAY_CHARS)),
        duration_ms: Some(u64::try_from(call.duration.as_millis()).unwrap_or(u64::MAX)),
        output: call.shown.output.as_deref().map(|o| cut(o, DISPLAY_CHARS)),
        exit_code: call.shown.exit_code,
        declined: call.shown.declined,
        diff: call
            .shown
            .diff
            .as_ref()
            .and_then(|d| serde_json::to_value(d).ok()),
        mcp: call.shown.mcp.as_ref().map(|m| McpToolName {
            server: m.server.clone(),
            tool: m.tool.clone(),
        }),
        decided_by: call
            .shown
            .decided_by
            .as_ref()
            .and_then(|d| serde_json::to_value(d).ok()),
        subagent: call
            .shown
            .subagent
            .as_ref()
            .and_then(|t| serde_json::to_value(t).ok()),
        sandbox: call
            .shown
            .sandbox
            .as_ref()
            .and_then(|s| serde_json::to_value(s).ok()),
    }
}

/// The searchable text of a tool-result message: what people saw on the cards
/// (the error, else the full output, else the display text), not the wrapped
/// text the model got, so that search snippets show no plumbing.
fn summaries(records: &[ToolCallRecord]) -> String {
    records
        .iter()
        .filter_map(|r| {
            (r.error.as_deref())
                .or(r.output.as_deref())
                .or(r.display.as_deref())
                .or(r.summary.as_deref())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Stored context messages as the chat's `Content` list.
pub fn to_contents(context: Vec<gd_store::ContextMessage>) -> Result<Vec<Content>, HistoryError> {
    context
        .into_iter()
        .map(|m| {
            let parts: Vec<Part> = serde_json::from_value(m.parts)
                .map_err(|e| HistoryError::Corrupt(format!("message {}: {e}", m.id)))?;
            Ok(match m.role {
                Role::User => Content::user(parts),
                Role::Model => Content::model(parts),
            })
        })
        .collect()
}
