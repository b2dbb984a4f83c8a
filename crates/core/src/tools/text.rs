//! Text-file helpers shared by the file tools: decoding (UTF-8, UTF-16 with
//! BOM, windows-1252 for other 8-bit text), binary detection, line endings
//! and the media types sent to the model as inline data.

use std::path::{Path, PathBuf};

/// Files larger than this are not read (20 MB).
pub const MAX_FILE_SIZE: u64 = 20 * 1024 * 1024;

/// Media files larger than this are not sent as inline data (20 MB).
pub const MAX_INLINE_DATA_SIZE: u64 = 20 * 1024 * 1024;

/// How many leading bytes binary detection looks at.
const BINARY_SAMPLE: usize = 8 * 1024;

/// How the bytes of a text file encode its characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    Utf8,
    /// UTF-8 starting with a byte-order mark.
    Utf8Bom,
    /// UTF-16 little endian, with a byte-order mark.
    Utf16Le,
    /// UTF-16 big endian, with a byte-order mark.
    Utf16Be,
    /// Bytes that are not UTF-8: read (and written back) as windows-1252, a
    /// superset of Latin-1.
    Windows1252,
}

impl TextEncoding {
    pub fn label(self) -> &'static str {
        match self {
            Self::Utf8 => "UTF-8",
            Self::Utf8Bom => "UTF-8 with BOM",
            Self::Utf16Le => "UTF-16LE",
            Self::Utf16Be => "UTF-16BE",
            Self::Windows1252 => "windows-1252",
        }
    }

    /// Encodes `text` the way the file was encoded (with its BOM). Text that
    /// windows-1252 cannot represent is written as UTF-8 instead, so nothing
    /// is lost.
    pub fn encode(self, text: &str) -> Vec<u8> {
        match self {
            Self::Utf8 => text.as_bytes().to_vec(),
            Self::Utf8Bom => {
                let mut bytes = vec![0xEF, 0xBB, 0xBF];
                bytes.extend_from_slice(text.as_bytes());
                bytes
            }
            Self::Utf16Le => {
                let mut bytes = vec![0xFF, 0xFE];
                bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
                bytes
            }
            Self::Utf16Be => {
                let mut bytes = vec![0xFE, 0xFF];
                bytes.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
                bytes
            }
            Self::Windows1252 => {
                let (bytes, _, unmappable) = encoding_rs::WINDOWS_1252.encode(text);
                if unmappable {
                    text.as_bytes().to_vec()
                } else {
                    bytes.into_owned()
                }
            }
        }
    }
}

/// Decodes the bytes of a text file. A BOM decides the encoding; otherwise
/// valid UTF-8 is UTF-8 and anything else is read as windows-1252 (every
/// byte maps to a character, so this never fails).
pub fn decode(bytes: &[u8]) -> (String, TextEncoding) {
    if let Some((encoding, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        let body = &bytes[bom_len..];
        let kind = if encoding == encoding_rs::UTF_16LE {
            TextEncoding::Utf16Le
        } else if encoding == encoding_rs::UTF_16BE {
            TextEncoding::Utf16Be
        } else {
            TextEncoding::Utf8Bom
        };
        let (text, _) = encoding.decode_without_bom_handling(body);
        return (text.into_owned(), kind);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_owned(), TextEncoding::Utf8),
        Err(_) => {
            let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(bytes);
            (text.into_owned(), TextEncoding::Windows1252)
        }
    }
}

/// Whether `bytes` (the start of a file is enough) look like a binary file:
/// a NUL byte, or more than 30% control characters other than whitespace,
/// in the first 8 KB. Files with a UTF-16 BOM are text.
pub fn looks_binary(bytes: &[u8]) -> bool {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return false;
    }
    let sample = &bytes[..bytes.len().min(BINARY_SAMPLE)];
    if sample.is_empty() {
        return false;
    }
    if sample.contains(&0) {
        return true;
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C | 0x1B))
        .count();
    control * 10 > sample.len() * 3
}

/// The line-ending style of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    Crlf,
}

