//! The three output formats of the headless CLI.

mod hooks;
mod json;
mod stream_json;
pub mod terminal;
mod text;

use std::io::{self, Write};

use gd_protocol::Event;

use crate::args::OutputFormat;
use crate::exit::Fatal;
use crate::stats::Stats;

pub use json::JsonOutput;
pub use stream_json::StreamJsonOutput;
pub use text::TextOutput;

/// Renders a run. `out` is standard output, `err` standard error (both
/// injectable for tests).
pub trait Output {
    /// The session started; `prompt` is what the user asked.
    fn start(&mut self, session_id: &str, model: &str, prompt: &str) -> io::Result<()>;
    /// One session event, in order.
    fn event(&mut self, event: &Event) -> io::Result<()>;
    /// Whether every [`Event::Warning`] given so far has been written out.
    /// A warning that must be shown once (a workspace's new hooks) is
    /// remembered as shown only then: a format that holds warnings back
    /// until its final object says so until that object is written.
    fn warnings_shown(&self) -> bool;
    /// The run succeeded.
    fn success(&mut self, session_id: &str, stats: &Stats, duration_ms: u64) -> io::Result<()>;
    /// The run failed; `session_id` is `None` when it never started.
    fn failure(
        &mut self,
        session_id: Option<&str>,
        fatal: &Fatal,
        stats: &Stats,
        duration_ms: u64,
    ) -> io::Result<()>;
}

/// The output for `format`, writing to `out` and `err`.
pub fn for_format<'a>(
    format: OutputFormat,
    out: Box<dyn Write + 'a>,
    err: Box<dyn Write + 'a>,
) -> Box<dyn Output + 'a> {
    match format {
        OutputFormat::Text => Box::new(TextOutput::new(out, err)),
        OutputFormat::Json => Box::new(JsonOutput::new(out, err)),
        OutputFormat::StreamJson => Box::new(StreamJsonOutput::new(out)),
    }
}
