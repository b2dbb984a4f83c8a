//! Reads: listing, transcript pages, the model context for resuming.
//! None of them loads more than one page of a transcript.

use rusqlite::{OptionalExtension, Row, params};

use crate::{
    ContextMessage, ListQuery, MessageKind, Page, PageFrom, PageQuery, Result, Role,
    SessionSummary, Store, StoreError, StoredMessage, TokenUsage, ToolCallRecord, UsageRecord,
};

const SESSION_COLUMNS: &str = "id, workspace, title, created_ms, updated_ms, model, message_count,
     prompt_tokens, output_tokens, cached_tokens, thoughts_tokens, total_tokens, source, origin";

fn session_row(r: &Row<'_>) -> rusqlite::Result<SessionSummary> {
    Ok(SessionSummary {
        id: r.get(0)?,
        workspace: r.get(1)?,
        title: r.get(2)?,
        created_ms: r.get(3)?,
        updated_ms: r.get(4)?,
        model: r.get(5)?,
        message_count: r.get(6)?,
        tokens: TokenUsage {
            prompt: r.get::<_, i64>(7)? as u64,
            output: r.get::<_, i64>(8)? as u64,
            cached: r.get::<_, i64>(9)? as u64,
            thoughts: r.get::<_, i64>(10)? as u64,
            tool: 0,
            total: r.get::<_, i64>(11)? as u64,
        },
        source: r.get(12)?,
        origin: r.get(13)?,
    })
}

