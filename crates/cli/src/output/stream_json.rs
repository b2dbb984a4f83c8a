//! `-o stream-json`: one JSON event per line (`init`, `message`,
//! `tool_use`, `tool_result`, `error`, `result`), each with an ISO
//! timestamp, as Gemini CLI emits them.

use std::io::{self, Write};

use chrono::{SecondsFormat, Utc};
use gd_protocol::{ConfirmationDetails, DiffRowKind, Event, ToolCallStatus};
use serde_json::{Value, json};

use super::Output;
use crate::exit::Fatal;
use crate::stats::Stats;

pub struct StreamJsonOutput<'a> {
    out: Box<dyn Write + 'a>,
    /// While a subagent's event is written: its `invoke_agent` call's
    /// `tool_id` and the agent's name, added to what it emits.
    parent: Option<(String, String)>,
}

impl<'a> StreamJsonOutput<'a> {
    pub fn new(out: Box<dyn Write + 'a>) -> Self {
        Self { out, parent: None }
    }

    fn emit(&mut self, kind: &str, fields: Value) -> io::Result<()> {
        let mut event = serde_json::Map::new();
        event.insert("type".into(), json!(kind));
        event.insert(
            "timestamp".into(),
            json!(Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)),
        );
        if let Value::Object(fields) = fields {
            event.extend(fields);
        }
        if let Some((parent, agent)) = &self.parent {
            event.insert("parent_tool_id".into(), json!(parent));
            event.insert("agent".into(), json!(agent));
        }
        serde_json::to_writer(&mut self.out, &Value::Object(event))?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// stream-json names a tool call `<tool>__<call id>`.
fn tool_id(name: &str, call_id: &str) -> String {
    format!("{name}__{call_id}")
}

/// The hunks an edit wrote, for a script reading stream-json: headless
/// runs have no per-hunk review, so every hunk of the written change is
/// `applied` (a change the user narrowed in the app is reported as written,
/// with `modified`). Ranges are 1-based, as in a unified diff's `@@` line.
fn edit_hunks(details: &ConfirmationDetails) -> Option<Value> {
    let ConfirmationDetails::Edit {
        file_path,
        side_by_side,
        ..
    } = details
    else {
        return None;
    };
    let hunks: Vec<Value> = side_by_side
        .hunks
        .iter()
        .enumerate()
        .map(|(index, hunk)| {
            let count = |kind: fn(&gd_protocol::DiffRow) -> bool| {
                hunk.rows.iter().filter(|r| kind(r)).count()
            };
            json!({
                "hunk": index,
                "status": "applied",
                "file_path": file_path,
                "old_start": hunk.old_start,
                "old_lines": hunk.old_lines,
                "new_start": hunk.new_start,
                "new_lines": hunk.new_lines,
                "added": count(|r| r.kind != DiffRowKind::Equal && r.right.is_some()),
                "removed": count(|r| r.kind != DiffRowKind::Equal && r.left.is_some()),
            })
        })
        .collect();
    Some(Value::Array(hunks))
}

impl Output for StreamJsonOutput<'_> {
    fn start(&mut self, session_id: &str, model: &str, prompt: &str) -> io::Result<()> {
        self.emit("init", json!({"session_id": session_id, "model": model}))?;
        self.emit("message", json!({"role": "user", "content": prompt}))
    }

