//! Writes: each call is one committed transaction on the writer connection.

use rusqlite::{OptionalExtension, Transaction, params};

use crate::{MessageKind, MessageRef, NewMessage, NewSession, Result, Store, StoreError, now_ms};

impl Store {
    /// Creates a session; an existing one with this id is left as it is.
    pub fn create_session(&self, session: &NewSession) -> Result<()> {
        let conn = self.writer();
        conn.execute(
            "INSERT INTO sessions (id, workspace, title, created_ms, updated_ms, model, source, origin)
             VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7)
             ON CONFLICT(id) DO NOTHING",
            params![
                session.id,
                session.workspace,
                session.title,
                session.created_ms,
                session.model,
                session.source,
                session.origin
            ],
        )?;
        Ok(())
    }

    /// Appends a message at the end of a session and commits it. The
    /// session's `updated`, message count and token totals move with it.
    pub fn append_message(&self, session_id: &str, message: &NewMessage) -> Result<MessageRef> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        let seq = append_in(&tx, session_id, message)?;
        tx.commit()?;
        Ok(MessageRef {
            id: message.id.clone(),
            seq,
        })
    }

    /// Appends several messages in one transaction (imports).
    pub fn append_messages(&self, session_id: &str, messages: &[NewMessage]) -> Result<()> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        for message in messages {
            append_in(&tx, session_id, message)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Appends messages from an iterator in one transaction, without
    /// holding them all (large imports).
    pub fn append_stream(
        &self,
        session_id: &str,
        messages: impl Iterator<Item = NewMessage>,
    ) -> Result<usize> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        let mut n = 0;
        for message in messages {
            append_in(&tx, session_id, &message)?;
            n += 1;
        }
        tx.commit()?;
        Ok(n)
    }

    /// Takes a message out of the model's context but keeps it in the
    /// transcript (a prompt whose request failed: the user saw it, the
    /// model never answered it).
    pub fn exclude_from_context(&self, message_id: &str) -> Result<()> {
        let conn = self.writer();
        conn.execute(
            "UPDATE messages SET in_context = 0 WHERE id = ?1",
            params![message_id],
        )?;
        Ok(())
    }

    /// After a compression: every message so far leaves the context and
    /// `summary` (the new history, usually a summary and an acknowledgement)
    /// becomes the context, in one transaction.
    pub fn replace_context(&self, session_id: &str, summary: &[NewMessage]) -> Result<()> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        let next_seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?1",
            params![session_id],
            |r| r.get(0),
        )?;
        tx.execute(
            "UPDATE messages SET in_context = 0, compressed_at = ?2
             WHERE session_id = ?1 AND in_context = 1",
            params![session_id, next_seq],
        )?;
        for message in summary {
            append_in(&tx, session_id, message)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Removes `message_id` and everything after it from the session (the
    /// conversation half of a restore: the model forgets the undone turns).
    /// A compression among the removed messages is undone too: the messages
    /// it took out of the context come back into it. Returns how many
    /// messages were removed.
    pub fn rewind(&self, session_id: &str, message_id: &str) -> Result<usize> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        let seq: Option<i64> = tx
            .query_row(
                "SELECT seq FROM messages WHERE session_id = ?1 AND id = ?2",
                params![session_id, message_id],
                |r| r.get(0),
            )
            .optional()?;
        let Some(seq) = seq else {
            return Err(StoreError::NoSuchMessage(message_id.to_owned()));
        };
        tx.execute(
            "UPDATE messages SET in_context = 1, compressed_at = NULL
             WHERE session_id = ?1 AND seq < ?2 AND compressed_at >= ?2",
            params![session_id, seq],
        )?;
        // Messages, as people count them (not the turn ends among them).
        let removed: i64 = tx.query_row(
            "SELECT COUNT(*) FROM messages WHERE session_id = ?1 AND seq >= ?2 AND kind != 'turn_end'",
            params![session_id, seq],
            |r| r.get(0),
        )?;
        tx.execute(
            "DELETE FROM messages WHERE session_id = ?1 AND seq >= ?2",
            params![session_id, seq],
        )?;
        tx.execute(
            "UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages
                                                      WHERE session_id = ?1 AND kind != 'turn_end'),
                                 updated_ms = ?2 WHERE id = ?1",
            params![session_id, now_ms()],
        )?;
        tx.commit()?;
        Ok(usize::try_from(removed).unwrap_or(0))
    }

    /// Renames a session.
    pub fn rename(&self, session_id: &str, title: &str) -> Result<()> {
        let conn = self.writer();
        let changed = conn.execute(
            "UPDATE sessions SET title = ?2 WHERE id = ?1",
            params![session_id, title.trim()],
        )?;
        if changed == 0 {
            return Err(StoreError::NoSuchSession(session_id.to_owned()));
        }
        Ok(())
    }

    /// Sets the title only while it is empty (the first prompt names a session).
    pub fn set_title_if_empty(&self, session_id: &str, title: &str) -> Result<()> {
        let conn = self.writer();
        conn.execute(
            "UPDATE sessions SET title = ?2 WHERE id = ?1 AND title = ''",
            params![session_id, title],
        )?;
        Ok(())
    }

    /// Deletes a session, its messages and their index entries. `false`
    /// when there was no such session.
    pub fn delete_session(&self, session_id: &str) -> Result<bool> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        // Explicit (rather than relying on the cascade) so it also works on a
        // connection where foreign keys are off.
        tx.execute(
            "DELETE FROM messages WHERE session_id = ?1",
            params![session_id],
        )?;
        let n = tx.execute("DELETE FROM sessions WHERE id = ?1", params![session_id])?;
        tx.commit()?;
        Ok(n > 0)
    }

    /// Deletes several sessions in one transaction; returns how many existed.
    pub fn delete_sessions(&self, ids: &[String]) -> Result<usize> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        let mut deleted = 0;
        for id in ids {
            tx.execute("DELETE FROM messages WHERE session_id = ?1", params![id])?;
            deleted += tx.execute("DELETE FROM sessions WHERE id = ?1", params![id])?;
        }
        tx.commit()?;
        Ok(deleted)
    }
}

