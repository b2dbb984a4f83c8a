//! Search-hit markers. Snippets mark matched words with two control
//! characters that cannot occur in stored text's meaning, so a UI renders
//! them as text nodes (never as HTML) by splitting on them.

use serde::{Deserialize, Serialize};

/// Starts a matched word (U+0002, START OF TEXT).
pub const MARK_START: char = '\u{2}';
/// Ends a matched word (U+0003, END OF TEXT).
pub const MARK_END: char = '\u{3}';

/// A piece of a snippet: matched or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct Span {
    pub text: String,
    pub hit: bool,
}

/// Splits a marked snippet into spans. Stray or unbalanced markers are
/// dropped, never shown.
pub fn spans(snippet: &str) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    let mut hit = false;
    let mut current = String::new();
    let flush = |text: &mut String, hit: bool, out: &mut Vec<Span>| {
        if !text.is_empty() {
            out.push(Span {
                text: std::mem::take(text),
                hit,
            });
        }
    };
    for c in snippet.chars() {
        match c {
            MARK_START => {
                flush(&mut current, hit, &mut out);
                hit = true;
            }
            MARK_END => {
                flush(&mut current, hit, &mut out);
                hit = false;
            }
            c => current.push(c),
        }
    }
    flush(&mut current, hit, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_marked_words_and_keeps_markup_as_text() {
        let s = format!("a <b>{MARK_START}flaky{MARK_END} test{MARK_END}");
        assert_eq!(
            spans(&s),
            vec![
                Span {
                    text: "a <b>".into(),
                    hit: false
                },
                Span {
                    text: "flaky".into(),
                    hit: true
                },
                Span {
                    text: " test".into(),
                    hit: false
                },
            ]
        );
    }
}
