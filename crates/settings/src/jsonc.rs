//! JSON with comments.

/// Replaces `//` line comments and `/* */` block comments with spaces,
/// leaving strings untouched and every newline in place, so that positions
/// reported by the JSON parser still match the user's file.
pub fn strip_comments(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            out.push(b);
            if b == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1]);
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                out.push(b);
                i += 1;
            }
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                out.extend_from_slice(b"  ");
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    out.push(if bytes[i] == b'\n' { b'\n' } else { b' ' });
                    i += 1;
                }
                if i < bytes.len() {
                    out.extend_from_slice(b"  ");
                    i += 2;
                }
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    // Only ASCII bytes outside strings were replaced by ASCII spaces, so the
    // result is still valid UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Removes commas directly before a closing `}` or `]` (outside strings),
/// which hand-edited settings files often contain.
pub fn strip_trailing_commas(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = bytes.to_vec();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b',' {
            let next = bytes[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
            if matches!(next, Some(b'}') | Some(b']')) {
                out[i] = b' ';
            }
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_comments_but_not_strings_and_keeps_lines() {
        let src = "{\n  // a comment\n  \"url\": \"http://x//y\", /* block\n spans */ \"b\": \"/*no*/\"\n}";
        let out = strip_comments(src);
        assert_eq!(out.lines().count(), src.lines().count());
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["url"], "http://x//y");
        assert_eq!(v["b"], "/*no*/");
    }

    #[test]
    fn escaped_quotes_do_not_end_strings() {
        let out = strip_comments(r#"{"a": "q\"//x"} // c"#);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["a"], "q\"//x");
    }

    #[test]
    fn trailing_commas() {
        let v: serde_json::Value =
            serde_json::from_str(&strip_trailing_commas("{\"a\": [1, 2,], \"s\": \",}\",\n}"))
                .unwrap();
        assert_eq!(v["a"][1], 2);
        assert_eq!(v["s"], ",}");
    }
}
