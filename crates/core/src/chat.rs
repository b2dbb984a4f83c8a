//! The conversation with the model: curated history, request building, and
//! turning one streamed response into events plus a recorded model message.
//!
//! History invariants (what "valid" means after any failure or cancel):
//! * only complete model messages are recorded, without thought parts;
//! * every model message with function calls is directly followed by one
//!   user message holding a response for each call, in call order;
//! * a user prompt whose request failed or was cancelled is removed again, so
//!   the model never sees a question it did not answer; tool results that
//!   were produced are kept, since the tools really ran.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use gd_gemini::sent::Sent;
use gd_gemini::{
    Content, FinishReason, FunctionDeclaration, GeminiClient, GeminiError, GenerateContentRequest,
    GenerationConfig, Part, RequestMeta, Role, StreamEvent, Tool, UsageMetadata,
};
use gd_protocol::Event;
use serde_json::Value;
use thiserror::Error;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use crate::events::EventSink;
use crate::history::HistoryRecorder;
use crate::hooks::model::{BeforeRequest, HookEnd, ModelHooks};
use crate::loop_detection::{LoopDetected, LoopDetector};
use crate::thought::parse_thought;

/// What a request's answer waits for: the recorder committing the prompt
/// (settled before the first piece of the answer is handled), and the
/// [`Sent`] that tells it the request has gone out.
#[derive(Default)]
pub struct Gate<'a> {
    pub recorder: Option<&'a mut HistoryRecorder>,
    pub sent: Option<Sent>,
    /// The session's BeforeModel / BeforeToolSelection / AfterModel hooks
    /// (the main chat's requests only).
    pub model_hooks: Option<ModelHooks>,
}

/// The signature Gemini accepts in place of a real one on function calls
/// whose original signature was not kept.
pub const SYNTHETIC_THOUGHT_SIGNATURE: &str = "skip_thought_signature_validator";

/// How often an empty or malformed response is requested again.
const INVALID_RESPONSE_ATTEMPTS: u32 = 2;

/// A tool call extracted from a model response, with its id.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    pub call_id: String,
    pub name: String,
    pub args: Value,
}

/// The outcome of one model request.
#[derive(Debug, Clone, Default)]
pub struct ModelResponse {
    pub text: String,
    pub calls: Vec<ToolCallRequest>,
    pub finish_reason: Option<FinishReason>,
    pub usage: Option<UsageMetadata>,
    pub latency: Duration,
    /// Set when the streamed text was cut short because it looped.
    pub loop_detected: Option<LoopDetected>,
    /// Thought summaries shown while answering (subject, description), for
    /// the session history; never sent back to the model.
    pub thoughts: Vec<(String, String)>,
}

#[derive(Debug, Error)]
pub enum ChatError {
    #[error(transparent)]
    Api(#[from] GeminiError),
    #[error("The prompt was blocked ({reason}){}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Blocked {
        reason: String,
        message: Option<String>,
    },
    #[error("{0}")]
    InvalidResponse(String),
    #[error("Request cancelled.")]
    Cancelled,
    /// A model hook ended the turn: `stopped` for `continue: false` ("Agent
    /// execution stopped"), else a deny ("Agent execution blocked").
    #[error("Agent execution {}: {reason}", if *stopped { "stopped" } else { "blocked" })]
    Hook { reason: String, stopped: bool },
}

impl From<HookEnd> for ChatError {
    fn from(end: HookEnd) -> Self {
        ChatError::Hook {
            reason: end.reason,
            stopped: end.stopped,
        }
    }
}

/// Where one request goes and what it carries (the request as the hooks
/// left it).
struct Target<'a> {
    model: &'a str,
    request: &'a GenerateContentRequest,
    meta: &'a RequestMeta,
    /// The `llm_request` AfterModel hooks get with each chunk (`None`: no
    /// AfterModel hook).
    hook_request: Option<&'a Value>,
}

