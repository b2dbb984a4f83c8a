//! Session history for the headless CLI: `--list-sessions`,
//! `--delete-session`, `--resume`, and recording every run.
//!
//! The list is the workspace's sessions from our store plus Gemini CLI's
//! own recordings of the same project (matched by `projectHash`), oldest
//! first and numbered as Gemini CLI numbers them, so `--resume 3` means the
//! same in both tools. A Gemini CLI session is imported into our store when
//! it is resumed; its file is never changed.

use std::io::Write;
use std::path::Path;

use gd_store::gemini_cli::{self, GeminiCliSession};
use gd_store::{SessionSummary, Store, StoreError};

use crate::exit::{self, Fatal};

/// One row of the list.
#[allow(clippy::large_enum_variant)] // a handful of rows, listed once
pub enum Entry {
    Stored(SessionSummary),
    GeminiCli(GeminiCliSession),
}

impl Entry {
    pub fn id(&self) -> &str {
        match self {
            Entry::Stored(s) => &s.id,
            Entry::GeminiCli(s) => &s.id,
        }
    }

    pub fn updated_ms(&self) -> i64 {
        match self {
            Entry::Stored(s) => s.updated_ms,
            Entry::GeminiCli(s) => s.updated_ms,
        }
    }

    pub fn title(&self) -> String {
        let title = match self {
            Entry::Stored(s) => s.title.clone(),
            Entry::GeminiCli(s) => {
                let t = s
                    .summary
                    .clone()
                    .or_else(|| s.first_prompt())
                    .map(|t| gd_store::title_from(&t))
                    .unwrap_or_default();
                format!("[Gemini CLI] {t}")
            }
        };
        if title.trim().is_empty() {
            "(no prompt)".into()
        } else {
            title
        }
    }
}

/// The workspace path as sessions record it.
pub fn workspace_key(workspace: &Path) -> String {
    workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf())
        .display()
        .to_string()
}

/// Our sessions and Gemini CLI's for `workspace`, oldest first.
pub fn entries(store: &Store, workspace: &str) -> Result<Vec<Entry>, StoreError> {
    let mut out: Vec<Entry> = store
        .workspace_sessions_oldest_first(workspace)?
        .into_iter()
        .map(Entry::Stored)
        .collect();
    if let Some(dir) = gemini_cli::gemini_dir() {
        let hash = gemini_cli::project_hash(workspace);
        for session in gemini_cli::list_sessions(&dir, Some(&hash)) {
            if session.conversation_len() == 0 || store.session(&session.id)?.is_some() {
                continue;
            }
            out.push(Entry::GeminiCli(session));
        }
    }
    out.sort_by(|a, b| {
        a.updated_ms()
            .cmp(&b.updated_ms())
            .then_with(|| a.id().cmp(b.id()))
    });
    Ok(out)
}

/// Finds a session by `latest`, its 1-based number in the list, or its id
/// (a unique prefix of 8 or more characters will do).
pub fn resolve<'a>(entries: &'a [Entry], key: &str) -> Result<&'a Entry, String> {
    let key = key.trim();
    if entries.is_empty() {
        return Err("No previous sessions found for this project.".into());
    }
    if key.is_empty() || key == "latest" {
        return Ok(entries.last().expect("not empty"));
    }
    if let Some(e) = entries.iter().find(|e| e.id() == key) {
        return Ok(e);
    }
    if let Ok(n) = key.parse::<usize>() {
        return n
            .checked_sub(1)
            .and_then(|i| entries.get(i))
            .ok_or_else(|| {
                format!(
                    "Invalid session number {n}: this project has {} session(s). Use --list-sessions to see them.",
                    entries.len()
                )
            });
    }
    let matches: Vec<&Entry> = entries
        .iter()
        .filter(|e| key.len() >= 8 && e.id().starts_with(key))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(format!(
            "No session '{key}' in this project. Use --list-sessions to see them."
        )),
        _ => Err(format!("Session id '{key}' is ambiguous: give more of it.")),
    }
}

