//! Which edits of the session were applied, and what each wrote, so that
//! `Op::RevertEdit` can undo one later.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gd_protocol::ConfirmationDetails;

/// Where an applied edit stands.
#[derive(Debug, Clone, PartialEq)]
pub enum EditState {
    /// What is still applied: `original` → `proposed` is what the edit
    /// (less any hunks reverted since) wrote.
    Applied(ConfirmationDetails),
    /// Reverted as a whole (or resolved by hand): nothing left to undo.
    Reverted,
}

#[derive(Debug, Default)]
struct Ledger {
    edits: HashMap<String, EditState>,
    /// The disk content a three-way view was offered on, per call: its
    /// resolution is written only if the disk still reads so.
    conflicts: HashMap<String, String>,
}

/// The session's applied edits. Cloning shares them (the scheduler records,
/// the revert task reads and updates).
#[derive(Debug, Clone, Default)]
pub struct AppliedEdits {
    inner: Arc<Mutex<Ledger>>,
}

impl AppliedEdits {
    /// Records what a finished edit wrote (other details are ignored).
    pub fn record(&self, call_id: &str, details: &ConfirmationDetails) {
        if matches!(details, ConfirmationDetails::Edit { .. }) {
            self.lock()
                .edits
                .insert(call_id.to_owned(), EditState::Applied(details.clone()));
        }
    }

    pub fn get(&self, call_id: &str) -> Option<EditState> {
        self.lock().edits.get(call_id).cloned()
    }

    pub fn set(&self, call_id: &str, state: EditState) {
        let mut ledger = self.lock();
        ledger.conflicts.remove(call_id);
        ledger.edits.insert(call_id.to_owned(), state);
    }

    /// Remembers the disk content a three-way view was offered on.
    pub fn offer_conflict(&self, call_id: &str, current: &str) {
        self.lock()
            .conflicts
            .insert(call_id.to_owned(), current.to_owned());
    }

    /// The disk content the open three-way view of `call_id` was made on.
    pub fn conflict(&self, call_id: &str) -> Option<String> {
        self.lock().conflicts.get(call_id).cloned()
    }

    /// A poisoned lock only means a panic elsewhere while recording; the
    /// maps are still valid.
    fn lock(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}
