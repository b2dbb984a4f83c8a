//! Gemini CLI's own session recordings, read-only, and their import into
//! the store (on resume).
//!
//! Where: `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl` (and
//! the legacy whole-file `session-*.json`). `<project>` is a hash or a slug;
//! the recording's metadata carries `projectHash`, the SHA-256 of the
//! project's path, which is how sessions are matched to a workspace.
//!
//! The `.jsonl` format is an append-only log, folded in order:
//! * a line with `sessionId` + `projectHash` (and `startTime`,
//!   `lastUpdated`, `kind`, `directories`): metadata;
//! * `{"$set": {...}}`: a metadata patch; a `messages` array in it
//!   replaces the messages so far (Gemini CLI writes one at session start,
//!   after compression, and when it rewrites history);
//! * a line with an `id`: a message record, upserted by id (Gemini CLI
//!   rewrites a message whole when its tool calls, results or tokens
//!   change; it keeps its first position);
//! * `{"$rewindTo": id}`: removes that message and everything after it
//!   (all messages when the id is unknown).
//!
//! Lines that are not JSON, or JSON of no known shape, are skipped and
//! counted, never fatal.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::{
    MessageKind, NewMessage, NewSession, Result, Role, SOURCE_GEMINI_CLI, Store, StoreError,
    ThoughtRecord, TokenUsage, ToolCallRecord,
};

/// The first user message of every Gemini CLI session starts with this.
const SESSION_CONTEXT_TAG: &str = "<session_context>";

/// Longest tool-output summary kept for display and search.
pub const SUMMARY_CHARS: usize = 2000;

/// A recording, folded.
#[derive(Debug, Clone, PartialEq)]
pub struct GeminiCliSession {
    pub id: String,
    pub project_hash: String,
    pub file: PathBuf,
    pub start_ms: i64,
    pub updated_ms: i64,
    pub summary: Option<String>,
    pub directories: Vec<String>,
    /// `main` or `subagent` (absent in older recordings).
    pub kind: Option<String>,
    /// Message records in order, as JSON text (`type` user, gemini, info,
    /// error, warning): kept unparsed so a 100 MB recording costs about
    /// 100 MB, and parsed one at a time when converted. See [`Self::message`].
    pub messages: Vec<String>,
    /// Each record's `type`, in the same order.
    pub kinds: Vec<String>,
    /// Lines that were not JSON or had no known shape.
    pub skipped_lines: usize,
}

impl GeminiCliSession {
    /// Message record `i`, parsed.
    pub fn message(&self, i: usize) -> Option<Value> {
        self.messages
            .get(i)
            .and_then(|raw| serde_json::from_str(raw).ok())
    }

    /// The first thing the user typed (not the session context).
    pub fn first_prompt(&self) -> Option<String> {
        (0..self.messages.len())
            .filter(|i| self.kinds[*i] == "user")
            .filter_map(|i| self.message(i))
            .map(|m| plain_text(&parts_of(m.get("content"))))
            .find(|t| !t.trim().is_empty() && !t.trim_start().starts_with(SESSION_CONTEXT_TAG))
    }

    /// Messages shown as a conversation (user and gemini).
    pub fn conversation_len(&self) -> usize {
        self.kinds
            .iter()
            .filter(|k| *k == "user" || *k == "gemini")
            .count()
    }
}

/// Just enough of a line to know its shape; everything else is skipped
/// without being built.
#[derive(serde::Deserialize)]
struct Probe {
    id: Option<Value>,
    #[serde(rename = "type")]
    kind: Option<Value>,
    #[serde(rename = "$rewindTo")]
    rewind_to: Option<Value>,
    #[serde(rename = "$set")]
    set: Option<Value>,
    #[serde(rename = "sessionId")]
    session_id: Option<Value>,
}

/// `projectHash` of a project path, as Gemini CLI computes it.
pub fn project_hash(project_root: &str) -> String {
    let digest = Sha256::digest(project_root.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `~/.gemini` (or `$GEMINI_CLI_HOME/.gemini`, which Gemini CLI honours too).
pub fn gemini_dir() -> Option<PathBuf> {
    let home = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()))?;
    Some(PathBuf::from(home).join(".gemini"))
}

/// Reads one recording (`.jsonl`, or a legacy `.json`).
pub fn read_file(path: &Path) -> Result<GeminiCliSession> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    if path.extension().and_then(|e| e.to_str()) == Some("json") {
        let text = std::fs::read_to_string(path).map_err(io)?;
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            StoreError::Invalid(format!(
                "{} is not a Gemini CLI session: {e}",
                path.display()
            ))
        })?;
        let mut fold = Fold::default();
        if let Value::Object(map) = value {
            fold.patch(map);
        }
        return fold.finish(path);
    }
    let reader = BufReader::new(File::open(path).map_err(io)?);
    let mut fold = Fold::default();
    for line in reader.split(b'\n') {
        let line = line.map_err(io)?;
        fold.line(&line);
    }
    fold.finish(path)
}

