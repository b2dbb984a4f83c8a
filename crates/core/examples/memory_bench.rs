//! Times memory loading (context-file discovery, imports and concatenation,
//! the work a session does at start and on `/memory refresh`) on a tree and
//! prints the median of several runs. `bench/memory.sh` runs it.
//!
//!     cargo run -p gd-core --example memory_bench -- <dir> [max_dirs] [runs]

use std::time::Instant;

use gd_core::config::FileFiltering;
use gd_core::memory::{DEFAULT_MAX_DIRS, DiscoveryOptions, load_memory};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: memory_bench <dir> [max_dirs|all] [runs]");
        std::process::exit(2);
    };
    let workspace = std::path::Path::new(dir)
        .canonicalize()
        .expect("the directory exists");
    let max_dirs = match args.get(1).map(String::as_str) {
        None => DEFAULT_MAX_DIRS,
        Some("all") => usize::MAX,
        Some(n) => n.parse().expect("max_dirs is a number or `all`"),
    };
    let runs: usize = args
        .get(2)
        .map_or(10, |n| n.parse().expect("runs is a number"));
    let options = DiscoveryOptions {
        workspace: workspace.clone(),
        home: None,
        file_names: vec!["GEMINI.md".into()],
        max_dirs,
        filtering: FileFiltering::default(),
        workspace_files: true,
        boundary_markers: None,
        include_directories: false,
    };
    let mut times = Vec::new();
    let mut memory = None;
    for _ in 0..runs {
        let started = Instant::now();
        memory = Some(load_memory(&options, std::slice::from_ref(&workspace)));
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let memory = memory.expect("at least one run");
    println!(
        "max_dirs={} files={} chars={} median_ms={:.1} min_ms={:.1} max_ms={:.1}",
        args.get(1).map_or("200", String::as_str),
        memory.files.len(),
        memory.text.len(),
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
}
