//! The performance budget's desktop figures (issue 15), in one run:
//!
//! - `desktop.start_to_content_s`: the app's start → its `content` mark (fresh HOME, median);
//! - `desktop.floor_start_s`: a blank WebKitGTK window's start → its page content (`floor.rs`);
//! - `desktop.idle_over_floor_mb` / `desktop.idle_pss_over_floor_mb`: the app's idle memory
//!   (RSS / PSS summed over its process tree, session connected) minus the blank window's;
//! - `desktop.web_process_200msg_over_blank_mb`: the app's web process with a stored
//!   `--messages`-message conversation open (reopened at start, as the app does with the
//!   workspace's last session) minus the blank window's web process (RSS).
//!
//! Each round launches the three (blank window, app, app with the conversation), alternating
//! the order (A B C, C B A, ...) so that a drift of the machine's load affects them alike;
//! figures are differences of medians.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

use crate::floor::Floor;
use crate::{
    Memory, Options, app_pid, connected, launch_with, measure_startup, median, memory,
    process_tree, seed, workspace,
};

/// What one launch measured: start → content (s) and the process tree's memory after idle.
struct Sample {
    start: f64,
    memory: Vec<Memory>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Floor,
    App,
    Conversation,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Floor => "floor",
            Kind::App => "app",
            Kind::Conversation => "app_conversation",
        }
    }
}

fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

/// RSS (or PSS) of the processes whose name starts with `prefix` ("" for all), MB.
fn sum(memory: &[Memory], prefix: &str, pss: bool) -> f64 {
    mb(memory
        .iter()
        .filter(|m| m.name.starts_with(prefix))
        .map(|m| if pss { m.pss_kb } else { m.rss_kb })
        .sum())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The messages the page shows (user and model), for the conversation launch.
const SHOWN: &str = "return document.querySelectorAll(\
    '[data-testid=\"message-user\"],[data-testid=\"message-model\"]').length;";

/// Diagnostics: with `GD_BENCH_SMAPS_DIR`, each measured process's `/proc/<pid>/smaps` is
/// copied there (`<launch>_<round>_<process>.smaps`) to see where the memory is.
fn keep_smaps(tree: &[u32], launch: &str, round: usize) {
    let Some(dir) = std::env::var_os("GD_BENCH_SMAPS_DIR") else {
        return;
    };
    let dir = Path::new(&dir);
    let _ = std::fs::create_dir_all(dir);
    for pid in tree {
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let file = dir.join(format!("{launch}_{round}_{}.smaps", name.trim()));
        let _ = std::fs::copy(format!("/proc/{pid}/smaps"), file);
    }
}

async fn floor(o: &Options, round: usize) -> Result<Sample> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/app/blank_webkit.py");
    let floor = Floor::launch(&script)?;
    tokio::time::sleep(Duration::from_secs(o.idle_secs)).await;
    let tree = process_tree(floor.pid);
    keep_smaps(&tree, Kind::Floor.name(), round);
    Ok(Sample {
        start: floor.start_to_content,
        memory: memory(&tree),
    })
}

