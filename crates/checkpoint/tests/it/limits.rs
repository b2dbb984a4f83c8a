//! The size cap, the checkpoint count limit and the time budget.

use crate::common;

use std::time::{Duration, Instant};

use common::{Fixture, edit_meta};
use gd_checkpoint::{CheckpointKind, Checkpointer};

/// Bytes that do not compress: each snapshot adds about their size.
fn noise(seed: u64, len: usize) -> String {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(b'!' + (state % 90) as u8)
        })
        .collect()
}

#[test]
fn the_total_size_cap_drops_old_snapshots_and_collects_garbage() {
    let mut fx = Fixture::new();
    fx.config.max_total_bytes = 300 * 1024;
    fx.config.prune_grace = "now".into();
    let repo = fx.open();
    let mut ids = Vec::new();
    for round in 0..6 {
        fx.write("data.txt", &noise(round, 100 * 1024));
        ids.push(
            repo.snapshot(&edit_meta("write_file", &["data.txt"]))
                .unwrap()
                .id,
        );
    }
    let before = repo.size_bytes().unwrap();
    assert!(
        before > fx.config.max_total_bytes,
        "the test must start over the cap: {before}"
    );

    let report = repo.gc().unwrap();
    assert!(report.collected);
    let size = report.size_bytes.unwrap();
    assert!(size <= fx.config.max_total_bytes, "{size} bytes after gc");
    let left: Vec<String> = repo.list().unwrap().into_iter().map(|c| c.id).collect();
    assert!(!left.is_empty() && left.len() < ids.len(), "{left:?}");
    assert_eq!(left[0], *ids.last().unwrap(), "the newest is kept");
    // Oldest first in the report, and none of the kept ones.
    assert_eq!(report.dropped[0], ids[0]);
    assert!(report.dropped.iter().all(|d| !left.contains(d)));

    // The kept checkpoints still restore.
    fx.write("data.txt", "overwritten");
    repo.restore(&left[0]).unwrap();
    assert_eq!(fx.read("data.txt").unwrap(), noise(5, 100 * 1024));
}

#[test]
fn at_most_max_checkpoints_are_kept() {
    let mut fx = Fixture::new();
    fx.config.max_checkpoints = 3;
    let repo = fx.open();
    let mut ids = Vec::new();
    for round in 0..5 {
        fx.write("a.txt", &format!("round {round}\n"));
        ids.push(
            repo.snapshot(&edit_meta("write_file", &["a.txt"]))
                .unwrap()
                .id,
        );
    }
    let report = repo.maybe_gc().unwrap();
    assert_eq!(report.dropped, ids[..2].to_vec());
    let left: Vec<String> = repo.list().unwrap().into_iter().map(|c| c.id).collect();
    assert_eq!(left, ids[2..].iter().rev().cloned().collect::<Vec<_>>());
}

/// A workspace whose first read takes far longer than the budget.
fn big_workspace(fx: &Fixture, files: usize) {
    for i in 0..files {
        fx.write(
            &format!("d{:02}/f{i:05}.txt", i % 50),
            &noise(i as u64, 2000),
        );
    }
}

#[test]
fn an_edit_never_waits_for_the_baseline_of_a_big_workspace() {
    let mut fx = Fixture::new();
    fx.config.budget = Duration::from_millis(100);
    big_workspace(&fx, 6000);
    let checkpointer = Checkpointer::new(fx.open());
    let baseline = checkpointer.start_baseline().unwrap();

    let started = Instant::now();
    let checkpoint = checkpointer
        .checkpoint(&edit_meta("replace", &["d00/f00000.txt"]))
        .unwrap();
    let waited = started.elapsed();
    assert!(
        !checkpointer.baseline_ready(),
        "the baseline must still be running for this test to mean anything"
    );
    assert_eq!(checkpoint.kind, CheckpointKind::Partial);
    assert!(
        waited < Duration::from_secs(2),
        "the edit waited {waited:?}"
    );

    // The edit goes ahead; its checkpoint undoes it.
    fx.write("d00/f00000.txt", "edited\n");
    baseline.join().unwrap();
    assert!(checkpointer.baseline_ready());
    checkpointer.repo().restore(&checkpoint.id).unwrap();
    assert_eq!(fx.read("d00/f00000.txt").unwrap(), noise(0, 2000));

    // With the baseline done (and a budget that fits this machine), the
    // next checkpoint is a full one.
    let checkpointer = checkpointer.with_budget(Duration::from_secs(30));
    let full = checkpointer
        .checkpoint(&edit_meta("replace", &["d01/f00001.txt"]))
        .unwrap();
    assert_eq!(full.kind, CheckpointKind::Full);
    // The abandoned full snapshot of the first edit was never recorded.
    let kinds: Vec<(CheckpointKind, Option<String>)> = checkpointer
        .repo()
        .list()
        .unwrap()
        .into_iter()
        .map(|c| (c.kind, c.meta.label))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (CheckpointKind::Full, None),
            (
                CheckpointKind::Partial,
                Some(format!("before restoring {}", checkpoint.id))
            ),
            (CheckpointKind::Partial, None),
        ]
    );
}

#[test]
fn a_workspace_bigger_than_the_cap_gets_partial_checkpoints_only() {
    let mut fx = Fixture::new();
    fx.config.max_total_bytes = 50 * 1024;
    for i in 0..10 {
        fx.write(&format!("f{i}.txt"), &noise(i, 10 * 1024));
    }
    let repo = fx.open();
    let err = repo
        .snapshot(&edit_meta("write_file", &["f0.txt"]))
        .unwrap_err();
    assert!(
        matches!(err, gd_checkpoint::CheckpointError::TooBig { .. }),
        "{err}"
    );
    let checkpointer = Checkpointer::new(repo);
    checkpointer.start_baseline().unwrap().join().unwrap();
    let checkpoint = checkpointer
        .checkpoint(&edit_meta("write_file", &["f0.txt"]))
        .unwrap();
    assert_eq!(checkpoint.kind, CheckpointKind::Partial);
    fx.write("f0.txt", "edited");
    checkpointer.repo().restore(&checkpoint.id).unwrap();
    assert_eq!(fx.read("f0.txt").unwrap(), noise(0, 10 * 1024));
    assert!(
        checkpointer.repo().size_bytes().unwrap() < 50 * 1024,
        "nothing but the edited file was stored"
    );
}
