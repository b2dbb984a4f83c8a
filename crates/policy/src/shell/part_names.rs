//! Which command a part found by the hand lexer ([`super::lexer`]) runs:
//! its first word, after assignments and the keywords that stand in front
//! of a command. The second opinion compares these names with the
//! grammar's, so nothing that may name a command is skipped.

/// The names of the commands one part from [`super::lexer::parse`] may run: its first
/// word after leading assignments, and after the keywords in front of a
/// command (`time -p`, `!`, `coproc`, `if`, `then`, `do`, `{`, a case
/// pattern's `a)`, a function's `f()`). Nothing is skipped that could be
/// a command: a part whose shape is not known gives its first word.
pub(super) fn command_names(part: &str) -> Vec<String> {
    let words = words(part);
    let keyword = |i: usize| {
        words
            .get(i)
            .filter(|w| w.raw == w.text)
            .map(|w| w.raw.as_str())
    };
    let mut i = 0;
    while let Some(word) = words.get(i) {
        if is_assignment(&word.raw) {
            i += 1;
            continue;
        }
        match keyword(i) {
            Some("!" | "if" | "then" | "else" | "elif" | "while" | "until" | "do" | "{") => i += 1,
            Some("time") => {
                i += 1;
                while keyword(i).is_some_and(|w| w.starts_with('-')) {
                    i += 1;
                }
            }
            // `coproc NAME { ...; }` / `coproc NAME ( ... )`, else `coproc cmd`.
            Some("coproc") => {
                let named = matches!(keyword(i + 2), Some(w) if w == "{" || w.starts_with('('));
                i += if named { 2 } else { 1 };
            }
            // `function f { ...; }`, `function f() { ...; }`.
            Some("function") => {
                i += 2;
                if keyword(i) == Some("()") {
                    i += 1;
                }
            }
            // `f() {`, `f () {`.
            Some(w) if w.ends_with("()") => i += 1,
            Some(_) if keyword(i + 1) == Some("()") => i += 2,
            // A loop's header, a test, or the end of a compound command:
            // no command (substitutions in them are parts of their own).
            Some("for" | "select" | "[[" | "]]" | "fi" | "done" | "esac" | "}") => {
                return Vec::new();
            }
            // `case WORD in PATTERN) cmd`: the command after the pattern.
            Some("case") => {
                i += 3;
                while words.get(i).is_some_and(|w| pattern_end(&w.raw).is_none()) {
                    i += 1;
                }
                let Some(word) = words.get(i) else {
                    return Vec::new();
                };
                return after_pattern(word, &words[i + 1..]);
            }
            _ => {
                // `a)`, `*) cmd` of a case whose `case` was an earlier part.
                if pattern_end(&word.raw).is_some() {
                    return after_pattern(word, &words[i + 1..]);
                }
                return vec![word.text.clone()];
            }
        }
    }
    Vec::new()
}

/// The command after a case pattern that ends in `word`.
fn after_pattern(word: &Word, rest: &[Word]) -> Vec<String> {
    let end = pattern_end(&word.raw).unwrap_or(word.raw.len());
    let tail = &word.raw[end..];
    if tail.is_empty() {
        let rest: Vec<&str> = rest.iter().map(|w| w.raw.as_str()).collect();
        command_names(&rest.join(" "))
    } else {
        let rest: Vec<&str> = std::iter::once(tail)
            .chain(rest.iter().map(|w| w.raw.as_str()))
            .collect();
        command_names(&rest.join(" "))
    }
}

/// Where a case pattern ends in `raw` (just after an unquoted `)` that no
/// `(` opened): bash reads no other unmatched `)` in a simple command.
fn pattern_end(raw: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    let mut escaped = false;
    for (i, c) in raw.char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') if depth > 0 => depth -= 1,
            (None, ')') => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// The command name of one part from [`super::lexer::parse`]: its first word (quotes
/// removed) after leading `VAR=value` assignments, keywords not skipped.
pub(super) fn first_word(part: &str) -> Option<String> {
    words(part)
        .into_iter()
        .find(|w| !is_assignment(&w.raw))
        .map(|w| w.text)
}

struct Word {
    /// As written, quotes included.
    raw: String,
    /// Quotes and escapes removed.
    text: String,
}

/// Splits one simple command into words on unquoted whitespace.
fn words(cmd: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut raw = String::new();
    let mut text = String::new();
    let mut chars = cmd.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => {
                if !raw.is_empty() {
                    out.push(Word {
                        raw: std::mem::take(&mut raw),
                        text: std::mem::take(&mut text),
                    });
                }
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            // A line continuation is removed before words are split.
            (None, '\\') | (Some('"'), '\\') if chars.peek() == Some(&'\n') => {
                chars.next();
                continue;
            }
            (None, '\\') | (Some('"'), '\\') => {
                raw.push(c);
                if let Some(next) = chars.next() {
                    raw.push(next);
                    text.push(next);
                }
                continue;
            }
            _ => text.push(c),
        }
        raw.push(c);
    }
    if !raw.is_empty() {
        out.push(Word { raw, text });
    }
    out
}

/// `NAME=value`, as written (a quoted `"A=1"` is a command name, not an
/// assignment).
fn is_assignment(raw: &str) -> bool {
    let Some((name, _)) = raw.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_words() {
        assert_eq!(
            first_word("  A=1 B=\"x y\" make -j4").as_deref(),
            Some("make")
        );
        assert_eq!(first_word("\"my tool\" --x").as_deref(), Some("my tool"));
        assert_eq!(first_word("\"A=1\" x").as_deref(), Some("A=1"));
        assert_eq!(first_word("A=1"), None);
        assert_eq!(first_word("A=1 \\\n  y").as_deref(), Some("y"));
        assert_eq!(first_word("ma\\\nke").as_deref(), Some("make"));
    }

    #[test]
    fn keywords_in_front_of_a_command_are_skipped() {
        let names = |p: &str| command_names(p);
        assert_eq!(names("time -p touch x"), ["touch"]);
        assert_eq!(names("! time A=1 touch x"), ["touch"]);
        assert_eq!(names("coproc touch x"), ["touch"]);
        assert_eq!(names("coproc C { touch x"), ["touch"]);
        assert_eq!(names("case a in a) touch x"), ["touch"]);
        assert_eq!(names("case a in b | a)touch x"), ["touch"]);
        assert_eq!(names("*) rm y"), ["rm"]);
        assert_eq!(names("f() { touch x"), ["touch"]);
        assert_eq!(names("function f { touch x"), ["touch"]);
        assert_eq!(names("then rm x"), ["rm"]);
        assert!(names("for f in *").is_empty());
        assert!(names("esac").is_empty());
        // Quoted, a keyword is a command name.
        assert_eq!(names("'time' x"), ["time"]);
        // A substitution's `)` is no case pattern's end.
        assert_eq!(names("$(echo rm) x"), ["$(echo"]);
    }
}