/// CRLF when most line breaks of `text` are CRLF, else LF.
pub fn detect_line_ending(text: &str) -> LineEnding {
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count();
    if crlf > 0 && crlf * 2 >= lf {
        LineEnding::Crlf
    } else {
        LineEnding::Lf
    }
}

/// Replaces CRLF line breaks with LF.
pub fn normalize_newlines(text: &str) -> String {
    if text.contains("\r\n") {
        text.replace("\r\n", "\n")
    } else {
        text.to_owned()
    }
}

/// `text` with the given line endings: CRLF converts every line break
/// (existing CRLFs stay single); LF leaves the text as it is.
pub fn with_line_ending(text: &str, ending: LineEnding) -> String {
    match ending {
        LineEnding::Lf => text.to_owned(),
        LineEnding::Crlf => normalize_newlines(text).replace('\n', "\r\n"),
    }
}

/// Kinds of media sent to the model as inline data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    Image,
    Audio,
    Video,
    Pdf,
}

impl MediaKind {
    pub fn noun(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio file",
            Self::Video => "video",
            Self::Pdf => "PDF",
        }
    }
}

/// The media type of a file the model can take as inline data, by
/// extension. SVG is not here: it is XML and read as text.
pub fn media_type(path: &Path) -> Option<(&'static str, MediaKind)> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let found = match ext.as_str() {
        "png" => ("image/png", MediaKind::Image),
        "jpg" | "jpeg" => ("image/jpeg", MediaKind::Image),
        "gif" => ("image/gif", MediaKind::Image),
        "webp" => ("image/webp", MediaKind::Image),
        "bmp" => ("image/bmp", MediaKind::Image),
        "heic" => ("image/heic", MediaKind::Image),
        "heif" => ("image/heif", MediaKind::Image),
        "mp3" => ("audio/mpeg", MediaKind::Audio),
        "wav" => ("audio/wav", MediaKind::Audio),
        "ogg" | "oga" => ("audio/ogg", MediaKind::Audio),
        "flac" => ("audio/flac", MediaKind::Audio),
        "aac" => ("audio/aac", MediaKind::Audio),
        "m4a" => ("audio/mp4", MediaKind::Audio),
        "aif" | "aiff" => ("audio/aiff", MediaKind::Audio),
        "mp4" => ("video/mp4", MediaKind::Video),
        "mov" => ("video/quicktime", MediaKind::Video),
        "webm" => ("video/webm", MediaKind::Video),
        "mpeg" | "mpg" => ("video/mpeg", MediaKind::Video),
        "avi" => ("video/x-msvideo", MediaKind::Video),
        "wmv" => ("video/x-ms-wmv", MediaKind::Video),
        "flv" => ("video/x-flv", MediaKind::Video),
        "3gp" => ("video/3gpp", MediaKind::Video),
        "pdf" => ("application/pdf", MediaKind::Pdf),
        _ => return None,
    };
    Some(found)
}

/// Whether the path names an SVG image (read as text).
pub fn is_svg(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
}

