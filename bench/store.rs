//! Session history benchmark (issue 7): a generated store of 10,000
//! sessions / 1,000,000 messages plus one 100 MB transcript.
//!
//!     cargo bench -p gd-store --bench store --profile dev            # full size
//!     cargo bench -p gd-store --bench store --profile dev -- --small # 1/10 size, quick
//!
//! (The dev profile builds SQLite with optimisations, see the root
//! Cargo.toml; the Rust side is not on the measured paths.) Set
//! `GD_BENCH_DIR` to keep the database between runs (`--reuse` then skips
//! generation). Prints a Markdown table for bench/RESULTS.md.
//!
//! Measured: listing (first page, all projects and one project), full-text
//! queries (rare, medium and very common words), the first and last page of
//! the 100 MB transcript in a fresh process (time and peak RSS of that
//! process), and the cost of one committed message at synchronous=NORMAL
//! and FULL.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gd_store::{
    Durability, ListQuery, MessageKind, NewMessage, NewSession, PageFrom, PageQuery, Role,
    SearchQuery, Store, TokenUsage,
};
use serde_json::json;

const BIG_SESSION: &str = "big-transcript";

/// A small deterministic generator (no dependency, same data every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Roughly Zipf-distributed word index: a few words are very common.
    fn zipf(&mut self, n: u64) -> u64 {
        let u = (self.below(1_000_000) as f64 + 1.0) / 1_000_001.0;
        ((n as f64).powf(u) - 1.0) as u64 % n
    }
}

fn word(i: u64) -> String {
    const SYL: [&str; 16] = [
        "ka", "lo", "mi", "ra", "te", "su", "vo", "ne", "pi", "da", "gu", "ze", "bo", "ly", "fa",
        "xi",
    ];
    let mut w = String::new();
    let mut n = i + 16;
    while n > 0 {
        w.push_str(SYL[(n % 16) as usize]);
        n /= 16;
    }
    w
}

fn sentence(rng: &mut Rng, words: usize) -> String {
    (0..words)
        .map(|_| word(rng.zipf(20_000)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn generate(store: &Store, sessions: u64, per_session: u64, big_bytes: usize) {
    let mut rng = Rng(42);
    let started = Instant::now();
    let day = 86_400_000i64;
    let t0 = 1_700_000_000_000i64;
    for s in 0..sessions {
        let id = format!("session-{s:05}");
        let created = t0 + (s as i64) * (day / 10);
        store
            .create_session(&NewSession {
                id: id.clone(),
                workspace: format!("/home/dev/project-{}", s % 40),
                title: sentence(&mut rng, 6),
                model: Some("gemini-2.5-pro".into()),
                created_ms: created,
                source: gd_store::SOURCE_DESKTOP.into(),
                origin: None,
            })
            .unwrap();
        let messages: Vec<NewMessage> = (0..per_session)
            .map(|i| {
                let user = i % 2 == 0;
                let text = sentence(&mut rng, if user { 12 } else { 60 });
                let (role, kind) = if user {
                    (Role::User, MessageKind::Prompt)
                } else {
                    (Role::Model, MessageKind::Model)
                };
                let mut m = NewMessage::new(role, kind, json!([{ "text": text }]), text);
                m.created_ms = created + i as i64 * 1000;
                if !user {
                    m.usage = Some(TokenUsage {
                        prompt: 1000,
                        output: 80,
                        total: 1080,
                        ..Default::default()
                    });
                }
                m
            })
            .collect();
        store.append_messages(&id, &messages).unwrap();
        if s % 1000 == 999 {
            eprintln!("  {} sessions, {:.0?}", s + 1, started.elapsed());
        }
    }
    // One 100 MB transcript: 20,000 messages of ~5 KB (tool outputs, code).
    store
        .create_session(&NewSession {
            id: BIG_SESSION.into(),
            workspace: "/home/dev/big".into(),
            title: "A very long session".into(),
            model: Some("gemini-2.5-pro".into()),
            created_ms: t0,
            source: gd_store::SOURCE_DESKTOP.into(),
            origin: None,
        })
        .unwrap();
    let per = 5_000;
    let count = big_bytes / per;
    let mut batch = Vec::new();
    for i in 0..count {
        let text = sentence(&mut rng, per / 7);
        let mut m = NewMessage::new(
            Role::Model,
            MessageKind::Model,
            json!([{ "text": text }]),
            text,
        );
        m.created_ms = t0 + i as i64;
        batch.push(m);
        if batch.len() == 1000 {
            store.append_messages(BIG_SESSION, &batch).unwrap();
            batch.clear();
        }
    }
    store.append_messages(BIG_SESSION, &batch).unwrap();
    eprintln!("generated in {:.1?}", started.elapsed());
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(f());
                t.elapsed()
            })
            .collect(),
    )
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|n| n.parse().unwrap_or(0)))
        })
        .unwrap_or(0)
}

/// Child mode: open the store and read one page of the big transcript.
fn open_page(db: &Path, from: &str) {
    let t = Instant::now();
    let store = Store::open(db).unwrap();
    let from = if from == "end" {
        PageFrom::End
    } else {
        PageFrom::Start
    };
    let page = store
        .page(
            BIG_SESSION,
            &PageQuery {
                from,
                limit: 50,
                max_bytes: 64 * 1024,
            },
        )
        .unwrap();
    let elapsed = t.elapsed();
    assert_eq!(page.messages.len(), 50);
    println!("{} {}", elapsed.as_micros(), peak_rss_kb());
}

