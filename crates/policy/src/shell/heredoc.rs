//! Here-documents, read by bash's rules and not only the grammar's.
//!
//! tree-sitter-bash and bash disagree on where here-documents start and
//! end: the grammar reads the delimiter word past an operator (`<<cat;`
//! has the delimiter `cat;` for the grammar, `cat` for bash), ends a body
//! at a line that merely starts with the delimiter (`cat;echo ...`), and
//! knows nothing of a backslash-newline joining two body lines. Whatever
//! runs in the lines the two read differently goes unseen, so every
//! here-document is checked against bash's rules here: the delimiter word
//! as bash reads it must be the grammar's, the delimiter line must be a
//! whole line, and the hand lexer (which follows bash's rules, see
//! [`super::lexer`]) must find the same delimiter lines
//! ([`super::second_opinion`]). Any disagreement makes the analysis
//! unproven.

use tree_sitter::Node;

use super::analysis::Walker;
use super::lexer::HeredocSpan;

/// The delimiter word of a here-document, as bash reads it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct DelimiterWord {
    /// Byte range of the word as written.
    pub start: usize,
    pub end: usize,
    /// After quote removal: the line that ends the body.
    pub delimiter: String,
    /// Any quoting in the word: the body is not expanded.
    pub quoted: bool,
}

/// Reads the delimiter word after a `<<`/`<<-` operator ending at `from`:
/// blanks, then one shell word up to the first unquoted metacharacter
/// (blank, newline, `;`, `&`, `|`, `<`, `>`, `(`, `)`). What the analysis
/// does not follow (substitutions, line continuations, unclosed quotes) is
/// an error naming it.
pub(super) fn delimiter_word(src: &str, from: usize) -> Result<DelimiterWord, &'static str> {
    let rest = src.get(from..).unwrap_or("");
    let start = from + (rest.len() - rest.trim_start_matches([' ', '\t']).len());
    let mut chars = src[start..].char_indices().peekable();
    let mut delimiter = String::new();
    let mut quoted = false;
    let mut end = src.len();
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                end = start + i;
                break;
            }
            '\\' => {
                quoted = true;
                match chars.next() {
                    Some((_, '\n')) | None => {
                        return Err("a line continuation in a here-document's delimiter");
                    }
                    Some((_, next)) => delimiter.push(next),
                }
            }
            '\'' => {
                quoted = true;
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, ch)) => delimiter.push(ch),
                        None => return Err("an unclosed quote in a here-document's delimiter"),
                    }
                }
            }
            '"' => {
                quoted = true;
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, ch @ ('"' | '\\'))) => delimiter.push(ch),
                            Some((_, ch)) if ch != '\n' && ch != '$' && ch != '`' => {
                                delimiter.push('\\');
                                delimiter.push(ch);
                            }
                            _ => {
                                return Err(
                                    "an escape the analysis does not follow in a here-document's delimiter",
                                );
                            }
                        },
                        Some((_, '$' | '`')) => {
                            return Err("a `$` or backtick in a here-document's delimiter");
                        }
                        Some((_, ch)) => delimiter.push(ch),
                        None => return Err("an unclosed quote in a here-document's delimiter"),
                    }
                }
            }
            '$' | '`' => return Err("a `$` or backtick in a here-document's delimiter"),
            _ => delimiter.push(c),
        }
    }
    if end == start {
        return Err("a here-document without a delimiter word");
    }
    Ok(DelimiterWord {
        start,
        end,
        delimiter,
        quoted,
    })
}

