//! The "stable JSON" of a tool call's arguments, which `argsPattern` is
//! tested against: object keys sorted recursively, no whitespace, printed the
//! way JavaScript's `JSON.stringify` prints them (Gemini CLI's
//! `stableStringify`), so that patterns written for Gemini CLI match the same
//! text here.

use std::cmp::Ordering;
use std::fmt::Write;

use serde_json::Value;

/// `{"b":1,"a":{"d":[2,1],"c":"x"}}` → `{"a":{"c":"x","d":[2,1]},"b":1}`.
pub fn stable_stringify(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| utf16_cmp(a.0, b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// JavaScript sorts strings by UTF-16 code units, which differs from byte
/// order for characters above U+FFFF.
fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Integers print as integers; a float with no fractional part prints
/// without `.0` (JavaScript has one number type: `1.0` is `1`), and `-0` is
/// `0`.
fn write_number(out: &mut String, n: &serde_json::Number) {
    if n.is_i64() || n.is_u64() {
        let _ = write!(out, "{n}");
        return;
    }
    match n.as_f64() {
        // Also matches -0.0.
        Some(0.0) => out.push('0'),
        Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => {
            let _ = write!(out, "{f:.0}");
        }
        Some(f) => {
            let _ = write!(out, "{f}");
        }
        None => {
            let _ = write!(out, "{n}");
        }
    }
}

/// The same escapes as `JSON.stringify`: `"`, `\`, `\b \f \n \r \t`, other
/// control characters as `\u00xx`; everything else (including `/` and
/// non-ASCII) as is.
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
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
    fn sorts_keys_recursively_and_prints_compactly() {
        let v = json!({"b": 1, "a": {"d": [2, {"z": null, "y": true}], "c": "x"}});
        assert_eq!(
            stable_stringify(&v),
            r#"{"a":{"c":"x","d":[2,{"y":true,"z":null}]},"b":1}"#
        );
    }

    #[test]
    fn numbers_print_like_javascript() {
        let v: Value = serde_json::from_str(r#"[1.0, -0.0, 2.5, 10, -3, 1e3]"#).unwrap();
        assert_eq!(stable_stringify(&v), "[1,0,2.5,10,-3,1000]");
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        let v = json!({"command": "echo \"hi\"\n\ta\\b/c é \u{1}"});
        assert_eq!(
            stable_stringify(&v),
            r#"{"command":"echo \"hi\"\n\ta\\b/c é \u0001"}"#
        );
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+1F600 (surrogate pair D83D DE00) sorts before U+FF5E in UTF-16,
        // after it in UTF-8 byte order.
        let v = json!({"\u{ff5e}": 1, "\u{1f600}": 2});
        assert_eq!(stable_stringify(&v), "{\"\u{1f600}\":2,\"\u{ff5e}\":1}");
    }
}
