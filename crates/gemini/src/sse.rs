//! Incremental decoder for the `text/event-stream` bodies of
//! `streamGenerateContent?alt=sse`.
//!
//! Bytes arrive in arbitrary network chunks, so the decoder keeps the
//! unfinished line between calls and works on bytes (a chunk may end inside a
//! multi-byte UTF-8 character or between the `\r` and `\n` of a CRLF).
//!
//! Line handling follows Gemini CLI's Code Assist reader: `data:` lines are
//! buffered, a blank line ends the event and multi-line data is joined with
//! `\n`. Any other line is an error ("Unexpected line format in response"),
//! because a server that sends one is not speaking this protocol. The one
//! exception is an SSE comment (a line starting with `:`), which carries no
//! data by definition and which proxies use as keep-alive.

use thiserror::Error;

/// A malformed stream.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SseError {
    #[error("Unexpected line format in response: {0}")]
    UnexpectedLine(String),
    #[error("stream event is not valid UTF-8")]
    InvalidUtf8,
}

/// Turns byte chunks into complete event payloads (the joined `data:` lines).
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    data: Vec<String>,
    /// The previous chunk ended with `\r`; a leading `\n` belongs to it.
    after_cr: bool,
    /// A malformed line found after complete events in the same chunk: those
    /// events are returned first, the error on the next call.
    failed: Option<SseError>,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one network chunk and returns the events it completed. When the
    /// chunk holds complete events and then a malformed line, the events are
    /// returned and the error is reported by [`SseDecoder::take_error`] or
    /// the next call, so the result does not depend on network chunking.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<String>, SseError> {
        if let Some(error) = self.failed.take() {
            return Err(error);
        }
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..pos]);
            let terminator = rest[pos];
            rest = &rest[pos + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let line = std::mem::take(&mut self.line);
            match self.process_line(&line) {
                Ok(Some(event)) => events.push(event),
                Ok(None) => {}
                Err(error) if events.is_empty() => return Err(error),
                Err(error) => {
                    self.failed = Some(error);
                    return Ok(events);
                }
            }
        }
        self.line.extend_from_slice(rest);
        Ok(events)
    }

    /// The malformed-line error held back by [`SseDecoder::feed`], if any.
    pub fn take_error(&mut self) -> Option<SseError> {
        self.failed.take()
    }

    /// Ends the stream: a last line without terminator and data without the
    /// closing blank line still count as an event.
    pub fn finish(&mut self) -> Result<Option<String>, SseError> {
        if let Some(error) = self.failed.take() {
            return Err(error);
        }
        self.after_cr = false;
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.process_line(&line)? {
                return Ok(Some(event));
            }
        }
        Ok(self.dispatch())
    }

    fn process_line(&mut self, line: &[u8]) -> Result<Option<String>, SseError> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if let Some(value) = line.strip_prefix(b"data:") {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            let text = std::str::from_utf8(value).map_err(|_| SseError::InvalidUtf8)?;
            self.data.push(text.trim().to_owned());
            return Ok(None);
        }
        if line.starts_with(b":") {
            return Ok(None);
        }
        let shown = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
        Err(SseError::UnexpectedLine(shown))
    }

    fn dispatch(&mut self) -> Option<String> {
        if self.data.is_empty() {
            return None;
        }
        let event = self.data.join("\n");
        self.data.clear();
        Some(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8], split: usize) -> Result<Vec<String>, SseError> {
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for chunk in input.chunks(split.max(1)) {
            events.extend(decoder.feed(chunk)?);
        }
        events.extend(decoder.finish()?);
        Ok(events)
    }

    const STREAM: &str = "data: {\"a\":1}\r\n\r\ndata: {\"b\":\r\ndata: \"é\"}\r\n\r\n: keep-alive\n\ndata: {\"c\":3}\n\ndata:{\"d\":4}\r\rdata: {\"e\":5}";

    #[test]
    fn decodes_identically_whatever_the_chunking() {
        let expected = vec![
            "{\"a\":1}".to_owned(),
            "{\"b\":\n\"é\"}".to_owned(),
            "{\"c\":3}".to_owned(),
            "{\"d\":4}".to_owned(),
            "{\"e\":5}".to_owned(),
        ];
        for split in 1..=STREAM.len() {
            assert_eq!(
                decode_all(STREAM.as_bytes(), split).unwrap(),
                expected,
                "split every {split} bytes"
            );
        }
    }

    #[test]
    fn trailing_data_without_blank_line_is_an_event() {
        assert_eq!(
            decode_all(b"data: {\"x\":1}\n", 4).unwrap(),
            vec!["{\"x\":1}"]
        );
        assert_eq!(
            decode_all(b"data: {\"x\":1}", 4).unwrap(),
            vec!["{\"x\":1}"]
        );
    }

    #[test]
    fn non_data_line_is_an_error_naming_the_line() {
        let err = decode_all(b"data: {}\n\nevent: ping\n\n", 64).unwrap_err();
        assert_eq!(err, SseError::UnexpectedLine("event: ping".into()));
        let err = decode_all(b"<html>502 Bad Gateway</html>", 64).unwrap_err();
        assert!(err.to_string().contains("502 Bad Gateway"));
    }

    #[test]
    fn events_before_a_bad_line_in_the_same_chunk_come_first() {
        let mut decoder = SseDecoder::new();
        let events = decoder
            .feed(b"data: {}\n\nevent: ping\ndata: {}\n\n")
            .unwrap();
        assert_eq!(events, vec!["{}"]);
        assert_eq!(
            decoder.take_error(),
            Some(SseError::UnexpectedLine("event: ping".into()))
        );
        let mut decoder = SseDecoder::new();
        decoder.feed(b"data: 1\n\nbad\n").unwrap();
        assert!(decoder.feed(b"data: 2\n\n").is_err());
    }

    #[test]
    fn blank_lines_without_data_yield_nothing() {
        assert!(decode_all(b"\n\r\n\r\n", 1).unwrap().is_empty());
    }
}
