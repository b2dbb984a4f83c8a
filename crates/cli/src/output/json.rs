//! `-o json`: one object at the end, `{session_id, response, stats}` on
//! stdout, or `{session_id, error: {type, message, code}}` on stderr.

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
}

impl<'a> JsonOutput<'a> {
    pub fn new(out: Box<dyn Write + 'a>, err: Box<dyn Write + 'a>) -> Self {
        Self {
            out,
            err,
            response: String::new(),
        }
    }
}

impl Output for JsonOutput<'_> {
    fn start(&mut self, _session_id: &str, _model: &str, _prompt: &str) -> io::Result<()> {
        Ok(())
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        if let Event::ContentDelta { text } = event {
            self.response.push_str(text);
        }
        Ok(())
    }

    fn success(&mut self, session_id: &str, stats: &Stats, _duration_ms: u64) -> io::Result<()> {
        let value = json!({
            "session_id": session_id,
            "response": self.response,
            "stats": stats.to_json(),
        });
        writeln!(self.out, "{}", serde_json::to_string_pretty(&value)?)?;
        self.out.flush()
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
        writeln!(self.err, "{}", serde_json::to_string_pretty(&value)?)?;
        self.err.flush()
    }
}
