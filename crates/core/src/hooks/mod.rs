//! Hooks in the session (Gemini CLI 0.61's `hooks` settings): where each
//! event fires and what its answer does there. Running and reading hooks is
//! `gd_hooks`'; this module loads them for a session ([`load`]), fires an
//! event and tells the frontend each run ([`fire`]), and holds the glue of
//! the tool events ([`tool`]) and the turn and model events ([`turn`]).

pub mod load;
pub mod model;
pub mod tool;
pub mod trusted;
pub mod turn;

use std::sync::Arc;

use gd_hooks::registry::CallRef;
use gd_hooks::{Fired, HookEventName, HookRegistry};
use gd_protocol::Event;
use serde_json::{Map, Value};

use crate::events::EventSink;

pub use load::load;

/// The session's hooks, shared by the scheduler, the agent and the op loop.
pub type Hooks = Arc<HookRegistry>;

/// Fires `event` and sends every run to the frontend (`Event::HookRan`)
/// before the caller acts on the answer.
pub async fn fire(
    hooks: &HookRegistry,
    sink: &EventSink,
    event: HookEventName,
    target: Option<&str>,
    fields: Map<String, Value>,
    call: CallRef,
) -> Fired {
    if !hooks.has(event) {
        return Fired::default();
    }
    let fired = hooks.fire(event, target, fields, call).await;
    for run in &fired.runs {
        sink.emit(Event::HookRan { run: run.clone() });
    }
    fired
}

/// A JSON object from pairs, for event fields.
pub(crate) fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}