/// The chat state of a session.
pub struct Chat {
    client: GeminiClient,
    model: String,
    system_instruction: Content,
    /// Appended to the system instruction while a mode needs it (plan mode).
    mode_instruction: Option<String>,
    tools: Vec<FunctionDeclaration>,
    generation_config: GenerationConfig,
    session_id: String,
    history: Vec<Content>,
    prompt_count: u64,
    last_prompt_tokens: u64,
    call_ids: CallIds,
}

/// How the ids of calls the model sent without one are made, as 0.61 makes
/// them (its main chat and its subagents differ, on the wire).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CallIds {
    /// `<tool>_<ms>_<n>`, written into the recorded call too (the history
    /// echoes the call with its id): the main chat.
    #[default]
    Echoed,
    /// `<prompt id>-<n>`, used for the answer only: the recorded call is
    /// echoed as the model sent it (a subagent's chat).
    PerPrompt,
}

impl Chat {
    pub fn new(
        client: GeminiClient,
        model: String,
        system_prompt: &str,
        tools: Vec<FunctionDeclaration>,
        generation_config: GenerationConfig,
        session_id: String,
    ) -> Self {
        Self {
            client,
            model,
            system_instruction: Content::user_text(system_prompt),
            mode_instruction: None,
            tools,
            generation_config,
            session_id,
            history: Vec::new(),
            prompt_count: 0,
            last_prompt_tokens: 0,
            call_ids: CallIds::Echoed,
        }
    }

    /// The same chat, making call ids the `ids` way.
    pub fn with_call_ids(mut self, ids: CallIds) -> Self {
        self.call_ids = ids;
        self
    }

    /// The system instruction from the next request on (after the memory
    /// was refreshed).
    pub fn set_system_prompt(&mut self, system_prompt: &str) {
        self.system_instruction = Content::user_text(system_prompt);
    }

    /// What the current approval mode adds to the system instruction
    /// (plan mode's rules, see [`crate::plan::instructions`]), from the next
    /// request on; `None` adds nothing.
    pub fn set_mode_instruction(&mut self, instruction: Option<String>) {
        self.mode_instruction = instruction;
    }

    /// The tools declared from the next request on.
    pub fn set_tools(&mut self, tools: Vec<FunctionDeclaration>) {
        self.tools = tools;
    }

    pub fn tools(&self) -> &[FunctionDeclaration] {
        &self.tools
    }

    pub fn history(&self) -> &[Content] {
        &self.history
    }

    /// Replaces the history (after compression or when resuming).
    pub fn set_history(&mut self, history: Vec<Content>) {
        self.history = history;
    }

    /// Forgets the conversation (`/clear`): no history, and requests from
    /// now on belong to the session `session_id`.
    pub fn start_over(&mut self, session_id: String) {
        self.history.clear();
        self.session_id = session_id;
        self.prompt_count = 0;
        self.last_prompt_tokens = 0;
    }

    /// Forgets the conversation, keeping the session and its prompt count
    /// (an AfterAgent hook's `clearContext`).
    pub fn forget(&mut self) {
        self.history.clear();
        self.last_prompt_tokens = 0;
    }

