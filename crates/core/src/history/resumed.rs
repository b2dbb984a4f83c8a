//! A reopened conversation's usage, rebuilt from its records: the turn
//! rows of the usage panel and the statistics the session counts on from,
//! so the meter and the panel show after a restart what they showed before.
//!
//! Turns recorded since turn ends were stored bring their exact row and the
//! statistics as of their end. Older sessions (and whatever a killed app
//! recorded after the last turn end) are rebuilt from the model messages'
//! token counts: one row per prompt, the requests counted as the main
//! model's.

use gd_protocol::{
    ModelStats, RequestRole, RoleStats, SessionStats, TurnEndRecord, TurnRow, TurnStatus, TurnUsage,
};
use gd_store::{MessageKind, TokenUsage, UsageRecord};
use tracing::warn;

/// What a resumed session's statistics start from.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ResumedUsage {
    /// The conversation's statistics (none when nothing was ever used).
    pub stats: Option<SessionStats>,
    /// Each stored turn, oldest first.
    pub rows: Vec<TurnRow>,
}

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
    let mut stats: Option<SessionStats> = None;
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
                stats.get_or_insert_with(SessionStats::default).turns += 1;
            }
            MessageKind::Model => {
                let Some(usage) = record.usage else { continue };
                let model = record.model.as_deref().unwrap_or_default();
                if let Some(turn) = open.as_mut() {
                    turn.last_ms = record.created_ms;
                    turn.usage.add(model, &to_usage(usage));
                }
                add_request(
                    stats.get_or_insert_with(SessionStats::default),
                    model,
                    usage,
                );
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
                            stats = Some(at_end);
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
    ResumedUsage { stats, rows }
}

fn to_usage(u: TokenUsage) -> gd_protocol::Usage {
    gd_protocol::Usage {
        prompt_tokens: u.prompt,
        cached_tokens: u.cached,
        output_tokens: u.output,
        thoughts_tokens: u.thoughts,
        tool_tokens: u.tool,
        total_tokens: u.total,
    }
}

/// Counts one recorded request of the agent's own (the main role).
fn add_request(stats: &mut SessionStats, model: &str, u: TokenUsage) {
    let index = match stats.models.iter().position(|m| m.model == model) {
        Some(index) => index,
        None => {
            stats.models.push(ModelStats {
                model: model.to_owned(),
                ..ModelStats::default()
            });
            stats.models.len() - 1
        }
    };
    let m = &mut stats.models[index];
    m.requests += 1;
    m.prompt_tokens += u.prompt;
    m.cached_tokens += u.cached;
    m.output_tokens += u.output;
    m.thoughts_tokens += u.thoughts;
    m.tool_tokens += u.tool;
    m.total_tokens += u.total;
    let role = match m.roles.iter().position(|r| r.role == RequestRole::Main) {
        Some(i) => &mut m.roles[i],
        None => {
            m.roles.insert(
                0,
                RoleStats {
                    role: RequestRole::Main,
                    ..RoleStats::default()
                },
            );
            &mut m.roles[0]
        }
    };
    role.requests += 1;
    role.prompt_tokens += u.prompt;
    role.cached_tokens += u.cached;
    role.output_tokens += u.output;
    role.thoughts_tokens += u.thoughts;
    role.tool_tokens += u.tool;
    role.total_tokens += u.total;
}
