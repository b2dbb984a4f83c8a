//! Full-text search across every session (FTS5, bm25 ranking).
//!
//! User input is never passed to FTS5's query language as is: each word
//! becomes a quoted phrase (so `"`, `*`, `OR`, `NEAR(` ... are plain text),
//! all words must match, and the last one matches as a prefix so results
//! appear while typing. Matched words come back between
//! [`crate::highlight::MARK_START`] and [`crate::highlight::MARK_END`]
//! control characters, never as markup; see [`crate::highlight::spans`].

use rusqlite::{OptionalExtension, params};
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct SearchHit {
    pub session_id: String,
    pub session_title: String,
    pub workspace: String,
    pub message_id: String,
    /// The message's order in its session (open the transcript around it).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seq: i64,
    pub role: Role,
    pub kind: MessageKind,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub created_ms: i64,
    /// The matching passage with hits marked (see the module docs).
    pub snippet: String,
    /// bm25 score: lower is better.
    pub score: f64,
}

/// The FTS5 query for what the user typed; `None` when nothing is left.
/// With `prefix`, the last word also matches longer words.
pub fn fts_query(text: &str, prefix: bool) -> Option<String> {
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
                if prefix && i == last {
                    format!("\"{w}\"*")
                } else {
                    format!("\"{w}\"")
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Ranking looks at the newest this-many matches at most. bm25 has to score
/// every candidate, so a very common word would otherwise cost time in
/// proportion to the whole history (seconds at a million messages); the
/// newest matches are also the ones a user is most likely after.
pub const RANK_WINDOW: i64 = 5_000;

impl Store {
    /// Messages matching `query`, best first (bm25 among the newest
    /// [`RANK_WINDOW`] matches). Whole words first; when they give less
    /// than a page, the last word is also taken as the start of a longer one
    /// (the user may still be typing it). Prefixes are matched only then
    /// because they merge every word they start, which is slow for short
    /// common ones.
    pub fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let Some(exact) = fts_query(&query.text, false) else {
            return Ok(Vec::new());
        };
        let limit = if query.limit == 0 { 50 } else { query.limit } as usize;
        let mut hits = self.search_fts(&exact, query)?;
        if hits.len() < limit && query.offset == 0 {
            let prefix = fts_query(&query.text, true).unwrap_or_default();
            for hit in self.search_fts(&prefix, query)? {
                if hits.len() >= limit {
                    break;
                }
                if !hits.iter().any(|h| h.message_id == hit.message_id) {
                    hits.push(hit);
                }
            }
        }
        Ok(hits)
    }

    fn search_fts(&self, fts: &str, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let limit = if query.limit == 0 { 50 } else { query.limit } as i64;
        let conn = self.reader();
        // The oldest rowid inside the window (walking the doclist newest
        // first is cheap: no scoring, no positions).
        let cutoff: i64 = conn
            .prepare_cached(
                "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1
                 ORDER BY rowid DESC LIMIT 1 OFFSET ?2",
            )?
            .query_row(params![fts, RANK_WINDOW - 1], |r| r.get(0))
            .optional()?
            .unwrap_or(0);
        let ranked = match &query.workspace {
            None => {
                "SELECT rowid, bm25(messages_fts) AS score FROM messages_fts
                     WHERE messages_fts MATCH ?1 AND rowid >= ?2
                     ORDER BY score LIMIT ?3 OFFSET ?4"
            }
            Some(_) => {
                "SELECT messages_fts.rowid, bm25(messages_fts) AS score FROM messages_fts
                     JOIN messages ON messages.rowid = messages_fts.rowid
                     JOIN sessions ON sessions.id = messages.session_id
                     WHERE messages_fts MATCH ?1 AND messages_fts.rowid >= ?2
                       AND sessions.workspace = ?5
                     ORDER BY score LIMIT ?3 OFFSET ?4"
            }
        };
        // The snippet is a correlated subquery: FTS5 then seeks each hit by
        // rowid instead of re-running the whole match (5x faster for
        // common words).
        let sql = format!(
            "SELECT m.session_id, s.title, s.workspace, m.id, m.seq, m.role, m.kind, m.created_ms,
                    (SELECT snippet(messages_fts, 0, ?6, ?7, '…', 16) FROM messages_fts
                     WHERE messages_fts MATCH ?1 AND rowid = hit.rowid),
                    hit.score
             FROM ({ranked}) AS hit
             JOIN messages m ON m.rowid = hit.rowid
             JOIN sessions s ON s.id = m.session_id
             ORDER BY hit.score"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let hits = stmt
            .query_map(
                params![
                    fts,
                    cutoff,
                    limit,
                    query.offset as i64,
                    query.workspace.as_deref().unwrap_or(""),
                    MARK_START.to_string(),
                    MARK_END.to_string(),
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
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_input_is_quoted_word_by_word() {
        assert_eq!(fts_query("  ", true), None);
        assert_eq!(fts_query("\"*", true), None);
        assert_eq!(
            fts_query("flaky NEAR(auth test", true),
            Some("\"flaky\" \"NEAR(auth\" \"test\"*".into())
        );
        assert_eq!(
            fts_query("say \"hi\"", false),
            Some("\"say\" \"hi\"".into())
        );
    }
}
