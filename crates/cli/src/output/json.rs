//! `-o json`: one object at the end, `{session_id, response, stats}` on
//! stdout, or `{session_id, error: {type, message, code}}` on stderr.
//!
//! Gemini CLI 0.61's objects have no place for warnings; ours add
//! `warnings` (an array of strings) when there were any. Nothing else
//! reaches the user in this format, and some warnings must: a workspace's
//! new hooks are announced once, and would otherwise run unannounced.

use std::io::{self, Write};

use gd_protocol::Event;
use serde_json::json;

use super::Output;
use crate::exit::Fatal;
use crate::stats::Stats;

pub struct JsonOutput<'a> {
    out: Box<dyn Write + 'a>,
    err: Box<dyn Write + 'a>,
    response: String,
    /// The session's warnings, held for the final object.
    warnings: Vec<String>,
    /// The final object has been written.
    written: bool,
}

impl<'a> JsonOutput<'a> {
    pub fn new(out: Box<dyn Write + 'a>, err: Box<dyn Write + 'a>) -> Self {
        Self {
            out,
            err,
            response: String::new(),
            warnings: Vec::new(),
            written: false,
        }
    }

    /// Adds `warnings` to the final object `value`, if there were any (an
    /// object without them keeps 0.61's shape).
    fn add_warnings(&self, value: &mut serde_json::Value) {
        if !self.warnings.is_empty() {
            value["warnings"] = json!(self.warnings);
        }
    }
}

impl Output for JsonOutput<'_> {
    fn start(&mut self, _session_id: &str, _model: &str, _prompt: &str) -> io::Result<()> {
        Ok(())
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::ContentDelta { text } => self.response.push_str(text),
            Event::Warning { message } => self.warnings.push(message.clone()),
            _ => {}
        }
        Ok(())
    }

    fn warnings_shown(&self) -> bool {
        self.written
    }

    fn success(&mut self, session_id: &str, stats: &Stats, _duration_ms: u64) -> io::Result<()> {
        let mut value = json!({
            "session_id": session_id,
            "response": self.response,
            "stats": stats.to_json(),
        });
        self.add_warnings(&mut value);
        writeln!(self.out, "{}", serde_json::to_string_pretty(&value)?)?;
        self.out.flush()?;
        self.written = true;
        Ok(())
    }

    fn failure(
        &mut self,
        session_id: Option<&str>,
        fatal: &Fatal,
        _stats: &Stats,
        _duration_ms: u64,
    ) -> io::Result<()> {
        let mut value = json!({
            "error": {"type": fatal.kind, "message": fatal.message, "code": fatal.code},
        });
        if let Some(id) = session_id {
            value["session_id"] = json!(id);
        }
        self.add_warnings(&mut value);
        writeln!(self.err, "{}", serde_json::to_string_pretty(&value)?)?;
        self.err.flush()?;
        self.written = true;
        Ok(())
    }
}
