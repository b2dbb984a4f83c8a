//! The sending side of a session's event stream.

use gd_protocol::Event;
use tokio::sync::mpsc;

/// Emits events to the frontend. Unbounded so that the agent never waits on
/// a slow consumer; events are small and a turn produces few of them.
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: mpsc::UnboundedSender<Event>,
}

impl EventSink {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }

    /// Sends an event; a frontend that went away is not an error for the agent.
    pub fn emit(&self, event: Event) {
        let _ = self.tx.send(event);
    }

    /// A sink that does not keep the stream open: once the session's own
    /// sinks are gone, the frontend sees the end of the stream.
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
