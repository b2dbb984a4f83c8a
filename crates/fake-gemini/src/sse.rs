//! Response bodies written step by step: SSE events, pauses, a cut
//! connection or an endless stall.
//!
//! A body is a list of [`Action`]s turned into a stream that hyper pulls
//! from. The stream yields to the executor before every event after the
//! first and before an abort, so hyper flushes what it has buffered: each
//! event leaves as its own write, and the bytes sent before a cut really
//! reach the client before the connection drops.
//!
//! Pauses follow a schedule: each one ends `d` after the previous one was due to end, not
//! after it actually ended. The timer only wakes on millisecond ticks, so a pause shorter than
//! that oversleeps; the next pauses then return at once until the stream is back on schedule.
//! That keeps the average rate of sub-millisecond `chunk_delay_ms` (2,000 events/s with 0.5).
//! A stream more than [`MAX_CATCH_UP`] behind (a slow reader) starts a new schedule instead of
//! bursting.

use axum::body::Body;
use bytes::Bytes;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How far behind its schedule a stream may fall and still catch up by skipping pauses.
const MAX_CATCH_UP: Duration = Duration::from_millis(20);

/// Called by [`Action::MarkSent`] with its argument.
pub type MarkSent = Arc<dyn Fn(u64) + Send + Sync>;

/// One step of writing a response body.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Write these bytes (one HTTP chunk when the length is not fixed).
    Data(Bytes),
    /// Pause.
    Sleep(Duration),
    /// Drop the connection now: no terminating zero-length chunk, so the
    /// client sees a body error / unexpected EOF rather than a clean end.
    Abort,
    /// Send nothing more, ever (until the client or the server goes away).
    Stall,
    /// Report (through the body's [`MarkSent`] callback, with this request sequence number)
    /// that everything before has been handed to the connection. Sends nothing.
    MarkSent(u64),
}

/// One SSE event in the reference framing: `data: <json>\r\n\r\n`, the JSON
/// written like Python's `json.dumps`.
pub fn event(value: &Value) -> Bytes {
    Bytes::from(format!(
        "data: {}\r\n\r\n",
        crate::pyjson::dumps(value, true)
    ))
}

/// Events interleaved with an optional pause between them.
pub fn events_with_pauses(events: &[Bytes], pause: Option<Duration>) -> Vec<Action> {
    let mut actions = Vec::new();
    for (i, ev) in events.iter().enumerate() {
        if i > 0
            && let Some(p) = pause
        {
            actions.push(Action::Sleep(p));
        }
        actions.push(Action::Data(ev.clone()));
    }
    actions
}

/// `text` cut into pieces of `n` bytes (the last one shorter).
pub fn split_bytes(text: &[u8], n: usize) -> Vec<Action> {
    text.chunks(n.max(1))
        .map(|c| Action::Data(Bytes::copy_from_slice(c)))
        .collect()
}

/// Lets hyper's connection task run its flush before we continue.
async fn flush_point() {
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
}

/// The streaming body that performs `actions` in order; `mark` receives the
/// [`Action::MarkSent`] reports.
pub fn body(actions: Vec<Action>, mark: Option<MarkSent>) -> Body {
    struct Writer {
        actions: std::vec::IntoIter<Action>,
        sent_any: bool,
        /// When the previous pause was due to end.
        schedule: Option<Instant>,
        mark: Option<MarkSent>,
    }
    let state = Writer {
        actions: actions.into_iter(),
        sent_any: false,
        schedule: None,
        mark,
    };
    let stream = futures::stream::unfold(state, |mut w| async move {
        loop {
            match w.actions.next()? {
                Action::Data(bytes) => {
                    if w.sent_any {
                        flush_point().await;
                    }
                    w.sent_any = true;
                    return Some((Ok(bytes), w));
                }
                Action::Sleep(d) => {
                    let now = Instant::now();
                    let due = match w.schedule {
                        Some(previous) if previous + MAX_CATCH_UP >= now => previous + d,
                        _ => now + d,
                    };
                    w.schedule = Some(due);
                    if due > now {
                        tokio::time::sleep_until(due).await;
                    }
                }
                Action::MarkSent(seq) => {
                    // Let hyper write the last data before reporting it sent.
                    flush_point().await;
                    if let Some(mark) = &w.mark {
                        mark(seq);
                    }
                }
                Action::Abort => {
                    flush_point().await;
                    let err = std::io::Error::other("fake-gemini: connection cut by fault");
                    // Nothing after an abort is ever sent.
                    w.actions = Vec::new().into_iter();
                    return Some((Err(err), w));
                }
                Action::Stall => std::future::pending::<()>().await,
            }
        }
    });
    Body::from_stream(stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn event_framing() {
        assert_eq!(
            event(&json!({"a": "é"})),
            Bytes::from_static(b"data: {\"a\": \"\\u00e9\"}\r\n\r\n")
        );
    }

    #[test]
    fn pauses_only_between_events() {
        let evs = [Bytes::from_static(b"1"), Bytes::from_static(b"2")];
        let d = Duration::from_millis(5);
        assert_eq!(
            events_with_pauses(&evs, Some(d)),
            vec![
                Action::Data(evs[0].clone()),
                Action::Sleep(d),
                Action::Data(evs[1].clone())
            ]
        );
        assert_eq!(split_bytes(b"abcde", 2).len(), 3);
    }
}