fn commit_cost(dir: &Path, durability: Durability, n: usize) -> Duration {
    let path = dir.join(format!("commit-{durability:?}.sqlite3"));
    let _ = std::fs::remove_file(&path);
    let store = Store::open_with(&path, durability).unwrap();
    store
        .create_session(&NewSession {
            id: "s".into(),
            workspace: "/w".into(),
            title: String::new(),
            model: None,
            created_ms: 0,
            source: gd_store::SOURCE_DESKTOP.into(),
            origin: None,
        })
        .unwrap();
    let mut rng = Rng(7);
    let messages: Vec<NewMessage> = (0..n)
        .map(|_| {
            let text = sentence(&mut rng, 60);
            NewMessage::new(
                Role::Model,
                MessageKind::Model,
                json!([{ "text": text }]),
                text,
            )
        })
        .collect();
    let t = Instant::now();
    for m in &messages {
        store.append_message("s", m).unwrap();
    }
    t.elapsed() / n as u32
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--open-page") {
        open_page(Path::new(&args[i + 1]), &args[i + 2]);
        return;
    }
    let small = args.iter().any(|a| a == "--small");
    let reuse = args.iter().any(|a| a == "--reuse");
    let (sessions, per_session, big) = if small {
        (1_000u64, 100u64, 10_000_000usize)
    } else {
        (10_000, 100, 100_000_000)
    };
    let dir = std::env::var_os("GD_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("gd-store-bench"));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join(if small {
        "small.sqlite3"
    } else {
        "full.sqlite3"
    });
    if !(reuse && db.exists()) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
        eprintln!(
            "generating {sessions} sessions x {per_session} messages + a {} MB transcript into {}",
            big / 1_000_000,
            db.display()
        );
        let store = Store::open(&db).unwrap();
        generate(&store, sessions, per_session, big);
        store.checkpoint().unwrap();
    }
    let store = Store::open(&db).unwrap();
    let total_messages: i64 = store.message_count().unwrap();
    let db_mb = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0) / 1_000_000;

    let mut rows: Vec<(String, String)> = Vec::new();
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
    rows.push((
        "list sessions, first page of 50 (all projects)".into(),
        ms(time(21, || {
            store.list_sessions(&ListQuery::default()).unwrap()
        })),
    ));
    let first = store.list_sessions(&ListQuery::default()).unwrap();
    rows.push((
        "list sessions, next page (keyset)".into(),
        ms(time(21, || {
            store
                .list_sessions(&ListQuery {
                    after: Some((&first[49]).into()),
                    ..Default::default()
                })
                .unwrap()
        })),
    ));
    rows.push((
        "list sessions of one project, first page".into(),
        ms(time(21, || {
            store
                .list_sessions(&ListQuery {
                    workspace: Some("/home/dev/project-7".into()),
                    ..Default::default()
                })
                .unwrap()
        })),
    ));
    // Words by rank in the generated distribution: rank 5000 is rare, 200
    // medium, 3 very common (in a large share of all messages).
    for (label, rank) in [
        ("rare word", 5000u64),
        ("medium word", 200),
        ("very common word", 3),
    ] {
        let w = word(rank);
        let hits = store
            .search(&SearchQuery {
                text: w.clone(),
                limit: 50,
                ..Default::default()
            })
            .unwrap()
            .len();
        rows.push((
            format!("full-text search, {label} `{w}`, top 50 ({hits} shown)"),
            ms(time(11, || {
                store
                    .search(&SearchQuery {
                        text: w.clone(),
                        limit: 50,
                        ..Default::default()
                    })
                    .unwrap()
            })),
        ));
    }
    let two = format!("{} {}", word(200), word(30));
    rows.push((
        format!("full-text search, two words `{two}`, top 50"),
        ms(time(11, || {
            store
                .search(&SearchQuery {
                    text: two.clone(),
                    limit: 50,
                    ..Default::default()
                })
                .unwrap()
        })),
    ));
    rows.push((
        "page of 50 in the middle of the 100 MB transcript (warm)".into(),
        ms(time(21, || {
            store
                .page(
                    BIG_SESSION,
                    &PageQuery {
                        from: PageFrom::After(10_000),
                        limit: 50,
                        max_bytes: 64 * 1024,
                    },
                )
                .unwrap()
        })),
    ));
    let exe = std::env::current_exe().unwrap();
    for from in ["start", "end"] {
        let mut samples = Vec::new();
        let mut rss = 0;
        for _ in 0..5 {
            let out = Command::new(&exe)
                .args(["--open-page", db.to_str().unwrap(), from])
                .output()
                .unwrap();
            let line = String::from_utf8_lossy(&out.stdout);
            let mut it = line.split_whitespace();
            samples.push(Duration::from_micros(it.next().unwrap().parse().unwrap()));
            rss = rss.max(it.next().unwrap().parse::<u64>().unwrap());
        }
        rows.push((
            format!("fresh process: open store + {from} page of the 100 MB transcript"),
            format!(
                "{} (peak RSS {:.1} MB)",
                ms(median(samples)),
                rss as f64 / 1024.0
            ),
        ));
    }
    let n = 300;
    rows.push((
        "one message committed, synchronous=NORMAL (WAL)".into(),
        format!(
            "{:.0} µs",
            commit_cost(&dir, Durability::Normal, n).as_secs_f64() * 1e6
        ),
    ));
    rows.push((
        "one message committed, synchronous=FULL (WAL, fsync per commit)".into(),
        format!(
            "{:.0} µs",
            commit_cost(&dir, Durability::Full, n).as_secs_f64() * 1e6
        ),
    ));

    println!(
        "\n{} sessions, {} messages, database {} MB\n",
        store.session_count().unwrap(),
        total_messages,
        db_mb
    );
    println!("| measurement | median |\n|---|---|");
    for (what, value) in rows {
        println!("| {what} | {value} |");
    }
}
