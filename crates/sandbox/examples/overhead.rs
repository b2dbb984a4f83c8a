//! The sandbox's cost per command, the way the app pays it: `Sandbox::prepare` (the mounts of
//! the policy, git folders included, and the seccomp descriptor), then spawning bubblewrap and
//! waiting for the command, against spawning the command itself.
//!
//! ```text
//! cargo run --release -p gd-sandbox --example overhead -- REPO [RUNS]
//! ```
//!
//! REPO is a git checkout (the workspace: writable, its git folder protected). Cases: `true`,
//! `git status` in REPO, `ls -R` of REPO's `crates` folder (or REPO). Prints a Markdown table:
//! median and mean milliseconds per command, plain and sandboxed, and their ratio.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gd_sandbox::{Network, Policy, Sandbox};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(repo) = args.next().map(PathBuf::from) else {
        eprintln!("usage: overhead REPO [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(100);
    let sandbox = Sandbox::detect().unwrap_or_else(|why| {
        eprintln!("{why}");
        std::process::exit(3);
    });
    let policy = Policy {
        writable: vec![repo.clone()],
        extra_writable: Vec::new(),
        network: Network::None,
        home: None,
    };
    let listed = if repo.join("crates").is_dir() {
        repo.join("crates")
    } else {
        repo.clone()
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("`true`", vec!["true".into()]),
        (
            "`git status`",
            vec!["git".into(), "status".into(), "--short".into()],
        ),
        (
            "`ls -R`",
            vec!["ls".into(), "-R".into(), listed.display().to_string()],
        ),
    ];

    println!(
        "| command | plain, median (mean) | sandboxed, median (mean) | overhead (median) | ratio |"
    );
    println!("|---|---|---|---|---|");
    for (name, argv) in &cases {
        let plain = measure(runs, || run_plain(argv, &repo));
        let boxed = measure(runs, || run_sandboxed(&sandbox, &policy, argv, &repo));
        println!(
            "| {name} | {:.2} ms ({:.2}) | {:.2} ms ({:.2}) | +{:.2} ms | {:.1}× |",
            ms(plain.0),
            ms(plain.1),
            ms(boxed.0),
            ms(boxed.1),
            ms(boxed.0.saturating_sub(plain.0)),
            boxed.0.as_secs_f64() / plain.0.as_secs_f64()
        );
    }
    let prepare = measure(runs, || {
        let t = Instant::now();
        let p = sandbox
            .prepare(&policy, Path::new("true"), &[], &repo)
            .expect("prepare");
        drop(p);
        t.elapsed()
    });
    println!();
    println!(
        "`Sandbox::prepare` alone: {:.3} ms median ({:.3} mean); {runs} runs each.",
        ms(prepare.0),
        ms(prepare.1)
    );
}

/// (median, mean) of `runs` timings, after 5 unmeasured ones.
fn measure(runs: usize, mut one: impl FnMut() -> Duration) -> (Duration, Duration) {
    for _ in 0..5 {
        one();
    }
    let mut times: Vec<Duration> = (0..runs.max(1)).map(|_| one()).collect();
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    (times[times.len() / 2], mean)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn run_plain(argv: &[String], cwd: &Path) -> Duration {
    let t = Instant::now();
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    assert!(status.success(), "{argv:?}");
    t.elapsed()
}

fn run_sandboxed(sandbox: &Sandbox, policy: &Policy, argv: &[String], cwd: &Path) -> Duration {
    let t = Instant::now();
    let args: Vec<std::ffi::OsString> = argv[1..].iter().map(Into::into).collect();
    let prepared = sandbox
        .prepare(policy, Path::new(&argv[0]), &args, cwd)
        .expect("prepare");
    let mut command = Command::new(prepared.program());
    command
        .args(prepared.args())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    prepared.configure(&mut command);
    let status = command.status().expect("spawn");
    assert!(status.success(), "{argv:?}");
    t.elapsed()
}
