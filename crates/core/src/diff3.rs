//! A line-based three-way merge (diff3) over `similar`.
//!
//! Reverting an edit after the file changed since cannot simply write the
//! inverse: the user's later changes would be lost. So the revert is merged
//! into what is on disk: `base` is what the edit wrote, `ours` is the disk,
//! `theirs` is `base` with the edit undone. Regions only one side changed
//! take that side; regions both changed the same way take it once; regions
//! both changed differently become conflicts, marked as git marks them, for
//! the user to settle by hand.
//!
//! Lines are compared with their endings, so CRLF text and a missing final
//! newline come out as they went in; a conflict marker never runs into a
//! line that had no ending.

use similar::{Algorithm, DiffTag};

use crate::diff::DIFF_TIMEOUT;

/// Opens a conflict: the lines on disk follow.
pub const OURS_MARKER: &str = "<<<<<<< on disk";
/// Separates the disk's lines from the reverted ones.
pub const SEPARATOR: &str = "=======";
/// Closes a conflict after the reverted lines.
pub const THEIRS_MARKER: &str = ">>>>>>> reverted";

/// The result of [`merge`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub text: String,
    /// Conflicting regions in `text`.
    pub conflicts: usize,
}

/// Lines with their endings (the last one may have none).
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// For each line of `base`, the line of `other` it is equal to in the
/// Myers diff, if any (increasing, so matches never cross).
fn matches(base: &[&str], other: &[&str]) -> Vec<Option<usize>> {
    let mut map = vec![None; base.len()];
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        base,
        other,
        Some(std::time::Instant::now() + DIFF_TIMEOUT),
    );
    for op in ops {
        if op.tag() == DiffTag::Equal {
            for (b, o) in op.old_range().zip(op.new_range()) {
                map[b] = Some(o);
            }
        }
    }
    map
}

/// The merged text being built: a line without an ending gets the text's
/// ending before anything follows it.
struct Out<'a> {
    text: String,
    ending: &'a str,
}

impl Out<'_> {
    fn push(&mut self, line: &str) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push_str(self.ending);
        }
        self.text.push_str(line);
    }

    fn extend(&mut self, lines: &[&str]) {
        lines.iter().for_each(|l| self.push(l));
    }

    /// A marker line, always ended.
    fn marker(&mut self, marker: &str) {
        self.push(marker);
        self.text.push_str(self.ending);
    }
}