    /// Appends a message without sending it, e.g. tool responses of a turn
    /// that was stopped before the next request.
    pub fn append(&mut self, content: Content) {
        self.history.push(content);
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// The model (and its generation config, which depends on the model)
    /// from the next request on (`Op::OverrideTurnContext`).
    pub fn set_model(&mut self, model: String, generation_config: GenerationConfig) {
        self.model = model;
        self.generation_config = generation_config;
    }

    pub fn client(&self) -> &GeminiClient {
        &self.client
    }

    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Prompt tokens of the latest request, as the API counted them.
    pub fn last_prompt_tokens(&self) -> u64 {
        self.last_prompt_tokens
    }

    pub fn set_last_prompt_tokens(&mut self, tokens: u64) {
        self.last_prompt_tokens = tokens;
    }

    /// The next `user_prompt_id` (Code Assist uses it to group requests).
    pub fn next_prompt_id(&mut self) -> String {
        self.prompt_count += 1;
        format!("{}########{}", self.session_id, self.prompt_count)
    }

    /// The request for the current history.
    pub fn build_request(&self) -> GenerateContentRequest {
        GenerateContentRequest {
            contents: with_active_loop_signatures(&self.history),
            system_instruction: Some(match &self.mode_instruction {
                Some(extra) => {
                    Content::user_text(format!("{}\n\n{extra}", self.system_instruction.text()))
                }
                None => self.system_instruction.clone(),
            }),
            tools: (!self.tools.is_empty()).then(|| vec![Tool::functions(self.tools.clone())]),
            generation_config: Some(self.generation_config.clone()),
            ..GenerateContentRequest::default()
        }
    }

    /// Sends `message`, streams the answer as events and records it.
    pub async fn send(
        &mut self,
        message: Content,
        prompt_id: &str,
        cancel: &CancellationToken,
        sink: &EventSink,
        loops: &mut LoopDetector,
        gate: Gate<'_>,
    ) -> Result<ModelResponse, ChatError> {
        self.history.push(message);
        self.resend(prompt_id, cancel, sink, loops, gate).await
    }

    /// Sends the history as it is, its last entry being the message the
    /// answer is for (again, after a failed request: a quota fallback
    /// re-appends the dropped prompt or leaves the tool results in place).
    pub async fn resend(
        &mut self,
        prompt_id: &str,
        cancel: &CancellationToken,
        sink: &EventSink,
        loops: &mut LoopDetector,
        mut gate: Gate<'_>,
    ) -> Result<ModelResponse, ChatError> {
        let is_prompt = self
            .history
            .last()
            .is_some_and(|m| !m.has_function_response());
        let result = self
            .stream_response(prompt_id, cancel, sink, loops, &mut gate)
            .await;
        match &result {
            Ok(response) => {
                if let Some(usage) = &response.usage {
                    self.last_prompt_tokens = usage.prompt_token_count;
                }
            }
            Err(_) if is_prompt => {
                self.history.pop();
            }
            Err(_) => {}
        }
        result
    }

    async fn stream_response(
        &mut self,
        prompt_id: &str,
        cancel: &CancellationToken,
        sink: &EventSink,
        loops: &mut LoopDetector,
        gate: &mut Gate<'_>,
    ) -> Result<ModelResponse, ChatError> {
        let mut request = self.build_request();
        let mut model = self.model.clone();
        let mut hook_request = None;
        if let Some(hooks) = gate.model_hooks.clone() {
            let before = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ChatError::Cancelled),
                before = hooks.before_request(&mut model, &mut request) => before,
            };
            match before {
                BeforeRequest::Send { llm_request } => {
                    hook_request = hooks.has_after_model().then_some(llm_request);
                }
                BeforeRequest::Answer(parts) => {
                    return Ok(self.hook_answer(parts, prompt_id, sink, gate).await);
                }
                BeforeRequest::End(end) => return Err(end.into()),
            }
        }
        let meta = RequestMeta {
            session_id: self.session_id.clone(),
            prompt_id: prompt_id.to_owned(),
        };
        let target = Target {
            model: &model,
            request: &request,
            meta: &meta,
            hook_request: hook_request.as_ref(),
        };
        let mut attempt = 1;
        loop {
            let started = Instant::now();
            let collected = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ChatError::Cancelled),
                collected = self.collect_stream(&target, sink, loops, gate) => collected?,
            };
            let latency = started.elapsed();
            if let Some(reason) = collected.block_reason {
                return Err(ChatError::Blocked {
                    reason,
                    message: collected.block_message,
                });
            }
            if let Some(problem) = collected.invalid_reason() {
                if attempt < INVALID_RESPONSE_ATTEMPTS && !collected.showed_text {
                    attempt += 1;
                    warn!(problem, "invalid model response; asking again");
                    sink.emit(Event::Retrying {
                        attempt,
                        max_attempts: INVALID_RESPONSE_ATTEMPTS,
                        delay_ms: 0,
                        reason: problem.to_owned(),
                    });
                    continue;
                }
                return Err(ChatError::InvalidResponse(problem.to_owned()));
            }
            return Ok(self.record(collected, latency, prompt_id));
        }
    }

    /// Reads one streamed response, emitting thoughts and text as they come.
    ///
    /// The gate's recorder is settled (the prompt committing while the
    /// request is in flight) before anything of the response is handled, an
    /// error or a retry notice included: nothing of the answer reaches
    /// `sink` before the prompt is on disk.
    async fn collect_stream(
        &self,
        target: &Target<'_>,
        sink: &EventSink,
        loops: &mut LoopDetector,
        gate: &mut Gate<'_>,
    ) -> Result<Collected, ChatError> {
        let stream = self.client.stream_notifying(
            target.model,
            target.request,
            target.meta,
            gate.sent.take(),
        );
        let mut stream = std::pin::pin!(stream);
        let mut collected = Collected::default();
        loop {
            let item = stream.next().await;
            if let Some(recorder) = gate.recorder.take() {
                recorder.settle(sink).await;
            }
            let Some(item) = item else {
                break;
            };
            let chunk = match item? {
                StreamEvent::Retry(notice) => {
                    sink.emit(Event::Retrying {
                        attempt: notice.attempt,
                        max_attempts: notice.max_attempts,
                        delay_ms: notice.delay.as_millis() as u64,
                        reason: notice.reason,
                    });
                    continue;
                }
                StreamEvent::Chunk(chunk) => chunk,
            };
            let mut chunk = chunk;
            if let (Some(hooks), Some(llm_request)) = (&gate.model_hooks, target.hook_request) {
                // Nothing of a chunk is shown or kept before AfterModel saw it.
                hooks.after_chunk(llm_request, &mut chunk).await?;
            }
            if let Some(reason) = chunk.block_reason() {
                collected.block_reason = Some(reason.to_owned());
                collected.block_message = chunk
                    .prompt_feedback
                    .as_ref()
                    .and_then(|f| f.block_reason_message.clone());
            }
            if let Some(usage) = chunk.usage_metadata {
                collected.usage = Some(usage);
            }
            let Some(candidate) = chunk.candidates.into_iter().next() else {
                continue;
            };
            if let Some(reason) = candidate.finish_reason {
                collected.finish_reason = Some(reason);
            }
            for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
                if part.is_thought() {
                    let (subject, description) = parse_thought(part.text.as_deref().unwrap_or(""));
                    collected
                        .thoughts
                        .push((subject.clone(), description.clone()));
                    sink.emit(Event::Thought {
                        subject,
                        description,
                    });
                    continue;
                }
                if let Some(text) = part.text.as_deref().filter(|t| !t.is_empty()) {
                    collected.text.push_str(text);
                    collected.showed_text = true;
                    sink.emit(Event::ContentDelta {
                        text: text.to_owned(),
                    });
                    if collected.loop_detected.is_none()
                        && let Some(hit) = loops.check_content(text)
                    {
                        collected.loop_detected = Some(hit);
                        collected.parts.push(part);
                        return Ok(collected);
                    }
                }
                if !part.is_empty() {
                    collected.parts.push(part);
                }
            }
        }
        Ok(collected)
    }

    /// A BeforeModel hook's answer, in place of a request: shown and kept
    /// as the model's.
    async fn hook_answer(
        &mut self,
        parts: Vec<Part>,
        prompt_id: &str,
        sink: &EventSink,
        gate: &mut Gate<'_>,
    ) -> ModelResponse {
        if let Some(recorder) = gate.recorder.take() {
            recorder.settle(sink).await;
        }
        let mut collected = Collected {
            finish_reason: Some(FinishReason::Stop),
            ..Collected::default()
        };
        for part in parts {
            if let Some(text) = part.text.as_deref().filter(|t| !t.is_empty()) {
                collected.text.push_str(text);
                collected.showed_text = true;
                sink.emit(Event::ContentDelta {
                    text: text.to_owned(),
                });
            }
            collected.parts.push(part);
        }
        self.record(collected, Duration::ZERO, prompt_id)
    }

    /// Records the model message (with generated call ids) and extracts calls.
    fn record(
        &mut self,
        collected: Collected,
        latency: Duration,
        prompt_id: &str,
    ) -> ModelResponse {
        let mut parts = consolidate(collected.parts);
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis();
        let mut calls = Vec::new();
        for part in &mut parts {
            if let Some(call) = part.function_call.as_mut() {
                let call_id = match (&call.id, self.call_ids) {
                    (Some(id), _) => id.clone(),
                    (None, CallIds::Echoed) => {
                        let id = format!("{}_{}_{}", call.name, millis, calls.len());
                        call.id = Some(id.clone());
                        id
                    }
                    (None, CallIds::PerPrompt) => format!("{prompt_id}-{}", calls.len()),
                };
                calls.push(ToolCallRequest {
                    call_id,
                    name: call.name.clone(),
                    args: call
                        .args
                        .clone()
                        .unwrap_or_else(|| Value::Object(Default::default())),
                });
            }
        }
        if !parts.is_empty() {
            self.history.push(Content::model(parts));
        }
        debug!(
            calls = calls.len(),
            text_len = collected.text.len(),
            "model response recorded"
        );
        ModelResponse {
            text: collected.text,
            calls,
            finish_reason: collected.finish_reason,
            usage: collected.usage,
            latency,
            loop_detected: collected.loop_detected,
            thoughts: collected.thoughts,
        }
    }
}

