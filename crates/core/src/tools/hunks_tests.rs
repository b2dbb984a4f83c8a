//! Tests of [`super`]: a seeded property test against an independent
//! splice of whole hunks, per-line picking, bad decisions, and the report.

use super::*;
use crate::tools::hunk_report::report;
use pretty_assertions::assert_eq;

/// SplitMix64, as in the policy fuzz test: seeded, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const VOCABULARY: &[&str] = &[
    "fn main() {",
    "    let ü = 1;",
    "}",
    "",
    "日本語のテキスト",
    "émoji 🎉 here",
    "a",
    "b",
    "\tindented",
    "return x;",
];

fn word(rng: &mut Rng) -> &'static str {
    VOCABULARY[rng.below(VOCABULARY.len())]
}

fn join(lines: &[&str], crlf: bool, final_newline: bool) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let ending = if crlf { "\r\n" } else { "\n" };
    let mut text = lines.join(ending);
    if final_newline {
        text.push_str(ending);
    }
    text
}

/// A random original and a random edit of it, in the same line-ending style.
fn case(rng: &mut Rng) -> (String, String) {
    let original: Vec<&str> = (0..rng.below(60)).map(|_| word(rng)).collect();
    let mut proposed = Vec::new();
    for line in &original {
        match rng.below(16) {
            0 => {}
            1 => proposed.push(word(rng)),
            2 => {
                proposed.push(word(rng));
                proposed.push(line);
            }
            _ => proposed.push(line),
        }
    }
    if rng.chance(20) {
        proposed.push(word(rng));
    }
    let crlf = rng.chance(40);
    (
        join(&original, crlf, rng.chance(70)),
        join(&proposed, crlf, rng.chance(70)),
    )
}

fn decide(index: usize, choice: HunkChoice) -> HunkDecision {
    HunkDecision {
        hunk: index as u32,
        choice,
    }
}

fn all(count: usize, choice: HunkChoice) -> Vec<HunkDecision> {
    (0..count).map(|i| decide(i, choice.clone())).collect()
}

/// The expected result built another way: the original's lines between
/// hunks, and per hunk the proposal's lines when accepted, else the
/// original's.
fn splice(original: &str, proposed: &str, hunks: &[Hunk], accepted: &[bool]) -> String {
    let old: Vec<&str> = original.split_inclusive('\n').collect();
    let new: Vec<&str> = proposed.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut next = 0;
    for (hunk, &accept) in hunks.iter().zip(accepted) {
        out.extend(old[next..hunk.old.start].iter().copied());
        if accept {
            out.extend(new[hunk.new.clone()].iter().copied());
        } else {
            out.extend(old[hunk.old.clone()].iter().copied());
        }
        next = hunk.old.end;
    }
    out.extend(old[next..].iter().copied());
    out
}

#[test]
fn random_accept_subsets_write_exactly_the_accepted_hunks() {
    let mut rng = Rng(17);
    let mut partial_cases = 0;
    for round in 0..3000 {
        let (original, proposed) = case(&mut rng);
        let found = hunks(&original, &proposed);
        // The hunks are the confirmation's hunks, in the same places.
        let shown = crate::diff::side_by_side(Some(&original), &proposed);
        assert_eq!(found.len(), shown.hunks.len(), "round {round}");
        for (h, s) in found.iter().zip(&shown.hunks) {
            assert_eq!(h.old.len() as u32, s.old_lines, "round {round}");
            assert_eq!(h.new.len() as u32, s.new_lines, "round {round}");
        }
        let n = found.len();
        let everything = apply(&original, &proposed, &all(n, HunkChoice::Accept)).unwrap();
        assert_eq!(everything.content, proposed, "round {round}: accept all");
        let nothing = apply(&original, &proposed, &all(n, HunkChoice::Reject)).unwrap();
        assert_eq!(nothing.content, original, "round {round}: reject all");
        let accepted: Vec<bool> = (0..n).map(|_| rng.chance(50)).collect();
        if accepted.iter().any(|a| *a) && accepted.iter().any(|a| !*a) {
            partial_cases += 1;
        }
        let decisions: Vec<HunkDecision> = accepted
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                decide(
                    i,
                    if a {
                        HunkChoice::Accept
                    } else {
                        HunkChoice::Reject
                    },
                )
            })
            .collect();
        let applied = apply(&original, &proposed, &decisions).unwrap();
        assert_eq!(
            applied.content,
            splice(&original, &proposed, &found, &accepted),
            "round {round}: {original:?} -> {proposed:?}, accepted {accepted:?}"
        );
        // CRLF stays CRLF: no bare LF appears in a CRLF file.
        if original.contains("\r\n") && proposed.contains("\r\n") {
            assert!(
                !applied.content.replace("\r\n", "").contains('\n'),
                "round {round}"
            );
        }
    }
    assert!(partial_cases > 500, "only {partial_cases} mixed cases");
}

