//! The picker's performance on a large tree, next to `fd` in the same run.
//!
//!     python3 bench/gen_tree.py /tmp/picker-bench-tree 150000
//!     cargo run -p gd-workspace-index --example bench_picker -- /tmp/picker-bench-tree
//!
//! Measures: the first tree level (one `list_dir`), fuzzy queries on the
//! built index (until the final, complete result), the full index build,
//! how long listings and searches take *while* the index builds (the UI
//! calls them then), and `fdfind -H --type f` over the same tree. Prints a
//! Markdown table for bench/RESULTS.md.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use gd_workspace_index::{FileIndex, Filtering, list_dir};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() -> anyhow::Result<()> {
    let root: PathBuf = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: bench_picker TREE"))?
        .into();
    let root = root.canonicalize()?;
    let runs = 5;
    let filtering = Filtering::default();

    // First level of the tree.
    let first_level: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let entries = list_dir(&root, "", filtering, false).expect("list the root");
            assert!(!entries.is_empty());
            t.elapsed()
        })
        .collect();

    // Full build, with listings and searches measured while it runs.
    let mut builds = Vec::new();
    let mut files = 0;
    let mut during_list = Vec::new();
    let mut during_first_result = Vec::new();
    let mut index = None;
    for _ in 0..3 {
        let idx = FileIndex::new(vec![root.clone()], filtering);
        let t = Instant::now();
        idx.start_build();
        // While it builds: a listing, and the time to a search's first update.
        let t_list = Instant::now();
        list_dir(&root, "crate_00", filtering, false).expect("list");
        during_list.push(t_list.elapsed());
        let t_search = Instant::now();
        let mut first = None;
        idx.search("file042", 50, |_| {
            first.get_or_insert(t_search.elapsed());
            false
        });
        during_first_result.push(first.unwrap_or_default());
        assert!(idx.wait_built(Duration::from_secs(120)));
        builds.push(t.elapsed());
        files = idx.len();
        index = Some(idx);
    }
    let index = index.expect("built");

    // Fuzzy queries on the built index, until the final result.
    let queries = ["file042", "c07m33f099", "mod_12/file", "impl", "zzzqqq"];
    let mut query_rows = Vec::new();
    for q in queries {
        let times: Vec<Duration> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                let mut matched = 0;
                index.search(q, 50, |u| {
                    matched = u.matched;
                    true
                });
                let _ = matched;
                t.elapsed()
            })
            .collect();
        let mut matched = 0;
        index.search(q, 50, |u| {
            matched = u.matched;
            true
        });
        query_rows.push((q, median(times), matched));
    }

    // fd over the same tree: same rules (.gitignore, hidden files shown, .git skipped).
    let mut fd_times = Vec::new();
    let mut fd_files = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let out = Command::new("fdfind")
            .args(["-H", "--type", "f", "."])
            .arg(&root)
            .output()?;
        fd_times.push(t.elapsed());
        fd_files = out.stdout.iter().filter(|&&b| b == b'\n').count();
    }

    println!(
        "Tree: {} ({files} indexed files; fd lists {fd_files})\n",
        root.display()
    );
    println!("| measure | median | target |");
    println!("|---|---|---|");
    println!(
        "| first tree level (`list_dir` of the root) | {} | < 50 ms |",
        ms(median(first_level))
    );
    println!(
        "| full index build ({files} files) | {} | < 1.5 s |",
        ms(median(builds.clone()))
    );
    println!(
        "| `fdfind -H --type f` ({fd_files} files) | {} | (reference) |",
        ms(median(fd_times))
    );
    println!(
        "| listing a folder while the index builds | {} | UI responsive |",
        ms(median(during_list))
    );
    println!(
        "| first streamed search result while the index builds | {} | UI responsive |",
        ms(median(during_first_result))
    );
    for (q, t, matched) in query_rows {
        println!(
            "| fuzzy query `{q}` to the final result ({matched} matches) | {} | < 100 ms |",
            ms(t)
        );
    }
    Ok(())
}
