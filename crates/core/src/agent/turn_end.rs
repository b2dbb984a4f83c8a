//! What the agent keeps of a turn's end: the turn's events are watched as
//! they go out (the only account of an answer stopped mid-stream and of the
//! notices shown), and stored with the turn's usage and the statistics so
//! far before the frontend hears that the turn is over.

use std::sync::{Arc, Mutex};

use gd_protocol::{TurnStatus, TurnUsage};

use super::Agent;
use crate::events::EventSink;
use crate::history::{TurnEnd, TurnRecap};

/// A running turn's recap, filled by the turn's sink.
pub(super) type SharedRecap = Arc<Mutex<TurnRecap>>;

/// `sink`, with every event also shown to a new recap.
pub(super) fn watched(sink: &EventSink) -> (EventSink, SharedRecap) {
    let recap = SharedRecap::default();
    let seen = recap.clone();
    let sink = sink.clone().observed(Arc::new(move |event| {
        seen.lock()
            .unwrap_or_else(|e| e.into_inner())
            .observe(event);
    }));
    (sink, recap)
}

impl Agent {
    /// Records how the turn ended (see [`crate::history::HistoryRecorder::record_turn_end`]).
    pub(super) async fn record_turn_end(
        &mut self,
        status: TurnStatus,
        usage: &TurnUsage,
        recap: SharedRecap,
        sink: &EventSink,
    ) {
        let Some(history) = self.history.as_mut() else {
            return;
        };
        let recap = std::mem::take(&mut *recap.lock().unwrap_or_else(|e| e.into_inner()));
        let stats = self.stats.as_ref().map(|s| {
            s.lock()
                .unwrap_or_else(|e| e.into_inner())
                .snapshot_without_rows()
        });
        let end = TurnEnd {
            status,
            usage,
            recap,
            stats,
        };
        history.record_turn_end(end, self.chat.model(), sink).await;
    }
}
