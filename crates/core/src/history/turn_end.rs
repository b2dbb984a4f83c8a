//! The end of a turn, recorded: what the user saw of a turn that is not in
//! the model's messages (an answer stopped mid-stream, the notices, the
//! footer's usage, the statistics so far), so that a reopened conversation
//! shows exactly what was on screen and counts on from the same usage.
//!
//! [`TurnRecap`] watches the turn's events as they go out (the only
//! complete account of what was shown); [`HistoryRecorder::record_turn_end`]
//! stores it as an unfinished answer (a model message outside the context)
//! and a `turn_end` record (gd-protocol's [`TurnEndRecord`]).

use gd_protocol::{Event, SessionStats, TurnEndRecord, TurnNotice, TurnStatus, TurnUsage};
use gd_store::{MessageKind, NewMessage, Role, ThoughtRecord};
use serde_json::{Value, json};

use super::HistoryRecorder;
use crate::events::EventSink;

/// More unfinished answer than this is cut (an answer is far smaller; this
/// only bounds a runaway stream).
const PARTIAL_MAX_BYTES: usize = 1 << 20;
/// At most this many notices per turn are kept (a turn shows a handful).
const NOTICES_MAX: usize = 64;

/// What a running turn showed that its recorded messages do not hold.
#[derive(Debug, Default)]
pub struct TurnRecap {
    /// Answer text streamed since the last recorded model message.
    partial: String,
    /// Thought summaries shown since then.
    thoughts: Vec<ThoughtRecord>,
    notices: Vec<TurnNotice>,
    /// Routing chose the turn's model (the footer says so).
    routed: bool,
    /// The last message recorded (where a notice shows).
    last_seq: Option<i64>,
    /// The notices (by index) shown below text streamed since that message: they follow the
    /// unfinished answer once it is recorded.
    after_partial: Vec<usize>,
}

impl TurnRecap {
    /// Takes in one event of the turn.
    pub fn observe(&mut self, event: &Event) {
        match event {
            Event::ContentDelta { text }
                if self.partial.len() + text.len() <= PARTIAL_MAX_BYTES =>
            {
                self.partial.push_str(text);
            }
            Event::Thought {
                subject,
                description,
            } => self.thoughts.push(ThoughtRecord {
                subject: subject.clone(),
                description: description.clone(),
            }),
            Event::ModelRouted { .. } => self.routed = true,
            Event::MessageRecorded { kind, seq, .. } => {
                self.last_seq = Some(*seq);
                // The answer so far is in the history now.
                if kind == MessageKind::Model.as_str() {
                    self.partial.clear();
                    self.thoughts.clear();
                    self.after_partial.clear();
                }
            }
            // A turn shows one retry notice, updated by each retry.
            Event::Retrying { .. }
                if let Some(shown) = self
                    .notices
                    .iter_mut()
                    .find(|n| matches!(n.event, Event::Retrying { .. })) =>
            {
                shown.event = event.clone();
            }
            e if e.is_turn_notice() && self.notices.len() < NOTICES_MAX => {
                if !self.partial.is_empty() {
                    self.after_partial.push(self.notices.len());
                }
                self.notices.push(TurnNotice {
                    after_seq: self.last_seq,
                    event: e.clone(),
                });
            }
            _ => {}
        }
    }
}

/// A turn's end as the recorder stores it.
pub struct TurnEnd<'a> {
    pub status: TurnStatus,
    pub usage: &'a TurnUsage,
    pub recap: TurnRecap,
    /// The conversation's statistics as of now (without turn rows).
    pub stats: Option<SessionStats>,
}

impl HistoryRecorder {
    /// Notes that the running turn recorded its prompt: only such a turn's
    /// end is recorded (a turn refused before anything was sent leaves
    /// nothing behind, as it left no prompt).
    pub(super) fn turn_prompted(&mut self) {
        self.turn_prompted = true;
    }