    /// Each warning is an event line as it comes (a failed write ends the run).
    fn warnings_shown(&self) -> bool {
        true
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::ContentDelta { text } => {
                self.emit("message", json!({"role": "assistant", "content": text, "delta": true}))
            }
            Event::ToolCallRequest {
                call_id, name, args, ..
            } => self.emit(
                "tool_use",
                json!({"tool_name": name, "tool_id": tool_id(name, call_id), "parameters": args}),
            ),
            Event::ToolCallResponse {
                call_id,
                name,
                status,
                display,
                error,
                diff,
                modified,
                decided_by,
                ..
            } => {
                let mut fields = json!({
                    "tool_id": tool_id(name, call_id),
                    "status": if *status == ToolCallStatus::Success { "success" } else { "error" },
                });
                if let Some(display) = display {
                    fields["output"] = json!(display);
                }
                // An edit: what it wrote, hunk by hunk (our addition; Gemini CLI has none).
                if let Some(hunks) = diff.as_ref().and_then(edit_hunks) {
                    fields["hunks"] = hunks;
                    fields["modified"] = json!(modified);
                }
                if let Some(error) = error {
                    let kind = match status {
                        ToolCallStatus::Cancelled => "cancelled",
                        _ => "tool_error",
                    };
                    fields["error"] = json!({"type": kind, "message": error});
                }
                // Additive: what decided the call (policy rule, mode, …).
                if let Some(decided_by) = decided_by {
                    fields["decided_by"] = json!(decided_by);
                }
                self.emit("tool_result", fields)
            }
            Event::Warning { message } => self.emit("error", json!({"severity": "warning", "message": message})),
            // Gemini CLI 0.61's stream-json has no subagent events: a
            // subagent's tool calls and problems are written as the
            // parent's are, with `parent_tool_id` (the `invoke_agent` call)
            // and `agent` added. Its text is not an answer to the user
            // (it returns through `complete_task`), so it is left out.
            Event::Subagent { parent_call_id, agent_name, event } => {
                if matches!(**event, Event::ContentDelta { .. } | Event::Subagent { .. }) {
                    return Ok(());
                }
                self.parent = Some((tool_id("invoke_agent", parent_call_id), agent_name.clone()));
                let written = self.event(event);
                self.parent = None;
                written
            }
            Event::Retrying { attempt, max_attempts, delay_ms, reason } => self.emit(
                "error",
                json!({"severity": "warning", "message": format!("Retrying (attempt {attempt}/{max_attempts}) in {delay_ms} ms: {reason}")}),
            ),
            Event::LoopDetected { detail, .. } => {
                self.emit("error", json!({"severity": "warning", "message": format!("Loop detected, stopping execution: {detail}")}))
            }
            Event::Error { message, fatal: false, .. } => {
                self.emit("error", json!({"severity": "error", "message": message}))
            }
            _ => Ok(()),
        }
    }

    fn success(&mut self, _session_id: &str, stats: &Stats, duration_ms: u64) -> io::Result<()> {
        self.emit(
            "result",
            json!({"status": "success", "stats": stats.to_stream_json(duration_ms)}),
        )
    }

    fn failure(
        &mut self,
        _session_id: Option<&str>,
        fatal: &Fatal,
        stats: &Stats,
        duration_ms: u64,
    ) -> io::Result<()> {
        self.emit(
            "result",
            json!({
                "status": "error",
                "error": {"type": fatal.kind, "message": fatal.message},
                "stats": stats.to_stream_json(duration_ms),
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_have_type_timestamp_and_gemini_cli_fields() {
        let mut buf = Vec::new();
        {
            let mut out = StreamJsonOutput::new(Box::new(&mut buf));
            out.start("s1", "gemini-2.5-flash", "Run echo hi").unwrap();
            out.event(&Event::ToolCallRequest {
                call_id: "c_1_0".into(),
                name: "list_directory".into(),
                args: json!({"dir_path": "/w"}),
                mcp: None,
                in_place_of: None,
            })
            .unwrap();
            out.event(&Event::ToolCallResponse {
                call_id: "c_1_0".into(),
                name: "list_directory".into(),
                status: ToolCallStatus::Success,
                display: Some("Listed 1 item(s).".into()),
                error: None,
                duration_ms: 1,
                output: None,
                exit_code: None,
                declined: false,
                modified: false,
                diff: None,
                decided_by: Some(Box::new(gd_protocol::DecidedBy::Default {
                    outcome: gd_protocol::PolicyOutcome::Ask,
                    reason: None,
                })),
                sandbox: None,
            })
            .unwrap();
            out.event(&Event::ContentDelta { text: "ok".into() })
                .unwrap();
            out.success("s1", &Stats::empty(), 5).unwrap();
        }
        let lines: Vec<Value> = String::from_utf8(buf)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            [
                "init",
                "message",
                "tool_use",
                "tool_result",
                "message",
                "result"
            ]
        );
        assert!(
            lines
                .iter()
                .all(|l| l["timestamp"].as_str().unwrap().ends_with('Z'))
        );
        assert_eq!(lines[2]["tool_id"], "list_directory__c_1_0");
        assert_eq!(lines[3]["output"], "Listed 1 item(s).");
        assert_eq!(lines[3]["decided_by"]["kind"], "default");
        assert_eq!(lines[3]["decided_by"]["outcome"], "ask");
        assert_eq!(lines[4]["delta"], true);
        assert_eq!(lines[5]["stats"]["duration_ms"], 5);
        assert!(lines[3].get("hunks").is_none(), "not an edit");
    }

    #[test]
    fn an_edit_reports_the_hunks_it_wrote() {
        let original = (1..=30).map(|i| format!("line {i}\n")).collect::<String>();
        let proposed = original
            .replace("line 3\n", "line three\n")
            .replace("line 25\n", "line 25\nadded\n");
        let diff = gd_core::diff::diff_file(Some(&original), &proposed, "a.txt");
        let mut buf = Vec::new();
        {
            let mut out = StreamJsonOutput::new(Box::new(&mut buf));
            out.event(&Event::ToolCallResponse {
                call_id: "c1".into(),
                name: "replace".into(),
                status: ToolCallStatus::Success,
                display: None,
                error: None,
                duration_ms: 1,
                output: None,
                exit_code: None,
                declined: false,
                modified: false,
                diff: Some(ConfirmationDetails::Edit {
                    title: "Edit a.txt".into(),
                    file_path: "/w/a.txt".into(),
                    file_name: "a.txt".into(),
                    original: Some(original.clone()),
                    proposed: proposed.clone(),
                    unified_diff: diff.unified,
                    side_by_side: diff.side_by_side,
                    is_new_file: false,
                }),
                decided_by: None,
                sandbox: None,
            })
            .unwrap();
        }
        let line: Value = serde_json::from_slice(&buf).unwrap();
        let hunks = line["hunks"].as_array().unwrap();
        assert_eq!(hunks.len(), 2);
        assert_eq!(hunks[0]["status"], "applied");
        assert_eq!(hunks[0]["file_path"], "/w/a.txt");
        assert_eq!(
            (hunks[0]["added"].as_u64(), hunks[0]["removed"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(
            (hunks[1]["added"].as_u64(), hunks[1]["removed"].as_u64()),
            (Some(1), Some(0))
        );
        assert_eq!(hunks[1]["new_start"], 23);
        assert_eq!(line["modified"], false);
    }
}
