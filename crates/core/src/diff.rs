//! Line diffs of a file edit, for confirmations and results: a unified diff
//! in the style of `git diff` and an aligned side-by-side model
//! ([`gd_protocol::SideBySideDiff`]) with word-level highlights.
//!
//! Lines are compared without their endings, so a file that only differs in
//! CRLF versus LF line endings shows no change. A missing newline at the end
//! of the file is a difference (as in Git).

use std::time::Duration;

use gd_protocol::{DiffHunk, DiffLine, DiffRow, DiffRowKind, DiffSpan, SideBySideDiff};
use similar::{Algorithm, DiffOp, DiffTag};

/// Changed line pairs longer than this (together) get no word-level diff.
const MAX_WORD_DIFF_BYTES: usize = 20_000;

/// Lines of unchanged context around each change.
pub const CONTEXT_LINES: usize = 3;

/// How long the line diff may search for a minimal diff before settling for
/// a coarser one (pathological inputs).
pub(crate) const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// Both views of one edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// `--- a/name` / `+++ b/name` headers and hunks with 3 lines of context;
    /// empty when nothing changed (headers only for a new empty file).
    pub unified: String,
    pub side_by_side: SideBySideDiff,
}

impl FileDiff {
    pub fn added(&self) -> u32 {
        self.side_by_side.added
    }

    pub fn removed(&self) -> u32 {
        self.side_by_side.removed
    }
}

/// Diffs `original` (`None` for a file that does not exist yet) against
/// `proposed`. `file_name` is used in the unified diff headers.
pub fn diff_file(original: Option<&str>, proposed: &str, file_name: &str) -> FileDiff {
    let old = split_lines(original.unwrap_or(""));
    let new = split_lines(proposed);
    let ops = line_ops(&old, &new);
    let (added, removed) = count(&ops);
    let groups = if added == 0 && removed == 0 {
        Vec::new()
    } else {
        similar::group_diff_ops(ops, CONTEXT_LINES)
    };
    let mut unified = String::new();
    if original.is_none() || !groups.is_empty() {
        let from = if original.is_some() {
            format!("a/{file_name}")
        } else {
            "/dev/null".to_owned()
        };
        unified.push_str(&format!("--- {from}\n+++ b/{file_name}\n"));
    }
    let mut hunks = Vec::with_capacity(groups.len());
    for group in &groups {
        write_unified_hunk(&mut unified, group, &old, &new);
        hunks.push(side_by_side_hunk(group, &old, &new));
    }
    FileDiff {
        unified,
        side_by_side: SideBySideDiff {
            hunks,
            added,
            removed,
        },
    }
}

/// The unified diff alone.
pub fn unified_diff(original: Option<&str>, proposed: &str, file_name: &str) -> String {
    diff_file(original, proposed, file_name).unified
}

/// The side-by-side model alone.
pub fn side_by_side(original: Option<&str>, proposed: &str) -> SideBySideDiff {
    diff_file(original, proposed, "file").side_by_side
}

/// Lines added and removed, as `(added, removed)`.
pub fn diff_stat(original: Option<&str>, proposed: &str) -> (u32, u32) {
    let old = split_lines(original.unwrap_or(""));
    let new = split_lines(proposed);
    count(&line_ops(&old, &new))
}

/// One line without its ending. `newline` is false only for a last line
/// that has no line ending, which makes it differ from the same text with
/// one (as in Git).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Line<'a> {
    text: &'a str,
    newline: bool,
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    text.split_inclusive('\n')
        .map(|piece| match piece.strip_suffix('\n') {
            Some(body) => Line {
                text: body.strip_suffix('\r').unwrap_or(body),
                newline: true,
            },
            None => Line {
                text: piece,
                newline: false,
            },
        })
        .collect()
}

fn line_ops(old: &[Line<'_>], new: &[Line<'_>]) -> Vec<DiffOp> {
    let deadline = std::time::Instant::now() + DIFF_TIMEOUT;
    similar::capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline))
}