    /// Records how the turn ended: the unfinished answer, if the turn
    /// stopped in the middle of one, then the turn-end record.
    pub async fn record_turn_end(&mut self, end: TurnEnd<'_>, model: &str, sink: &EventSink) {
        if !std::mem::take(&mut self.turn_prompted) {
            return;
        }
        let TurnRecap {
            partial,
            thoughts,
            mut notices,
            routed,
            last_seq: _,
            after_partial,
        } = end.recap;
        if !partial.trim().is_empty() || !thoughts.is_empty() {
            // What the user saw of the answer; the model never got it.
            let mut message = NewMessage::new(
                Role::Model,
                MessageKind::Model,
                json!([{ "text": partial }]),
                partial.clone(),
            );
            message.in_context = false;
            message.thoughts = thoughts;
            message.model = Some(model.to_owned());
            if let Some(recorded) = self.commit(message, None, sink).await {
                // The notices that showed below this text show below it again.
                for i in after_partial {
                    if let Some(notice) = notices.get_mut(i) {
                        notice.after_seq = Some(recorded.seq);
                    }
                }
            }
        }
        let line = status_line(end.status, &notices);
        let record = TurnEndRecord {
            status: end.status,
            usage: end.usage.clone(),
            notices,
            routed,
            stats: end.stats,
        };
        let parts = serde_json::to_value(&record).unwrap_or(Value::Null);
        let mut message = NewMessage::new(Role::Model, MessageKind::TurnEnd, parts, line);
        message.in_context = false;
        self.commit(message, None, sink).await;
    }
}

/// The line an export shows under a turn that did not simply complete.
fn status_line(status: TurnStatus, notices: &[TurnNotice]) -> String {
    let detail = notices.iter().find_map(|n| match &n.event {
        Event::LoopDetected { detail, .. } => Some(detail.as_str()),
        Event::Error { message, .. } => Some(message.as_str()),
        _ => None,
    });
    let line = match status {
        TurnStatus::Completed => return String::new(),
        TurnStatus::Cancelled => "Cancelled.",
        TurnStatus::Declined => "Declined.",
        TurnStatus::Failed => "The turn failed",
        TurnStatus::TurnLimitReached => "Stopped: the turn reached its limit of model requests",
        TurnStatus::LoopDetected => "Loop detected, the turn was stopped",
    };
    match detail {
        Some(detail) if !line.ends_with('.') => format!("{line}: {detail}"),
        _ if !line.ends_with('.') => format!("{line}."),
        _ => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_protocol::{ErrorKind, LoopKind};

    #[test]
    fn the_recap_keeps_only_what_no_record_holds() {
        let mut recap = TurnRecap::default();
        recap.observe(&Event::ContentDelta {
            text: "first ".into(),
        });
        recap.observe(&Event::MessageRecorded {
            message_id: "m".into(),
            seq: 2,
            kind: "model".into(),
            call_ids: vec![],
        });
        recap.observe(&Event::Thought {
            subject: "Plan".into(),
            description: "d".into(),
        });
        recap.observe(&Event::ContentDelta {
            text: "half an ans".into(),
        });
        recap.observe(&Event::Warning {
            message: "w".into(),
        });
        recap.observe(&Event::Finished {
            reason: "STOP".into(),
            message: None,
        });
        let retry = |attempt| Event::Retrying {
            attempt,
            max_attempts: 3,
            delay_ms: 1000,
            reason: "503".into(),
        };
        recap.observe(&retry(1));
        recap.observe(&retry(2));
        assert_eq!(recap.partial, "half an ans");
        assert_eq!(recap.thoughts.len(), 1);
        let shown: Vec<(Option<i64>, &Event)> = recap
            .notices
            .iter()
            .map(|n| (n.after_seq, &n.event))
            .collect();
        let warning = Event::Warning {
            message: "w".into(),
        };
        assert_eq!(
            shown,
            [(Some(2), &warning), (Some(2), &retry(2))],
            "where each showed; one retry notice, the latest"
        );
        assert_eq!(recap.after_partial, [0, 1], "both below the streamed text");
    }

    #[test]
    fn export_lines_say_how_a_turn_ended() {
        assert_eq!(status_line(TurnStatus::Completed, &[]), "");
        assert_eq!(status_line(TurnStatus::Cancelled, &[]), "Cancelled.");
        let at = |event| TurnNotice {
            after_seq: None,
            event,
        };
        let looped = [at(Event::LoopDetected {
            kind: LoopKind::RepeatedContent,
            detail: "same text".into(),
        })];
        assert_eq!(
            status_line(TurnStatus::LoopDetected, &looped),
            "Loop detected, the turn was stopped: same text"
        );
        let failed = [at(Event::Error {
            kind: ErrorKind::Internal,
            message: "boom".into(),
            status: None,
            fatal: true,
        })];
        assert_eq!(
            status_line(TurnStatus::Failed, &failed),
            "The turn failed: boom"
        );
    }
}
