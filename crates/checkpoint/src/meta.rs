//! What a checkpoint records, and how it is stored in its commit message.

use serde::{Deserialize, Serialize};

use crate::error::CheckpointError;

/// Version of the JSON in checkpoint commit messages.
const FORMAT_VERSION: u32 = 1;

/// What the caller links a checkpoint to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The recorded message the edit belongs to: the id (in the session
    /// history store) of the prompt whose turn made it, where a restore of
    /// the conversation rewinds to. Checkpoints from before the history
    /// store held the chat's prompt id here; they are found by `call_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// `write_file`, `replace`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Workspace-relative paths the edit is about to change.
    #[serde(default)]
    pub files: Vec<String>,
    /// A note for snapshots not made for an edit (e.g. "before restore").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// How much of the workspace a checkpoint holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointKind {
    /// Every file that is not ignored or over the size limit.
    Full,
    /// Only [`CheckpointMeta::files`] (taken when a full snapshot did not
    /// fit in the time budget). Restoring it touches only those files.
    Partial,
}

/// A stored checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// `refs/checkpoints/<id>` in the shadow repository.
    pub id: String,
    pub commit: String,
    pub kind: CheckpointKind,
    /// RFC 3339, UTC.
    pub created_at: String,
    #[serde(flatten)]
    pub meta: CheckpointMeta,
    /// Files left out because they exceed the size limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// The JSON body of a checkpoint commit.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    version: u32,
    kind: CheckpointKind,
    created_at: String,
    #[serde(flatten)]
    meta: CheckpointMeta,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    skipped: Vec<String>,
}

/// The commit message: a readable subject, a blank line, one line of JSON.
pub(crate) fn commit_message(
    kind: CheckpointKind,
    created_at: &str,
    meta: &CheckpointMeta,
    skipped: &[String],
) -> String {
    let subject = match (&meta.tool, &meta.label) {
        (Some(tool), _) => format!("checkpoint before {tool} {}", meta.files.join(", ")),
        (None, Some(label)) => format!("checkpoint: {label}"),
        (None, None) => "checkpoint".to_owned(),
    };
    let body = Stored {
        version: FORMAT_VERSION,
        kind,
        created_at: created_at.to_owned(),
        meta: meta.clone(),
        skipped: skipped.to_vec(),
    };
    let json = serde_json::to_string(&body).expect("checkpoint metadata serialises");
    format!("{}\n\n{json}\n", subject.replace('\n', " "))
}

/// Reads the JSON body back (`body` is the message after the subject).
pub(crate) fn parse(id: &str, commit: &str, body: &str) -> Result<Checkpoint, CheckpointError> {
    let line = body
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| CheckpointError::Metadata {
            id: id.to_owned(),
            reason: "no JSON in the commit message".into(),
        })?;
    let stored: Stored = serde_json::from_str(line).map_err(|e| CheckpointError::Metadata {
        id: id.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(Checkpoint {
        id: id.to_owned(),
        commit: commit.to_owned(),
        kind: stored.kind,
        created_at: stored.created_at,
        meta: stored.meta,
        skipped: stored.skipped,
    })
}

/// Checkpoint ids are ref names we made: letters, digits and `-`.
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 80 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_through_the_commit_message() {
        let meta = CheckpointMeta {
            session_id: Some("s1".into()),
            message_id: Some("m1".into()),
            call_id: Some("c1".into()),
            tool: Some("replace".into()),
            files: vec!["src/a.rs".into()],
            label: None,
        };
        let message = commit_message(
            CheckpointKind::Partial,
            "2026-01-01T00:00:00Z",
            &meta,
            &["big.bin".into()],
        );
        assert!(message.starts_with("checkpoint before replace src/a.rs\n\n"));
        let body = message.split_once("\n\n").unwrap().1;
        let parsed = parse("id1", "abc", body).unwrap();
        assert_eq!(parsed.meta, meta);
        assert_eq!(parsed.kind, CheckpointKind::Partial);
        assert_eq!(parsed.skipped, vec!["big.bin".to_owned()]);
        assert!(matches!(
            parse("id1", "abc", "no json"),
            Err(CheckpointError::Metadata { .. })
        ));
    }

    #[test]
    fn ids_are_checked() {
        assert!(valid_id("20260101T000000123Z-1a2b3c4d"));
        assert!(!valid_id("../HEAD"));
        assert!(!valid_id(""));
        assert!(!valid_id("a b"));
    }
}