fn count(ops: &[DiffOp]) -> (u32, u32) {
    let mut added = 0usize;
    let mut removed = 0usize;
    for op in ops {
        if op.tag() != DiffTag::Equal {
            added += op.new_range().len();
            removed += op.old_range().len();
        }
    }
    (to_u32(added), to_u32(removed))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The line ranges a group of ops covers on each side.
fn group_ranges(group: &[DiffOp]) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    let first = group.first().expect("groups are never empty");
    let last = group.last().expect("groups are never empty");
    (
        first.old_range().start..last.old_range().end,
        first.new_range().start..last.new_range().end,
    )
}

/// `start` as a 1-based line number, or the line before for an empty range
/// (`0` at the start of the file), as in unified diff headers.
fn hunk_start(range: &std::ops::Range<usize>) -> usize {
    if range.is_empty() {
        range.start
    } else {
        range.start + 1
    }
}

fn write_unified_hunk(out: &mut String, group: &[DiffOp], old: &[Line<'_>], new: &[Line<'_>]) {
    let (old_range, new_range) = group_ranges(group);
    let header_range = |range: &std::ops::Range<usize>| match range.len() {
        1 => format!("{}", hunk_start(range)),
        len => format!("{},{len}", hunk_start(range)),
    };
    out.push_str(&format!(
        "@@ -{} +{} @@\n",
        header_range(&old_range),
        header_range(&new_range)
    ));
    let mut push = |prefix: char, line: &Line<'_>| {
        out.push(prefix);
        out.push_str(line.text);
        out.push('\n');
        if !line.newline {
            out.push_str("\\ No newline at end of file\n");
        }
    };
    for op in group {
        match op.tag() {
            DiffTag::Equal => old[op.old_range()].iter().for_each(|l| push(' ', l)),
            _ => {
                old[op.old_range()].iter().for_each(|l| push('-', l));
                new[op.new_range()].iter().for_each(|l| push('+', l));
            }
        }
    }
}

fn side_by_side_hunk(group: &[DiffOp], old: &[Line<'_>], new: &[Line<'_>]) -> DiffHunk {
    let (old_range, new_range) = group_ranges(group);
    let mut rows = Vec::new();
    // Removed and added lines of the current run of changes, paired up when
    // the run ends.
    let mut removed: Vec<usize> = Vec::new();
    let mut added: Vec<usize> = Vec::new();
    for op in group {
        if op.tag() == DiffTag::Equal {
            flush_changes(&mut rows, &mut removed, &mut added, old, new);
            for (i, j) in op.old_range().zip(op.new_range()) {
                rows.push(DiffRow {
                    kind: DiffRowKind::Equal,
                    left: Some(plain_line(i, &old[i])),
                    right: Some(plain_line(j, &new[j])),
                });
            }
        } else {
            removed.extend(op.old_range());
            added.extend(op.new_range());
        }
    }
    flush_changes(&mut rows, &mut removed, &mut added, old, new);
    DiffHunk {
        old_start: to_u32(hunk_start(&old_range)),
        old_lines: to_u32(old_range.len()),
        new_start: to_u32(hunk_start(&new_range)),
        new_lines: to_u32(new_range.len()),
        rows,
    }
}

