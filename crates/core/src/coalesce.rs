//! Joining a fast stream of answer text into fewer events, for frontends that pay per event.
//!
//! A model can stream thousands of small `content_delta` chunks a second. A frontend that pays
//! a price per event (the desktop: each event is a script evaluation in the webview) reads the
//! session's events through [`CoalescedEvents`] instead: a delta goes out at once when none went
//! out during the last `window`; deltas arriving sooner are joined and released when that window
//! ends, or earlier when any other event comes (which follows right after them, so the order is
//! kept). A slow stream passes with no added delay. The adapter knows nothing of the frontend:
//! it only turns one receiver of events into another.

use std::time::Duration;

use gd_protocol::Event;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

/// About one event per frame at 60 Hz: what the desktop uses.
pub const DELTA_WINDOW: Duration = Duration::from_millis(16);

/// A session's events with consecutive `content_delta`s coalesced (see the module's doc).
#[derive(Debug)]
pub struct CoalescedEvents {
    events: UnboundedReceiver<Event>,
    window: Duration,
    /// Delta text received but not released yet.
    pending: String,
    /// When the last delta was released; the next one may go at `last_delta + window`.
    last_delta: Option<Instant>,
    /// An event that came while text was pending: it follows that text.
    held: Option<Event>,
}

impl CoalescedEvents {
    pub fn new(events: UnboundedReceiver<Event>, window: Duration) -> Self {
        Self {
            events,
            window,
            pending: String::new(),
            last_delta: None,
            held: None,
        }
    }

    /// The next event, `None` once the session's stream has ended and everything was released.
    pub async fn recv(&mut self) -> Option<Event> {
        if let Some(event) = self.held.take() {
            return Some(event);
        }
        loop {
            let next = if self.pending.is_empty() {
                self.events.recv().await
            } else {
                let due = self
                    .last_delta
                    .map_or_else(Instant::now, |last| last + self.window);
                tokio::select! {
                    biased;
                    event = self.events.recv() => event,
                    () = tokio::time::sleep_until(due) => return Some(self.release()),
                }
            };
            match next {
                Some(Event::ContentDelta { text }) => {
                    let now = Instant::now();
                    let may_send = self.last_delta.is_none_or(|last| now >= last + self.window);
                    if self.pending.is_empty() && may_send {
                        self.last_delta = Some(now);
                        return Some(Event::ContentDelta { text });
                    }
                    self.pending.push_str(&text);
                }
                Some(other) if self.pending.is_empty() => return Some(other),
                Some(other) => {
                    self.held = Some(other);
                    return Some(self.release());
                }
                None if self.pending.is_empty() => return None,
                None => return Some(self.release()),
            }
        }
    }

    /// The pending text as one delta.
    fn release(&mut self) -> Event {
        self.last_delta = Some(Instant::now());
        Event::ContentDelta {
            text: std::mem::take(&mut self.pending),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc;

    fn delta(text: &str) -> Event {
        Event::ContentDelta { text: text.into() }
    }

    fn warning(message: &str) -> Event {
        Event::Warning {
            message: message.into(),
        }
    }

    async fn coalesce_all(events: Vec<(Duration, Event)>, window: Duration) -> Vec<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            for (pause, event) in events {
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
                tx.send(event).unwrap();
            }
        });
        let mut coalesced = CoalescedEvents::new(rx, window);
        let mut out = Vec::new();
        while let Some(event) = coalesced.recv().await {
            out.push(event);
        }
        out
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_deltas_is_joined_and_order_is_kept() {
        // One delta a millisecond for 320 ms (the timer's resolution).
        let mut events: Vec<(Duration, Event)> = (0..320)
            .map(|i| (Duration::from_millis(1), delta(&format!("{i},"))))
            .collect();
        events.push((Duration::ZERO, warning("between")));
        events.push((Duration::ZERO, delta("tail")));
        let out = coalesce_all(events, Duration::from_millis(16)).await;

        // The first alone, then one event per 16 ms window.
        let deltas = out
            .iter()
            .take_while(|e| matches!(e, Event::ContentDelta { .. }))
            .count();
        assert!((18..=24).contains(&deltas), "{deltas} events: {out:?}");
        let text: String = out
            .iter()
            .filter_map(|e| match e {
                Event::ContentDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let expected: String = (0..320).map(|i| format!("{i},")).collect::<String>() + "tail";
        assert_eq!(text, expected);
        assert_eq!(
            out[deltas],
            warning("between"),
            "released before the next event"
        );
        assert_eq!(
            out.last(),
            Some(&delta("tail")),
            "the end releases what is left"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn slow_deltas_go_out_one_by_one_without_delay() {
        let events = vec![
            (Duration::ZERO, delta("a")),
            (Duration::from_millis(50), delta("b")),
            (Duration::from_millis(50), delta("c")),
        ];
        let out = coalesce_all(events, Duration::from_millis(16)).await;
        assert_eq!(out, vec![delta("a"), delta("b"), delta("c")]);
    }

    #[tokio::test(start_paused = true)]
    async fn other_events_pass_unchanged() {
        let events = vec![
            (Duration::ZERO, warning("one")),
            (Duration::ZERO, warning("two")),
        ];
        let out = coalesce_all(events, Duration::from_millis(16)).await;
        assert_eq!(out, vec![warning("one"), warning("two")]);
    }
}
