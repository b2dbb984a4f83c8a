//! Export of a session to Markdown or JSON, streamed row by row into any
//! writer: a huge transcript is never held in memory whole.

use std::io::Write;

use rusqlite::params;
use serde_json::{Value, json};

use crate::{MessageKind, Result, Store, StoreError, ThoughtRecord, TokenUsage, ToolCallRecord};

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Markdown,
    Json,
}

impl ExportFormat {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(Self::Markdown),
            "json" => Some(Self::Json),
            _ => None,
        }
    }
}

struct Row {
    id: String,
    seq: i64,
    role: String,
    kind: String,
    created_ms: i64,
    in_context: bool,
    parts: String,
    text: String,
    tool_calls: Option<String>,
    thoughts: Option<String>,
    usage: Option<String>,
    model: Option<String>,
}

impl Store {
    /// Writes the session to `out` in `format`.
    pub fn export(
        &self,
        session_id: &str,
        format: ExportFormat,
        out: &mut dyn Write,
    ) -> Result<()> {
        let session = self
            .session(session_id)?
            .ok_or_else(|| StoreError::NoSuchSession(session_id.to_owned()))?;
        let w = |r: std::io::Result<()>| r.map_err(StoreError::Write);
        match format {
            ExportFormat::Markdown => {
                let title = if session.title.is_empty() {
                    "Untitled session"
                } else {
                    &session.title
                };
                w(writeln!(out, "# {title}\n"))?;
                w(writeln!(
                    out,
                    "- Session: `{}`\n- Workspace: `{}`\n- Model: {}\n- Created: {}\n- Updated: {}\n- Tokens: {} in, {} out\n",
                    session.id,
                    session.workspace,
                    session.model.as_deref().unwrap_or("unknown"),
                    iso(session.created_ms),
                    iso(session.updated_ms),
                    session.tokens.prompt,
                    session.tokens.output,
                ))?;
            }
            ExportFormat::Json => {
                w(write!(out, "{{\"session\":"))?;
                w(serde_json::to_writer(&mut *out, &session).map_err(std::io::Error::other))?;
                w(write!(out, ",\"messages\":["))?;
            }
        }
        let mut first = true;
        self.for_each_row(session_id, |row| match format {
            ExportFormat::Markdown => markdown(out, &row),
            ExportFormat::Json => {
                if !first {
                    w(write!(out, ","))?;
                }
                first = false;
                json_row(out, &row)
            }
        })?;
        if format == ExportFormat::Json {
            w(writeln!(out, "]}}"))?;
        }
        w(out.flush())
    }

    fn for_each_row(&self, session_id: &str, mut f: impl FnMut(Row) -> Result<()>) -> Result<()> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT id, seq, role, kind, created_ms, in_context, parts, text, tool_calls, thoughts,
                    usage, model FROM messages WHERE session_id = ?1 ORDER BY seq",
        )?;
        let mut rows = stmt.query(params![session_id])?;
        while let Some(r) = rows.next()? {
            f(Row {
                id: r.get(0)?,
                seq: r.get(1)?,
                role: r.get(2)?,
                kind: r.get(3)?,
                created_ms: r.get(4)?,
                in_context: r.get(5)?,
                parts: r.get(6)?,
                text: r.get(7)?,
                tool_calls: r.get(8)?,
                thoughts: r.get(9)?,
                usage: r.get(10)?,
                model: r.get(11)?,
            })?;
        }
        Ok(())
    }
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

fn json_row(out: &mut dyn Write, row: &Row) -> Result<()> {
    let parse = |s: &Option<String>| -> Result<Value> {
        Ok(match s {
            Some(s) => serde_json::from_str(s)?,
            None => Value::Null,
        })
    };
    let value = json!({
        "id": row.id,
        "seq": row.seq,
        "role": row.role,
        "kind": row.kind,
        "created": iso(row.created_ms),
        "inContext": row.in_context,
        "parts": serde_json::from_str::<Value>(&row.parts)?,
        "toolCalls": parse(&row.tool_calls)?,
        "thoughts": parse(&row.thoughts)?,
        "usage": parse(&row.usage)?,
        "model": row.model,
    });
    serde_json::to_writer(out, &value).map_err(|e| StoreError::Write(std::io::Error::other(e)))
}

fn markdown(out: &mut dyn Write, row: &Row) -> Result<()> {
    let w = |r: std::io::Result<()>| r.map_err(StoreError::Write);
    let kind = MessageKind::parse(&row.kind);
    let heading = match kind {
        MessageKind::Prompt => "## User",
        MessageKind::Model => "## Gemini",
        MessageKind::ToolResult => "### Tool results",
        MessageKind::Summary => "## Summary of earlier conversation",
        MessageKind::TurnEnd => {
            // How a turn ended: a line under it when it did not simply complete.
            if !row.text.is_empty() {
                w(writeln!(out, "> _{}_\n", row.text))?;
            }
            return Ok(());
        }
    };
    w(writeln!(out, "{heading}\n"))?;
    if let Some(thoughts) = &row.thoughts {
        let thoughts: Vec<ThoughtRecord> = serde_json::from_str(thoughts)?;
        for t in thoughts {
            w(writeln!(
                out,
                "> *Thinking: {}* {}\n",
                t.subject, t.description
            ))?;
        }
    }
    let calls: Vec<ToolCallRecord> = match &row.tool_calls {
        Some(c) => serde_json::from_str(c)?,
        None => Vec::new(),
    };
    match kind {
        MessageKind::ToolResult => {
            for c in &calls {
                w(writeln!(
                    out,
                    "- `{}` ({}): {}\n",
                    c.name,
                    c.status.as_deref().unwrap_or("done"),
                    fence(c.summary.as_deref().unwrap_or(""))
                ))?;
            }
        }
        _ => {
            if !row.text.is_empty() {
                w(writeln!(out, "{}\n", row.text))?;
            }
            for c in &calls {
                let args = c.args.as_ref().map(|a| a.to_string()).unwrap_or_default();
                w(writeln!(
                    out,
                    "**Tool call** `{}` {}\n",
                    c.name,
                    fence(&args)
                ))?;
            }
        }
    }
    if let Some(usage) = &row.usage {
        let u: TokenUsage = serde_json::from_str(usage)?;
        w(writeln!(
            out,
            "<sub>{} in / {} out tokens</sub>\n",
            u.prompt, u.output
        ))?;
    }
    Ok(())
}

/// Text in a fenced block, with a fence longer than any backtick run inside.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let ticks = "`".repeat((longest + 1).max(3));
    format!("\n\n{ticks}\n{text}\n{ticks}")
}
