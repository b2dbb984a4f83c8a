//! Whole-turn review ("Review at end of turn"): the edits of a turn are
//! staged instead of written, shown together when the turn ends
//! ([`crate::Event::TurnReview`]) and written, in part or not at all, when
//! the user decides ([`crate::Op::ApplyTurnReview`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{HunkDecision, SideBySideDiff};

/// One staged file of a turn review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ReviewFile {
    /// The file's absolute path (the key of a [`ReviewDecision`]).
    pub path: String,
    /// The path as shown (relative to the workspace when inside it).
    pub shown_path: String,
    /// The file on disk when the turn first touched it (LF line endings
    /// when the file uses CRLF); `None` for a file the turn creates.
    pub original: Option<String>,
    /// What the turn left in the staging copy.
    pub staged: String,
    pub added: u32,
    pub removed: u32,
    pub new_file: bool,
    /// The file on disk is no longer what the turn started from (changed
    /// since it was staged): applying it will be refused.
    #[serde(default)]
    pub changed_on_disk: bool,
    /// The diff between `original` and `staged`, as an edit confirmation
    /// shows it; its hunks are the ones [`ReviewAccept::Hunks`] decides on.
    pub side_by_side: SideBySideDiff,
}

/// What to write of one staged file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum ReviewAccept {
    /// The whole staged change (or the user's edited version of it).
    All,
    /// Nothing: the file stays as it is on disk.
    None,
    /// Exactly the accepted hunks of the diff between the original and the
    /// staged content (or `edited`), one decision per hunk.
    Hunks { hunks: Vec<HunkDecision> },
}

/// The user's decision on one staged file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ReviewDecision {
    /// [`ReviewFile::path`].
    pub path: String,
    pub accept: ReviewAccept,
    /// The user's own version of the staged content (the editable right
    /// pane); hunks are then taken from the diff against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub edited: Option<String>,
}

/// Why a staged file (or part of it) was not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum NotAppliedReason {
    /// The user rejected the whole file (or discarded the review).
    Rejected,
    /// The user accepted only some hunks; the rest was not written.
    PartlyApplied,
    /// The file changed on disk since it was staged; nothing was written.
    ChangedOnDisk,
    /// Writing failed (see the message).
    Failed,
}

/// A staged file that was not (fully) written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ReviewNotApplied {
    pub path: String,
    pub reason: NotAppliedReason,
    /// For people: what happened.
    pub message: String,
}