/// Pairs a run of removed lines with the added lines that replace them, row
/// by row; the lines left over on the longer side get rows of their own.
fn flush_changes(
    rows: &mut Vec<DiffRow>,
    removed: &mut Vec<usize>,
    added: &mut Vec<usize>,
    old: &[Line<'_>],
    new: &[Line<'_>],
) {
    let paired = removed.len().min(added.len());
    for (&i, &j) in removed.iter().zip(added.iter()) {
        let (left_spans, right_spans) = word_spans(old[i].text, new[j].text);
        rows.push(DiffRow {
            kind: DiffRowKind::Changed,
            left: Some(DiffLine {
                number: to_u32(i + 1),
                text: old[i].text.to_owned(),
                spans: left_spans,
            }),
            right: Some(DiffLine {
                number: to_u32(j + 1),
                text: new[j].text.to_owned(),
                spans: right_spans,
            }),
        });
    }
    for &i in &removed[paired..] {
        rows.push(DiffRow {
            kind: DiffRowKind::Removed,
            left: Some(plain_line(i, &old[i])),
            right: None,
        });
    }
    for &j in &added[paired..] {
        rows.push(DiffRow {
            kind: DiffRowKind::Added,
            left: None,
            right: Some(plain_line(j, &new[j])),
        });
    }
    removed.clear();
    added.clear();
}

fn plain_line(index: usize, line: &Line<'_>) -> DiffLine {
    DiffLine {
        number: to_u32(index + 1),
        text: line.text.to_owned(),
        spans: Vec::new(),
    }
}

/// Word-level comparison of a changed line pair: spans covering each line
/// from start to end (byte offsets, on character boundaries), marking the
/// parts that differ. Words are runs of letters, digits and `_`; runs of
/// whitespace and single punctuation characters are tokens of their own.
pub fn word_spans(old: &str, new: &str) -> (Vec<DiffSpan>, Vec<DiffSpan>) {
    // Very long lines (minified code, data) are marked changed as a whole.
    if old.len() + new.len() > MAX_WORD_DIFF_BYTES {
        let whole = |line: &str| {
            if line.is_empty() {
                Vec::new()
            } else {
                vec![DiffSpan {
                    start: 0,
                    end: to_u32(line.len()),
                    changed: true,
                }]
            }
        };
        return (whole(old), whole(new));
    }
    let old_tokens = tokenize(old);
    let new_tokens = tokenize(new);
    let old_texts: Vec<&str> = old_tokens.iter().map(|r| &old[r.clone()]).collect();
    let new_texts: Vec<&str> = new_tokens.iter().map(|r| &new[r.clone()]).collect();
    let deadline = std::time::Instant::now() + DIFF_TIMEOUT;
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &old_texts,
        &new_texts,
        Some(deadline),
    );
    // An unchanged run of whitespace between two changes reads better as
    // part of one changed region.
    let changed: Vec<bool> = ops
        .iter()
        .enumerate()
        .map(|(k, op)| {
            if op.tag() != DiffTag::Equal {
                return true;
            }
            let between_changes = k > 0 && k + 1 < ops.len();
            between_changes
                && old_texts[op.old_range()]
                    .iter()
                    .all(|t| t.chars().all(char::is_whitespace))
        })
        .collect();
    let spans_for = |tokens: &[std::ops::Range<usize>],
                     side_range: fn(&DiffOp) -> std::ops::Range<usize>| {
        let mut spans: Vec<DiffSpan> = Vec::new();
        for (op, &is_changed) in ops.iter().zip(&changed) {
            let range: std::ops::Range<usize> = side_range(op);
            if range.is_empty() {
                continue;
            }
            let start = tokens[range.start].start;
            let end = tokens[range.end - 1].end;
            match spans.last_mut() {
                Some(last) if last.changed == is_changed && last.end as usize == start => {
                    last.end = to_u32(end);
                }
                _ => spans.push(DiffSpan {
                    start: to_u32(start),
                    end: to_u32(end),
                    changed: is_changed,
                }),
            }
        }
        spans
    };
    (
        spans_for(&old_tokens, DiffOp::old_range),
        spans_for(&new_tokens, DiffOp::new_range),
    )
}

/// Byte ranges of the tokens of `line`.
fn tokenize(line: &str) -> Vec<std::ops::Range<usize>> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Other
        }
    };
    let mut tokens: Vec<std::ops::Range<usize>> = Vec::new();
    let mut previous: Option<Class> = None;
    for (i, c) in line.char_indices() {
        let current = class(c);
        let end = i + c.len_utf8();
        match tokens.last_mut() {
            Some(last) if previous == Some(current) && current != Class::Other => last.end = end,
            _ => tokens.push(i..end),
        }
        previous = Some(current);
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn span(start: u32, end: u32, changed: bool) -> DiffSpan {
        DiffSpan {
            start,
            end,
            changed,
        }
    }

    fn kinds(diff: &SideBySideDiff) -> Vec<Vec<DiffRowKind>> {
        diff.hunks
            .iter()
            .map(|h| h.rows.iter().map(|r| r.kind).collect())
            .collect()
    }

    #[test]
    fn unified_diff_has_git_headers_and_three_lines_of_context() {
        let original: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let proposed = original.replace("line 10\n", "line ten\n");
        let diff = diff_file(Some(&original), &proposed, "src/x.txt");
        assert_eq!(
            diff.unified,
            "--- a/src/x.txt\n+++ b/src/x.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13\n"
        );
        assert_eq!((diff.added(), diff.removed()), (1, 1));
        let hunk = &diff.side_by_side.hunks[0];
        assert_eq!(
            (
                hunk.old_start,
                hunk.old_lines,
                hunk.new_start,
                hunk.new_lines
            ),
            (7, 7, 7, 7)
        );
        assert_eq!(
            kinds(&diff.side_by_side),
            vec![vec![
                DiffRowKind::Equal,
                DiffRowKind::Equal,
                DiffRowKind::Equal,
                DiffRowKind::Changed,
                DiffRowKind::Equal,
                DiffRowKind::Equal,
                DiffRowKind::Equal,
            ]]
        );
        let changed = &hunk.rows[3];
        let left = changed.left.as_ref().unwrap();
        let right = changed.right.as_ref().unwrap();
        assert_eq!((left.number, left.text.as_str()), (10, "line 10"));
        assert_eq!((right.number, right.text.as_str()), (10, "line ten"));
        assert_eq!(left.spans, vec![span(0, 5, false), span(5, 7, true)]);
        assert_eq!(right.spans, vec![span(0, 5, false), span(5, 8, true)]);
        // Context rows carry no spans.
        assert!(hunk.rows[0].left.as_ref().unwrap().spans.is_empty());
    }

    #[test]
    fn distant_changes_make_separate_hunks() {
        let mut lines: Vec<String> = (1..=30).map(|i| format!("{i}\n")).collect();
        let original = lines.concat();
        lines[1] = "two\n".to_owned();
        lines.remove(27);
        let proposed = lines.concat();
        let diff = diff_file(Some(&original), &proposed, "n");
        let headers: Vec<&str> = diff
            .unified
            .lines()
            .filter(|l| l.starts_with("@@"))
            .collect();
        assert_eq!(headers, vec!["@@ -1,5 +1,5 @@", "@@ -25,6 +25,5 @@"]);
        assert_eq!(diff.side_by_side.hunks.len(), 2);
        assert_eq!((diff.added(), diff.removed()), (1, 2));
        let second = &diff.side_by_side.hunks[1];
        let removed: Vec<&DiffRow> = second
            .rows
            .iter()
            .filter(|r| r.kind == DiffRowKind::Removed)
            .collect();
        assert_eq!(removed.len(), 1);
        assert_eq!(removed[0].left.as_ref().unwrap().number, 28);
        assert!(removed[0].right.is_none());
    }

    #[test]
    fn removed_block_is_paired_with_added_block_and_leftovers_get_own_rows() {
        let original = "keep\nold a\nold b\nold c\nend\n";
        let proposed = "keep\nnew a\nnew b\nend\n";
        let diff = side_by_side(Some(original), proposed);
        assert_eq!(
            kinds(&diff),
            vec![vec![
                DiffRowKind::Equal,
                DiffRowKind::Changed,
                DiffRowKind::Changed,
                DiffRowKind::Removed,
                DiffRowKind::Equal,
            ]]
        );
        let rows = &diff.hunks[0].rows;
        assert_eq!(rows[1].left.as_ref().unwrap().text, "old a");
        assert_eq!(rows[1].right.as_ref().unwrap().text, "new a");
        assert_eq!(rows[3].left.as_ref().unwrap().text, "old c");
        assert_eq!(rows[4].left.as_ref().unwrap().number, 5);
        assert_eq!(rows[4].right.as_ref().unwrap().number, 4);

        let grown = side_by_side(Some("a\nb\n"), "a\nB\nC\nD\n");
        assert_eq!(
            kinds(&grown),
            vec![vec![
                DiffRowKind::Equal,
                DiffRowKind::Changed,
                DiffRowKind::Added,
                DiffRowKind::Added,
            ]]
        );
        assert_eq!((grown.added, grown.removed), (3, 1));
    }

    #[test]
    fn new_file_diffs_against_dev_null() {
        let diff = diff_file(None, "one\ntwo\n", "new.rs");
        assert_eq!(
            diff.unified,
            "--- /dev/null\n+++ b/new.rs\n@@ -0,0 +1,2 @@\n+one\n+two\n"
        );
        let hunk = &diff.side_by_side.hunks[0];
        assert_eq!(
            (
                hunk.old_start,
                hunk.old_lines,
                hunk.new_start,
                hunk.new_lines
            ),
            (0, 0, 1, 2)
        );
        assert!(hunk.rows.iter().all(|r| r.kind == DiffRowKind::Added));
        assert_eq!((diff.added(), diff.removed()), (2, 0));

        let empty = diff_file(None, "", "empty.txt");
        assert_eq!(empty.unified, "--- /dev/null\n+++ b/empty.txt\n");
        assert!(empty.side_by_side.hunks.is_empty());
    }

    #[test]
    fn emptying_a_file_removes_every_line() {
        let diff = diff_file(Some("a\nb\nc\n"), "", "f");
        assert_eq!(
            diff.unified,
            "--- a/f\n+++ b/f\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n"
        );
        assert_eq!((diff.added(), diff.removed()), (0, 3));
        assert!(
            diff.side_by_side.hunks[0]
                .rows
                .iter()
                .all(|r| r.kind == DiffRowKind::Removed && r.right.is_none())
        );
    }

    #[test]
    fn identical_texts_and_line_endings_only_changes_show_nothing() {
        let diff = diff_file(Some("a\r\nb\r\n"), "a\nb\n", "f");
        assert_eq!(diff.unified, "");
        assert_eq!(diff.side_by_side, SideBySideDiff::default());
        assert_eq!(diff_stat(Some("same\n"), "same\n"), (0, 0));
        // A CRLF file edited in one line: only that line differs, and the
        // texts carry no '\r'.
        let diff = diff_file(Some("a\r\nb\r\nc\r\n"), "a\nB\nc\n", "f");
        assert_eq!(
            diff.unified,
            "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let diff = diff_file(Some("a\nb"), "a\nb\n", "f");
        assert_eq!(
            diff.unified,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
        assert_eq!(diff_stat(Some("a\nb"), "a\nc"), (1, 1));
    }

    #[test]
    fn word_spans_use_byte_offsets_of_multibyte_text() {
        // "é" and "ü" are 2 bytes, "日本" 6 bytes.
        let (left, right) = word_spans("café = 日本", "café = 中国語");
        assert_eq!(left, vec![span(0, 8, false), span(8, 14, true)]);
        assert_eq!(right, vec![span(0, 8, false), span(8, 17, true)]);
        let old = "let größe = 1;";
        let new = "let größe = 2;";
        let (left, right) = word_spans(old, new);
        let changed: Vec<&str> = left
            .iter()
            .filter(|s| s.changed)
            .map(|s| &old[s.start as usize..s.end as usize])
            .collect();
        assert_eq!(changed, vec!["1"]);
        assert_eq!(right.last().unwrap().end as usize, new.len());
        // Every span starts and ends on a character boundary and the spans
        // cover the line.
        for (text, spans) in [(old, &left), (new, &right)] {
            assert_eq!(spans.first().unwrap().start, 0);
            for pair in spans.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
            }
            for s in spans.iter() {
                assert!(text.is_char_boundary(s.start as usize));
                assert!(text.is_char_boundary(s.end as usize));
            }
        }
    }

    #[test]
    fn whitespace_between_changes_joins_them() {
        let (left, _) = word_spans("alpha beta", "gamma delta");
        assert_eq!(left, vec![span(0, 10, true)]);
        let (left, right) = word_spans("", "new");
        assert!(left.is_empty());
        assert_eq!(right, vec![span(0, 3, true)]);
        let long = "x ".repeat(MAX_WORD_DIFF_BYTES);
        let (left, right) = word_spans(&long, "y");
        assert_eq!(left, vec![span(0, long.len() as u32, true)]);
        assert_eq!(right, vec![span(0, 1, true)]);
    }

    #[test]
    fn tokens_split_words_spaces_and_punctuation() {
        let line = "fn foo(a_b,  c)";
        let tokens: Vec<&str> = tokenize(line).into_iter().map(|r| &line[r]).collect();
        assert_eq!(
            tokens,
            vec!["fn", " ", "foo", "(", "a_b", ",", "  ", "c", ")"]
        );
    }
}
