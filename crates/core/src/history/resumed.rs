//! A reopened conversation's usage, rebuilt from its records: the turn
//! rows of the usage panel and the statistics the session counts on from,
//! so the meter and the panel show after a restart what they showed before.
//!
//! Turns recorded since turn ends were stored bring their exact row and the
//! statistics as of their end. Older sessions (and whatever a killed app
//! recorded after the last turn end) are rebuilt from the model messages'
//! token counts: one row per prompt, the requests counted as the main
//! model's.

use gd_protocol::{Event, RequestRole, TurnEndRecord, TurnRow, TurnStatus, TurnUsage, Usage};
use gd_store::{MessageKind, TokenUsage, UsageRecord};
use tracing::warn;

pub use crate::stats::ResumedUsage;
use crate::stats::StatsRecorder;

/// A turn read from records that have no turn end (yet).
struct OpenTurn {
    start_ms: i64,
    last_ms: i64,
    usage: TurnUsage,
}

impl OpenTurn {
    fn row(self) -> TurnRow {
        TurnRow {
            status: TurnStatus::Completed,
            usage: TurnUsage {
                duration_ms: u64::try_from(self.last_ms - self.start_ms).unwrap_or(0),
                ..self.usage
            },
        }
    }
}

/// Rebuilds the usage from `records` (`Store::usage_records`, in order).
pub fn rebuild(records: &[UsageRecord]) -> ResumedUsage {
    // Before the first turn end, a prompt starts a turn; from it on only
    // turn ends close turns (a hook's follow-up prompt is part of its turn).
    let first_end = records
        .iter()
        .position(|r| r.kind == MessageKind::TurnEnd)
        .unwrap_or(records.len());
    let mut rows = Vec::new();
    // Counted the way a live session counts (the same recorder, shown the
    // events the records stand for), from the last turn end's statistics on.
    let mut stats: Option<StatsRecorder> = None;
    let mut open: Option<OpenTurn> = None;
    for (i, record) in records.iter().enumerate() {
        match record.kind {
            MessageKind::Prompt => {
                if i < first_end
                    && let Some(turn) = open.take()
                {
                    rows.push(turn.row());
                }
                if open.is_none() {
                    open = Some(OpenTurn {
                        start_ms: record.created_ms,
                        last_ms: record.created_ms,
                        usage: TurnUsage::default(),
                    });
                }
                // A turn no turn end accounts for yet.
                stats
                    .get_or_insert_with(|| StatsRecorder::new("", ""))
                    .record(&Event::TurnStarted {
                        turn_id: String::new(),
                    });
            }
            MessageKind::Model => {
                let Some(usage) = record.usage else { continue };
                let model = record.model.clone().unwrap_or_default();
                let usage = to_usage(usage);
                if let Some(turn) = open.as_mut() {
                    turn.last_ms = record.created_ms;
                    turn.usage.add(&model, &usage);
                }
                stats
                    .get_or_insert_with(|| StatsRecorder::new("", ""))
                    .record(&Event::Usage {
                        model,
                        latency_ms: 0,
                        usage,
                        role: RequestRole::Main,
                    });
            }
            MessageKind::TurnEnd => {
                open = None;
                let Some(end) = record.turn_end.as_ref() else {
                    continue;
                };
                match serde_json::from_value::<TurnEndRecord>(end.clone()) {
                    Ok(end) => {
                        rows.push(TurnRow {
                            status: end.status,
                            usage: end.usage,
                        });
                        // Counted up to here, this turn included.
                        if let Some(at_end) = end.stats {
                            let mut recorder = StatsRecorder::new("", "");
                            recorder.seed(ResumedUsage {
                                stats: Some(at_end),
                                rows: Vec::new(),
                            });
                            stats = Some(recorder);
                        }
                    }
                    Err(error) => warn!(%error, "a stored turn end cannot be read"),
                }
            }
            MessageKind::ToolResult | MessageKind::Summary => {}
        }
    }
    if let Some(turn) = open {
        rows.push(turn.row());
    }
    ResumedUsage {
        stats: stats.map(|s| s.snapshot_without_rows()),
        rows,
    }
}

