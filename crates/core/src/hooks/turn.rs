//! The turn and model events: BeforeAgent and AfterAgent around a user
//! turn, BeforeModel, BeforeToolSelection and AfterModel around each model
//! request, and the advisory ones (SessionStart, SessionEnd, PreCompress,
//! Notification), with 0.61's meaning of their answers.

use gd_gemini::types::Content;
use gd_hooks::registry::CallRef;
use gd_hooks::{HookEventName, HookRegistry};
use serde_json::{Value, json};

use super::{fields, fire};
use crate::events::EventSink;

/// What BeforeAgent decided for a prompt.
#[derive(Debug, PartialEq)]
pub enum BeforeAgent {
    /// Go on; add this (already wrapped) text to the prompt.
    Proceed(Option<String>),
    /// `deny`: the turn ends and the prompt is not kept.
    Blocked(String),
    /// `continue: false`: the turn ends; the prompt is kept in the history.
    Stopped(String),
}

pub async fn before_agent(hooks: &HookRegistry, sink: &EventSink, prompt: &str) -> BeforeAgent {
    let fired = fire(
        hooks,
        sink,
        HookEventName::BeforeAgent,
        None,
        fields([("prompt", prompt.into())]),
        CallRef::default(),
    )
    .await;
    if let Some(reason) = fired.stopped() {
        return BeforeAgent::Stopped(reason);
    }
    if let Some(reason) = fired.blocked() {
        return BeforeAgent::Blocked(reason);
    }
    BeforeAgent::Proceed(
        fired
            .additional_context()
            .map(|c| format!("<hook_context>{c}</hook_context>")),
    )
}

/// What AfterAgent decided about the turn's final answer.
#[derive(Debug, PartialEq)]
pub enum AfterAgent {
    Accept,
    /// `deny`: send this to the model as a new prompt and go on.
    Retry(String),
    /// `continue: false`: stop here.
    Stop(String),
}

pub async fn after_agent(
    hooks: &HookRegistry,
    sink: &EventSink,
    prompt: &str,
    response: &str,
    stop_hook_active: bool,
) -> AfterAgent {
    let fired = fire(
        hooks,
        sink,
        HookEventName::AfterAgent,
        None,
        fields([
            ("prompt", prompt.into()),
            ("prompt_response", response.into()),
            ("stop_hook_active", stop_hook_active.into()),
        ]),
        CallRef::default(),
    )
    .await;
    if let Some(reason) = fired.stopped() {
        AfterAgent::Stop(reason)
    } else if let Some(reason) = fired.blocked() {
        AfterAgent::Retry(reason)
    } else {
        AfterAgent::Accept
    }
}

/// The stable request shape hooks see (0.61's `LLMRequest`): text only.
pub fn llm_request(model: &str, history: &[Content], next: &Content) -> Value {
    let messages: Vec<Value> = history
        .iter()
        .chain(std::iter::once(next))
        .map(|c| {
            let text: String = c
                .parts
                .iter()
                .filter_map(|p| p.text.as_deref())
                .collect::<Vec<_>>()
                .join("");
            let role = match c.role {
                Some(gd_gemini::types::Role::Model) => "model",
                _ => "user",
            };
            json!({ "role": role, "content": text })
        })
        .collect();
    json!({ "model": model, "messages": messages, "config": {} })
}

/// What BeforeModel and BeforeToolSelection decided for one request.
#[derive(Debug, Default)]
pub struct BeforeModel {
    /// The request is not sent; the turn ends with this reason.
    pub blocked: Option<String>,
    /// `NONE`: declare no tools; else the names to keep (empty: all).
    pub tools_none: bool,
    pub allowed_tools: Vec<String>,
}

pub async fn before_model(hooks: &HookRegistry, sink: &EventSink, request: &Value) -> BeforeModel {
    let mut out = BeforeModel::default();
    if hooks.has(HookEventName::BeforeModel) {
        let fired = fire(
            hooks,
            sink,
            HookEventName::BeforeModel,
            None,
            fields([("llm_request", request.clone())]),
            CallRef::default(),
        )
        .await;
        if let Some(reason) = fired.stopped().or_else(|| fired.blocked()) {
            out.blocked = Some(reason);
            return out;
        }
    }
    if hooks.has(HookEventName::BeforeToolSelection) {
        let fired = fire(
            hooks,
            sink,
            HookEventName::BeforeToolSelection,
            None,
            fields([("llm_request", request.clone())]),
            CallRef::default(),
        )
        .await;
        if let Some(config) = fired.merged.as_ref().and_then(|m| m.specific("toolConfig")) {
            out.tools_none = config.get("mode").and_then(Value::as_str) == Some("NONE");
            out.allowed_tools = config
                .get("allowedFunctionNames")
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
        }
    }
    out
}

/// AfterModel for a whole answer: `Some(reason)` when a hook denies it (the
/// turn ends) or stops the loop.
pub async fn after_model(
    hooks: &HookRegistry,
    sink: &EventSink,
    request: &Value,
    text: &str,
    finish_reason: Option<&str>,
) -> Option<String> {
    if !hooks.has(HookEventName::AfterModel) {
        return None;
    }
    let response = json!({
        "text": text,
        "candidates": [{
            "content": {"role": "model", "parts": [text]},
            "finishReason": finish_reason.unwrap_or("STOP"),
        }],
    });
    let fired = fire(
        hooks,
        sink,
        HookEventName::AfterModel,
        None,
        fields([("llm_request", request.clone()), ("llm_response", response)]),
        CallRef::default(),
    )
    .await;
    fired.stopped().or_else(|| fired.blocked())
}