async fn app(
    o: &Options,
    binary: &Path,
    fake: &FakeGemini,
    kind: Kind,
    round: usize,
) -> Result<Sample> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp);
    let data = temp.path().join("data");
    let data_env = data.to_string_lossy().into_owned();
    let mut env = Vec::new();
    if kind == Kind::Conversation {
        seed::seed(&data, &ws.canonicalize()?, o.messages)?;
        env.push(("GEMINI_DESKTOP_DATA_DIR", data_env.as_str()));
    }
    let name = format!("budget_{}_{round}", kind.name());
    let app = launch_with(&name, &ws, fake, &env).await?;
    let pid = app_pid(&app, binary)?;
    let startup = measure_startup(&app, pid).await?;
    connected(&app).await?;
    if kind == Kind::Conversation {
        // The last page of the conversation is on screen (it is restored over a few frames).
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let shown = app.client().execute(SHOWN, vec![]).await?;
            if shown.as_u64().unwrap_or(0) > 0 {
                break;
            }
            if std::time::Instant::now() > deadline {
                bail!("the stored conversation never showed");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    tokio::time::sleep(Duration::from_secs(o.idle_secs)).await;
    let tree = process_tree(pid);
    keep_smaps(&tree, kind.name(), round);
    let memory = memory(&tree);
    if kind == Kind::Conversation {
        let shown = app.client().execute(SHOWN, vec![]).await?;
        eprintln!("    messages on the page: {shown}");
    }
    app.close().await?;
    Ok(Sample {
        start: startup
            .content_mark
            .context("the UI set no `content` mark")?,
        memory,
    })
}

pub async fn run(o: &Options, binary: &Path, fake: &FakeGemini) -> Result<()> {
    let load_before = load_average();
    let kinds = [Kind::Floor, Kind::App, Kind::Conversation];
    let mut samples: Vec<(Kind, Sample)> = Vec::new();
    for round in 0..o.runs {
        let mut order = kinds;
        if round % 2 == 1 {
            order.reverse();
        }
        for kind in order {
            let sample = match kind {
                Kind::Floor => floor(o, round).await?,
                _ => app(o, binary, fake, kind, round).await?,
            };
            eprintln!(
                "round {round} {:<16} start→content {:.3} s, RSS {:.1} MB, PSS {:.1} MB ({})",
                kind.name(),
                sample.start,
                sum(&sample.memory, "", false),
                sum(&sample.memory, "", true),
                sample
                    .memory
                    .iter()
                    .map(|m| format!("{} {:.1}/{:.1}", m.name, mb(m.rss_kb), mb(m.pss_kb)))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            samples.push((kind, sample));
        }
    }
    let med = |kind: Kind, f: &dyn Fn(&Sample) -> f64| {
        median(
            samples
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, s)| f(s))
                .collect(),
        )
    };
    // Per kind and process: medians of RSS and PSS (the UI process is the tree's first).
    let mut processes = serde_json::Map::new();
    for kind in kinds {
        let ui = |pss: bool| {
            move |s: &Sample| {
                s.memory
                    .first()
                    .map_or(0.0, |m| mb(if pss { m.pss_kb } else { m.rss_kb }))
            }
        };
        let mut entry = json!({
            "start_to_content_s": med(kind, &|s| s.start),
            "total_rss_mb": med(kind, &|s| sum(&s.memory, "", false)),
            "total_pss_mb": med(kind, &|s| sum(&s.memory, "", true)),
            "ui_rss_mb": med(kind, &ui(false)),
            "ui_pss_mb": med(kind, &ui(true)),
        });
        for (key, prefix) in [("web", "WebKitWebProces"), ("network", "WebKitNetworkPr")] {
            entry[format!("{key}_rss_mb")] = json!(med(kind, &|s| sum(&s.memory, prefix, false)));
            entry[format!("{key}_pss_mb")] = json!(med(kind, &|s| sum(&s.memory, prefix, true)));
        }
        processes.insert(kind.name().into(), entry);
    }
    let p = |kind: Kind, key: &str| processes[kind.name()][key].as_f64().unwrap_or(f64::NAN);
    let round3 = |v: f64| (v * 1000.0).round() / 1000.0;
    let figures = json!({
        "desktop.start_to_content_s": round3(p(Kind::App, "start_to_content_s")),
        "desktop.floor_start_s": round3(p(Kind::Floor, "start_to_content_s")),
        "desktop.idle_over_floor_mb":
            round3(p(Kind::App, "total_rss_mb") - p(Kind::Floor, "total_rss_mb")),
        "desktop.idle_pss_over_floor_mb":
            round3(p(Kind::App, "total_pss_mb") - p(Kind::Floor, "total_pss_mb")),
        "desktop.web_process_200msg_over_blank_mb":
            round3(p(Kind::Conversation, "web_rss_mb") - p(Kind::Floor, "web_rss_mb")),
    });
    println!("| figure (medians of {} rounds) | value |", o.runs);
    println!("|---|---|");
    if let Value::Object(map) = &figures {
        for (key, value) in map {
            println!("| {key} | {value} |");
        }
    }
    println!(
        "\n| launch | start → content (s) | total RSS / PSS (MB) | UI process | web process | network process (RSS / PSS MB) |"
    );
    println!("|---|---|---|---|---|---|");
    for kind in kinds {
        let pair = |what: &str| {
            format!(
                "{:.1} / {:.1}",
                p(kind, &format!("{what}_rss_mb")),
                p(kind, &format!("{what}_pss_mb"))
            )
        };
        println!(
            "| {} | {:.3} | {} | {} | {} | {} |",
            kind.name(),
            p(kind, "start_to_content_s"),
            pair("total"),
            pair("ui"),
            pair("web"),
            pair("network")
        );
    }
    if o.json {
        let line = json!({
            "figures": figures,
            "meta": {
                "app": binary,
                "rounds": o.runs,
                "idle_secs": o.idle_secs,
                "messages": o.messages,
                "load_average_before": load_before,
                "load_average_after": load_average(),
                "medians": processes,
            },
        });
        println!("{line}");
    }
    Ok(())
}
