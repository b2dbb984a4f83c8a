//! Reverting an applied edit after the fact (`Op::RevertEdit`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::ConfirmationDetails;

/// An edit (or some of its hunks) was reverted on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct EditRevert {
    pub call_id: String,
    pub file_path: String,
    /// The hunks reverted (indexes into the card's diff); absent: the whole
    /// edit, or the user's own resolution of a conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hunks: Option<Vec<u32>>,
    /// The file the edit created was deleted.
    pub deleted: bool,
    /// The user's resolution of a three-way view was written.
    pub resolved: bool,
    /// What is still applied of the edit (its hunks renumbered from 0), for
    /// the card to show and revert further; absent when nothing is left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub remaining: Option<ConfirmationDetails>,
}

/// The file changed since the edit: the three texts of a three-way view
/// and a merged proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RevertConflict {
    pub call_id: String,
    pub file_path: String,
    /// What the edit wrote.
    pub base: String,
    /// What is on disk now.
    pub current: String,
    /// What the revert gives when applied to `base`.
    pub reverted: String,
    /// A line-based three-way merge of `current` and `reverted` over
    /// `base`; conflicting regions are marked with `<<<<<<<`, `=======`,
    /// `>>>>>>>` lines.
    pub merged: String,
    /// How many conflicting regions `merged` has.
    pub conflicts: u32,
    /// The hunks asked for (absent: the whole edit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub hunks: Option<Vec<u32>>,
}
