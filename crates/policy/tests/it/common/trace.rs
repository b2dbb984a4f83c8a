//! Reading the record: bash's `xtrace` lines (every simple command bash ran,
//! builtins and functions included, after expansion) and the shims' lines
//! (commands started by programs other than bash: `xargs`, `env`, `sudo`,
//! `find -exec`, ...).

use super::shims::SHIM_MARK;

/// `PS4`'s first byte (ASCII RS), repeated by bash once per nesting level.
pub const PS4_DEPTH: char = '\u{1e}';
/// `PS4`'s last byte (ASCII US): the end of the prefix.
pub const PS4_END: char = '\u{1f}';

/// One command that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The command name as it ran (after expansion and quote removal).
    pub name: String,
    /// The traced line (expanded words, bash's quoting) or the shim's
    /// argument list: for reports.
    pub text: String,
    pub from: Source,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Bash's xtrace.
    Trace,
    /// A shim that a program ran.
    Shim,
    /// The command `command X` / `builtin X` ran (the trace only shows the
    /// wrapper's line).
    Wrapped,
}

/// Keywords bash traces although they are not simple commands.
const KEYWORDS: &[&str] = &["for", "select", "case", "((", "[["];

/// All commands in the record, in order.
pub fn parse(log: &str) -> Vec<Recorded> {
    let mut out = Vec::new();
    for record in records(log) {
        if let Some(rest) = record.strip_prefix(SHIM_MARK) {
            let name = rest.split(' ').next().unwrap_or_default();
            out.push(Recorded {
                name: name.to_string(),
                text: rest.to_string(),
                from: Source::Shim,
            });
            continue;
        }
        let Some(end) = record.find(PS4_END) else {
            continue;
        };
        let text = &record[end + PS4_END.len_utf8()..];
        let words = words(text);
        // Assignments come first; an array assignment `a=(x y)` spans words.
        let mut command = words.iter().peekable();
        while let Some(w) = command.next_if(|w| is_assignment(&w.raw)) {
            let value = &w.raw[w.raw.find('=').map_or(0, |i| i + 1)..];
            if value.starts_with('(') && !value.ends_with(')') {
                while command.next().is_some_and(|w| !w.raw.ends_with(')')) {}
            }
        }
        let Some(first) = command.next() else {
            continue; // only assignments
        };
        if KEYWORDS.contains(&first.raw.as_str()) {
            continue;
        }
        out.push(Recorded {
            name: first.text.clone(),
            text: text.to_string(),
            from: Source::Trace,
        });
        if let Some(inner) = wrapped(&first.text, command.map(|w| w.text.as_str())) {
            out.push(Recorded {
                name: inner,
                text: text.to_string(),
                from: Source::Wrapped,
            });
        }
    }
    out
}

/// Splits the log into records: a record starts at a line that starts with
/// the PS4 prefix or the shim mark, and goes on over lines that belong to a
/// quoted word with newlines.
fn records(log: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in log.strip_suffix('\n').unwrap_or(log).split('\n') {
        let starts = line.starts_with(SHIM_MARK)
            || (line.starts_with(PS4_DEPTH)
                && line.trim_start_matches(PS4_DEPTH).starts_with(PS4_END));
        match out.last_mut() {
            Some(last) if !starts => {
                last.push('\n');
                last.push_str(line);
            }
            _ => out.push(line.to_string()),
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

/// The command `command`/`builtin` runs, from the words after it.
fn wrapped<'a>(name: &str, mut rest: impl Iterator<Item = &'a str>) -> Option<String> {
    match name {
        "builtin" => rest.next().map(str::to_string),
        "command" => loop {
            let w = rest.next()?;
            match w {
                // -v/-V only describe the command.
                "-v" | "-V" | "-pv" | "-vp" | "-pV" | "-Vp" => return None,
                "-p" | "--" => continue,
                _ => return Some(w.to_string()),
            }
        },
        _ => None,
    }
}

/// A word of a traced line: as printed, and with bash's quoting removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub raw: String,
    pub text: String,
}

/// `name=`, `name+=`, `name[sub]=`: how xtrace prints an assignment.
fn is_assignment(raw: &str) -> bool {
    let mut chars = raw.char_indices();
    match chars.next() {
        Some((_, c)) if c == '_' || c.is_ascii_alphabetic() => {}
        _ => return false,
    }
    let mut in_sub = false;
    for (i, c) in chars {
        match c {
            _ if in_sub => in_sub = c != ']',
            '[' => in_sub = true,
            '=' => return true,
            '+' => return raw[i + 1..].starts_with('='),
            c if c == '_' || c.is_ascii_alphanumeric() => {}
            _ => return false,
        }
    }
    false
}

/// Splits a traced line into words. Xtrace quotes a word that needs it as
/// `'...'` (a quote inside as `'\''`) or `$'...'` (control characters).
pub fn words(line: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        if chars.peek().is_none() {
            return out;
        }
        let mut raw = String::new();
        let mut text = String::new();
        while let Some(&c) = chars.peek() {
            if c == ' ' {
                break;
            }
            chars.next();
            raw.push(c);
            match c {
                '\'' => {
                    for q in chars.by_ref() {
                        raw.push(q);
                        if q == '\'' {
                            break;
                        }
                        text.push(q);
                    }
                }
                '\\' => {
                    if let Some(n) = chars.next() {
                        raw.push(n);
                        text.push(n);
                    }
                }
                '$' if chars.peek() == Some(&'\'') => {
                    raw.push(chars.next().unwrap_or('\''));
                    while let Some(q) = chars.next() {
                        raw.push(q);
                        match q {
                            '\'' => break,
                            '\\' => {
                                let Some(e) = chars.next() else { break };
                                raw.push(e);
                                text.push(match e {
                                    'n' => '\n',
                                    't' => '\t',
                                    'r' => '\r',
                                    'e' | 'E' => '\u{1b}',
                                    'a' => '\u{7}',
                                    'b' => '\u{8}',
                                    'f' => '\u{c}',
                                    'v' => '\u{b}',
                                    other => other,
                                });
                            }
                            _ => text.push(q),
                        }
                    }
                }
                _ => text.push(c),
            }
        }
        out.push(Word { raw, text });
    }
}
