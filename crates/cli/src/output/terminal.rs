//! Keeps text from the model, tools and servers from driving the user's terminal.
//!
//! Model text is untrusted: an escape sequence in it can set the clipboard (OSC 52), retitle
//! the window, rewrite or clear what the user already read (CSI, CR, backspace), or hide text.
//! When a stream is a terminal, [`TerminalSafe`] drops every control sequence and control
//! character except newline and tab: ESC sequences (CSI, OSC, DCS, SOS, PM, APC and the short
//! ones), their 8-bit C1 forms (U+0080..U+009F), CR, BEL, backspace, DEL. The filter keeps its
//! state between writes, since a sequence can be split across streamed chunks. Pipes and
//! files get the bytes as they are (scripts rely on them), so the caller only wraps terminals.

use std::io::{self, IsTerminal, Write};

/// An OSC/DCS string longer than this is not a real sequence's: text resumes (without the
/// ESC), so a stray `ESC ]` cannot swallow the rest of the answer.
const MAX_STRING: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    /// After ESC.
    Escape,
    /// ESC followed by intermediate bytes (`ESC ( B`).
    EscapeIntermediate,
    /// Control sequence: parameters until a final byte.
    Csi,
    /// OSC, DCS, SOS, PM, APC: until BEL or ST (`ESC \` or U+009C).
    String,
}

/// The stateful filter; [`TerminalSafe`] puts it in front of a writer.
#[derive(Debug)]
pub struct Filter {
    state: State,
    string_len: usize,
    /// The start of a UTF-8 character split across writes.
    pending: Vec<u8>,
}

impl Default for Filter {
    fn default() -> Self {
        Self {
            state: State::Ground,
            string_len: 0,
            pending: Vec::new(),
        }
    }
}

impl Filter {
    /// Appends what of `input` is safe to show to `out`.
    pub fn push(&mut self, input: &[u8], out: &mut String) {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(input);
        let mut rest = bytes.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.push_str(text, out);
                    return;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Checked by from_utf8 just above.
                    self.push_str(std::str::from_utf8(valid).unwrap_or_default(), out);
                    match e.error_len() {
                        // An incomplete character at the end: wait for the next write.
                        None => {
                            self.pending = after.to_vec();
                            return;
                        }
                        Some(bad) => {
                            self.push_str("\u{fffd}", out);
                            rest = &after[bad..];
                        }
                    }
                }
            }
        }
    }

    fn push_str(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            self.push_char(c, out);
        }
    }

    fn push_char(&mut self, c: char, out: &mut String) {
        match self.state {
            State::Ground => match c {
                '\n' | '\t' => out.push(c),
                '\u{1b}' => self.state = State::Escape,
                '\u{9b}' => self.state = State::Csi,
                '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => self.enter_string(),
                c if c.is_control() => {}
                c => out.push(c),
            },
            State::Escape => match c {
                '[' => self.state = State::Csi,
                ']' | 'P' | 'X' | '^' | '_' => self.enter_string(),
                '\u{1b}' => {}
                ' '..='/' => self.state = State::EscapeIntermediate,
                // A final byte ends the sequence; anything else aborts it and counts again.
                '0'..='~' => self.state = State::Ground,
                c => {
                    self.state = State::Ground;
                    self.push_char(c, out);
                }
            },
            State::EscapeIntermediate => match c {
                ' '..='/' => {}
                '0'..='~' => self.state = State::Ground,
                c => {
                    self.state = State::Ground;
                    self.push_char(c, out);
                }
            },
            State::Csi => match c {
                '0'..='?' | ' '..='/' => {}
                '@'..='~' => self.state = State::Ground,
                c => {
                    self.state = State::Ground;
                    self.push_char(c, out);
                }
            },
            State::String => match c {
                '\u{7}' | '\u{9c}' => self.state = State::Ground,
                // ESC ends the string (`ESC \` is ST); what follows is a new escape.
                '\u{1b}' => self.state = State::Escape,
                _ => {
                    self.string_len += c.len_utf8();
                    if self.string_len > MAX_STRING {
                        self.state = State::Ground;
                    }
                }
            },
        }
    }

    fn enter_string(&mut self) {
        self.state = State::String;
        self.string_len = 0;
    }
}

/// A writer that passes on only what is safe for a terminal (see the module doc).
pub struct TerminalSafe<W: Write> {
    inner: W,
    filter: Filter,
    buf: String,
}

impl<W: Write> TerminalSafe<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            filter: Filter::default(),
            buf: String::new(),
        }
    }
}

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, input: &[u8]) -> io::Result<usize> {
        self.buf.clear();
        self.filter.push(input, &mut self.buf);
        self.inner.write_all(self.buf.as_bytes())?;
        Ok(input.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `stream` as is when it is not a terminal, else behind [`TerminalSafe`].
pub fn guard<'a, W: Write + IsTerminal + 'a>(stream: W) -> Box<dyn Write + 'a> {
    if stream.is_terminal() {
        Box::new(TerminalSafe::new(stream))
    } else {
        Box::new(stream)
    }
}

/// `text` for standard output: [`clean`]ed when that is a terminal, else as is.
pub fn for_stdout(text: &str) -> std::borrow::Cow<'_, str> {
    if io::stdout().is_terminal() {
        clean(text).into()
    } else {
        text.into()
    }
}

/// `text` for standard error: [`clean`]ed when that is a terminal, else as is.
pub fn for_stderr(text: &str) -> std::borrow::Cow<'_, str> {
    if io::stderr().is_terminal() {
        clean(text).into()
    } else {
        text.into()
    }
}

/// `text` without control sequences (for one-off messages to a terminal).
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    Filter::default().push(text.as_bytes(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> String {
        let mut filter = Filter::default();
        let mut out = String::new();
        for chunk in chunks {
            filter.push(chunk, &mut out);
        }
        out
    }

    #[test]
    fn sequences_and_controls_are_dropped_text_kept() {
        let input = "a\x1b]52;c;ZXZpbA==\x07b\x1b[2Jc\x1b[1;31md\x1b[0m\te\r\nf\x08g\x07h\x7fi\x1b(Bj\
                     \x1b]0;title\x1b\\k\u{9b}31ml\u{9d}8;;x\u{9c}m\u{85}n é ✓\n";
        assert_eq!(run(&[input.as_bytes()]), "abcd\te\nfghijklmn é ✓\n");
    }

    #[test]
    fn a_sequence_split_across_writes_is_still_removed() {
        let input = "x\x1b]52;c;ZXZpbA==\x07y\x1b[2Jz\u{9b}1m✓".as_bytes();
        // Every split point, UTF-8 characters included.
        for at in 0..=input.len() {
            let (a, b) = input.split_at(at);
            assert_eq!(run(&[a, b]), "xyz✓", "split at {at}");
        }
        let one_by_one: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&one_by_one), "xyz✓");
    }

    #[test]
    fn an_endless_string_gives_the_text_back() {
        let mut input = b"\x1b]".to_vec();
        input.extend(std::iter::repeat_n(b'a', MAX_STRING + 5));
        assert_eq!(run(&[&input]).len(), 4);
    }

    #[test]
    fn invalid_utf8_becomes_a_replacement_character() {
        assert_eq!(run(&[b"a\xffb\x9bc"]), "a\u{fffd}b\u{fffd}c");
    }
}
