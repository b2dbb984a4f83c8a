//! Checkpoints: snapshots of the workspace taken before edits, and what a
//! restore changed. See `crates/checkpoint`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How much of the workspace a checkpoint holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum CheckpointScope {
    /// The whole workspace (minus ignored and oversized files).
    Full,
    /// Only the files the edit touched (a full snapshot did not fit in the
    /// time budget); restoring it puts back exactly those files.
    Partial,
}

/// One checkpoint, as listed by `Op::ListCheckpoints`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CheckpointInfo {
    pub checkpoint_id: String,
    pub scope: CheckpointScope,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub session_id: Option<String>,
    pub message_id: Option<String>,
    pub call_id: Option<String>,
    /// The tool about to run (`write_file`, `replace`); none for snapshots
    /// made before a restore.
    pub tool: Option<String>,
    /// Workspace-relative paths the edit touched.
    pub files: Vec<String>,
    /// What the snapshot was for when it was not an edit.
    pub label: Option<String>,
}

/// What a restore did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum RestoreAction {
    /// The file was gone and came back.
    Recreated,
    /// The file was created after the checkpoint and was removed.
    Removed,
    /// The file's content went back to the checkpoint's.
    Reverted,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RestoredFile {
    pub path: String,
    pub action: RestoreAction,
}

/// The conversation half of a restore: the session history was truncated
/// at `message_id` (the recorded prompt whose turn made the edit; it and
/// everything after it left the history and the model's context).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RestoredConversation {
    pub message_id: String,
    /// How many stored messages were removed.
    pub removed: u32,
}

#[cfg(test)]
mod tests {
    use crate::{Event, Op};
    use serde_json::json;

    #[test]
    fn checkpoint_ops_and_events_are_tagged_json() {
        let op = Op::RestoreCheckpoint {
            checkpoint_id: "20260101T000000000Z-1a2b3c4d".into(),
            code: true,
            conversation: false,
        };
        let v = serde_json::to_value(&op).unwrap();
        assert_eq!(
            v,
            json!({"type": "restore_checkpoint", "checkpoint_id": "20260101T000000000Z-1a2b3c4d", "code": true, "conversation": false})
        );
        assert_eq!(serde_json::from_value::<Op>(v).unwrap(), op);
        let e = Event::CheckpointCreated {
            call_id: "c1".into(),
            checkpoint_id: "x".into(),
            scope: super::CheckpointScope::Partial,
            files: vec!["a.txt".into()],
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"type": "checkpoint_created", "call_id": "c1", "checkpoint_id": "x", "scope": "partial", "files": ["a.txt"]})
        );
    }
}
