//! Checkpoint timings on a big workspace.
//!
//!     python3 bench/gen_tree.py /tmp/tree100k 100000
//!     cargo run -p gd-checkpoint --example checkpoint_bench -- /tmp/tree100k [RUNS]
//!
//! Uses a fresh shadow repository in a temporary directory, then times:
//! the baseline (first read of the workspace), a full snapshot with nothing
//! changed, full snapshots after editing one file (RUNS times, the < 500 ms
//! target), a partial snapshot of one file, the diff and the restore of a
//! checkpoint RUNS edits back, and the undo of that restore. The edited
//! files are put back at the end.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gd_checkpoint::{CheckpointConfig, CheckpointMeta, ShadowRepo};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: checkpoint_bench DIR [RUNS]  (make DIR with bench/gen_tree.py)");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(10);
    // CHECKPOINT_BENCH_DATA keeps the shadow repository between runs (the
    // baseline is then a stat walk); else a fresh one is made and removed.
    let keep = std::env::var_os("CHECKPOINT_BENCH_DATA").map(PathBuf::from);
    let data = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("checkpoint-bench-{}", std::process::id()))
    });
    let config = CheckpointConfig::new(&data);
    let files = pick_files(&dir, runs + 1);
    let originals: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
    println!("workspace: {}", dir.display());

    let repo = ShadowRepo::open(&config, &dir).expect("open");
    let t = Instant::now();
    let cpu = cpu_ms();
    repo.refresh().expect("baseline");
    report("baseline (first read, every file hashed)", &[t.elapsed()]);
    println!("  cpu (git + us): {:.0} ms", cpu_ms() - cpu);

    let meta = |file: &str| CheckpointMeta {
        tool: Some("replace".into()),
        files: vec![file.to_owned()],
        ..CheckpointMeta::default()
    };
    let t = Instant::now();
    let start = repo.snapshot(&meta(&files[0])).expect("snapshot");
    report("full snapshot, nothing changed", &[t.elapsed()]);

    let mut full = Vec::new();
    let cpu = cpu_ms();
    for (i, file) in files.iter().enumerate().take(runs) {
        let path = dir.join(file);
        let mut content = originals[i].clone();
        content.extend_from_slice(format!("// edit {i}\n").as_bytes());
        std::fs::write(&path, content).unwrap();
        let t = Instant::now();
        repo.snapshot(&meta(file)).expect("snapshot");
        full.push(t.elapsed());
    }
    report("full snapshot after editing one file", &full);
    println!(
        "  cpu (git + us) per snapshot: {:.0} ms",
        (cpu_ms() - cpu) / runs as f64
    );

    let mut partial = Vec::new();
    for file in files.iter().take(runs) {
        let t = Instant::now();
        repo.snapshot_files(&meta(file)).expect("partial");
        partial.push(t.elapsed());
    }
    report("partial snapshot of one file", &partial);

    let t = Instant::now();
    let changes = repo.diff(&start.id).expect("diff");
    report(
        &format!(
            "diff against the first checkpoint ({} files)",
            changes.len()
        ),
        &[t.elapsed()],
    );

    let t = Instant::now();
    let cpu = cpu_ms();
    let restored = repo.restore(&start.id).expect("restore");
    let restore_cpu = cpu_ms() - cpu;
    report(
        &format!(
            "restore of the first checkpoint ({} files changed back)",
            restored.changes.len()
        ),
        &[t.elapsed()],
    );
    println!("  cpu (git + us): {restore_cpu:.0} ms");
    let t = Instant::now();
    repo.restore(restored.undo.as_deref().expect("undo"))
        .expect("undo");
    report("undo of that restore", &[t.elapsed()]);

    for (file, original) in files.iter().zip(&originals) {
        std::fs::write(dir.join(file), original).unwrap();
    }
    let t = Instant::now();
    let size = repo.size_bytes().unwrap();
    report(
        &format!(
            "shadow repository size: {} MiB (count-objects)",
            size / (1024 * 1024)
        ),
        &[t.elapsed()],
    );
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&data);
    }
}

/// `count` files spread over the tree (first file of several directories).
fn pick_files(dir: &Path, count: usize) -> Vec<String> {
    let mut picked = Vec::new();
    let mut crates: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("crate_"))
        .map(|e| e.path())
        .collect();
    crates.sort();
    'outer: for krate in crates {
        let mut mods: Vec<_> = std::fs::read_dir(&krate)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .collect();
        mods.sort();
        for m in mods {
            let mut files: Vec<_> = std::fs::read_dir(&m)
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .collect();
            files.sort();
            if let Some(f) = files.first() {
                picked.push(f.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
            if picked.len() == count {
                break 'outer;
            }
        }
    }
    assert_eq!(
        picked.len(),
        count,
        "{} does not look like a gen_tree.py tree",
        dir.display()
    );
    picked
}

/// User + system CPU of this process and its finished children (git), in ms.
fn cpu_ms() -> f64 {
    fn ms(who: libc::c_int) -> f64 {
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage writes into the struct we own.
        unsafe { libc::getrusage(who, &mut usage) };
        let tv = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
        tv(usage.ru_utime) + tv(usage.ru_stime)
    }
    ms(libc::RUSAGE_SELF) + ms(libc::RUSAGE_CHILDREN)
}

fn report(what: &str, times: &[Duration]) {
    let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    if ms.len() == 1 {
        println!("{what}: {:.0} ms", ms[0]);
    } else {
        let median = ms[ms.len() / 2];
        println!(
            "{what}: median {median:.0} ms, min {:.0}, max {:.0} (n={})",
            ms[0],
            ms[ms.len() - 1],
            ms.len()
        );
    }
}
