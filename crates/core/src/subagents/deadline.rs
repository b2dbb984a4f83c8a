//! A subagent's time limit, paused while one of its calls waits for the
//! user's confirmation (as 0.61's `DeadlineTimer` is): the user's thinking
//! time is not the agent's.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gd_protocol::{Event, ToolCallState};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The agent's calls waiting for a confirmation, from its own events.
pub(crate) struct Confirming(watch::Sender<BTreeSet<String>>);

impl Confirming {
    pub(crate) fn new() -> Self {
        Self(watch::channel(BTreeSet::new()).0)
    }

    /// Follows the agent's stream: a confirmation request starts a wait,
    /// the call's next state ends it.
    pub(crate) fn observe(&self, event: &Event) {
        match event {
            Event::ToolConfirmationRequest { call_id, .. } => {
                self.0.send_modify(|waiting| {
                    waiting.insert(call_id.clone());
                });
            }
            Event::ToolCallState { call_id, state }
                if *state != ToolCallState::AwaitingApproval =>
            {
                self.0.send_if_modified(|waiting| waiting.remove(call_id));
            }
            _ => {}
        }
    }

    /// Cancels `token` once `limit` of running time (confirmations not
    /// counted) has passed, setting `timed_out` first.
    pub(crate) fn deadline(
        &self,
        limit: Duration,
        token: CancellationToken,
        timed_out: Arc<AtomicBool>,
    ) -> JoinHandle<()> {
        let mut waiting = self.0.subscribe();
        tokio::spawn(async move {
            let mut left = limit;
            loop {
                let paused = !waiting.borrow_and_update().is_empty();
                let since = Instant::now();
                tokio::select! {
                    _ = token.cancelled() => return,
                    _ = tokio::time::sleep(left), if !paused => {
                        timed_out.store(true, Ordering::SeqCst);
                        token.cancel();
                        return;
                    }
                    changed = waiting.changed() => {
                        if !paused {
                            left = left.saturating_sub(since.elapsed());
                        }
                        if changed.is_err() {
                            // The agent's stream is gone: it is ending.
                            return;
                        }
                    }
                }
            }
        })
    }
}