/// Whether `sub`, the `$(...)`, `<(...)` or `>(...)` nearest around
/// `heredoc`, has more than blanks after the here-document: on the rest
/// of its `<<` line or after its delimiter line. Bash 5.2 runs such a
/// substitution from a copy of it that it prints from its own parse, and
/// that copy joins the commands after a here-document: `$(t <<EOF⏎EOF⏎e;f)`
/// runs `e f`, and `e;case x in(a)esac` runs `a` (fuzz seed 35; blanks
/// are bash's: space, tab, newline). `$(cat <<'EOF' ... EOF⏎)` is read as
/// written.
fn runs_after_the_heredoc(src: &str, heredoc: Node<'_>, sub: Node<'_>) -> bool {
    let blank = |from: usize, to: usize| {
        src.get(from..to.max(from))
            .unwrap_or("")
            .bytes()
            .all(|b| matches!(b, b' ' | b'\t' | b'\n'))
    };
    let mut cursor = heredoc.walk();
    let word_end = heredoc
        .children(&mut cursor)
        .find(|c| c.kind() == "heredoc_start")
        .map_or(heredoc.start_byte(), |w| w.end_byte());
    let line_end = src[word_end..]
        .find('\n')
        .map_or(src.len(), |p| word_end + p);
    // The substitution's closing `)`.
    let close = sub.end_byte().saturating_sub(1);
    !blank(word_end, line_end.min(close)) || !blank(heredoc.end_byte(), close)
}

