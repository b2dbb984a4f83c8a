//! Things the model must hear with the user's next message.
//!
//! Some of what the user does happens between turns, outside any tool call
//! the model could get a functionResponse for: reverting an applied edit,
//! applying only part of an end-of-turn review. The model still believes its
//! change is in the file and would build on it (or re-apply it), so the next
//! message it gets carries a note saying exactly what changed. Notes are
//! queued here by whoever knows (an op, a review) and taken, in order, by the
//! next user message; a note is given once.

use std::sync::{Arc, Mutex};

/// The queue of notes for the next user message. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct NextMessageNotes {
    queue: Arc<Mutex<Vec<String>>>,
}

impl NextMessageNotes {
    /// Queues `note` (plain words for the model; empty notes are dropped).
    pub fn push(&self, note: impl Into<String>) {
        let note = note.into();
        if note.trim().is_empty() {
            return;
        }
        self.lock().push(note);
    }

    /// The queued notes, oldest first, leaving the queue empty.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.lock())
    }

    /// A poisoned lock only means a panic elsewhere while pushing; the
    /// queue itself is still a valid list.
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The text part that carries `notes` ahead of the user's prompt.
pub fn notes_part(notes: &[String]) -> Option<String> {
    if notes.is_empty() {
        return None;
    }
    let mut text = String::from(
        "Note from the app (the user acted on the files since your last message; \
         the files on disk are as described here, not as you last left them):\n",
    );
    for note in notes {
        text.push_str("- ");
        text.push_str(note.trim_end());
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_taken_once_in_order() {
        let notes = NextMessageNotes::default();
        let shared = notes.clone();
        shared.push("first");
        shared.push("  ");
        notes.push("second");
        assert_eq!(notes.take(), vec!["first", "second"]);
        assert!(notes.take().is_empty());
        assert!(notes_part(&[]).is_none());
        let part = notes_part(&["a.txt: reverted".into()]).unwrap();
        assert!(part.ends_with("- a.txt: reverted\n"), "{part}");
    }
}