/// `path` relative to the workspace directory that contains it, for short
/// messages; the full path when it is in none.
pub fn display_path(path: &Path, roots: &[PathBuf]) -> String {
    roots
        .iter()
        .find_map(|root| path.strip_prefix(root).ok())
        .filter(|rel| !rel.as_os_str().is_empty())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A byte count for people: `512 B`, `12.3 KB`, `4.0 MB`.
pub fn human_size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

/// Cuts `line` to at most `max_chars` characters; returns whether it was cut.
pub fn cut_line(line: &str, max_chars: usize) -> (&str, bool) {
    match line.char_indices().nth(max_chars) {
        Some((byte, _)) => (&line[..byte], true),
        None => (line, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_utf8_boms_utf16_and_latin1() {
        assert_eq!(
            decode("héllo".as_bytes()),
            ("héllo".into(), TextEncoding::Utf8)
        );
        assert_eq!(
            decode(b"\xEF\xBB\xBFabc"),
            ("abc".into(), TextEncoding::Utf8Bom)
        );
        let le = TextEncoding::Utf16Le.encode("größe\n");
        assert_eq!(&le[..4], &[0xFF, 0xFE, b'g', 0]);
        assert_eq!(decode(&le), ("größe\n".into(), TextEncoding::Utf16Le));
        let be = TextEncoding::Utf16Be.encode("日本");
        assert_eq!(decode(&be), ("日本".into(), TextEncoding::Utf16Be));
        // "café" in Latin-1, and a windows-1252 euro sign.
        assert_eq!(
            decode(b"caf\xE9 \x80"),
            ("café €".into(), TextEncoding::Windows1252)
        );
    }

    #[test]
    fn encodes_back_to_the_original_bytes() {
        for bytes in [
            b"caf\xE9\n".to_vec(),
            b"\xEF\xBB\xBFx\r\n".to_vec(),
            TextEncoding::Utf16Be.encode("a\nb"),
        ] {
            let (text, encoding) = decode(&bytes);
            assert_eq!(encoding.encode(&text), bytes);
        }
        // Characters windows-1252 lacks fall back to UTF-8.
        assert_eq!(TextEncoding::Windows1252.encode("日"), "日".as_bytes());
    }

    #[test]
    fn binary_detection() {
        assert!(!looks_binary(b""));
        assert!(!looks_binary(b"fn main() {}\n\tx\r\n"));
        assert!(looks_binary(b"abc\0def"));
        assert!(looks_binary(&[1, 2, 3, 4, 5, b'a', b'b']));
        assert!(!looks_binary(&TextEncoding::Utf16Le.encode("text")));
        assert!(!looks_binary(b"caf\xE9"));
        // Only the first 8 KB count.
        let mut late_nul = vec![b'a'; BINARY_SAMPLE];
        late_nul.push(0);
        assert!(!looks_binary(&late_nul));
    }

    #[test]
    fn line_endings() {
        assert_eq!(detect_line_ending("a\r\nb\r\n"), LineEnding::Crlf);
        assert_eq!(detect_line_ending("a\nb\n"), LineEnding::Lf);
        assert_eq!(detect_line_ending("a\r\nb\nc\n"), LineEnding::Lf);
        assert_eq!(detect_line_ending("no breaks"), LineEnding::Lf);
        assert_eq!(normalize_newlines("a\r\nb\n"), "a\nb\n");
        assert_eq!(with_line_ending("a\nb\r\n", LineEnding::Crlf), "a\r\nb\r\n");
        assert_eq!(with_line_ending("a\r\nb\n", LineEnding::Lf), "a\r\nb\n");
    }

    #[test]
    fn media_types_by_extension() {
        assert_eq!(
            media_type(Path::new("a/B.PNG")),
            Some(("image/png", MediaKind::Image))
        );
        assert_eq!(
            media_type(Path::new("x.jpeg")).map(|m| m.0),
            Some("image/jpeg")
        );
        assert_eq!(
            media_type(Path::new("doc.pdf")).map(|m| m.1),
            Some(MediaKind::Pdf)
        );
        assert_eq!(
            media_type(Path::new("s.mp3")).map(|m| m.0),
            Some("audio/mpeg")
        );
        assert_eq!(media_type(Path::new("logo.svg")), None);
        assert!(is_svg(Path::new("logo.SVG")));
        assert_eq!(media_type(Path::new("Makefile")), None);
    }

    #[test]
    fn small_helpers() {
        let roots = vec![PathBuf::from("/ws")];
        assert_eq!(display_path(Path::new("/ws/src/a.rs"), &roots), "src/a.rs");
        assert_eq!(
            display_path(Path::new("/other/a.rs"), &roots),
            "/other/a.rs"
        );
        assert_eq!(display_path(Path::new("/ws"), &roots), "/ws");
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(2048), "2.0 KB");
        assert_eq!(cut_line("aéb", 2), ("aé", true));
        assert_eq!(cut_line("ab", 2), ("ab", false));
    }
}