#[derive(Default)]
struct Fold {
    metadata: Map<String, Value>,
    order: Vec<String>,
    /// id -> (type, record JSON)
    messages: HashMap<String, (String, String)>,
    skipped: usize,
}

impl Fold {
    fn line(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let Ok(probe) = serde_json::from_slice::<Probe>(line) else {
            self.skipped += 1;
            return;
        };
        if let Some(Value::String(target)) = &probe.rewind_to {
            let target = target.as_str();
            match self.order.iter().position(|id| id == target) {
                Some(at) => {
                    for id in self.order.split_off(at) {
                        self.messages.remove(&id);
                    }
                }
                None => {
                    self.order.clear();
                    self.messages.clear();
                }
            }
        } else if let Some(Value::String(id)) = probe.id {
            let kind = match probe.kind {
                Some(Value::String(k)) => k,
                _ => String::new(),
            };
            // The line is valid UTF-8 JSON: it parsed.
            let raw = String::from_utf8_lossy(line).trim().to_owned();
            self.insert(id, kind, raw);
        } else if let Some(Value::Object(patch)) = probe.set {
            self.patch(patch);
        } else if matches!(probe.session_id, Some(Value::String(_))) {
            match serde_json::from_slice::<Value>(line) {
                Ok(Value::Object(record)) => self.patch(record),
                _ => self.skipped += 1,
            }
        } else {
            self.skipped += 1;
        }
    }

    fn upsert(&mut self, message: Value) {
        let Some(id) = message.get("id").and_then(Value::as_str).map(str::to_owned) else {
            self.skipped += 1;
            return;
        };
        let kind = message
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        self.insert(id, kind, message.to_string());
    }

    fn insert(&mut self, id: String, kind: String, raw: String) {
        if self.messages.insert(id.clone(), (kind, raw)).is_none() {
            self.order.push(id);
        }
    }

    fn patch(&mut self, mut patch: Map<String, Value>) {
        if let Some(messages) = patch.remove("messages") {
            self.order.clear();
            self.messages.clear();
            match messages {
                Value::Array(list) => {
                    for m in list {
                        self.upsert(m);
                    }
                }
                _ => self.skipped += 1,
            }
        }
        self.metadata.extend(patch);
    }

