//! The hunks of an edit proposal and writing only the ones the user
//! accepted.
//!
//! A confirmation shows `original` against `proposed`; the user may accept
//! or reject each hunk, or pick single changed lines inside one. [`apply`]
//! then builds the original with exactly those changes, and its [`Applied`]
//! says what happened in words for the model (see [`super::hunk_report`]),
//! so that a rejected change is not simply proposed again.
//!
//! Hunks are computed exactly as the confirmation's side-by-side diff
//! ([`crate::diff`]): the same line comparison (line endings aside), the
//! same Myers diff and the same grouping with [`CONTEXT_LINES`] of context,
//! so hunk `i` here is hunk `i` on screen. Lines are copied with their own
//! endings, so CRLF text, a missing final newline and any Unicode come out
//! as they went in.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

use gd_protocol::{HunkChoice, HunkDecision};
use similar::{Algorithm, DiffOp, DiffTag};

use crate::diff::{CONTEXT_LINES, DIFF_TIMEOUT};

/// One hunk of a proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// Position in the proposal, from 0.
    pub index: usize,
    /// Lines of the original the hunk spans (0-based, context included).
    pub old: std::ops::Range<usize>,
    /// Lines of the proposal the hunk spans (0-based, context included).
    pub new: std::ops::Range<usize>,
    /// The changed lines in unified-diff order (per change region, removed
    /// then added): what [`HunkChoice::Lines`] indexes.
    pub lines: Vec<HunkLine>,
}

impl Hunk {
    pub fn removed(&self) -> impl Iterator<Item = &HunkLine> {
        self.lines.iter().filter(|l| l.kind == LineKind::Removed)
    }

    pub fn added(&self) -> impl Iterator<Item = &HunkLine> {
        self.lines.iter().filter(|l| l.kind == LineKind::Added)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Removed,
    Added,
}

/// A changed line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    pub kind: LineKind,
    /// 1-based line number on its side (original for removed lines,
    /// proposal for added ones).
    pub number: usize,
    /// The line without its ending.
    pub text: String,
}

/// What became of one hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    Applied,
    Rejected,
    /// Only these changed lines (indexes into [`Hunk::lines`]) were applied.
    Partly(BTreeSet<usize>),
}

/// The result of [`apply`]: the text to write and what it contains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The original with exactly the accepted changes.
    pub content: String,
    pub hunks: Vec<Hunk>,
    /// Per hunk, in order.
    pub fates: Vec<Fate>,
    /// Per hunk: the 0-based lines of `content` its region became.
    pub regions: Vec<std::ops::Range<usize>>,
}

impl Applied {
    /// Nothing of the proposal was applied: the content is the original.
    pub fn nothing_applied(&self) -> bool {
        self.fates.iter().all(|f| *f == Fate::Rejected)
    }

    /// Every hunk was applied as proposed.
    pub fn everything_applied(&self) -> bool {
        self.fates.iter().all(|f| *f == Fate::Applied)
    }
}

/// Why decisions could not be applied (the frontend sent a bad answer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HunkError {
    #[error("hunk {hunk} does not exist: the change has {count} hunks")]
    NoSuchHunk { hunk: u32, count: usize },
    #[error("hunk {0} has more than one decision")]
    Duplicate(u32),
    #[error("hunk {0} has no decision")]
    Missing(usize),
    #[error("hunk {hunk} has no changed line {line}: it has {count}")]
    NoSuchLine { hunk: u32, line: u32, count: usize },
}

/// One line with its ending as written; compared as the side-by-side diff
/// compares (text without `\r\n`/`\n`, and whether it has an ending).
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    raw: &'a str,
    text: &'a str,
    newline: bool,
}

impl PartialEq for Line<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.newline == other.newline
    }
}

impl Eq for Line<'_> {}

impl Hash for Line<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state);
        self.newline.hash(state);
    }
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    text.split_inclusive('\n')
        .map(|raw| match raw.strip_suffix('\n') {
            Some(body) => Line {
                raw,
                text: body.strip_suffix('\r').unwrap_or(body),
                newline: true,
            },
            None => Line {
                raw,
                text: raw,
                newline: false,
            },
        })
        .collect()
}

/// The grouped diff ops of `original` against `proposed`, one group per hunk.
fn groups(old: &[Line<'_>], new: &[Line<'_>]) -> Vec<Vec<DiffOp>> {
    let deadline = std::time::Instant::now() + DIFF_TIMEOUT;
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline));
    if ops.iter().all(|op| op.tag() == DiffTag::Equal) {
        return Vec::new();
    }
    similar::group_diff_ops(ops, CONTEXT_LINES)
}

/// A stretch of a hunk: unchanged lines, or one change region. Consecutive
/// non-equal ops (a delete next to an insert the diff did not fuse into a
/// replace) form ONE region, exactly as the side-by-side view pairs them in
/// one run: the frontend numbers a region's lines (its removed lines, then
/// its added ones) from the rows it shows, so both sides must agree on
/// where a region starts and ends.
struct Stretch {
    equal: bool,
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
}

fn stretches(group: &[DiffOp]) -> Vec<Stretch> {
    let mut out: Vec<Stretch> = Vec::new();
    for op in group {
        let equal = op.tag() == DiffTag::Equal;
        match out.last_mut() {
            Some(last) if !equal && !last.equal => {
                last.old.end = op.old_range().end;
                last.new.end = op.new_range().end;
            }
            _ => out.push(Stretch {
                equal,
                old: op.old_range(),
                new: op.new_range(),
            }),
        }
    }
    out
}

