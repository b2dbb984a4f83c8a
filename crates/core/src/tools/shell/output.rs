//! Captured command output: a capped buffer that keeps the beginning and
//! the end, binary detection, and turning terminal output into plain text.

use std::collections::VecDeque;

/// Bytes kept from the beginning of the output.
pub const DEFAULT_HEAD_BYTES: usize = 256 * 1024;
/// Bytes kept from the end of the output.
pub const DEFAULT_TAIL_BYTES: usize = 768 * 1024;
/// Output whose first this-many bytes contain a NUL byte is binary.
const SNIFF_BYTES: u64 = 4096;

/// The combined stdout/stderr of a command, as it arrived. Keeps at most
/// `head_cap` bytes from the beginning and `tail_cap` from the end; what is
/// in between is counted and replaced by a marker.
#[derive(Debug, Clone)]
pub struct OutputBuffer {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
    binary: bool,
}

impl Default for OutputBuffer {
    fn default() -> Self {
        Self::new(DEFAULT_HEAD_BYTES, DEFAULT_TAIL_BYTES)
    }
}

impl OutputBuffer {
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap,
            total: 0,
            binary: false,
        }
    }

    pub fn push(&mut self, mut data: &[u8]) {
        if !self.binary && self.total < SNIFF_BYTES {
            let sniff = (SNIFF_BYTES - self.total).min(data.len() as u64) as usize;
            self.binary = data[..sniff].contains(&0);
        }
        self.total += data.len() as u64;
        let to_head = (self.head_cap - self.head.len()).min(data.len());
        self.head.extend_from_slice(&data[..to_head]);
        data = &data[to_head..];
        if data.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend(data[data.len() - self.tail_cap..].iter().copied());
        } else {
            let overflow = (self.tail.len() + data.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(data.iter().copied());
        }
    }

    /// All bytes received so far, kept or not.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Whether the output looks binary (a NUL byte near the start).
    pub fn is_binary(&self) -> bool {
        self.binary
    }

    fn omitted(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    /// The output as plain text: decoded (invalid UTF-8 replaced), terminal
    /// escapes removed, carriage-return overwrites applied, trimmed. Binary
    /// output is summarised instead.
    pub fn text(&self) -> String {
        if self.binary {
            return format!("[Binary output, {} not shown]", format_bytes(self.total));
        }
        let head = String::from_utf8_lossy(&self.head);
        if self.omitted() == 0 && self.tail.is_empty() {
            return terminal_text(&head).trim().to_owned();
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(skip_partial_char(&tail));
        let mut text = terminal_text(&head);
        if self.omitted() > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[... {} of output omitted ...]\n",
                format_bytes(self.omitted())
            ));
        }
        text.push_str(&terminal_text(&tail));
        text.trim().to_owned()
    }

    /// The last `max_bytes` of the output as plain text, for live display.
    pub fn live_text(&self, max_bytes: usize) -> String {
        if self.binary {
            return format!(
                "[Binary output detected; {} received]",
                format_bytes(self.total)
            );
        }
        let bytes: Vec<u8> = if self.tail.is_empty() {
            let start = self.head.len().saturating_sub(max_bytes);
            self.head[start..].to_vec()
        } else {
            let skip = self.tail.len().saturating_sub(max_bytes);
            self.tail.iter().skip(skip).copied().collect()
        };
        let text = String::from_utf8_lossy(skip_partial_char(&bytes)).into_owned();
        terminal_text(&text).trim_end().to_owned()
    }
}

/// Drops UTF-8 continuation bytes at the start (a character cut in half).
pub(crate) fn skip_partial_char(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (0x80..0xC0).contains(*b))
        .count();
    &bytes[skip..]
}

/// `512 bytes`, `1.5 KB`, `3.2 MB`.
pub fn format_bytes(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} bytes")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / KB / KB)
    }
}

/// What a terminal would show for `raw`, as text: ANSI/VT escape sequences
/// removed and, within a line, text after a carriage return overwriting the
/// text before it (progress bars keep their last state). `\r\n` is a plain
/// line break.
pub fn terminal_text(raw: &str) -> String {
    let stripped = strip_ansi(raw);
    if !stripped.contains('\r') {
        return stripped;
    }
    let mut out = String::with_capacity(stripped.len());
    for (i, line) in stripped.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        out.push_str(overwrite_carriage_returns(line));
    }
    out
}