impl Walker<'_> {
    /// Checks one `heredoc_redirect` node against bash's rules and records
    /// where the grammar reads its body, for [`super::second_opinion`].
    pub(super) fn heredoc(&mut self, node: Node<'_>) {
        let mut in_backticks = false;
        let mut in_substitution = false;
        let mut nearest = None;
        let mut up = node.parent();
        while let Some(n) = up {
            if matches!(n.kind(), "command_substitution" | "process_substitution") {
                in_substitution |= n.kind() == "command_substitution";
                in_backticks |= self.node_text(n).starts_with('`');
                nearest.get_or_insert(n);
            }
            up = n.parent();
        }
        if in_backticks {
            // Bash finds the closing backtick before it reads the
            // here-document, so a backtick in the body ends the substitution.
            self.unproven("a here-document inside a backtick substitution");
        }
        if let Some(sub) = nearest
            && !self.node_text(sub).starts_with('`')
            && runs_after_the_heredoc(self.src(), node, sub)
        {
            self.unproven("a command after a here-document inside `$(...)`");
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let operator = children
            .iter()
            .find(|c| !c.is_named() && matches!(self.node_text(**c), "<<" | "<<-"));
        let start = children.iter().find(|c| c.kind() == "heredoc_start");
        let end = children.iter().find(|c| c.kind() == "heredoc_end");
        let body_node = children.iter().find(|c| c.kind() == "heredoc_body");
        let (Some(operator), Some(start)) = (operator, start) else {
            self.unproven("a here-document without a delimiter the grammar found");
            return;
        };
        let strips_tabs = self.node_text(*operator) == "<<-";
        let word = match delimiter_word(self.src(), operator.end_byte()) {
            Ok(word) => word,
            Err(why) => {
                self.unproven(why);
                return;
            }
        };
        if (word.start, word.end) != (start.start_byte(), start.end_byte()) {
            // `<<cat;`: bash's delimiter is `cat`, the grammar's `cat;`.
            self.unproven(
                "the grammar reads a here-document's delimiter word differently from bash",
            );
        }
        let Some(end) = end else {
            // The body runs to the end of the text; the lexer must agree.
            self.heredocs.push(HeredocSpan {
                body_start: body_node.map_or(self.src().len(), |b| b.start_byte()),
                end_line: None,
            });
            return;
        };
        let delimiter = word.delimiter.as_str();
        let line_start = self.line_start(end.start_byte());
        let indent = self.src_between(line_start, end.start_byte());
        let after = self.src_between(end.end_byte(), end.end_byte() + 1);
        let end_text = self.node_text(*end);
        let end_text = if strips_tabs {
            end_text.trim_start_matches('\t')
        } else {
            end_text
        };
        let indented = !(indent.is_empty() || strips_tabs && indent.chars().all(|c| c == '\t'));
        // Bash needs the whole line to be the delimiter: `cat;echo '$(x)'`
        // is a body line of a `<<cat` document, not its end and a command.
        if indented || end_text != delimiter || !(after.is_empty() || after == "\n") {
            self.unproven("a here-document ends at a line that is not its delimiter");
        }
        let mut body_start = body_node.map_or(line_start, |b| b.start_byte());
        // With `<<-` the grammar's body starts after the first line's tabs.
        let first_line = self.line_start(body_start);
        if strips_tabs
            && self
                .src_between(first_line, body_start)
                .chars()
                .all(|c| c == '\t')
        {
            body_start = first_line;
        }
        self.heredocs.push(HeredocSpan {
            body_start,
            end_line: Some((line_start, end.end_byte())),
        });
        let body = self.src_between(start.end_byte(), line_start);
        if !word.quoted && body.contains("\\\n") {
            // Bash joins the lines around a backslash-newline before it
            // compares a line with the delimiter (`EO\<newline>F` ends a
            // `<<EOF` body).
            self.unproven("a line continuation in a here-document's body");
        }
        let mut lines = body.split('\n');
        lines.next(); // the rest of the `<<EOF` line
        // Inside `$(...)` bash also ends it at a line that starts with the
        // delimiter (`EOFe)` ends the body and runs `e`).
        if lines.any(|l| {
            let l = l.trim_start_matches('\t');
            l == delimiter || (in_substitution && l.starts_with(delimiter))
        }) {
            self.unproven(
                "a here-document's delimiter line inside what the grammar read as its body",
            );
        }
        if in_substitution && body.contains('`') {
            self.unproven("a backtick in a here-document inside a command substitution");
        }
        if !word.quoted && body.contains('`') {
            // The grammar reads no substitution in `` `...` `` in a body.
            let seen = children.iter().any(|c| {
                let mut cursor = c.walk();
                c.kind() == "heredoc_body"
                    && c.children(&mut cursor).any(|s| {
                        s.kind() == "command_substitution" && self.node_text(s).starts_with('`')
                    })
            });
            if !seen {
                self.unproven(
                    "a backtick substitution in a here-document the grammar read as text",
                );
            }
        }
        if !word.quoted && body.contains("coproc") {
            self.unproven("`coproc` in a here-document is not analysed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(src: &str) -> Result<(String, bool, &str), &'static str> {
        let from = src.find("<<").unwrap() + 2;
        let from = from + usize::from(src[from..].starts_with('-'));
        delimiter_word(src, from).map(|w| (w.delimiter, w.quoted, &src[w.start..w.end]))
    }

    #[test]
    fn the_delimiter_word_ends_at_an_operator() {
        assert_eq!(word("cat <<cat;"), Ok(("cat".into(), false, "cat")));
        assert_eq!(word("cat <<cat&"), Ok(("cat".into(), false, "cat")));
        assert_eq!(word("cat <<cat|cat"), Ok(("cat".into(), false, "cat")));
        assert_eq!(word("cat <<  EOF>f"), Ok(("EOF".into(), false, "EOF")));
        assert_eq!(word("cat <<-EOF)"), Ok(("EOF".into(), false, "EOF")));
    }

    #[test]
    fn quotes_are_removed_and_make_the_body_literal() {
        assert_eq!(word("cat <<'E;F'"), Ok(("E;F".into(), true, "'E;F'")));
        assert_eq!(word("cat <<E\"O\"F x"), Ok(("EOF".into(), true, "E\"O\"F")));
        assert_eq!(
            word("cat <<\"E\\\"F\""),
            Ok(("E\"F".into(), true, "\"E\\\"F\""))
        );
        assert_eq!(word("cat <<\\EOF"), Ok(("EOF".into(), true, "\\EOF")));
    }

    #[test]
    fn what_is_not_followed_is_an_error() {
        assert!(word("cat <<$x").is_err());
        assert!(word("cat <<\"$x\"").is_err());
        assert!(word("cat <<`x`").is_err());
        assert!(word("cat <<'EOF").is_err());
        assert!(word("cat << \\\nEOF").is_err());
        assert!(word("cat <<;").is_err());
        assert!(word("cat <<").is_err());
    }
}