fn append_in(tx: &Transaction<'_>, session_id: &str, message: &NewMessage) -> Result<i64> {
    let seq: i64 = tx.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?1",
        params![session_id],
        |r| r.get(0),
    )?;
    let tool_calls = (!message.tool_calls.is_empty())
        .then(|| serde_json::to_string(&message.tool_calls))
        .transpose()?;
    let call_ids = (!message.tool_calls.is_empty()).then(|| {
        message
            .tool_calls
            .iter()
            .map(|c| c.call_id.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    });
    let thoughts = (!message.thoughts.is_empty())
        .then(|| serde_json::to_string(&message.thoughts))
        .transpose()?;
    let usage = message
        .usage
        .map(|u| serde_json::to_string(&u))
        .transpose()?;
    let parts = serde_json::to_string(&message.parts)?;
    let u = message.usage.unwrap_or_default();
    let changed = tx.execute(
        "UPDATE sessions SET updated_ms = MAX(updated_ms, ?2), message_count = message_count + ?9,
             prompt_tokens = prompt_tokens + ?3, output_tokens = output_tokens + ?4,
             cached_tokens = cached_tokens + ?5, thoughts_tokens = thoughts_tokens + ?6,
             total_tokens = total_tokens + ?7, model = COALESCE(?8, model)
         WHERE id = ?1",
        params![
            session_id,
            message.created_ms,
            u.prompt as i64,
            u.output as i64,
            u.cached as i64,
            u.thoughts as i64,
            u.total as i64,
            message.model,
            // A turn's end is not a message of the conversation.
            i64::from(message.kind != MessageKind::TurnEnd),
        ],
    )?;
    if changed == 0 {
        return Err(StoreError::NoSuchSession(session_id.to_owned()));
    }
    tx.execute(
        "INSERT INTO messages (id, session_id, seq, role, kind, created_ms, in_context, parts, text,
                               tool_calls, call_ids, thoughts, usage, model)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            message.id,
            session_id,
            seq,
            message.role.as_str(),
            message.kind.as_str(),
            message.created_ms,
            message.in_context,
            parts,
            message.text,
            tool_calls,
            call_ids,
            thoughts,
            usage,
            message.model,
        ],
    )?;
    Ok(seq)
}