fn overwrite_carriage_returns(line: &str) -> &str {
    // The last non-empty segment is what remains visible (approximately: a
    // shorter segment would leave the end of a longer one on screen).
    line.rsplit('\r').find(|s| !s.is_empty()).unwrap_or("")
}

/// Removes ANSI escape sequences: CSI (`ESC [ ... final`), OSC
/// (`ESC ] ... BEL` or `ESC ] ... ESC \`), DCS/SOS/PM/APC strings, other
/// two-byte `ESC x` sequences and the 8-bit CSI introducer. Other control
/// characters except tab, newline and carriage return are dropped too.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // Character-set selection and similar: one more byte.
                Some('(' | ')' | '*' | '+' | '-' | '.' | '/' | '#' | '%') => {
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    // Parameters and intermediates (0x20-0x3F), then one final byte (0x40-0x7E).
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            return;
        }
        if !('\u{20}'..='\u{3f}').contains(&c) {
            return;
        }
    }
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' if chars.peek() == Some(&'\\') => {
                chars.next();
                return;
            }
            _ => {}
        }
    }
}

/// The last `n` lines of `text` (a trailing newline does not count as an
/// empty last line).
pub fn last_lines(text: &str, n: usize) -> &str {
    let text = text.strip_suffix('\n').unwrap_or(text);
    if n == 0 {
        return "";
    }
    let mut seen = 0;
    for (i, b) in text.bytes().enumerate().rev() {
        if b == b'\n' {
            seen += 1;
            if seen == n {
                return &text[i + 1..];
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_with_a_marker() {
        let mut buffer = OutputBuffer::new(4, 6);
        buffer.push(b"0123");
        buffer.push(b"45");
        assert_eq!(buffer.text(), "012345");
        buffer.push(b"6789abcdefgh");
        assert_eq!(buffer.total_bytes(), 18);
        assert_eq!(
            buffer.text(),
            "0123\n[... 8 bytes of output omitted ...]\ncdefgh"
        );
        buffer.push(b"0123456789XYZ");
        assert_eq!(
            buffer.text(),
            "0123\n[... 21 bytes of output omitted ...]\n789XYZ"
        );
        assert_eq!(buffer.live_text(3), "XYZ");
    }

    #[test]
    fn a_cut_character_is_dropped_not_garbled() {
        let mut buffer = OutputBuffer::new(0, 4);
        buffer.push("aé€".as_bytes()); // 1 + 2 + 3 bytes
        assert_eq!(buffer.live_text(100), "€");
    }

    #[test]
    fn nul_bytes_near_the_start_mean_binary() {
        let mut buffer = OutputBuffer::default();
        buffer.push(b"PK\x03\x04\x00\x00rest");
        assert!(buffer.is_binary());
        assert_eq!(buffer.text(), "[Binary output, 10 bytes not shown]");
        let mut late = OutputBuffer::default();
        late.push(&[b'a'; 5000]);
        late.push(b"\0");
        assert!(!late.is_binary());
    }

    #[test]
    fn strips_escape_sequences() {
        assert_eq!(strip_ansi("\x1b[1;31mred\x1b[0m plain"), "red plain");
        assert_eq!(strip_ansi("\x1b]0;title\x07text"), "text");
        assert_eq!(
            strip_ansi("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
            "link"
        );
        assert_eq!(strip_ansi("a\x1b(Bb\x1b=c\x07d"), "abcd");
        assert_eq!(strip_ansi("tab\there\r\n"), "tab\there\r\n");
        assert_eq!(strip_ansi("\x1b[?25l\x1b[2K\x1b[1Gdone"), "done");
    }

    #[test]
    fn carriage_returns_overwrite_like_a_terminal() {
        assert_eq!(terminal_text("10%\r50%\r100%\ndone\r\n"), "100%\ndone\n");
        assert_eq!(terminal_text("line\r\n"), "line\n");
    }

    #[test]
    fn last_lines_of_text() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a\nb\nc", 5), "a\nb\nc");
        assert_eq!(last_lines("a\nb", 1), "b");
        assert_eq!(last_lines("", 3), "");
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(format_bytes(512), "512 bytes");
        assert_eq!(format_bytes(1536), "1.5 KB");
        assert_eq!(format_bytes(3 * 1024 * 1024), "3.0 MB");
    }
}
