//! In-place edits of JSONC text: set or remove one key path while every
//! other byte of the file (comments, key order, unknown keys, indentation,
//! line endings) stays exactly as the user wrote it.
//!
//! Re-serialising a parsed file would lose its comments and reorder or
//! reformat it, which users of hand-kept `settings.json` files rightly hate.
//! Instead the text is scanned once into a tree of byte spans ([`Node`]) and
//! only the span of the edited value (or the place of a new member) changes.

use serde_json::Value;

/// Where a JSONC text could not be understood (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// A JSON value's place in the text.
#[derive(Debug, Clone)]
enum Node {
    Object {
        start: usize,
        end: usize,
        members: Vec<Member>,
    },
    Other {
        start: usize,
        end: usize,
    },
}

impl Node {
    fn start(&self) -> usize {
        match self {
            Node::Object { start, .. } | Node::Other { start, .. } => *start,
        }
    }

    fn end(&self) -> usize {
        match self {
            Node::Object { end, .. } | Node::Other { end, .. } => *end,
        }
    }
}

/// `"key": value,` inside an object.
#[derive(Debug, Clone)]
struct Member {
    key: String,
    key_start: usize,
    value: Node,
    /// The byte offset of the comma after the value, if any.
    comma: Option<usize>,
}

/// Scans JSONC (comments, trailing commas) into spans.
struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn error(&self, at: usize, message: impl Into<String>) -> ScanError {
        let (line, column) = line_col(self.text, at);
        ScanError {
            line,
            column,
            message: message.into(),
        }
    }

    /// Skips whitespace and comments.
    fn skip(&mut self) -> Result<(), ScanError> {
        loop {
            match (self.bytes.get(self.pos), self.bytes.get(self.pos + 1)) {
                (Some(b' ' | b'\t' | b'\r' | b'\n'), _) => self.pos += 1,
                (Some(b'/'), Some(b'/')) => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let open = self.pos;
                    match self.text[self.pos + 2..].find("*/") {
                        Some(end) => self.pos += 2 + end + 2,
                        None => return Err(self.error(open, "unterminated comment")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, ScanError> {
        if depth > 512 {
            return Err(self.error(self.pos, "nested too deeply"));
        }
        self.skip()?;
        let start = self.pos;
        match self.bytes.get(self.pos) {
            None => Err(self.error(start, "unexpected end of file")),
            Some(b'{') => self.object(depth),
            Some(b'[') => {
                self.pos += 1;
                self.skip()?;
                while self.bytes.get(self.pos) != Some(&b']') {
                    self.value(depth + 1)?;
                    self.skip()?;
                    match self.bytes.get(self.pos) {
                        Some(b',') => {
                            self.pos += 1;
                            self.skip()?;
                        }
                        Some(b']') => {}
                        _ => return Err(self.error(self.pos, "expected `,` or `]`")),
                    }
                }
                self.pos += 1;
                Ok(Node::Other {
                    start,
                    end: self.pos,
                })
            }
            Some(b'"') => {
                self.string()?;
                Ok(Node::Other {
                    start,
                    end: self.pos,
                })
            }
            Some(_) => {
                while let Some(b) = self.bytes.get(self.pos) {
                    if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.') {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                let literal = &self.text[start..self.pos];
                if literal.is_empty() || serde_json::from_str::<Value>(literal).is_err() {
                    return Err(self.error(start, "expected a value"));
                }
                Ok(Node::Other {
                    start,
                    end: self.pos,
                })
            }
        }
    }

    /// A string starting at `pos`; returns its decoded content.
    fn string(&mut self) -> Result<String, ScanError> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.bytes.get(self.pos) {
                None | Some(b'\n') => return Err(self.error(start, "unterminated string")),
                Some(b'\\') => self.pos += 2,
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => self.pos += 1,
            }
        }
        serde_json::from_str(&self.text[start..self.pos])
            .map_err(|e| self.error(start, format!("invalid string: {e}")))
    }

    fn object(&mut self, depth: usize) -> Result<Node, ScanError> {
        let start = self.pos;
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.skip()?;
            match self.bytes.get(self.pos) {
                Some(b'}') => break,
                Some(b'"') => {}
                _ => return Err(self.error(self.pos, "expected a key or `}`")),
            }
            let key_start = self.pos;
            let key = self.string()?;
            self.skip()?;
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err(self.error(self.pos, "expected `:`"));
            }
            self.pos += 1;
            let value = self.value(depth + 1)?;
            self.skip()?;
            let comma = match self.bytes.get(self.pos) {
                Some(b',') => {
                    self.pos += 1;
                    Some(self.pos - 1)
                }
                Some(b'}') => None,
                _ => return Err(self.error(self.pos, "expected `,` or `}`")),
            };
            members.push(Member {
                key,
                key_start,
                value,
                comma,
            });
        }
        self.pos += 1;
        Ok(Node::Object {
            start,
            end: self.pos,
            members,
        })
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Parses the whole text; the top level must be an object. `None` for an
/// empty (or whitespace and comments only) text.
fn scan(text: &str) -> Result<Option<Node>, ScanError> {
    let mut scanner = Scanner {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    scanner.skip()?;
    if scanner.pos == text.len() {
        return Ok(None);
    }
    if scanner.bytes[scanner.pos] != b'{' {
        return Err(scanner.error(scanner.pos, "the top level must be a JSON object"));
    }
    let root = scanner.value(0)?;
    scanner.skip()?;
    if scanner.pos != text.len() {
        return Err(scanner.error(scanner.pos, "unexpected text after the top-level object"));
    }
    Ok(Some(root))
}

/// The 1-based line and column of the deepest key of `path` present in
/// `text` (for error messages about merged values). `None` when the text
/// does not parse or has not even the first key.
pub fn locate(text: &str, path: &[&str]) -> Option<(usize, usize)> {
    let mut node = scan(text).ok()??;
    let mut found = None;
    for segment in path {
        let Node::Object { members, .. } = &node else {
            break;
        };
        let Some(member) = members.iter().rev().find(|m| m.key == *segment) else {
            break;
        };
        found = Some(member.key_start);
        node = member.value.clone();
    }
    found.map(|offset| line_col(text, offset))
}

/// How the file is laid out, so inserted text looks like the rest.
struct Style {
    newline: &'static str,
    indent_unit: String,
}

impl Style {
    fn of(text: &str) -> Self {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let indent_unit = text
            .lines()
            .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
            .find(|ws| !ws.is_empty())
            .map(str::to_owned)
            .unwrap_or_else(|| "  ".to_owned());
        Self {
            newline,
            indent_unit,
        }
    }

    /// `value` as pretty JSON whose continuation lines start with `indent`.
    fn render(&self, value: &Value, indent: &str) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.indent_unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        serde::Serialize::serialize(value, &mut ser).expect("JSON values always serialise");
        let text = String::from_utf8(out).expect("serde_json writes UTF-8");
        text.replace('\n', &format!("{}{indent}", self.newline))
    }
}

/// The whitespace at the start of the line holding `offset`.
fn line_indent(text: &str, offset: usize) -> &str {
    let line_start = text[..offset].rfind('\n').map_or(0, |p| p + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Whether only spaces and tabs stand between the line start and `offset`.
fn starts_line(text: &str, offset: usize) -> bool {
    let line_start = text[..offset].rfind('\n').map_or(0, |p| p + 1);
    text[line_start..offset]
        .trim_matches([' ', '\t'])
        .is_empty()
}

/// The offset of the end of the line holding `offset` (before `\r\n`/`\n`)
/// when only whitespace or a `//` comment follows `offset` there.
fn quiet_line_end(text: &str, offset: usize) -> Option<usize> {
    let rest = &text[offset..];
    let eol = rest.find('\n').map_or(text.len(), |p| offset + p);
    let eol = if eol > offset && text.as_bytes()[eol - 1] == b'\r' {
        eol - 1
    } else {
        eol
    };
    let tail = text[offset..eol].trim_start_matches([' ', '\t']);
    (tail.is_empty() || tail.starts_with("//")).then_some(eol)
}

/// `{"a": {"b": value}}` for the path `a.b`.
fn nest(path: &[&str], value: &Value) -> Value {
    path.iter().rev().fold(value.clone(), |inner, key| {
        let mut map = serde_json::Map::new();
        map.insert((*key).to_owned(), inner);
        Value::Object(map)
    })
}

fn key_json(key: &str) -> String {
    Value::String(key.to_owned()).to_string()
}

/// Returns `text` with the value at `path` set to `value`: the value's span
/// is replaced when the key exists, otherwise the missing keys are added at
/// the end of the deepest existing object. An empty text becomes a new
/// object. A non-object in the way (e.g. the legacy `"model": "name"` when
/// setting `model.name`) is replaced by an object.
pub fn set(text: &str, path: &[&str], value: &Value) -> Result<String, ScanError> {
    assert!(!path.is_empty(), "a key path has at least one key");
    let style = Style::of(text);
    let Some(root) = scan(text)? else {
        let nl = style.newline;
        return Ok(format!("{}{nl}", style.render(&nest(path, value), "")));
    };
    let mut node = root;
    for (i, segment) in path.iter().enumerate() {
        let Node::Object { members, .. } = &node else {
            // A scalar or array where an object is needed: replace it.
            let indent = line_indent(text, node.start()).to_owned();
            let rendered = style.render(&nest(&path[i..], value), &indent);
            return Ok(splice(text, node.start(), node.end(), &rendered));
        };
        match members.iter().rev().find(|m| m.key == *segment) {
            Some(member) if i + 1 == path.len() => {
                let indent = line_indent(text, member.key_start).to_owned();
                let rendered = style.render(value, &indent);
                return Ok(splice(
                    text,
                    member.value.start(),
                    member.value.end(),
                    &rendered,
                ));
            }
            Some(member) => node = member.value.clone(),
            None => {
                let rest = &path[i + 1..];
                return Ok(insert_member(
                    text,
                    &node,
                    segment,
                    &nest(rest, value),
                    &style,
                ));
            }
        }
    }
    unreachable!("the loop returns at the last key")
}

/// Adds `"key": value` as the last member of `object`.
fn insert_member(text: &str, object: &Node, key: &str, value: &Value, style: &Style) -> String {
    let Node::Object {
        start,
        end,
        members,
    } = object
    else {
        unreachable!("only objects get members")
    };
    let close = end - 1;
    let nl = style.newline;
    let outer = line_indent(text, *start).to_owned();
    match members.last() {
        None => {
            let inner = format!("{outer}{}", style.indent_unit);
            let member = format!("{inner}{}: {}", key_json(key), style.render(value, &inner));
            if text[start + 1..close].trim().is_empty() {
                // `{}` or `{ }`: lay the object out over lines.
                let replacement = format!("{{{nl}{member}{nl}{outer}}}");
                splice(text, *start, *end, &replacement)
            } else if starts_line(text, close) {
                // Only comments inside; the `}` has its own line.
                let line_start = text[..close].rfind('\n').map_or(0, |p| p + 1);
                splice(text, line_start, line_start, &format!("{member}{nl}"))
            } else {
                splice(text, close, close, &format!("{nl}{member}{nl}{outer}"))
            }
        }
        Some(last) => {
            let first = &members[0];
            let multiline = starts_line(text, first.key_start);
            let indent = if multiline {
                line_indent(text, first.key_start).to_owned()
            } else {
                outer.clone()
            };
            let member = format!("{}: {}", key_json(key), style.render(value, &indent));
            let after_value = last.value.end();
            // A file written with trailing commas gets one after the new
            // member too (and removing it later restores the file exactly).
            let (comma_text, anchor, member) = match last.comma {
                Some(comma) => ("", comma + 1, format!("{member},")),
                None => (",", after_value, member),
            };
            if multiline && let Some(eol) = quiet_line_end(text, anchor) {
                // After the last member's line (keeping its comment there).
                let with_comma = splice(text, after_value, after_value, comma_text);
                let eol = eol + comma_text.len();
                splice(&with_comma, eol, eol, &format!("{nl}{indent}{member}"))
            } else {
                splice(text, anchor, anchor, &format!("{comma_text} {member}"))
            }
        }
    }
}

/// Returns `text` without the key at `path`, or `None` when it is not there.
/// The member's lines go when it had lines of its own; the comma before it
/// goes when it was the last member.
pub fn remove(text: &str, path: &[&str]) -> Result<Option<String>, ScanError> {
    assert!(!path.is_empty(), "a key path has at least one key");
    let Some(mut node) = scan(text)? else {
        return Ok(None);
    };
    for (i, segment) in path.iter().enumerate() {
        let Node::Object { members, .. } = &node else {
            return Ok(None);
        };
        let Some(index) = members.iter().rposition(|m| m.key == *segment) else {
            return Ok(None);
        };
        if i + 1 < path.len() {
            node = members[index].value.clone();
            continue;
        }
        let member = &members[index];
        let is_last = index + 1 == members.len();
        let tail = member.comma.map_or(member.value.end(), |c| c + 1);
        let own_lines = starts_line(text, member.key_start)
            .then(|| quiet_line_end(text, tail))
            .flatten();
        let edited = match own_lines {
            Some(eol) => {
                let line_start = text[..member.key_start].rfind('\n').map_or(0, |p| p + 1);
                let after = text[eol..]
                    .strip_prefix("\r\n")
                    .or_else(|| text[eol..].strip_prefix('\n'))
                    .map_or(eol, |rest| text.len() - rest.len());
                let cut = splice(text, line_start, after, "");
                match (is_last && member.comma.is_none(), index.checked_sub(1)) {
                    (true, Some(prev)) => {
                        let comma = members[prev].comma.expect("a member follows it");
                        splice(&cut, comma, comma + 1, "")
                    }
                    _ => cut,
                }
            }
            None if !is_last => splice(text, member.key_start, members[index + 1].key_start, ""),
            None => match index.checked_sub(1) {
                Some(prev) => {
                    let comma = members[prev].comma.expect("a member follows it");
                    splice(text, comma, tail, "")
                }
                None => splice(text, member.key_start, tail, ""),
            },
        };
        return Ok(Some(edited));
    }
    unreachable!("the loop returns at the last key")
}

fn splice(text: &str, from: usize, to: usize, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..from]);
    out.push_str(with);
    out.push_str(&text[to..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(text: &str) -> Value {
        crate::parse_file(std::path::Path::new("/t.json"), text).unwrap()
    }

    #[test]
    fn replaces_an_existing_value_and_nothing_else() {
        let text = "{\n  // theme\n  \"ui\": {\"theme\": \"dark\"}, /* keep */\n  \"x\": 1,\n}\n";
        let out = set(text, &["ui", "theme"], &json!("light")).unwrap();
        assert_eq!(
            out,
            "{\n  // theme\n  \"ui\": {\"theme\": \"light\"}, /* keep */\n  \"x\": 1,\n}\n"
        );
    }

    #[test]
    fn adds_missing_keys_after_the_last_member_keeping_its_comment() {
        let text = "{\n  \"a\": 1 // one\n}\n";
        let out = set(text, &["general", "checkpointing", "enabled"], &json!(true)).unwrap();
        assert_eq!(
            out,
            "{\n  \"a\": 1, // one\n  \"general\": {\n    \"checkpointing\": {\n      \"enabled\": true\n    }\n  }\n}\n"
        );
        assert_eq!(parsed(&out)["general"]["checkpointing"]["enabled"], true);
    }

    #[test]
    fn adds_into_nested_objects_with_the_files_indent_and_trailing_commas() {
        let text = "{\r\n\t\"model\": {\r\n\t\t\"name\": \"x\",\r\n\t},\r\n}";
        let out = set(text, &["model", "maxSessionTurns"], &json!(5)).unwrap();
        assert_eq!(
            out,
            "{\r\n\t\"model\": {\r\n\t\t\"name\": \"x\",\r\n\t\t\"maxSessionTurns\": 5,\r\n\t},\r\n}"
        );
    }

    #[test]
    fn empty_objects_files_and_single_lines() {
        assert_eq!(
            set("", &["a", "b"], &json!([1])).unwrap(),
            "{\n  \"a\": {\n    \"b\": [\n      1\n    ]\n  }\n}\n"
        );
        assert_eq!(set("{}", &["a"], &json!(1)).unwrap(), "{\n  \"a\": 1\n}");
        assert_eq!(
            set("{\"a\": 1}", &["b"], &json!(2)).unwrap(),
            "{\"a\": 1, \"b\": 2}"
        );
        assert_eq!(
            set("{\n  // nothing yet\n}", &["b"], &json!(2)).unwrap(),
            "{\n  // nothing yet\n  \"b\": 2\n}"
        );
    }

    #[test]
    fn replaces_a_scalar_in_the_way() {
        let out = set(
            "{\"model\": \"gemini-2.5-pro\"}",
            &["model", "name"],
            &json!("m"),
        )
        .unwrap();
        assert_eq!(parsed(&out), json!({"model": {"name": "m"}}));
    }

    #[test]
    fn keys_with_dots_and_escapes_are_one_segment() {
        let text = "{\n  \"/home/u/a.b\": \"TRUST_FOLDER\"\n}";
        let out = set(text, &["/home/u/a.b"], &json!("DO_NOT_TRUST")).unwrap();
        assert_eq!(out, "{\n  \"/home/u/a.b\": \"DO_NOT_TRUST\"\n}");
        let out = set("{\"q\\\"k\": 1}", &["q\"k"], &json!(2)).unwrap();
        assert_eq!(out, "{\"q\\\"k\": 2}");
    }

    #[test]
    fn removes_members_with_their_lines_and_commas() {
        let text = "{\n  \"a\": 1, // a\n  // about b\n  \"b\": 2,\n  \"c\": 3\n}";
        assert_eq!(
            remove(text, &["a"]).unwrap().unwrap(),
            "{\n  // about b\n  \"b\": 2,\n  \"c\": 3\n}"
        );
        assert_eq!(
            remove(text, &["c"]).unwrap().unwrap(),
            "{\n  \"a\": 1, // a\n  // about b\n  \"b\": 2\n}"
        );
        assert_eq!(
            remove("{\"a\": 1, \"b\": 2}", &["b"]).unwrap().unwrap(),
            "{\"a\": 1}"
        );
        assert_eq!(
            remove("{\"a\": 1, \"b\": 2}", &["a"]).unwrap().unwrap(),
            "{\"b\": 2}"
        );
        assert_eq!(remove("{\"a\": 1}", &["a"]).unwrap().unwrap(), "{}");
        assert_eq!(remove("{\"a\": 1}", &["z", "y"]).unwrap(), None);
    }

    #[test]
    fn broken_text_names_the_line() {
        let err = set("{\n  \"a\": 1\n  \"b\": 2\n}", &["c"], &json!(1)).unwrap_err();
        assert_eq!((err.line, err.column), (3, 3), "{err:?}");
        assert!(set("[1]", &["a"], &json!(1)).is_err());
        assert!(set("{\"a\": 1} x", &["a"], &json!(1)).is_err());
        assert!(set("{\"a\": tru}", &["a"], &json!(1)).is_err());
        assert!(set("{/* open", &["a"], &json!(1)).is_err());
    }

    #[test]
    fn locates_keys() {
        let text = "{\n  \"model\": {\n    \"name\": 3\n  }\n}";
        assert_eq!(locate(text, &["model", "name"]), Some((3, 5)));
        assert_eq!(locate(text, &["model", "other"]), Some((2, 3)));
        assert_eq!(locate(text, &["nope"]), None);
    }
}