#[derive(Debug, Default)]
struct Collected {
    parts: Vec<Part>,
    text: String,
    showed_text: bool,
    finish_reason: Option<FinishReason>,
    usage: Option<UsageMetadata>,
    block_reason: Option<String>,
    block_message: Option<String>,
    loop_detected: Option<LoopDetected>,
    thoughts: Vec<(String, String)>,
}

impl Collected {
    /// Why this response cannot be used, if it cannot. Abnormal finish
    /// reasons (SAFETY, MAX_TOKENS, ...) are reported, not retried.
    fn invalid_reason(&self) -> Option<&'static str> {
        if self.loop_detected.is_some() {
            return None;
        }
        let has_calls = self.parts.iter().any(|p| p.function_call.is_some());
        if self.finish_reason == Some(FinishReason::MalformedFunctionCall) && !has_calls {
            return Some("The model produced a malformed function call.");
        }
        let has_other = self.parts.iter().any(|p| p.text.is_none() && !p.is_empty());
        if has_calls || !self.text.is_empty() || has_other {
            return None;
        }
        match &self.finish_reason {
            None => Some("The model stream ended without a finish reason or any content."),
            Some(FinishReason::Stop) | Some(FinishReason::Unspecified) => {
                Some("The model returned an empty response.")
            }
            Some(_) => None,
        }
    }
}

