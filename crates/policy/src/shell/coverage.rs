//! Text the grammar read past. tree-sitter-bash treats some text as
//! "extras" (blanks and line continuations) where bash reads a word:
//! `""\ >/` runs the command ` `, `x=\<newline> e` runs `e`, `x=$ r` runs
//! `r`. A syntax node that skips text other than blanks, or a word that
//! spans a blank, means the grammar's reading is not bash's.

use tree_sitter::Node;

/// Nodes whose parts must touch: one shell word (or an assignment, which
/// is one word) cannot contain an unquoted blank.
const ONE_WORD: &[&str] = &["variable_assignment", "concatenation", "command_name"];

/// Nodes whose parts are separated by blanks only (their other separators,
/// operators, are children of their own).
const BLANK_SEPARATED: &[&str] = &[
    "command",
    "redirected_statement",
    "file_redirect",
    "declaration_command",
    "unset_command",
];

/// Nodes whose parts are separated by blanks and newlines.
const LINE_SEPARATED: &[&str] = &[
    "program",
    "list",
    "pipeline",
    "subshell",
    "compound_statement",
    "do_group",
];

/// Whether `node`'s children leave text of `src` uncovered that is more
/// than blanks: the grammar skipped part of a command.
pub(super) fn skips_text(node: Node<'_>, src: &str) -> bool {
    let kind = node.kind();
    let one_word = ONE_WORD.contains(&kind);
    let lines = LINE_SEPARATED.contains(&kind);
    if !one_word && !lines && !BLANK_SEPARATED.contains(&kind) {
        return false;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    // A here-document's body comes after the rest of its line, which
    // belongs to other nodes: the gaps of such a node are not skipped text.
    if children.iter().any(|c| c.kind() == "heredoc_redirect") {
        return false;
    }
    let mut at = node.start_byte();
    let ends = children
        .iter()
        .map(|c| (c.start_byte(), c.end_byte()))
        .chain([(node.end_byte(), node.end_byte())]);
    for (start, end) in ends {
        let gap = src.get(at..start.max(at)).unwrap_or("");
        let skipped = if one_word {
            !gap.is_empty()
        } else {
            !gap.replace("\\\n", "")
                .chars()
                .all(|c| c == ' ' || c == '\t' || (lines && c == '\n'))
        };
        if skipped {
            return true;
        }
        at = at.max(end);
    }
    false
}

/// Whether bash reads the `#` at `at` as the start of a comment: only at
/// the start of a word (`c \ #x` passes ` #x` to `c`).
pub(super) fn starts_a_comment(src: &str, at: usize) -> bool {
    let before = &src[..at];
    let Some(prev) = before.chars().next_back() else {
        return true;
    };
    match prev {
        ' ' | '\t' | '\n' => {
            let rest = &before[..before.len() - 1];
            let backslashes = rest.len() - rest.trim_end_matches('\\').len();
            backslashes.is_multiple_of(2)
        }
        ';' | '&' | '|' | '(' | ')' | '<' | '>' => true,
        _ => false,
    }
}

/// Whether a word's text has a blank that no backslash quotes (a word
/// node must not: bash splits words at blanks outside quotes).
pub(super) fn spans_a_blank(text: &str) -> bool {
    let mut escaped = false;
    for c in text.chars() {
        match c {
            ' ' | '\t' | '\n' if !escaped => return true,
            '\\' => escaped = !escaped,
            _ => escaped = false,
        }
    }
    false
}

/// Whether the grammar's `$'...'` token `text` ends where bash's does: at
/// the first `'` no backslash escapes. The grammar's pattern lets `\\'`
/// escape the quote after an escaped backslash, so `x=$'\\' touch f #'`
/// was one assignment to it and runs `touch` in bash (fuzz seed 33).
pub(super) fn ansi_c_string_ends_like_bash(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("$'") else {
        return false;
    };
    let mut bytes = inner.bytes().enumerate();
    while let Some((i, b)) = bytes.next() {
        match b {
            b'\\' => {
                bytes.next();
            }
            b'\'' => return i + 1 == inner.len(),
            _ => {}
        }
    }
    false
}

/// Whether the `[` or `[[` (`opener`) the grammar took for a test's
/// opener at `at` is a word of its own, as bash needs: `[""\\ =]]` is one
/// word, the glob command name `[ =]]`, not the test `[` (fuzz seed 33).
/// A newline ends the command `[` but not the keyword `[[`.
pub(super) fn opens_a_test(src: &str, at: usize, opener: &str) -> bool {
    match src.as_bytes().get(at + opener.len()) {
        Some(b' ' | b'\t') => true,
        Some(b'\n') => opener == "[[",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{ansi_c_string_ends_like_bash, opens_a_test, spans_a_blank, starts_a_comment};

    #[test]
    fn ansi_c_strings_end_at_the_first_unescaped_quote() {
        assert!(ansi_c_string_ends_like_bash("$'a'"));
        assert!(ansi_c_string_ends_like_bash("$'\\''"));
        assert!(ansi_c_string_ends_like_bash("$'\\\\'"));
        assert!(!ansi_c_string_ends_like_bash("$'\\\\' \\'"));
        assert!(!ansi_c_string_ends_like_bash("$'\\\\' touch f #'"));
        assert!(!ansi_c_string_ends_like_bash("$'a"));
    }

    #[test]
    fn test_openers_are_words() {
        assert!(opens_a_test("[ -f x ]", 0, "["));
        assert!(opens_a_test("a; [[\nx ]]", 3, "[["));
        assert!(!opens_a_test("[\n a ]", 0, "["));
        assert!(!opens_a_test("[\"\"\\ =]]", 0, "["));
        assert!(!opens_a_test("[[x ]]", 0, "[["));
    }

    #[test]
    fn blanks_in_words() {
        assert!(spans_a_blank("$ r"));
        assert!(spans_a_blank("\\\n e"));
        assert!(!spans_a_blank("a\\ b"));
        assert!(!spans_a_blank("ab"));
    }

    #[test]
    fn comments_start_words() {
        assert!(starts_a_comment("a #x", 2));
        assert!(starts_a_comment("#x", 0));
        assert!(starts_a_comment("a;#x", 2));
        assert!(starts_a_comment("a \\\\ #x", 5));
        assert!(!starts_a_comment("a \\ #x", 4));
        assert!(!starts_a_comment("a#x", 1));
    }
}
