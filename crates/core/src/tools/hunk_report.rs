//! What the model hears after the user accepted only part of an edit: which
//! hunks were applied, which were rejected with their text (so it does not
//! make them again), which lines were picked inside a hunk, and how the
//! changed regions of the file read now, with line numbers.
//!
//! Gemini CLI only says the user modified the proposal (its
//! `modified_by_user` note); this says what the modification was.

use std::fmt::Write as _;

use super::hunks::{Applied, Fate, Hunk, HunkLine, LineKind};

/// At most this many changed lines of one hunk are quoted.
const MAX_QUOTED_LINES: usize = 40;
/// At most this many lines of the written file are quoted in all.
const MAX_EXCERPT_LINES: usize = 200;

/// Hunk numbers for people and the model count from 1.
fn number(hunk: &Hunk) -> usize {
    hunk.index + 1
}

/// "lines 14–16" (or "line 14", or "after line 13" for an empty region) of
/// the file as written.
fn where_(region: &std::ops::Range<usize>) -> String {
    match region.len() {
        0 => format!("after line {}", region.start),
        1 => format!("line {}", region.start + 1),
        _ => format!("lines {}\u{2013}{}", region.start + 1, region.end),
    }
}

fn quote<'a>(out: &mut String, lines: impl Iterator<Item = &'a HunkLine>) {
    let lines: Vec<&HunkLine> = lines.collect();
    for line in lines.iter().take(MAX_QUOTED_LINES) {
        let sign = match line.kind {
            LineKind::Removed => '-',
            LineKind::Added => '+',
        };
        let _ = writeln!(out, "{sign} {}", line.text);
    }
    if lines.len() > MAX_QUOTED_LINES {
        let _ = writeln!(out, "(… {} more lines)", lines.len() - MAX_QUOTED_LINES);
    }
}

/// The report for `applied`, written to `shown_path` (the path as the model
/// knows it).
pub fn report(applied: &Applied, shown_path: &str) -> String {
    let total = applied.hunks.len();
    let whole = applied
        .fates
        .iter()
        .filter(|f| **f == Fate::Applied)
        .count();
    let partly = applied
        .fates
        .iter()
        .filter(|f| matches!(f, Fate::Partly(_)))
        .count();
    let mut out = String::new();
    let noun = if total == 1 { "change" } else { "changes" };
    let _ = write!(
        out,
        "The user applied {whole} of {total} proposed {noun} to {shown_path}"
    );
    if partly > 0 {
        let _ = write!(out, " and part of {partly} more");
    }
    out.push_str(
        "; only that was written. Do not make the changes that were not applied again unless the user asks for them.\n",
    );
    for ((hunk, fate), region) in applied
        .hunks
        .iter()
        .zip(&applied.fates)
        .zip(&applied.regions)
    {
        let n = number(hunk);
        let at = where_(region);
        match fate {
            Fate::Applied => {
                let _ = writeln!(out, "Applied: hunk {n}, now {at}.");
            }
            Fate::Rejected => {
                let _ = writeln!(
                    out,
                    "Not applied (the user rejected it; do not make this change again unless asked): hunk {n}, {at} of the file, which still reads as before:"
                );
                quote(&mut out, hunk.lines.iter());
            }
            Fate::Partly(picked) => {
                let _ = writeln!(
                    out,
                    "Partly applied (the user picked lines of it): hunk {n}, now {at}. Applied:"
                );
                let (taken, left): (Vec<_>, Vec<_>) = hunk
                    .lines
                    .iter()
                    .enumerate()
                    .partition(|(i, _)| picked.contains(i));
                quote(&mut out, taken.into_iter().map(|(_, l)| l));
                out.push_str("Not applied (rejected by the user):\n");
                quote(&mut out, left.into_iter().map(|(_, l)| l));
            }
        }
    }
    excerpt(&mut out, applied, shown_path);
    out
}

/// What the user changed by hand in the model's proposal before it was
/// applied: each changed region, the model's lines against the user's, and
/// where they are in the user's version. Gemini CLI only says "modified by
/// the user"; without the change itself the model cannot tell what the user
/// objected to and tends to write its own version back. None when the user's
/// version is the proposal.
pub fn hand_edits(model: &str, user: &str, shown_path: &str) -> Option<String> {
    let changes = super::hunks::hunks(model, user);
    if changes.is_empty() {
        return None;
    }
    let mut out = String::new();
    let noun = if changes.len() == 1 {
        "place"
    } else {
        "places"
    };
    let _ = writeln!(
        out,
        "The user edited your proposal for {shown_path} by hand in {} {noun} before it was applied; keep their version (\"-\" your line, \"+\" theirs):",
        changes.len()
    );
    for change in &changes {
        let first = change.lines.iter().find(|l| l.kind == LineKind::Added);
        let at = match first {
            Some(line) => format!("line {} of their version", line.number),
            None => "lines removed".to_owned(),
        };
        let _ = writeln!(out, "Change {} ({at}):", number(change));
        quote(&mut out, change.lines.iter());
    }
    Some(out)
}

/// The regions of the written file the hunks became (context included),
/// numbered, so the model knows the file without reading it again.
fn excerpt(out: &mut String, applied: &Applied, shown_path: &str) {
    let lines: Vec<&str> = applied.content.lines().collect();
    let _ = writeln!(
        out,
        "{shown_path} now reads, around the proposed changes (line numbers of the written file):"
    );
    let mut quoted = 0;
    let mut last_end: Option<usize> = None;
    for region in &applied.regions {
        let start = region.start.max(last_end.unwrap_or(0));
        let end = region.end.min(lines.len());
        if start >= end {
            continue;
        }
        if last_end.is_some_and(|e| e < start) {
            out.push_str("…\n");
        }
        for (i, line) in lines[start..end].iter().enumerate() {
            if quoted == MAX_EXCERPT_LINES {
                out.push_str("(… more; use read_file to see the rest)\n");
                return;
            }
            let _ = writeln!(out, "{}: {line}", start + i + 1);
            quoted += 1;
        }
        last_end = Some(end);
    }
    if quoted == 0 {
        out.push_str("(these regions are now empty)\n");
    }
}
