//! What the model hears with the next user message after a revert: which
//! of its changes were undone (with their text), and how the file reads
//! now, so it neither builds on the reverted code nor makes it again.

use std::fmt::Write as _;

use crate::tools::hunks::{Applied, Fate, LineKind};

/// At most this many lines of the file are quoted.
const MAX_LINES: usize = 120;
/// At most this many changed lines of one hunk are quoted.
const MAX_CHANGED: usize = 40;

/// "hunk 2", "hunks 2 and 3", "hunks 1, 2 and 4" (counted from 1).
fn hunk_list(numbers: &[usize]) -> String {
    let words: Vec<String> = numbers.iter().map(|n| (n + 1).to_string()).collect();
    match words.as_slice() {
        [one] => format!("hunk {one}"),
        [rest @ .., last] => format!("hunks {} and {last}", rest.join(", ")),
        [] => "no hunk".to_owned(),
    }
}

/// Numbered lines `range` of `content` (1-based numbers), within the budget.
fn quote_lines(
    out: &mut String,
    lines: &[&str],
    range: std::ops::Range<usize>,
    quoted: &mut usize,
) {
    let end = range.end.min(lines.len());
    for (i, line) in lines.iter().enumerate().take(end).skip(range.start) {
        if *quoted == MAX_LINES {
            out.push_str("(… more; use read_file to see the rest)\n");
            return;
        }
        let _ = writeln!(out, "{}: {line}", i + 1);
        *quoted += 1;
    }
}

/// The note for reverting the hunks `reverted` of an edit (`applied`: the
/// edit's original with those hunks rejected, i.e. what is on disk now).
pub fn reverted_hunks(shown: &str, call_id: &str, applied: &Applied, whole: bool) -> String {
    let reverted: Vec<usize> = (applied.fates.iter().enumerate())
        .filter(|(_, f)| **f == Fate::Rejected)
        .map(|(i, _)| i)
        .collect();
    let mut out = String::new();
    if whole {
        let _ = writeln!(
            out,
            "You changed {shown} in call {call_id}; the user reverted that whole edit, so {shown} is back to what it was before it. Do not make the change again unless the user asks for it. Undone:"
        );
    } else {
        let _ = writeln!(
            out,
            "You changed {shown} in call {call_id}; the user reverted {} of that edit (the rest stays applied). Do not make these changes again unless the user asks for them. Undone:",
            hunk_list(&reverted)
        );
    }
    for &i in &reverted {
        let hunk = &applied.hunks[i];
        let _ = writeln!(out, "hunk {}:", i + 1);
        for line in hunk.lines.iter().take(MAX_CHANGED) {
            let sign = match line.kind {
                LineKind::Removed => "restored",
                LineKind::Added => "removed again",
            };
            let _ = writeln!(out, "  ({sign}) {}", line.text);
        }
        if hunk.lines.len() > MAX_CHANGED {
            let _ = writeln!(out, "  (… {} more lines)", hunk.lines.len() - MAX_CHANGED);
        }
    }
    let lines: Vec<&str> = applied.content.lines().collect();
    let _ = writeln!(
        out,
        "{shown} now reads, around the reverted changes (line numbers of the file as it is now):"
    );
    let mut quoted = 0;
    let mut last_end = 0;
    for &i in &reverted {
        let region = &applied.regions[i];
        let start = region.start.max(last_end);
        if start >= region.end.min(lines.len()) {
            continue;
        }
        if last_end > 0 && last_end < start {
            out.push_str("…\n");
        }
        quote_lines(&mut out, &lines, start..region.end, &mut quoted);
        last_end = region.end;
    }
    if quoted == 0 {
        out.push_str("(the reverted region is now empty)\n");
    }
    out
}

/// The note for deleting a file the edit created.
pub fn deleted(shown: &str, call_id: &str) -> String {
    format!(
        "You created {shown} in call {call_id}; the user reverted that edit, so {shown} was deleted and no longer exists. Do not create it again unless the user asks for it."
    )
}

/// The note for the user's own resolution of a revert (the file had changed
/// since the edit, so the user merged by hand).
pub fn resolved(shown: &str, call_id: &str, content: &str) -> String {
    let mut out = format!(
        "You changed {shown} in call {call_id}; the user reverted that edit by hand (the file had changed since), so it may differ from both your version and the original. {shown} now reads:\n"
    );
    let lines: Vec<&str> = content.lines().collect();
    let mut quoted = 0;
    quote_lines(&mut out, &lines, 0..lines.len(), &mut quoted);
    if lines.is_empty() {
        out.push_str("(the file is empty)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_are_listed_from_one() {
        assert_eq!(hunk_list(&[0]), "hunk 1");
        assert_eq!(hunk_list(&[1, 2]), "hunks 2 and 3");
        assert_eq!(hunk_list(&[0, 1, 3]), "hunks 1, 2 and 4");
    }
}
