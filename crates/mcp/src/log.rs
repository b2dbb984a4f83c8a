//! A bounded tail of what a server wrote to stderr, for the UI, with a
//! change counter so the UI can follow it live (see
//! [`LogTail::subscribe`]).

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::watch;

/// Lines kept per server.
pub const MAX_LINES: usize = 200;
/// Longer lines are cut (with a marker).
pub const MAX_LINE_CHARS: usize = 2000;
/// The start of the client's own notes in a server's log (discovery
/// failures, skipped tools, ...), so the panel shows them in context.
pub const NOTE_PREFIX: &str = "[gemini-desktop] ";

#[derive(Debug)]
pub struct LogTail {
    lines: Mutex<VecDeque<String>>,
    /// Bumped on every pushed line.
    changes: watch::Sender<u64>,
}

impl Default for LogTail {
    fn default() -> Self {
        Self {
            lines: Mutex::default(),
            changes: watch::channel(0).0,
        }
    }
}

impl LogTail {
    pub fn new() -> Self {
        Self::default()
    }

    /// Hears about every line pushed from now on (the value counts them).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub fn push(&self, line: &str) {
        let line = line.trim_end_matches(['\r', '\n']);
        let line = match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}… [line cut]", &line[..cut]),
            None => line.to_owned(),
        };
        let mut lines = self.lock();
        if lines.len() == MAX_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
        drop(lines);
        self.changes.send_modify(|n| *n += 1);
    }

    pub fn lines(&self) -> Vec<String> {
        self.lock().iter().cloned().collect()
    }

    /// The last non-empty line the server itself wrote, for error messages:
    /// when a server crashes, its last words say why, while our own note of
    /// a request the crash broke ("prompts/list failed: Transport closed")
    /// would hide them.
    pub fn last_line(&self) -> Option<String> {
        self.lock()
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.starts_with(NOTE_PREFIX))
            .cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<String>> {
        self.lines.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_tail() {
        let log = LogTail::new();
        for i in 0..(MAX_LINES + 5) {
            log.push(&format!("line {i}\n"));
        }
        let lines = log.lines();
        assert_eq!(lines.len(), MAX_LINES);
        assert_eq!(lines[0], "line 5");
        log.push(&"x".repeat(MAX_LINE_CHARS + 10));
        assert!(log.last_line().unwrap().ends_with("[line cut]"));
        log.push("  ");
        assert!(log.last_line().unwrap().ends_with("[line cut]"));
        log.push("the server's own words");
        log.push(&format!(
            "{NOTE_PREFIX}prompts/list failed: Transport closed"
        ));
        assert_eq!(log.last_line().unwrap(), "the server's own words");
        assert_eq!(log.lines().len(), MAX_LINES);
    }

    #[test]
    fn subscribers_hear_of_new_lines() {
        let log = LogTail::new();
        let mut rx = log.subscribe();
        assert!(!rx.has_changed().unwrap());
        log.push("one");
        log.push("two");
        assert!(rx.has_changed().unwrap());
        assert_eq!(*rx.borrow_and_update(), 2);
        assert!(!rx.has_changed().unwrap());
    }
}