/// Merges the changes `base → ours` and `base → theirs`.
pub fn merge(base: &str, ours: &str, theirs: &str) -> Merged {
    let (b, o, t) = (lines(base), lines(ours), lines(theirs));
    let (to_ours, to_theirs) = (matches(&b, &o), matches(&b, &t));
    let ending = if [ours, base, theirs].iter().any(|s| s.contains("\r\n")) {
        "\r\n"
    } else {
        "\n"
    };
    let mut out = Out {
        text: String::with_capacity(ours.len().max(theirs.len())),
        ending,
    };
    let mut conflicts = 0;
    let (mut ib, mut io, mut it) = (0, 0, 0);
    loop {
        // Stable lines: unchanged on both sides.
        while ib < b.len() && to_ours[ib] == Some(io) && to_theirs[ib] == Some(it) {
            out.push(b[ib]);
            ib += 1;
            io += 1;
            it += 1;
        }
        if ib == b.len() && io == o.len() && it == t.len() {
            break;
        }
        // The next base line both sides still have ends the unstable chunk.
        let next = (ib..b.len()).find_map(|k| match (to_ours[k], to_theirs[k]) {
            (Some(x), Some(y)) => Some((k, x, y)),
            _ => None,
        });
        let (nb, no, nt) = next.unwrap_or((b.len(), o.len(), t.len()));
        let (base_chunk, ours_chunk, theirs_chunk) = (&b[ib..nb], &o[io..no], &t[it..nt]);
        if ours_chunk == base_chunk {
            out.extend(theirs_chunk);
        } else if theirs_chunk == base_chunk || ours_chunk == theirs_chunk {
            out.extend(ours_chunk);
        } else {
            conflicts += 1;
            out.marker(OURS_MARKER);
            out.extend(ours_chunk);
            out.marker(SEPARATOR);
            out.extend(theirs_chunk);
            out.marker(THEIRS_MARKER);
        }
        (ib, io, it) = (nb, no, nt);
    }
    Merged {
        text: out.text,
        conflicts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn numbered(n: usize, changed: &[(usize, &str)], ending: &str) -> String {
        (1..=n)
            .map(|i| {
                let line = changed
                    .iter()
                    .find(|(k, _)| *k == i)
                    .map(|(_, s)| s.to_string())
                    .unwrap_or_else(|| format!("line {i}"));
                line + ending
            })
            .collect()
    }

    #[test]
    fn changes_in_different_places_merge_cleanly() {
        let base = numbered(10, &[(2, "edit 2")], "\n");
        // The user changed line 8 since; the revert puts line 2 back.
        let ours = numbered(10, &[(2, "edit 2"), (8, "mine 8")], "\n");
        let theirs = numbered(10, &[], "\n");
        let merged = merge(&base, &ours, &theirs);
        assert_eq!(merged.conflicts, 0);
        assert_eq!(merged.text, numbered(10, &[(8, "mine 8")], "\n"));
    }

    #[test]
    fn both_sides_changing_one_region_is_a_marked_conflict() {
        let base = "a\nedit\nc\n";
        let ours = "a\nmine\nc\n";
        let theirs = "a\nold\nc\n";
        let merged = merge(base, ours, theirs);
        assert_eq!(merged.conflicts, 1);
        assert_eq!(
            merged.text,
            "a\n<<<<<<< on disk\nmine\n=======\nold\n>>>>>>> reverted\nc\n"
        );
    }

    #[test]
    fn the_same_change_on_both_sides_is_taken_once() {
        let merged = merge("a\nb\n", "a\nc\n", "a\nc\n");
        assert_eq!(merged.conflicts, 0);
        assert_eq!(merged.text, "a\nc\n");
    }

    #[test]
    fn crlf_text_stays_crlf_markers_included() {
        let base = "a\r\nedit\r\nc\r\nd\r\n";
        let ours = "a\r\nmine\r\nc\r\nd\r\n";
        let theirs = "a\r\nold\r\nc\r\nd\r\n";
        let merged = merge(base, ours, theirs);
        assert_eq!(
            merged.text,
            "a\r\n<<<<<<< on disk\r\nmine\r\n=======\r\nold\r\n>>>>>>> reverted\r\nc\r\nd\r\n"
        );
        let clean = merge("a\r\nb\r\nc\r\n", "a\r\nb\r\nC\r\n", "A\r\nb\r\nc\r\n");
        assert_eq!(clean.conflicts, 0);
        assert_eq!(clean.text, "A\r\nb\r\nC\r\n");
    }

    #[test]
    fn a_missing_final_newline_is_kept_and_never_swallows_a_marker() {
        // Clean: the revert changes the first line, the disk has no final newline.
        let merged = merge("x\nb\nc", "x\nb\nc", "a\nb\nc");
        assert_eq!(
            merged,
            Merged {
                text: "a\nb\nc".into(),
                conflicts: 0
            }
        );
        // A conflict on the last line without an ending: the marker gets its own line.
        let merged = merge("a\nedit", "a\nmine", "a\nold");
        assert_eq!(merged.conflicts, 1);
        assert_eq!(
            merged.text,
            "a\n<<<<<<< on disk\nmine\n=======\nold\n>>>>>>> reverted\n"
        );
    }

    #[test]
    fn inserts_and_deletions_on_either_side() {
        // The disk gained a line at the end; the revert removes a line the edit added.
        let base = "a\nadded\nb\n";
        let ours = "a\nadded\nb\nnew\n";
        let theirs = "a\nb\n";
        assert_eq!(merge(base, ours, theirs).text, "a\nb\nnew\n");
        // Everything empty.
        assert_eq!(merge("", "", "").text, "");
        // A created file the user changed since: reverting (empty) conflicts.
        let merged = merge("new\n", "new changed\n", "");
        assert_eq!(merged.conflicts, 1);
    }
}
