//! Python-compatible JSON text (`json.dumps` with default settings).
//!
//! The reference fake (`fake_gemini.py`) serialises every reply with Python's
//! `json.dumps`, derives token counts from the length of that text and matches
//! utility rules against it. Reproducing the exact text keeps replies, token
//! numbers and rule matches identical to the reference for the same scenario.

use serde_json::Value;
use std::fmt::Write as _;

/// `json.dumps(value, ensure_ascii=ensure_ascii)`: `", "` / `": "` separators,
/// insertion-ordered keys and, with `ensure_ascii`, every character outside
/// printable ASCII written as `\uXXXX` (UTF-16 surrogate pairs above U+FFFF).
pub fn dumps(value: &Value, ensure_ascii: bool) -> String {
    let mut out = String::new();
    write_value(&mut out, value, ensure_ascii);
    out
}

/// Python's truthiness of a JSON value (`if value:`), used where the
/// reference fake treats empty objects, empty strings, `0` and `null` as absent.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The reference fake's token estimate: `max(1, len(json.dumps(obj)) // 4)`.
pub fn approx_tokens(value: &Value) -> u64 {
    // With ensure_ascii the text is pure ASCII, so bytes == characters.
    (dumps(value, true).len() as u64 / 4).max(1)
}

fn write_value(out: &mut String, value: &Value, ensure_ascii: bool) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_str(out, s, ensure_ascii),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, ensure_ascii);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(out, k, ensure_ascii);
                out.push_str(": ");
                write_value(out, v, ensure_ascii);
            }
            out.push('}');
        }
    }
}

fn write_str(out: &mut String, s: &str, ensure_ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x20 || ensure_ascii => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_python_formatting() {
        let v = json!({"a": [1, 2.5, true, null], "b": {"c": "x\"y\n"}, "e": {}, "f": []});
        assert_eq!(
            dumps(&v, true),
            r#"{"a": [1, 2.5, true, null], "b": {"c": "x\"y\n"}, "e": {}, "f": []}"#
        );
    }

    #[test]
    fn escapes_non_ascii_only_when_asked() {
        let v = json!("é😀\u{7f}\u{1}");
        assert_eq!(dumps(&v, true), r#""\u00e9\ud83d\ude00\u007f\u0001""#);
        assert_eq!(dumps(&v, false), "\"é😀\u{7f}\\u0001\"");
    }

    #[test]
    fn truthiness_follows_python() {
        assert!(!truthy(&json!({})));
        assert!(!truthy(&json!(0)));
        assert!(!truthy(&json!("")));
        assert!(truthy(&json!({"status": 500})));
        assert!(truthy(&json!(0.5)));
    }

    #[test]
    fn token_estimate_is_quarter_length_at_least_one() {
        assert_eq!(approx_tokens(&json!({})), 1);
        // {"text": "abcdefgh"} is 20 characters.
        assert_eq!(approx_tokens(&json!({"text": "abcdefgh"})), 5);
    }
}
