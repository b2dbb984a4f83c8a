//! Issue 16's memory figures: the app's total memory (RSS and PSS summed over its process tree:
//! the app, its web process and network process) with 1, 5 and 10 idle conversations open, each
//! with a short history (one prompt and its answer), after `--idle-secs` of idle.
//!
//!     cargo run --release -p gd-e2e --example app-perf -- --conversations [--runs 3] [--json]
//!
//! Conversations are opened the way a user does (the sidebar's New button), each on the same
//! folder; every one is a live core session. `desktop.extra_idle_conversation_mb` is
//! (RSS with 10 − RSS with 1) / 9, medians over the rounds.
//!
//! Then three conversations stream at once (`--rate` chunks/s each, `--stream-secs` long, started
//! one after the other within a second or two): `desktop.three_streams_visible_lag_ms` is the
//! shown one's last chunk sent → on screen (the same page hook as the single-stream figure).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use gd_fake_gemini::FakeGemini;
use serde_json::json;

use crate::{
    END_MARK, Options, STREAM_HOOK, app_pid, connected, launch_with, median, memory, process_tree,
    stream_on_screen, stream_text, workspace,
};

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

/// What three concurrent streams measured: the shown one's lag and how much the streams overlapped.
struct ThreeStreams {
    lag_ms: f64,
    /// Seconds all three streams were being sent at the same time.
    overlap_secs: f64,
    rss_mb: f64,
}

/// Opens three conversations, each streaming a long answer; the third is shown and timed.
async fn three_streams(
    o: &Options,
    binary: &Path,
    fake: &FakeGemini,
    round: usize,
) -> Result<ThreeStreams> {
    let chunks = (o.stream_secs * o.rate).round() as usize;
    fake.reset(
        json!({
            "chunk_chars": o.chunk_chars,
            "chunk_delay_ms": 1000.0 / o.rate,
            "steps": [{"text": stream_text(chunks * o.chunk_chars)}]
        }),
        &[],
    );
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp);
    let app = launch_with(&format!("three_streams_{round}"), &ws, fake, &[]).await?;
    let pid = app_pid(&app, binary)?;
    connected(&app).await?;
    for n in 0..3 {
        if n > 0 {
            app.click("new-conversation").await?;
            app.wait_for_count("conversation-item", "grew", |c| c == n + 1)
                .await?;
            connected(&app).await?;
        }
        if n == 2 {
            app.client()
                .execute(STREAM_HOOK, vec![json!(END_MARK)])
                .await
                .context("install the page hook")?;
        }
        app.type_and_enter("prompt-input", &format!("Stream number {n}"))
            .await?;
    }
    let page = stream_on_screen(&app, o).await?;
    let rss = memory(&process_tree(pid))
        .iter()
        .map(|m| m.rss_kb)
        .sum::<u64>() as f64
        / 1024.0;
    let requests = fake.main_requests();
    let of = |n: usize| {
        requests
            .iter()
            .find(|r| {
                r.body
                    .as_ref()
                    .is_some_and(|b| b.to_string().contains(&format!("Stream number {n}")))
            })
            .with_context(|| format!("the request of stream {n}"))
    };
    let (first, shown) = (of(0)?, of(2)?);
    let end = shown
        .stream_end_ts
        .context("the fake recorded the stream's end")?;
    let first_end = first
        .stream_end_ts
        .context("the fake recorded the first stream's end")?;
    let lag_ms = page["done"].as_f64().unwrap_or_default() - end * 1000.0;
    let overlap_secs = first_end - shown.ts;
    eprintln!(
        "round {round}: shown stream's lag {lag_ms:.0} ms, overlap {overlap_secs:.1} s, RSS {rss:.1} MB"
    );
    app.close().await?;
    Ok(ThreeStreams {
        lag_ms,
        overlap_secs,
        rss_mb: rss,
    })
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
    let mut streams = Vec::new();
    for round in 0..o.runs {
        streams.push(three_streams(o, binary, fake, round).await?);
    }
    let lag = median(streams.iter().map(|s| s.lag_ms).collect());
    let overlap = median(streams.iter().map(|s| s.overlap_secs).collect());
    let stream_rss = median(streams.iter().map(|s| s.rss_mb).collect());
    println!(
        "three streams at {} chunks/s each: shown one's last chunk → screen {lag:.0} ms \
         (all three sent together for {overlap:.1} s); RSS {stream_rss:.1} MB",
        o.rate
    );
    if o.json {
        println!(
            "{}",
            json!({
                "figures": {
                    "desktop.conversations_1_rss_mb": rss[0],
                    "desktop.conversations_5_rss_mb": rss[1],
                    "desktop.conversations_10_rss_mb": rss[2],
                    "desktop.extra_idle_conversation_mb": per_extra,
                    "desktop.three_streams_visible_lag_ms": lag,
                },
                "meta": {
                    "rounds": o.runs, "idle_secs": o.idle_secs, "pss_mb": pss,
                    "three_streams": {"overlap_secs": overlap, "rss_mb": stream_rss,
                                      "rate": o.rate, "stream_secs": o.stream_secs},
                }
            })
        );
    }
    Ok(())
}
