//! The file names a line of a refused command's output gives, in the forms the common tools
//! print them:
//!
//! - quoted: `touch: cannot touch '/x': …`, `mkdir: cannot create directory ‘/x’: …`,
//!   Python's `[Errno 30] Read-only file system: '/x'`, Node's `EROFS: …, open '/x'`, git's
//!   `Unable to create '/x/.git/index.lock'`, cargo's `` `/x` ``;
//! - before the message: `bash: line 1: /x: Read-only file system`, `tee: /x: …`,
//!   dash's `sh: 1: cannot create /x: …`, `sed: couldn't open temporary file /x: …`,
//!   git's `could not write config file .git/config: …`;
//! - after it: zsh's `zsh: read-only file system: /x`;
//! - on a line of their own, when another line of the output has the message: `npm error path
//!   /x`, and `error:`/`fatal:` lines with a quoted path (the head of a "Caused by:" chain).
//!
//! What is a real refusal is decided by the caller, against the policy's mounts: this only
//! finds names, generously.

/// Lead-in words after which a quoted word is a file name even without a `/` (`cannot touch
/// 'x'`, `Read-only file system: 'x'`).
const LEAD_INS: &[&str] = &[
    "touch",
    "directory",
    "file",
    "link",
    "create",
    "remove",
    "open",
    "mkdir",
    "rmdir",
    "unlink",
    "rename",
    "chmod",
    "permissions of",
    "copy",
    "copyfile",
    "symlink",
    "access",
    "stat",
    "write",
    "move",
    "to",
    ":",
    "ownership of",
    "lock",
    "failed",
];

/// Prefixes of the part before a message that come before the file name.
const PREFIXES: &[&str] = &[
    "cannot create regular file ",
    "cannot create directory ",
    "cannot create ",
    "can't create ",
    "cannot touch ",
    "cannot open ",
    "cannot remove ",
    "couldn't open temporary file ",
    "couldn't open ",
    "could not open ",
    "could not create ",
    "unable to create ",
    "unable to write ",
    "failed to open ",
    "failed to create ",
    "could not write config file ",
    "could not lock config file ",
];

/// The message parts that name the refusal (a `: `-separated part starting with one of these).
const MESSAGES: &[&str] = &[
    "read-only file system",
    "permission denied",
    "operation not permitted",
    "device or resource busy",
];

/// Names on a line that carries a refusal message.
pub fn on_marked_line(line: &str) -> Vec<String> {
    let mut out = quoted(line, true);
    out.extend(around_message(line));
    out
}

/// Names on a line without the message, in the forms that put a name on a line of its own.
pub fn on_context_line(line: &str) -> Vec<String> {
    let t = line.trim();
    for prefix in ["npm error path ", "npm ERR! path "] {
        if let Some(rest) = t.strip_prefix(prefix) {
            return vec![rest.trim().to_owned()];
        }
    }
    let lower = t.to_ascii_lowercase();
    if ["error:", "fatal:", "error "]
        .iter()
        .any(|p| lower.starts_with(p))
    {
        return quoted(t, false)
            .into_iter()
            .filter(|q| q.contains('/'))
            .collect();
    }
    Vec::new()
}

/// Quoted words that look like file names (with `lead_ins`: also those after a lead-in word).
fn quoted(line: &str, lead_ins: bool) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let close: &[char] = match c {
            '\'' => &['\''],
            '"' => &['"'],
            '‘' => &['’'],
            '“' => &['”'],
            '`' => &['`', '\''],
            _ => {
                i += 1;
                continue;
            }
        };
        // An apostrophe inside a word ("couldn't") opens nothing, and closes nothing.
        let in_word = |k: usize| chars.get(k).is_some_and(|(_, ch)| ch.is_alphanumeric());
        if c == '\'' && i > 0 && in_word(i - 1) {
            i += 1;
            continue;
        }
        let Some(j) = (i + 1..chars.len())
            .find(|&j| close.contains(&chars[j].1) && !(chars[j].1 == '\'' && in_word(j + 1)))
        else {
            break;
        };
        let content = &line[start + c.len_utf8()..chars[j].0];
        let before = line[..start].trim_end().to_ascii_lowercase();
        let led = lead_ins && LEAD_INS.iter().any(|w| before.ends_with(w));
        if looks_like_path(content, led) {
            out.push(content.to_owned());
        }
        i = j + 1;
    }
    out
}

/// `X: <message>` and `<message>: X`, unquoted.
fn around_message(line: &str) -> Vec<String> {
    let parts: Vec<&str> = line.split(": ").collect();
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let lower = part.trim().to_ascii_lowercase();
        if !MESSAGES.iter().any(|m| lower.starts_with(m)) {
            continue;
        }
        if let Some(before) = i.checked_sub(1).and_then(|b| parts.get(b))
            && let Some(name) = name_in(before)
        {
            out.push(name);
        }
        // zsh: "read-only file system: /x" (the message is the whole part).
        if MESSAGES.contains(&lower.as_str())
            && let Some(after) = parts.get(i + 1)
            && let Some(name) = name_in(after)
        {
            out.push(name);
        }
    }
    out
}

/// The file name in a part of a line, if it holds one.
fn name_in(part: &str) -> Option<String> {
    let part = part.trim();
    if part.starts_with(['\'', '"', '‘', '“', '`']) {
        return None; // quoted: found by `quoted`.
    }
    let lower = part.to_ascii_lowercase();
    for prefix in PREFIXES {
        if lower.starts_with(prefix) {
            let rest = &part[prefix.len()..];
            return looks_like_path(rest, true).then(|| rest.to_owned());
        }
    }
    if looks_like_path(part, false) && !part.contains(' ') {
        return Some(part.to_owned());
    }
    // "bash: line 1: /a b/x" keeps its spaces when it starts like a path.
    if part.starts_with(['/', '~']) && looks_like_path(part, false) {
        return Some(part.to_owned());
    }
    // "could not write config file .git/config": the last word, if a path.
    let last = part.rsplit(' ').next()?;
    looks_like_path(last, false).then(|| last.to_owned())
}

/// A plausible file name: not empty, one line, not a URL, and either path-like (a `/`, or `.`
/// or `~` first) or, when `led` (after a lead-in word), any single word.
fn looks_like_path(s: &str, led: bool) -> bool {
    if s.is_empty()
        || s.len() > 4096
        || s.contains(['\n', '\0', '<', '>', '(', ')'])
        || s.contains("://")
    {
        return false;
    }
    if s.contains('/') || s.starts_with('.') || s.starts_with('~') {
        return !s.starts_with("//") && s != "/" && s != "." && s != "..";
    }
    led && !s.contains(' ') && s.chars().any(|c| c.is_alphanumeric())
}