fn to_usage(u: TokenUsage) -> Usage {
    Usage {
        prompt_tokens: u.prompt,
        cached_tokens: u.cached,
        output_tokens: u.output,
        thoughts_tokens: u.thoughts,
        tool_tokens: u.tool,
        total_tokens: u.total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn record(kind: MessageKind, at: i64, total: Option<u64>, end: Option<Value>) -> UsageRecord {
        UsageRecord {
            kind,
            created_ms: at,
            usage: total.map(|t| TokenUsage {
                prompt: t - 1,
                output: 1,
                total: t,
                ..TokenUsage::default()
            }),
            model: total.map(|_| "gemini-2.5-flash".to_owned()),
            turn_end: end,
        }
    }

    #[test]
    fn sessions_from_before_turn_ends_are_counted_from_their_messages() {
        let records = [
            record(MessageKind::Prompt, 1_000, None, None),
            record(MessageKind::Model, 3_000, Some(100), None),
            record(MessageKind::Model, 4_000, Some(120), None),
            record(MessageKind::Prompt, 9_000, None, None),
            record(MessageKind::Model, 9_500, Some(50), None),
        ];
        let resumed = rebuild(&records);
        let rows: Vec<(u32, u64, u64)> = resumed
            .rows
            .iter()
            .map(|r| (r.usage.requests, r.usage.total_tokens, r.usage.duration_ms))
            .collect();
        assert_eq!(rows, [(2, 220, 3_000), (1, 50, 500)]);
        let stats = resumed.stats.unwrap();
        assert_eq!(stats.turns, 2);
        assert_eq!(stats.models.len(), 1);
        assert_eq!(
            (stats.models[0].requests, stats.models[0].total_tokens),
            (3, 270)
        );
    }

    #[test]
    fn a_turn_end_brings_its_row_and_statistics_and_later_messages_add_up() {
        let mut at_end = gd_protocol::SessionStats {
            turns: 4,
            ..gd_protocol::SessionStats::default()
        };
        at_end.models.push(gd_protocol::ModelStats {
            model: "gemini-2.5-pro".into(),
            requests: 7,
            total_tokens: 7_000,
            ..gd_protocol::ModelStats::default()
        });
        let end = TurnEndRecord {
            status: TurnStatus::Cancelled,
            usage: TurnUsage {
                requests: 1,
                total_tokens: 900,
                duration_ms: 1_234,
                ..TurnUsage::default()
            },
            stats: Some(at_end),
            ..TurnEndRecord::default()
        };
        let records = [
            record(MessageKind::Prompt, 1_000, None, None),
            record(MessageKind::Model, 2_000, Some(900), None),
            record(MessageKind::TurnEnd, 2_100, None, Some(json!(end))),
            // The app was killed in the next turn, after its first answer.
            record(MessageKind::Prompt, 5_000, None, None),
            record(MessageKind::Model, 6_000, Some(10), None),
        ];
        let resumed = rebuild(&records);
        assert_eq!(resumed.rows[0].status, TurnStatus::Cancelled);
        assert_eq!(
            resumed.rows[0].usage.duration_ms, 1_234,
            "the footer as shown"
        );
        assert_eq!(resumed.rows[1].usage.total_tokens, 10);
        let stats = resumed.stats.unwrap();
        assert_eq!(stats.turns, 5, "the snapshot's four and the unfinished one");
        let totals: Vec<(&str, u32, u64)> = stats
            .models
            .iter()
            .map(|m| (m.model.as_str(), m.requests, m.total_tokens))
            .collect();
        assert_eq!(
            totals,
            [("gemini-2.5-pro", 7, 7_000), ("gemini-2.5-flash", 1, 10)]
        );
    }
}
