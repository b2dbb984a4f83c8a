//! Hooks, as Gemini CLI 0.61 defines them: programs the user (or an
//! extension) configures on agent events, run with the event's JSON on
//! standard input, whose exit code and JSON answer can block the action,
//! rewrite it, or add context for the model.
//!
//! This crate knows the settings ([`config`]), which hooks an event reaches
//! ([`matcher`]), how one hook runs ([`run`]), what its answer means and how
//! several answers combine ([`output`]), and the session's set of hooks with
//! their last results ([`registry`]). Where in the agent loop each event
//! fires, and what the merged answer does there, is the core's business.

pub mod config;
pub mod matcher;
pub mod output;
pub mod registry;
pub mod run;

pub use config::{HookDef, HooksConfig, parse_hooks};
pub use gd_protocol::{HookEventName, HookOutcome, HookRun, HookSource};
pub use output::{HookOutput, Merged};
pub use registry::{CallRef, Fired, HookEnv, HookRegistry};

/// Every event, in the order 0.61's documentation lists them.
pub const EVENTS: [HookEventName; 11] = [
    HookEventName::SessionStart,
    HookEventName::SessionEnd,
    HookEventName::BeforeAgent,
    HookEventName::AfterAgent,
    HookEventName::BeforeModel,
    HookEventName::AfterModel,
    HookEventName::BeforeToolSelection,
    HookEventName::BeforeTool,
    HookEventName::AfterTool,
    HookEventName::PreCompress,
    HookEventName::Notification,
];

/// The name settings use for an event (`BeforeTool`).
pub fn event_name(event: HookEventName) -> &'static str {
    match event {
        HookEventName::BeforeTool => "BeforeTool",
        HookEventName::AfterTool => "AfterTool",
        HookEventName::BeforeAgent => "BeforeAgent",
        HookEventName::AfterAgent => "AfterAgent",
        HookEventName::BeforeModel => "BeforeModel",
        HookEventName::AfterModel => "AfterModel",
        HookEventName::BeforeToolSelection => "BeforeToolSelection",
        HookEventName::SessionStart => "SessionStart",
        HookEventName::SessionEnd => "SessionEnd",
        HookEventName::Notification => "Notification",
        HookEventName::PreCompress => "PreCompress",
    }
}

/// The event a settings key names, if any.
pub fn parse_event(name: &str) -> Option<HookEventName> {
    EVENTS.into_iter().find(|e| event_name(*e) == name)
}
