//! The turn events, BeforeAgent and AfterAgent around a user turn, with
//! 0.61's meaning of their answers (the model events are `super::model`).

use gd_hooks::registry::CallRef;
use gd_hooks::{HookEventName, HookRegistry};

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

/// What AfterAgent decided about the turn's final answer. `clear`:
/// `hookSpecificOutput.clearContext` — the model forgets the conversation
/// (the user still sees it), honoured with a retry or a stop as in 0.61.
#[derive(Debug, PartialEq)]
pub enum AfterAgent {
    Accept,
    /// `deny`: send `reason` to the model as a new prompt and go on.
    Retry {
        reason: String,
        clear: bool,
    },
    /// `continue: false`: stop here.
    Stop {
        reason: String,
        clear: bool,
    },
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
    let clear = fired
        .merged
        .as_ref()
        .and_then(|m| m.specific("clearContext"))
        == Some(&serde_json::Value::Bool(true));
    if let Some(reason) = fired.stopped() {
        AfterAgent::Stop { reason, clear }
    } else if let Some(reason) = fired.blocked() {
        AfterAgent::Retry { reason, clear }
    } else {
        AfterAgent::Accept
    }
}