/// Merges adjacent plain text parts (the stream splits text arbitrarily);
/// parts with signatures or other payloads are kept as they are.
fn consolidate(parts: Vec<Part>) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::with_capacity(parts.len());
    for part in parts {
        let plain_text = |p: &Part| {
            p.text.is_some()
                && p.function_call.is_none()
                && p.inline_data.is_none()
                && p.file_data.is_none()
                && p.executable_code.is_none()
                && p.code_execution_result.is_none()
                && p.extra.is_empty()
                && !p.is_thought()
        };
        if let Some(last) = out.last_mut() {
            let unsigned = last.thought_signature.is_none() && part.thought_signature.is_none();
            if unsigned
                && plain_text(last)
                && plain_text(&part)
                && let (Some(a), Some(b)) = (last.text.as_mut(), part.text.as_deref())
            {
                a.push_str(b);
                continue;
            }
        }
        out.push(part);
    }
    out
}

/// Copies `history`, giving the first function call of each model message in
/// the active loop (since the latest user prompt) a signature when it has
/// none. Gemini 3 rejects such calls otherwise; older history is sent as is.
pub fn with_active_loop_signatures(history: &[Content]) -> Vec<Content> {
    let mut contents = history.to_vec();
    let start = contents
        .iter()
        .rposition(|c| c.role == Some(Role::User) && c.parts.iter().any(|p| p.text.is_some()))
        .unwrap_or(0);
    for content in contents.iter_mut().skip(start) {
        if content.role != Some(Role::Model) {
            continue;
        }
        if let Some(part) = content.parts.iter_mut().find(|p| p.function_call.is_some())
            && part.thought_signature.is_none()
        {
            part.thought_signature = Some(SYNTHETIC_THOUGHT_SIGNATURE.to_owned());
        }
    }
    contents
}

