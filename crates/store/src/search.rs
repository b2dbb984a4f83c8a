//! Full-text search across every session (FTS5, bm25 ranking).
//!
//! User input is never passed to FTS5's query language as is: each word
//! becomes a quoted phrase (so `"`, `*`, `OR`, `NEAR(` ... are plain text),
//! all words must match, and the last one matches as a prefix so results
//! appear while typing. Matched words come back between
//! [`crate::highlight::MARK_START`] and [`crate::highlight::MARK_END`]
//! control characters, never as markup; see [`crate::highlight::spans`].

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::highlight::{MARK_END, MARK_START};
use crate::{MessageKind, Result, Role, Store};

/// A search request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchQuery {
    pub text: String,
    /// Only this workspace; all projects when `None`.
    pub workspace: Option<String>,
    /// Results; 0 means 50.
    pub limit: u32,
    /// Skip this many (the next page of results).
    pub offset: u32,
}

/// One matching message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub session_id: String,
    pub session_title: String,
    pub workspace: String,
    pub message_id: String,
    /// The message's order in its session (open the transcript around it).
    pub seq: i64,
    pub role: Role,
    pub kind: MessageKind,
    pub created_ms: i64,
    /// The matching passage with hits marked (see the module docs).
    pub snippet: String,
    /// bm25 score: lower is better.
    pub score: f64,
}

/// The FTS5 query for what the user typed; `None` when nothing is left.
pub fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| c.is_whitespace())
        .map(|w| {
            w.chars()
                .filter(|c| *c != '"' && !c.is_control())
                .collect::<String>()
        })
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect();
    let last = words.len().checked_sub(1)?;
    Some(
        words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if i == last {
                    format!("\"{w}\"*")
                } else {
                    format!("\"{w}\"")
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

impl Store {
    /// Messages matching `query`, best first.
    pub fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let Some(fts) = fts_query(&query.text) else {
            return Ok(Vec::new());
        };
        let limit = if query.limit == 0 { 50 } else { query.limit } as i64;
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT m.session_id, s.title, s.workspace, m.id, m.seq, m.role, m.kind, m.created_ms,
                    snippet(messages_fts, 0, ?2, ?3, '…', 16), hit.score
             FROM (SELECT rowid, bm25(messages_fts) AS score FROM messages_fts
                   WHERE messages_fts MATCH ?1 ORDER BY score LIMIT ?5 OFFSET ?6) AS hit
             JOIN messages_fts ON messages_fts.rowid = hit.rowid AND messages_fts MATCH ?1
             JOIN messages m ON m.rowid = hit.rowid
             JOIN sessions s ON s.id = m.session_id
             WHERE ?4 IS NULL OR s.workspace = ?4
             ORDER BY hit.score",
        )?;
        // With a workspace filter the inner LIMIT would cut before filtering:
        // widen it then (the filter is rare and the caller pages).
        let inner_limit = if query.workspace.is_some() {
            limit * 20
        } else {
            limit
        };
        let hits = stmt
            .query_map(
                params![
                    fts,
                    MARK_START.to_string(),
                    MARK_END.to_string(),
                    query.workspace,
                    inner_limit,
                    query.offset as i64
                ],
                |r| {
                    Ok(SearchHit {
                        session_id: r.get(0)?,
                        session_title: r.get(1)?,
                        workspace: r.get(2)?,
                        message_id: r.get(3)?,
                        seq: r.get(4)?,
                        role: Role::parse(&r.get::<_, String>(5)?),
                        kind: MessageKind::parse(&r.get::<_, String>(6)?),
                        created_ms: r.get(7)?,
                        snippet: r.get(8)?,
                        score: r.get(9)?,
                    })
                },
            )?
            .take(limit as usize)
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_input_is_quoted_word_by_word() {
        assert_eq!(fts_query("  "), None);
        assert_eq!(fts_query("\"*"), None);
        assert_eq!(
            fts_query("flaky NEAR(auth test"),
            Some("\"flaky\" \"NEAR(auth\" \"test\"*".into())
        );
        assert_eq!(fts_query("say \"hi\""), Some("\"say\" \"hi\"*".into()));
    }
}
