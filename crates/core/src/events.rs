//! The sending side of a session's event stream.

use std::sync::Arc;

use gd_protocol::Event;
use tokio::sync::mpsc;

/// Sees every event a session emits, before the frontend does (the session
/// statistics are counted this way).
pub type Observer = Arc<dyn Fn(&Event) + Send + Sync>;

/// Emits events to the frontend. Unbounded so that the agent never waits on
/// a slow consumer; events are small and a turn produces few of them.
#[derive(Clone)]
pub struct EventSink {
    tx: mpsc::UnboundedSender<Event>,
    observer: Option<Observer>,
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink")
            .field("observed", &self.observer.is_some())
            .finish_non_exhaustive()
    }
}

impl EventSink {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx, observer: None }, rx)
    }

    /// The same sink, showing every event to `observer` first (after the
    /// observer it had, if any: a turn watches its events beside the
    /// session's statistics).
    pub fn observed(self, observer: Observer) -> Self {
        let observer = match self.observer {
            Some(before) => Arc::new(move |event: &Event| {
                before(event);
                observer(event);
            }) as Observer,
            None => observer,
        };
        Self {
            observer: Some(observer),
            ..self
        }
    }

    /// Sends an event; a frontend that went away is not an error for the agent.
    pub fn emit(&self, event: Event) {
        if let Some(observer) = &self.observer {
            observer(&event);
        }
        let _ = self.tx.send(event);
    }

    /// A sink that does not keep the stream open: once the session's own
    /// sinks are gone, the frontend sees the end of the stream. It has no
    /// observer: what it carries (MCP status, answers to queries) is not
    /// counted.
    pub fn downgrade(&self) -> WeakEventSink {
        WeakEventSink {
            tx: self.tx.downgrade(),
        }
    }
}

/// An [`EventSink`] that does not keep the stream open.
#[derive(Debug, Clone)]
pub struct WeakEventSink {
    tx: mpsc::WeakUnboundedSender<Event>,
}

impl WeakEventSink {
    /// Sends an event if the stream is still open.
    pub fn emit(&self, event: Event) {
        if let Some(tx) = self.tx.upgrade() {
            let _ = tx.send(event);
        }
    }
}
