//! Issue 16's memory figures: the app's total memory (RSS and PSS summed over its process tree:
//! the app, its web process and network process) with 1, 5 and 10 idle conversations open, each
//! with a short history (one prompt and its answer), after `--idle-secs` of idle.
//!
//!     cargo run --release -p gd-e2e --example app-perf -- --conversations [--runs 3] [--json]
//!
//! Conversations are opened the way a user does (the sidebar's New button), each on the same
//! folder; every one is a live core session. `desktop.extra_idle_conversation_mb` is
//! (RSS with 10 − RSS with 1) / 9, medians over the rounds.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use gd_fake_gemini::FakeGemini;
use serde_json::json;

use crate::{Options, app_pid, connected, launch_with, median, memory, process_tree, workspace};

const COUNTS: [usize; 3] = [1, 5, 10];

/// Opens `count` conversations with one short exchange each; returns (RSS, PSS) in MB.
async fn measure(
    o: &Options,
    binary: &Path,
    fake: &FakeGemini,
    count: usize,
    round: usize,
) -> Result<(f64, f64)> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp);
    let app = launch_with(&format!("conversations_{count}_{round}"), &ws, fake, &[]).await?;
    let pid = app_pid(&app, binary)?;
    connected(&app).await?;
    for n in 0..count {
        if n > 0 {
            app.click("new-conversation").await?;
            app.wait_for_count("conversation-item", "grew", |c| c == n + 1)
                .await?;
            connected(&app).await?;
        }
        app.type_and_enter("prompt-input", &format!("Question {n}"))
            .await?;
        app.wait_for_last_text("message-model", "answered", |t| t.contains("OK"))
            .await?;
        app.wait_until_gone("cancel", "the turn ended").await?;
    }
    tokio::time::sleep(Duration::from_secs(o.idle_secs)).await;
    let mem = memory(&process_tree(pid));
    let rss = mem.iter().map(|m| m.rss_kb).sum::<u64>() as f64 / 1024.0;
    let pss = mem.iter().map(|m| m.pss_kb).sum::<u64>() as f64 / 1024.0;
    eprintln!("round {round}, {count:>2} conversation(s): RSS {rss:7.1} MB, PSS {pss:7.1} MB");
    app.close().await?;
    Ok((rss, pss))
}

pub async fn run(o: &Options, binary: &Path, fake: &FakeGemini) -> Result<()> {
    let mut rss: Vec<Vec<f64>> = vec![Vec::new(); COUNTS.len()];
    let mut pss: Vec<Vec<f64>> = vec![Vec::new(); COUNTS.len()];
    for round in 0..o.runs {
        // Alternate the order between rounds, so a drift of the load treats the counts alike.
        let order: Vec<usize> = if round % 2 == 0 {
            vec![0, 1, 2]
        } else {
            vec![2, 1, 0]
        };
        for i in order {
            let (r, p) = measure(o, binary, fake, COUNTS[i], round).await?;
            rss[i].push(r);
            pss[i].push(p);
        }
    }
    let rss: Vec<f64> = rss.into_iter().map(median).collect();
    let pss: Vec<f64> = pss.into_iter().map(median).collect();
    println!("| conversations | RSS (MB) | PSS (MB) |");
    println!("|---|---|---|");
    for (i, count) in COUNTS.iter().enumerate() {
        println!("| {count} | {:.1} | {:.1} |", rss[i], pss[i]);
    }
    let per_extra = (rss[2] - rss[0]) / 9.0;
    let per_extra_pss = (pss[2] - pss[0]) / 9.0;
    println!("each extra idle conversation: {per_extra:.2} MB RSS, {per_extra_pss:.2} MB PSS");
    if o.json {
        println!(
            "{}",
            json!({
                "figures": {
                    "desktop.conversations_1_rss_mb": rss[0],
                    "desktop.conversations_5_rss_mb": rss[1],
                    "desktop.conversations_10_rss_mb": rss[2],
                    "desktop.extra_idle_conversation_mb": per_extra,
                },
                "meta": { "rounds": o.runs, "idle_secs": o.idle_secs, "pss_mb": pss }
            })
        );
    }
    Ok(())
}
