//! How a turn ended, kept with the conversation: what lets a reopened
//! conversation show the footers, notices and usage it showed live.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{Event, SessionStats, TurnStatus, TurnUsage};

/// Stored at the end of every turn (gd-store's `turn_end` record, outside
/// the model's context). A frontend rebuilding a stored conversation shows
/// `notices` as it showed the events live, then the turn's footer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TurnEndRecord {
    pub status: TurnStatus,
    pub usage: TurnUsage,
    /// The turn's events that left a notice on screen (loop detected,
    /// errors, warnings, explained finish reasons, the retry notice), in
    /// order, each with where it showed.
    #[serde(default)]
    pub notices: Vec<TurnNotice>,
    /// The session's model was `auto` and routing chose the turn's model.
    #[serde(default)]
    pub routed: bool,
    /// The conversation's statistics as of this turn's end (without
    /// `turn_rows`, which the turn ends themselves are): a reopened session
    /// counts on from them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stats: Option<SessionStats>,
}

/// A notice of a turn and where it showed: after the recorded message
/// `after_seq` (none: before the turn's first message was recorded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TurnNotice {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub after_seq: Option<i64>,
    pub event: Event,
}

/// One turn of the conversation as the usage panel lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TurnRow {
    pub status: TurnStatus,
    pub usage: TurnUsage,
}

impl Event {
    /// Whether the event leaves a notice in the conversation (what a
    /// [`TurnEndRecord`] keeps of a turn's events).
    pub fn is_turn_notice(&self) -> bool {
        match self {
            Event::LoopDetected { .. }
            | Event::Warning { .. }
            | Event::Error { .. }
            | Event::Retrying { .. } => true,
            Event::Finished { message, .. } => message.is_some(),
            _ => false,
        }
    }
}