/// "2 days ago", as Gemini CLI writes it.
pub fn ago(then_ms: i64, now_ms: i64) -> String {
    let secs = ((now_ms - then_ms) / 1000).max(0);
    let (n, unit) = match secs {
        s if s < 60 => return "Just now".into(),
        s if s < 3600 => (s / 60, "minute"),
        s if s < 86_400 => (s / 3600, "hour"),
        s => (s / 86_400, "day"),
    };
    format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" })
}

fn open_store() -> Result<Store, Fatal> {
    Store::open_default().map_err(|e| {
        Fatal::general(
            "HistoryError",
            format!("Cannot open the session history: {e}"),
        )
    })
}

/// `--list-sessions`.
pub fn list(workspace: &Path, out: &mut dyn Write) -> i32 {
    let result = open_store().and_then(|store| {
        entries(&store, &workspace_key(workspace))
            .map_err(|e| Fatal::general("HistoryError", e.to_string()))
    });
    let entries = match result {
        Ok(e) => e,
        Err(fatal) => return fail(&fatal),
    };
    let now = gd_store::now_ms();
    let written = (|| -> std::io::Result<()> {
        if entries.is_empty() {
            writeln!(out, "No previous sessions found for this project.")?;
            return Ok(());
        }
        writeln!(
            out,
            "\nAvailable sessions for this project ({}):",
            entries.len()
        )?;
        for (i, e) in entries.iter().enumerate() {
            writeln!(
                out,
                "  {}. {} ({}) [{}]",
                i + 1,
                e.title(),
                ago(e.updated_ms(), now),
                e.id()
            )?;
        }
        out.flush()
    })();
    match written {
        Ok(()) => exit::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::SUCCESS,
        Err(e) => fail(&Fatal::general(
            "InternalError",
            format!("cannot write: {e}"),
        )),
    }
}

/// `--delete-session <id|number>`.
pub fn delete(workspace: &Path, key: &str, out: &mut dyn Write) -> i32 {
    let store = match open_store() {
        Ok(s) => s,
        Err(fatal) => return fail(&fatal),
    };
    let entries = match entries(&store, &workspace_key(workspace)) {
        Ok(e) => e,
        Err(e) => return fail(&Fatal::general("HistoryError", e.to_string())),
    };
    let entry = match resolve(&entries, key) {
        Ok(e) => e,
        Err(message) => return fail(&Fatal::input(message)),
    };
    let index = entries
        .iter()
        .position(|e| e.id() == entry.id())
        .unwrap_or(0)
        + 1;
    match entry {
        Entry::GeminiCli(s) => fail(&Fatal::input(format!(
            "Session {} is Gemini CLI's ({}); delete it with Gemini CLI. Gemini Desktop only reads it.",
            s.id,
            s.file.display()
        ))),
        Entry::Stored(s) => match store.delete_session(&s.id) {
            Ok(_) => {
                let _ = writeln!(
                    out,
                    "Deleted session {index}: {} ({})",
                    entry.title(),
                    ago(s.updated_ms, gd_store::now_ms())
                );
                exit::SUCCESS
            }
            Err(e) => fail(&Fatal::general("HistoryError", e.to_string())),
        },
    }
}

fn fail(fatal: &Fatal) -> i32 {
    let _ = writeln!(std::io::stderr(), "Error: {}", fatal.message);
    fatal.code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_times() {
        let now = 10_000_000_000;
        assert_eq!(ago(now - 5_000, now), "Just now");
        assert_eq!(ago(now - 60_000, now), "1 minute ago");
        assert_eq!(ago(now - 7_200_000, now), "2 hours ago");
        assert_eq!(ago(now - 3 * 86_400_000, now), "3 days ago");
        assert_eq!(ago(now + 5_000, now), "Just now");
    }
}