#[test]
fn random_line_picks_keep_every_line_whole() {
    let mut rng = Rng(4242);
    for round in 0..2000 {
        let (original, proposed) = case(&mut rng);
        let found = hunks(&original, &proposed);
        let mut removed = 0;
        let mut added = 0;
        let decisions: Vec<HunkDecision> = found
            .iter()
            .map(|h| {
                let lines: Vec<u32> = (0..h.lines.len())
                    .filter(|_| rng.chance(50))
                    .map(|i| i as u32)
                    .collect();
                for &i in &lines {
                    match h.lines[i as usize].kind {
                        LineKind::Removed => removed += 1,
                        LineKind::Added => added += 1,
                    }
                }
                decide(h.index, HunkChoice::Lines { lines })
            })
            .collect();
        let applied = apply(&original, &proposed, &decisions).unwrap();
        let count = |t: &str| t.split_inclusive('\n').count();
        assert_eq!(
            count(&applied.content),
            count(&original) - removed + added,
            "round {round}: {original:?} -> {proposed:?} {decisions:?}"
        );
        let known: Vec<&str> = original.lines().chain(proposed.lines()).collect();
        for line in applied.content.lines() {
            assert!(known.contains(&line), "round {round}: {line:?} is new");
        }
    }
}

#[test]
fn picking_lines_inside_a_hunk() {
    let original = "one\ntwo\nthree\n";
    let proposed = "one\nTWO\nthree\nfour\n";
    let found = hunks(original, proposed);
    assert_eq!(found.len(), 1);
    let texts: Vec<(LineKind, &str)> = found[0]
        .lines
        .iter()
        .map(|l| (l.kind, l.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        vec![
            (LineKind::Removed, "two"),
            (LineKind::Added, "TWO"),
            (LineKind::Added, "four"),
        ]
    );
    let only_four = [decide(0, HunkChoice::Lines { lines: vec![2] })];
    let applied = apply(original, proposed, &only_four).unwrap();
    assert_eq!(applied.content, "one\ntwo\nthree\nfour\n");
    assert_eq!(applied.fates, vec![Fate::Partly([2].into())]);
    let all_lines = [decide(
        0,
        HunkChoice::Lines {
            lines: vec![0, 1, 2],
        },
    )];
    let applied = apply(original, proposed, &all_lines).unwrap();
    assert_eq!(applied.content, proposed);
    assert!(applied.everything_applied());
}

#[test]
fn a_kept_last_line_without_newline_gets_one_before_a_picked_line() {
    let original = "a\r\nb";
    let proposed = "a\r\nb\r\nc";
    let found = hunks(original, proposed);
    // "b" without an ending became "b\r\n": removed b, added b and c.
    assert_eq!(found[0].lines.len(), 3);
    let keep_b_add_c = [decide(0, HunkChoice::Lines { lines: vec![2] })];
    let applied = apply(original, proposed, &keep_b_add_c).unwrap();
    assert_eq!(applied.content, "a\r\nb\r\nc");
}

#[test]
fn bad_decisions_are_clear_errors() {
    let original = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
    let proposed = "A\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n";
    assert_eq!(hunks(original, proposed).len(), 2);
    let err = apply(original, proposed, &[decide(0, HunkChoice::Accept)]).unwrap_err();
    assert_eq!(err, HunkError::Missing(1));
    assert_eq!(err.to_string(), "hunk 1 has no decision");
    let err = apply(
        original,
        proposed,
        &[decide(0, HunkChoice::Accept), decide(0, HunkChoice::Reject)],
    )
    .unwrap_err();
    assert_eq!(err, HunkError::Duplicate(0));
    let err = apply(original, proposed, &[decide(5, HunkChoice::Accept)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "hunk 5 does not exist: the change has 2 hunks"
    );
    let err = apply(
        original,
        proposed,
        &[
            decide(0, HunkChoice::Lines { lines: vec![9] }),
            decide(1, HunkChoice::Accept),
        ],
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "hunk 0 has no changed line 9: it has 2");
}

#[test]
fn a_new_file_is_one_hunk() {
    let found = hunks("", "x\ny\n");
    assert_eq!(found.len(), 1);
    let applied = apply("", "x\ny\n", &[decide(0, HunkChoice::Reject)]).unwrap();
    assert!(applied.nothing_applied());
    assert_eq!(applied.content, "");
}

/// Three hunks far apart: lines 2, 12 and 22 change.
fn three_changes() -> (String, String) {
    let original: Vec<String> = (1..=25).map(|i| format!("line {i}")).collect();
    let mut proposed = original.clone();
    proposed[1] = "line 2 changed".into();
    proposed[11] = "line 12 changed".into();
    proposed[21] = "line 22 changed".into();
    (original.join("\n") + "\n", proposed.join("\n") + "\n")
}

#[test]
fn the_report_names_applied_and_rejected_hunks_with_their_text() {
    let (original, proposed) = three_changes();
    let decisions = [
        decide(0, HunkChoice::Accept),
        decide(1, HunkChoice::Reject),
        decide(2, HunkChoice::Accept),
    ];
    let applied = apply(&original, &proposed, &decisions).unwrap();
    assert!(applied.content.contains("line 2 changed\n"));
    assert!(applied.content.contains("\nline 12\n"));
    let text = report(&applied, "src/a.txt");
    assert_eq!(
        text,
        "The user applied 2 of 3 proposed changes to src/a.txt; only that was written. Do not make the changes that were not applied again unless the user asks for them.
Applied: hunk 1, now lines 1\u{2013}5.
Not applied (the user rejected it; do not make this change again unless asked): hunk 2, lines 9\u{2013}15 of the file, which still reads as before:
- line 12
+ line 12 changed
Applied: hunk 3, now lines 19\u{2013}25.
src/a.txt now reads, around the proposed changes (line numbers of the written file):
1: line 1
2: line 2 changed
3: line 3
4: line 4
5: line 5
…
9: line 9
10: line 10
11: line 11
12: line 12
13: line 13
14: line 14
15: line 15
…
19: line 19
20: line 20
21: line 21
22: line 22 changed
23: line 23
24: line 24
25: line 25
"
    );
}

#[test]
fn the_report_lists_picked_and_left_lines() {
    let applied = apply(
        "one\ntwo\nthree\n",
        "one\nTWO\nthree\nfour\n",
        &[decide(0, HunkChoice::Lines { lines: vec![2] })],
    )
    .unwrap();
    let text = report(&applied, "n.txt");
    assert!(
        text.starts_with("The user applied 0 of 1 proposed change to n.txt and part of 1 more;"),
        "{text}"
    );
    assert!(
        text.contains(
            "Partly applied (the user picked lines of it): hunk 1, now lines 1\u{2013}4. Applied:\n+ four\nNot applied (rejected by the user):\n- two\n+ TWO\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("1: one\n2: two\n3: three\n4: four\n"),
        "{text}"
    );
}

#[test]
fn long_rejected_hunks_are_quoted_in_part() {
    let original = "keep\n".to_owned();
    let proposed: String = (0..100).map(|i| format!("new {i}\n")).collect();
    let applied = apply(&original, &proposed, &[decide(0, HunkChoice::Reject)]).unwrap();
    let text = report(&applied, "big.txt");
    assert!(text.contains("+ new 38\n(… 61 more lines)\n"), "{text}");
    assert!(!text.contains("new 40"), "{text}");
}

/// The frontend numbers a hunk's changed lines from the side-by-side rows it
/// shows (ui/src/lib/diff.ts `numberChanges`): per run of non-equal rows, the
/// left lines in order, then the right lines. That must be exactly the order
/// of [`Hunk::lines`], or a picked line would apply another line.
#[test]
fn the_side_by_side_rows_number_changed_lines_as_the_hunks_do() {
    let mut rng = Rng(29);
    for round in 0..3000 {
        let (original, proposed) = case(&mut rng);
        let found = hunks(&original, &proposed);
        let shown = crate::diff::side_by_side(Some(&original), &proposed);
        for (h, s) in found.iter().zip(&shown.hunks) {
            let mut from_rows: Vec<(LineKind, usize)> = Vec::new();
            let mut run: Vec<&gd_protocol::DiffRow> = Vec::new();
            let flush = |run: &mut Vec<&gd_protocol::DiffRow>, out: &mut Vec<(LineKind, usize)>| {
                out.extend(
                    run.iter()
                        .filter_map(|r| r.left.as_ref())
                        .map(|l| (LineKind::Removed, l.number as usize)),
                );
                out.extend(
                    run.iter()
                        .filter_map(|r| r.right.as_ref())
                        .map(|l| (LineKind::Added, l.number as usize)),
                );
                run.clear();
            };
            for row in &s.rows {
                if row.kind == gd_protocol::DiffRowKind::Equal {
                    flush(&mut run, &mut from_rows);
                } else {
                    run.push(row);
                }
            }
            flush(&mut run, &mut from_rows);
            let from_hunk: Vec<(LineKind, usize)> =
                h.lines.iter().map(|l| (l.kind, l.number)).collect();
            assert_eq!(from_rows, from_hunk, "round {round}, hunk {}", h.index);
        }
    }
}