fn hunk_of(index: usize, group: &[DiffOp], old: &[Line<'_>], new: &[Line<'_>]) -> Hunk {
    let (Some(first), Some(last)) = (group.first(), group.last()) else {
        return Hunk {
            index,
            old: 0..0,
            new: 0..0,
            lines: Vec::new(),
        };
    };
    let mut lines = Vec::new();
    for region in stretches(group).into_iter().filter(|s| !s.equal) {
        for i in region.old {
            lines.push(HunkLine {
                kind: LineKind::Removed,
                number: i + 1,
                text: old[i].text.to_owned(),
            });
        }
        for i in region.new {
            lines.push(HunkLine {
                kind: LineKind::Added,
                number: i + 1,
                text: new[i].text.to_owned(),
            });
        }
    }
    Hunk {
        index,
        old: first.old_range().start..last.old_range().end,
        new: first.new_range().start..last.new_range().end,
        lines,
    }
}

/// The hunks of `proposed` against `original`, in file order.
pub fn hunks(original: &str, proposed: &str) -> Vec<Hunk> {
    let old = split_lines(original);
    let new = split_lines(proposed);
    groups(&old, &new)
        .iter()
        .enumerate()
        .map(|(i, g)| hunk_of(i, g, &old, &new))
        .collect()
}

/// Checks the decisions against the hunks: one per hunk, lines in range.
fn fates(hunks: &[Hunk], decisions: &[HunkDecision]) -> Result<Vec<Fate>, HunkError> {
    let mut fates: Vec<Option<Fate>> = vec![None; hunks.len()];
    for decision in decisions {
        let index = decision.hunk as usize;
        let Some(hunk) = hunks.get(index) else {
            return Err(HunkError::NoSuchHunk {
                hunk: decision.hunk,
                count: hunks.len(),
            });
        };
        if fates[index].is_some() {
            return Err(HunkError::Duplicate(decision.hunk));
        }
        let fate = match &decision.choice {
            HunkChoice::Accept => Fate::Applied,
            HunkChoice::Reject => Fate::Rejected,
            HunkChoice::Lines { lines } => {
                let mut picked = BTreeSet::new();
                for &line in lines {
                    if line as usize >= hunk.lines.len() {
                        return Err(HunkError::NoSuchLine {
                            hunk: decision.hunk,
                            line,
                            count: hunk.lines.len(),
                        });
                    }
                    picked.insert(line as usize);
                }
                // Picking all or none is a plain accept or reject.
                if picked.len() == hunk.lines.len() {
                    Fate::Applied
                } else if picked.is_empty() {
                    Fate::Rejected
                } else {
                    Fate::Partly(picked)
                }
            }
        };
        fates[index] = Some(fate);
    }
    fates
        .into_iter()
        .enumerate()
        .map(|(i, f)| f.ok_or(HunkError::Missing(i)))
        .collect()
}

/// Builds the output line by line, so that a kept last line without an
/// ending followed by another line (possible only with picked lines) gets
/// one instead of running into the next.
struct Output<'a> {
    text: String,
    lines: usize,
    ending: &'a str,
}

impl Output<'_> {
    fn push(&mut self, line: &Line<'_>) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push_str(self.ending);
        }
        self.text.push_str(line.raw);
        self.lines += 1;
    }
}

/// The original with exactly the accepted hunks (and picked lines) of
/// `proposed` applied. Every hunk needs exactly one decision.
pub fn apply(
    original: &str,
    proposed: &str,
    decisions: &[HunkDecision],
) -> Result<Applied, HunkError> {
    let old = split_lines(original);
    let new = split_lines(proposed);
    let groups = groups(&old, &new);
    let hunks: Vec<Hunk> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| hunk_of(i, g, &old, &new))
        .collect();
    let fates = fates(&hunks, decisions)?;
    let ending = if crate::tools::text::detect_line_ending(original)
        == crate::tools::text::LineEnding::Crlf
    {
        "\r\n"
    } else {
        "\n"
    };
    let mut out = Output {
        text: String::with_capacity(original.len().max(proposed.len())),
        lines: 0,
        ending,
    };
    let mut regions = Vec::with_capacity(hunks.len());
    let mut next_old = 0;
    for ((group, hunk), fate) in groups.iter().zip(&hunks).zip(&fates) {
        old[next_old..hunk.old.start]
            .iter()
            .for_each(|l| out.push(l));
        let start = out.lines;
        // Index of the first changed line of the current region in `hunk.lines`.
        let mut change = 0;
        let picked = |n: usize| match fate {
            Fate::Applied => true,
            Fate::Rejected => false,
            Fate::Partly(set) => set.contains(&n),
        };
        for stretch in stretches(group) {
            if stretch.equal {
                old[stretch.old].iter().for_each(|l| out.push(l));
                continue;
            }
            let removed = stretch.old.len();
            for (n, line) in old[stretch.old.clone()].iter().enumerate() {
                if !picked(change + n) {
                    out.push(line);
                }
            }
            for (n, line) in new[stretch.new.clone()].iter().enumerate() {
                if picked(change + removed + n) {
                    out.push(line);
                }
            }
            change += removed + stretch.new.len();
        }
        regions.push(start..out.lines);
        next_old = hunk.old.end;
    }
    old[next_old..].iter().for_each(|l| out.push(l));
    Ok(Applied {
        content: out.text,
        hunks,
        fates,
        regions,
    })
}

#[cfg(test)]
#[path = "hunks_tests.rs"]
mod tests;