impl Store {
    /// Sessions, newest first, a page at a time (group by workspace and
    /// date in the caller: each row carries both). Sessions without a
    /// message are not listed: a conversation opened (New, another folder,
    /// `/clear`) and left before its first prompt is nothing to go back to.
    pub fn list_sessions(&self, query: &ListQuery) -> Result<Vec<SessionSummary>> {
        let limit = if query.limit == 0 { 50 } else { query.limit } as i64;
        let (after_ms, after_id) = match &query.after {
            Some(c) => (c.updated_ms, c.id.clone()),
            None => (i64::MAX, String::new()),
        };
        let conn = self.reader();
        let rows = match &query.workspace {
            Some(ws) => {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions
                     WHERE workspace = ?1 AND message_count > 0
                       AND (updated_ms < ?2 OR (updated_ms = ?2 AND id > ?3))
                     ORDER BY updated_ms DESC, id LIMIT ?4"
                ))?;
                stmt.query_map(params![ws, after_ms, after_id, limit], session_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()?
            }
            None => {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions
                     WHERE message_count > 0 AND (updated_ms < ?1 OR (updated_ms = ?1 AND id > ?2))
                     ORDER BY updated_ms DESC, id LIMIT ?3"
                ))?;
                stmt.query_map(params![after_ms, after_id, limit], session_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()?
            }
        };
        Ok(rows)
    }

    /// One session's summary.
    pub fn session(&self, session_id: &str) -> Result<Option<SessionSummary>> {
        let conn = self.reader();
        Ok(conn
            .query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"),
                params![session_id],
                session_row,
            )
            .optional()?)
    }

    /// The most recently updated session of a workspace (the desktop
    /// reopens it; `--resume latest`).
    pub fn latest_session(&self, workspace: &str) -> Result<Option<SessionSummary>> {
        Ok(self
            .list_sessions(&ListQuery {
                workspace: Some(workspace.to_owned()),
                after: None,
                limit: 1,
            })?
            .into_iter()
            .next())
    }

    /// Finds a session by `latest`, a 1-based index into the workspace's
    /// list oldest first (as Gemini CLI's `--list-sessions` numbers them),
    /// a full id, or a unique id prefix of at least 8 characters.
    pub fn resolve_session(&self, workspace: &str, key: &str) -> Result<SessionSummary> {
        let key = key.trim();
        if key.is_empty() || key == "latest" {
            return self
                .latest_session(workspace)?
                .ok_or_else(|| StoreError::NoSuchSession(format!("for {workspace}")));
        }
        if let Some(found) = self.session(key)? {
            return Ok(found);
        }
        if let Ok(index) = key.parse::<usize>() {
            let all = self.workspace_sessions_oldest_first(workspace)?;
            return index
                .checked_sub(1)
                .and_then(|i| all.into_iter().nth(i))
                .ok_or_else(|| StoreError::NoSuchSession(key.to_owned()));
        }
        if key.len() >= 8 {
            let conn = self.reader();
            let mut stmt = conn.prepare(&format!(
                "SELECT {SESSION_COLUMNS} FROM sessions WHERE substr(id, 1, ?2) = ?1 LIMIT 2"
            ))?;
            let found = stmt
                .query_map(params![key, key.len() as i64], session_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            if found.len() == 1 {
                return Ok(found.into_iter().next().expect("one row"));
            }
            if found.len() > 1 {
                return Err(StoreError::Invalid(format!(
                    "session id prefix {key} is ambiguous"
                )));
            }
        }
        Err(StoreError::NoSuchSession(key.to_owned()))
    }

    /// Every session of a workspace, oldest first (the numbered list).
    pub fn workspace_sessions_oldest_first(&self, workspace: &str) -> Result<Vec<SessionSummary>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE workspace = ?1
             ORDER BY updated_ms ASC, id"
        ))?;
        let rows = stmt
            .query_map(params![workspace], session_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// A page of a transcript by message order (keyset: the cost does not
    /// grow with the transcript). Oversized messages come back cut.
    pub fn page(&self, session_id: &str, query: &PageQuery) -> Result<Page> {
        let limit = if query.limit == 0 { 50 } else { query.limit } as i64;
        let max = query.max_bytes.max(256) as i64;
        let conn = self.reader();
        let base = "SELECT id, seq, role, kind, created_ms, in_context, length(parts),
                CASE WHEN length(parts) <= ?4 THEN parts END,
                CASE WHEN length(text) <= ?4 THEN text ELSE substr(text, 1, ?4) END,
                tool_calls, thoughts, usage, model
            FROM messages WHERE session_id = ?1";
        let (sql, bound, reverse) = match query.from {
            PageFrom::Start => (
                format!("{base} AND seq > ?2 ORDER BY seq ASC LIMIT ?3"),
                0,
                false,
            ),
            PageFrom::After(seq) => (
                format!("{base} AND seq > ?2 ORDER BY seq ASC LIMIT ?3"),
                seq,
                false,
            ),
            PageFrom::End => (
                format!("{base} AND seq < ?2 ORDER BY seq DESC LIMIT ?3"),
                i64::MAX,
                true,
            ),
            PageFrom::Before(seq) => (
                format!("{base} AND seq < ?2 ORDER BY seq DESC LIMIT ?3"),
                seq,
                true,
            ),
            // A few messages of context above the target.
            PageFrom::Around(seq) => (
                format!("{base} AND seq >= ?2 ORDER BY seq ASC LIMIT ?3"),
                (seq - (limit / 4).max(1)).max(1),
                false,
            ),
        };
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut messages = stmt
            .query_map(params![session_id, bound, limit, max], |r| {
                let size: i64 = r.get(6)?;
                let parts: Option<String> = r.get(7)?;
                Ok((
                    StoredMessage {
                        id: r.get(0)?,
                        seq: r.get(1)?,
                        role: Role::parse(&r.get::<_, String>(2)?),
                        kind: MessageKind::parse(&r.get::<_, String>(3)?),
                        created_ms: r.get(4)?,
                        in_context: r.get(5)?,
                        parts: None,
                        text: r.get(8)?,
                        truncated: parts.is_none(),
                        size,
                        tool_calls: Vec::new(),
                        thoughts: Vec::new(),
                        usage: None,
                        model: r.get(12)?,
                    },
                    parts,
                    r.get::<_, Option<String>>(9)?,
                    r.get::<_, Option<String>>(10)?,
                    r.get::<_, Option<String>>(11)?,
                ))
            })?
            .map(|row| {
                let (mut m, parts, calls, thoughts, usage) = row?;
                m.parts = parts.map(|p| serde_json::from_str(&p)).transpose()?;
                m.tool_calls = parse_opt(calls)?.unwrap_or_default();
                m.thoughts = parse_opt(thoughts)?.unwrap_or_default();
                m.usage = parse_opt(usage)?;
                Ok(m)
            })
            .collect::<Result<Vec<_>>>()?;
        if reverse {
            messages.reverse();
        }
        let (has_before, has_after) = match (messages.first(), messages.last()) {
            (Some(first), Some(last)) => {
                let exists = |sql: &str, seq: i64| -> Result<bool> {
                    Ok(conn
                        .prepare_cached(sql)?
                        .query_row(params![session_id, seq], |_| Ok(()))
                        .optional()?
                        .is_some())
                };
                (
                    exists(
                        "SELECT 1 FROM messages WHERE session_id = ?1 AND seq < ?2 LIMIT 1",
                        first.seq,
                    )?,
                    exists(
                        "SELECT 1 FROM messages WHERE session_id = ?1 AND seq > ?2 LIMIT 1",
                        last.seq,
                    )?,
                )
            }
            _ => (false, false),
        };
        Ok(Page {
            messages,
            has_before,
            has_after,
        })
    }

    /// One whole message (a cut one from a page, or a search hit).
    pub fn message(&self, message_id: &str) -> Result<Option<(String, StoredMessage)>> {
        let conn = self.reader();
        let row = conn
            .query_row(
                "SELECT session_id, id, seq, role, kind, created_ms, in_context, parts, text,
                        tool_calls, thoughts, usage, model
                 FROM messages WHERE id = ?1",
                params![message_id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, bool>(6)?,
                        r.get::<_, String>(7)?,
                        r.get::<_, String>(8)?,
                        r.get::<_, Option<String>>(9)?,
                        r.get::<_, Option<String>>(10)?,
                        r.get::<_, Option<String>>(11)?,
                        r.get::<_, Option<String>>(12)?,
                    ))
                },
            )
            .optional()?;
        let Some((
            session,
            id,
            seq,
            role,
            kind,
            created_ms,
            in_context,
            parts,
            text,
            calls,
            thoughts,
            usage,
            model,
        )) = row
        else {
            return Ok(None);
        };
        Ok(Some((
            session,
            StoredMessage {
                id,
                seq,
                role: Role::parse(&role),
                kind: MessageKind::parse(&kind),
                created_ms,
                in_context,
                size: parts.len() as i64,
                parts: Some(serde_json::from_str(&parts)?),
                text,
                truncated: false,
                tool_calls: parse_opt(calls)?.unwrap_or_default(),
                thoughts: parse_opt(thoughts)?.unwrap_or_default(),
                usage: parse_opt(usage)?,
                model,
            },
        )))
    }

    /// The messages the model saw, in order: what a resumed session sends.
    pub fn load_context(&self, session_id: &str) -> Result<Vec<ContextMessage>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT id, seq, role, kind, parts FROM messages
             WHERE session_id = ?1 AND in_context = 1 ORDER BY seq",
        )?;
        let rows = stmt
            .query_map(params![session_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })?
            .map(|row| {
                let (id, seq, role, kind, parts) = row?;
                Ok(ContextMessage {
                    id,
                    seq,
                    role: Role::parse(&role),
                    kind: MessageKind::parse(&kind),
                    parts: serde_json::from_str(&parts)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The model message that made a tool call (for checkpoints: which
    /// message an edit belongs to; rewinding to it undoes the call's turn
    /// step). The tool-result message carries the same call id, later.
    pub fn message_for_call(&self, session_id: &str, call_id: &str) -> Result<Option<String>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT id, call_ids FROM messages WHERE session_id = ?1 AND call_ids IS NOT NULL
             ORDER BY seq",
        )?;
        let mut rows = stmt.query(params![session_id])?;
        let mut found = None;
        while let Some(row) = rows.next()? {
            let ids: String = row.get(1)?;
            if ids.split('\n').any(|id| id == call_id) {
                found = Some(row.get(0)?);
                break;
            }
        }
        Ok(found)
    }

    /// The stored record of a tool call's result (the last message
    /// carrying `call_id` with a record of it that has a status): what its
    /// card showed, the diff an edit applied included.
    pub fn call_result(&self, session_id: &str, call_id: &str) -> Result<Option<ToolCallRecord>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT call_ids, tool_calls FROM messages
             WHERE session_id = ?1 AND call_ids IS NOT NULL ORDER BY seq DESC",
        )?;
        let mut rows = stmt.query(params![session_id])?;
        while let Some(row) = rows.next()? {
            let ids: String = row.get(0)?;
            if !ids.split('\n').any(|id| id == call_id) {
                continue;
            }
            let calls: Option<String> = row.get(1)?;
            let calls: Vec<ToolCallRecord> = parse_opt(calls)?.unwrap_or_default();
            if let Some(record) = calls
                .into_iter()
                .find(|c| c.call_id == call_id && c.status.is_some())
            {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    /// The prompt whose turn made a tool call: the last prompt at or before
    /// the model message that made it (a checkpoint's conversation restore
    /// point when the checkpoint does not name it).
    pub fn turn_prompt_for_call(&self, session_id: &str, call_id: &str) -> Result<Option<String>> {
        let Some(message_id) = self.message_for_call(session_id, call_id)? else {
            return Ok(None);
        };
        let conn = self.reader();
        Ok(conn
            .query_row(
                "SELECT id FROM messages WHERE session_id = ?1 AND kind = 'prompt'
                   AND seq <= (SELECT seq FROM messages WHERE id = ?2)
                 ORDER BY seq DESC LIMIT 1",
                params![session_id, message_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Where a message is: its `seq` and kind, when it belongs to `session_id`.
    pub fn locate(&self, session_id: &str, message_id: &str) -> Result<Option<(i64, MessageKind)>> {
        let conn = self.reader();
        Ok(conn
            .query_row(
                "SELECT seq, kind FROM messages WHERE session_id = ?1 AND id = ?2",
                params![session_id, message_id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        MessageKind::parse(&r.get::<_, String>(1)?),
                    ))
                },
            )
            .optional()?)
    }

    /// What a reopened session's usage is rebuilt from, in order: its
    /// prompts (where turns start), model messages (their usage and model)
    /// and turn ends (the usage, status and statistics each turn ended with,
    /// in `parts`). Sessions recorded before turn ends were have only the
    /// first two.
    pub fn usage_records(&self, session_id: &str) -> Result<Vec<UsageRecord>> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT kind, created_ms, usage, model,
                    CASE WHEN kind = 'turn_end' THEN parts END
             FROM messages
             WHERE session_id = ?1 AND kind IN ('prompt', 'model', 'turn_end') ORDER BY seq",
        )?;
        let rows = stmt
            .query_map(params![session_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })?
            .map(|row| {
                let (kind, created_ms, usage, model, parts) = row?;
                Ok(UsageRecord {
                    kind: MessageKind::parse(&kind),
                    created_ms,
                    usage: parse_opt(usage)?,
                    model,
                    turn_end: parse_opt(parts)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// How many messages the store holds.
    pub fn message_count(&self) -> Result<i64> {
        Ok(self
            .reader()
            .query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))?)
    }

    /// How many sessions the store holds.
    pub fn session_count(&self) -> Result<i64> {
        Ok(self
            .reader()
            .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))?)
    }
}

fn parse_opt<T: serde::de::DeserializeOwned>(value: Option<String>) -> Result<Option<T>> {
    Ok(value.map(|v| serde_json::from_str(&v)).transpose()?)
}