    fn finish(mut self, path: &Path) -> Result<GeminiCliSession> {
        let text = |key: &str| {
            self.metadata
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let id = text("sessionId").ok_or_else(|| {
            StoreError::Invalid(format!(
                "{} has no sessionId: not a Gemini CLI session",
                path.display()
            ))
        })?;
        let start_ms = text("startTime")
            .as_deref()
            .and_then(parse_time)
            .unwrap_or(0);
        let updated_ms = text("lastUpdated")
            .as_deref()
            .and_then(parse_time)
            .unwrap_or(start_ms);
        let directories = self
            .metadata
            .get("directories")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let (kinds, messages) = self
            .order
            .iter()
            .filter_map(|id| self.messages.remove(id))
            .unzip();
        Ok(GeminiCliSession {
            id,
            project_hash: text("projectHash").unwrap_or_default(),
            file: path.to_path_buf(),
            start_ms,
            updated_ms,
            summary: text("summary"),
            directories,
            kind: text("kind"),
            messages,
            kinds,
            skipped_lines: self.skipped,
        })
    }
}

fn parse_time(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// Every recording under `gemini_dir/tmp/*/chats/` (subagent recordings
/// excluded), newest first, optionally only those of one project. Files that
/// cannot be read at all are skipped with a warning in the log.
pub fn list_sessions(gemini_dir: &Path, project_hash: Option<&str>) -> Vec<GeminiCliSession> {
    let mut out = Vec::new();
    let Ok(projects) = std::fs::read_dir(gemini_dir.join("tmp")) else {
        return out;
    };
    for project in projects.flatten() {
        let chats = project.path().join("chats");
        let Ok(files) = std::fs::read_dir(&chats) else {
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            let name = file.file_name().to_string_lossy().into_owned();
            let is_session = name.starts_with("session-")
                && (name.ends_with(".jsonl") || name.ends_with(".json"))
                && path.is_file();
            if !is_session {
                continue;
            }
            // A legacy .json that Gemini CLI already migrated to .jsonl.
            if name.ends_with(".json") && path.with_extension("jsonl").exists() {
                continue;
            }
            match read_file(&path) {
                Ok(session) => {
                    if session.kind.as_deref() == Some("subagent") {
                        continue;
                    }
                    if project_hash.is_some_and(|h| h != session.project_hash) {
                        continue;
                    }
                    if session.skipped_lines > 0 {
                        tracing::warn!(file = %path.display(), skipped = session.skipped_lines, "Gemini CLI session: malformed lines skipped");
                    }
                    out.push(session);
                }
                Err(e) => {
                    tracing::warn!(file = %path.display(), error = %e, "not a readable Gemini CLI session")
                }
            }
        }
    }
    out.sort_by(|a, b| {
        b.updated_ms
            .cmp(&a.updated_ms)
            .then_with(|| a.id.cmp(&b.id))
    });
    out
}

/// A `PartListUnion` (string, part, or list of either) as a parts array.
fn parts_of(content: Option<&Value>) -> Vec<Value> {
    match content {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) if s.is_empty() => Vec::new(),
        Some(Value::String(s)) => vec![json!({ "text": s })],
        Some(Value::Array(items)) => items.iter().flat_map(|item| parts_of(Some(item))).collect(),
        Some(Value::Object(_)) => vec![content.cloned().unwrap_or(Value::Null)],
        Some(other) => vec![json!({ "text": other.to_string() })],
    }
}

fn plain_text(parts: &[Value]) -> String {
    parts
        .iter()
        .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("")
}

/// What Gemini CLI showed for a tool's result (`resultDisplay`) when it is
/// text; other shapes (an edit's `{"fileDiff": ...}`) are left to the summary.
fn display_text(display: &Value) -> Option<String> {
    match display {
        Value::String(s) if !s.trim().is_empty() => Some(cut(s, DISPLAY_CHARS)),
        _ => None,
    }
}

/// Longest display text kept per tool call.
pub const DISPLAY_CHARS: usize = 16 * 1024;

/// The start of a tool's output, for display and search.
pub fn output_summary(response: &Value) -> String {
    let text = match response {
        Value::Object(map) => map
            .get("output")
            .or_else(|| map.get("error"))
            .or_else(|| map.get("content"))
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_else(|| response.to_string()),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    cut(&text, SUMMARY_CHARS)
}

/// `text` cut to `max` characters (on a char boundary).
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

fn has_function_response(parts: &[Value]) -> bool {
    parts.iter().any(|p| p.get("functionResponse").is_some())
}

fn tool_records_from_responses(parts: &[Value]) -> Vec<ToolCallRecord> {
    parts
        .iter()
        .filter_map(|p| p.get("functionResponse"))
        .map(|r| {
            let response = r.get("response").cloned().unwrap_or(Value::Null);
            let failed = response.get("error").is_some();
            ToolCallRecord {
                call_id: r
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: r
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                args: None,
                status: Some(if failed { "error" } else { "success" }.to_owned()),
                summary: Some(output_summary(&response)),
                ..ToolCallRecord::default()
            }
        })
        .collect()
}

/// The recording as messages of our store, in the shape the model saw:
/// gemini messages become model messages with their text and function
/// calls; tool results become a user message of `functionResponse` parts
/// (taken from the next user message when Gemini CLI recorded one, else
/// from the tool calls' `result`). Info, warning and error lines are not
/// part of the conversation and are left out.
pub fn to_messages(session: &GeminiCliSession) -> Vec<NewMessage> {
    messages(session).collect()
}

/// [`to_messages`], one record parsed at a time.
pub fn messages(session: &GeminiCliSession) -> impl Iterator<Item = NewMessage> + '_ {
    let mut index = 0;
    let mut queued: std::collections::VecDeque<NewMessage> = Default::default();
    std::iter::from_fn(move || {
        loop {
            if let Some(m) = queued.pop_front() {
                return Some(m);
            }
            if index >= session.messages.len() {
                return None;
            }
            convert(session, index, &mut |m| queued.push_back(m));
            index += 1;
        }
    })
}

/// Converts record `i`, handing each resulting message to `out`.
fn convert(session: &GeminiCliSession, i: usize, out: &mut dyn FnMut(NewMessage)) {
    let Some(record) = session.message(i) else {
        return;
    };
    let record = &record;
    {
        let created_ms = record
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_time)
            .unwrap_or(session.start_ms);
        let id = record.get("id").and_then(Value::as_str).unwrap_or_default();
        match record.get("type").and_then(Value::as_str) {
            Some("user") => {
                let parts = parts_of(record.get("content"));
                if parts.is_empty() {
                    return;
                }
                let (kind, text, calls) = if has_function_response(&parts) {
                    let calls = tool_records_from_responses(&parts);
                    let text = calls
                        .iter()
                        .filter_map(|c| c.summary.clone())
                        .collect::<Vec<_>>()
                        .join("\n");
                    (MessageKind::ToolResult, text, calls)
                } else {
                    let text = plain_text(&parts);
                    let searchable = if text.trim_start().starts_with(SESSION_CONTEXT_TAG) {
                        String::new()
                    } else {
                        text
                    };
                    (MessageKind::Prompt, searchable, Vec::new())
                };
                let mut m = NewMessage::new(Role::User, kind, Value::Array(parts), text);
                m.id = scoped_id(&session.id, id, i);
                m.created_ms = created_ms;
                m.tool_calls = calls;
                out(m);
            }
            Some("gemini") => {
                let mut parts: Vec<Value> = parts_of(record.get("content"))
                    .into_iter()
                    .filter(|p| p.get("text").and_then(Value::as_str) != Some(""))
                    .collect();
                let text = plain_text(&parts);
                let tool_calls: Vec<&Value> = record
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().collect())
                    .unwrap_or_default();
                let mut calls = Vec::new();
                for call in &tool_calls {
                    let call_id = call.get("id").and_then(Value::as_str).unwrap_or_default();
                    let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                    let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
                    parts
                        .push(json!({"functionCall": {"id": call_id, "name": name, "args": args}}));
                    calls.push(ToolCallRecord {
                        call_id: call_id.to_owned(),
                        name: name.to_owned(),
                        args: Some(args),
                        status: call
                            .get("status")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        summary: None,
                        display: call.get("resultDisplay").and_then(display_text),
                        ..ToolCallRecord::default()
                    });
                }
                if parts.is_empty() {
                    return;
                }
                let call_text = calls
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                let search = [text.as_str(), call_text.as_str()]
                    .iter()
                    .filter(|s| !s.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join("\n");
                let mut m =
                    NewMessage::new(Role::Model, MessageKind::Model, Value::Array(parts), search);
                m.id = scoped_id(&session.id, id, i);
                m.created_ms = created_ms;
                m.model = record
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                m.usage = record.get("tokens").and_then(tokens);
                m.thoughts = record
                    .get("thoughts")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|t| ThoughtRecord {
                                subject: t
                                    .get("subject")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default()
                                    .to_owned(),
                                description: t
                                    .get("description")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default()
                                    .to_owned(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                m.tool_calls = calls;
                out(m);
                // Results: Gemini CLI 0.61 also records them as the next user
                // message; older recordings keep them only in `result`.
                let next_has_results = session.kinds.get(i + 1).map(String::as_str) == Some("user")
                    && session
                        .message(i + 1)
                        .is_some_and(|n| has_function_response(&parts_of(n.get("content"))));
                if !tool_calls.is_empty() && !next_has_results {
                    let results: Vec<Value> = tool_calls
                        .iter()
                        .flat_map(|c| parts_of(c.get("result")))
                        .filter(|p| p.get("functionResponse").is_some())
                        .collect();
                    if !results.is_empty() {
                        let calls = tool_records_from_responses(&results);
                        let text = calls
                            .iter()
                            .filter_map(|c| c.summary.clone())
                            .collect::<Vec<_>>()
                            .join("\n");
                        let mut r = NewMessage::new(
                            Role::User,
                            MessageKind::ToolResult,
                            Value::Array(results),
                            text,
                        );
                        r.id = scoped_id(&session.id, &format!("{id}-results"), i);
                        r.created_ms = created_ms;
                        r.tool_calls = calls;
                        out(r);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Message ids are unique across the whole store; Gemini CLI's are unique
/// per file only, so imported ones are prefixed with the session id.
fn scoped_id(session_id: &str, id: &str, index: usize) -> String {
    if id.is_empty() {
        format!("{session_id}:{index}")
    } else {
        format!("{session_id}:{id}")
    }
}

fn tokens(v: &Value) -> Option<TokenUsage> {
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    v.is_object().then(|| TokenUsage {
        prompt: n("input"),
        output: n("output"),
        cached: n("cached"),
        thoughts: n("thoughts"),
        tool: n("tool"),
        total: n("total"),
    })
}

impl Store {
    /// Imports a Gemini CLI recording as a session of `workspace` (its
    /// recorded directory when it has one). Already imported: left as it is.
    /// Returns the session id.
    pub fn import_gemini_cli(&self, session: &GeminiCliSession, workspace: &str) -> Result<String> {
        if self.session(&session.id)?.is_some() {
            return Ok(session.id.clone());
        }
        let title = session
            .summary
            .clone()
            .or_else(|| session.first_prompt())
            .map(|t| crate::title_from(&t))
            .unwrap_or_default();
        self.create_session(&NewSession {
            id: session.id.clone(),
            workspace: session
                .directories
                .first()
                .cloned()
                .unwrap_or_else(|| workspace.to_owned()),
            title,
            model: None,
            created_ms: session.start_ms,
            source: SOURCE_GEMINI_CLI.to_owned(),
            origin: Some(session.file.display().to_string()),
        })?;
        self.append_stream(&session.id, messages(session))?;
        Ok(session.id.clone())
    }
}