/// The `functionResponse` parts for calls that were not executed (cancelled,
/// stopped by loop detection, turn limit), so history stays valid.
pub fn not_executed_responses(calls: &[ToolCallRequest], reason: &str) -> Content {
    Content::user(
        calls
            .iter()
            .map(|call| {
                Part::function_response(gd_gemini::FunctionResponse {
                    id: Some(call.call_id.clone()),
                    name: call.name.clone(),
                    response: serde_json::json!({ "error": reason }),
                    extra: Default::default(),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_gemini::FunctionCall;
    use serde_json::json;

    fn call_part(name: &str, sig: Option<&str>) -> Part {
        Part {
            function_call: Some(FunctionCall {
                id: Some(format!("{name}_1_0")),
                name: name.into(),
                args: Some(json!({})),
                extra: Default::default(),
            }),
            thought_signature: sig.map(str::to_owned),
            ..Part::default()
        }
    }

    #[test]
    fn signatures_added_only_in_the_active_loop_and_only_when_missing() {
        let response = Content::user(vec![Part::function_response(gd_gemini::FunctionResponse {
            id: Some("x".into()),
            name: "ls".into(),
            response: json!({"output": "o"}),
            extra: Default::default(),
        })]);
        let history = vec![
            Content::user_text("old prompt"),
            Content::model(vec![call_part("ls", None)]),
            response.clone(),
            Content::model(vec![Part::text("done")]),
            Content::user_text("new prompt"),
            Content::model(vec![call_part("ls", None), call_part("ls", None)]),
            response.clone(),
            Content::model(vec![call_part("ls", Some("real"))]),
        ];
        let out = with_active_loop_signatures(&history);
        assert_eq!(out[1].parts[0].thought_signature, None);
        assert_eq!(
            out[5].parts[0].thought_signature.as_deref(),
            Some(SYNTHETIC_THOUGHT_SIGNATURE)
        );
        assert_eq!(out[5].parts[1].thought_signature, None);
        assert_eq!(out[7].parts[0].thought_signature.as_deref(), Some("real"));
        assert_eq!(
            history[5].parts[0].thought_signature, None,
            "history itself unchanged"
        );
    }

    #[test]
    fn consolidate_merges_plain_text_only() {
        let mut signed = Part::text("c");
        signed.thought_signature = Some("s".into());
        let parts = vec![
            Part::text("a"),
            Part::text("b"),
            signed.clone(),
            Part::text("d"),
            call_part("ls", None),
        ];
        let out = consolidate(parts);
        assert_eq!(out.len(), 4);
        assert_eq!(out[0].text.as_deref(), Some("ab"));
        assert_eq!(out[1], signed);
        assert_eq!(out[2].text.as_deref(), Some("d"));
    }
}
