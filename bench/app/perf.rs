//! Desktop app performance under Xvfb: startup to content, idle memory, streaming lag.
//!
//! Built as an example of the `gd-e2e` crate (it reuses its WebDriver harness); run it through
//! `bench/app/run.sh`, which builds the UI and a release app first. See `bench/app/README.md`
//! for what is measured and how.
//!
//!     cargo run --release -p gd-e2e --example app-perf -- [--runs 5] [--idle-secs 5]
//!         [--stream-secs 10] [--rate 2000] [--chunk-chars 5] [--report OUT.json]
//!     cargo run --release -p gd-e2e --example app-perf -- --budget [--runs 5] [--idle-secs 5]
//!         [--messages 200] [--json]
//!
//!     cargo run --release -p gd-e2e --example app-perf -- --conversations [--runs 3] [--json]
//!
//! `--budget` measures the performance budget's desktop figures instead (see `budget.rs`),
//! `--conversations` the memory with 1, 5 and 10 idle conversations (`conversations.rs`);
//! `--json` prints them as one JSON line at the end of stdout. The app binary is `GD_E2E_APP`
//! (or the one in the same target directory and profile).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::{Value, json};

#[path = "budget.rs"]
mod budget;
#[path = "conversations.rs"]
mod conversations;
#[path = "floor.rs"]
mod floor;
#[path = "seed.rs"]
mod seed;

/// Appended to the streamed text; the page hook looks for it to know the message is complete.
const END_MARK: &str = "ZZBENCHENDZZ";

struct Options {
    runs: usize,
    idle_secs: u64,
    stream_secs: f64,
    rate: f64,
    chunk_chars: usize,
    /// Where to write the full report (JSON).
    report: Option<PathBuf>,
    /// Measure the budget figures (floor, app, app with a long conversation) instead.
    budget: bool,
    /// Measure the memory with 1, 5 and 10 idle conversations (issue 16) instead.
    conversations: bool,
    /// Messages of the stored conversation the budget opens.
    messages: usize,
    /// Print the figures as one JSON line at the end of stdout.
    json: bool,
}

fn options() -> Result<Options> {
    let mut options = Options {
        runs: 5,
        idle_secs: 5,
        stream_secs: 10.0,
        rate: 2000.0,
        chunk_chars: 5,
        report: None,
        budget: false,
        conversations: false,
        messages: 200,
        json: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--runs" => options.runs = value()?.parse()?,
            "--idle-secs" => options.idle_secs = value()?.parse()?,
            "--stream-secs" => options.stream_secs = value()?.parse()?,
            "--rate" => options.rate = value()?.parse()?,
            "--chunk-chars" => options.chunk_chars = value()?.parse()?,
            "--report" => options.report = Some(PathBuf::from(value()?)),
            "--messages" => options.messages = value()?.parse()?,
            "--budget" => options.budget = true,
            "--conversations" => options.conversations = true,
            "--json" => options.json = true,
            other => bail!("unknown option {other}"),
        }
    }
    Ok(options)
}

// ----- /proc ------------------------------------------------------------------------------------

/// Seconds since boot on `CLOCK_BOOTTIME`, the clock of `/proc/<pid>/stat`'s start time.
fn boottime() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

/// The fields of `/proc/<pid>/stat` after the command name, so that `fields[0]` is field 3.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

fn pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The app process launched for `app`: the binary, with the app's private HOME.
fn app_pid(app: &App, binary: &Path) -> Result<u32> {
    let home = format!("HOME={}", app.home().display());
    for pid in pids() {
        let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
            continue;
        };
        if exe != binary {
            continue;
        }
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if environ.split(|b| *b == 0).any(|var| var == home.as_bytes()) {
            return Ok(pid);
        }
    }
    bail!("no {} process with {home}", binary.display())
}

/// `pid` and all its descendants.
fn process_tree(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in pids() {
        if let Some(ppid) = stat_fields(p).and_then(|f| f.get(1)?.parse().ok()) {
            children.entry(ppid).or_default().push(p);
        }
    }
    let mut tree = Vec::new();
    let mut queue = VecDeque::from([pid]);
    while let Some(p) = queue.pop_front() {
        tree.push(p);
        queue.extend(children.get(&p).into_iter().flatten());
    }
    tree
}

#[derive(Debug, Clone)]
struct Memory {
    name: String,
    rss_kb: u64,
    pss_kb: u64,
}

fn kb_field(path: &str, field: &str) -> u64 {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|line| {
            line.strip_prefix(field)?
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

fn memory(tree: &[u32]) -> Vec<Memory> {
    tree.iter()
        .map(|pid| Memory {
            name: std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .unwrap_or_default()
                .trim()
                .to_owned(),
            rss_kb: kb_field(&format!("/proc/{pid}/status"), "VmRSS:"),
            pss_kb: kb_field(&format!("/proc/{pid}/smaps_rollup"), "Pss:"),
        })
        .collect()
}

/// User + system CPU seconds of the processes.
fn cpu_seconds(tree: &[u32]) -> f64 {
    let ticks: u64 = tree
        .iter()
        .filter_map(|pid| {
            let f = stat_fields(*pid)?;
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .sum();
    ticks as f64 / clock_ticks()
}

// ----- the app ----------------------------------------------------------------------------------

fn workspace(temp: &tempfile::TempDir) -> PathBuf {
    copy_peer_workspace(temp.path())
}

/// `lines` of prose-like text with paragraph breaks, ending with [`END_MARK`], `chars` long.
fn stream_text(chars: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "agent",
        "reads",
        "files",
        "in",
        "your",
        "workspace",
        "and",
        "proposes",
        "small",
        "changes",
        "that",
        "you",
        "review",
        "before",
        "they",
        "are",
        "applied",
        "to",
        "disk",
    ];
    let mut text = String::with_capacity(chars + 64);
    let mut i = 0usize;
    let mut line = 0usize;
    while text.len() + END_MARK.len() + 2 < chars {
        text.push_str(WORDS[(i * 7 + line) % WORDS.len()]);
        i += 1;
        if i.is_multiple_of(12) {
            line += 1;
            text.push_str(if line.is_multiple_of(5) {
                ".\n\n"
            } else {
                ".\n"
            });
        } else {
            text.push(' ');
        }
    }
    text.push(' ');
    text.push_str(END_MARK);
    text
}

async fn launch(name: &str, ws: &Path, fake: &FakeGemini) -> Result<App> {
    launch_with(name, ws, fake, &[]).await
}

/// [`launch`] with more variables for the app.
async fn launch_with(
    name: &str,
    ws: &Path,
    fake: &FakeGemini,
    more: &[(&str, &str)],
) -> Result<App> {
    let base = fake.base_url();
    let gpu = if std::env::var("GD_BENCH_GPU").as_deref() == Ok("1") {
        "1"
    } else {
        "0"
    };
    let mut env = vec![
        ("GEMINI_API_KEY".to_owned(), "bench-key".to_owned()),
        ("GOOGLE_GEMINI_BASE_URL".to_owned(), base),
        ("GEMINI_MODEL".to_owned(), "gemini-2.5-flash".to_owned()),
        ("RUST_LOG".to_owned(), "warn".to_owned()),
        // The harness keeps compositing on for WebDriver screenshots; measure the app's own
        // default unless asked (`GD_BENCH_GPU=1`).
        ("GEMINI_DESKTOP_GPU".to_owned(), gpu.to_owned()),
    ];
    // Experiments: more variables for the app, `GD_BENCH_APP_ENV="A=1 B=2"`.
    if let Ok(extra) = std::env::var("GD_BENCH_APP_ENV") {
        for pair in extra.split_whitespace() {
            let (key, value) = pair
                .split_once('=')
                .context("GD_BENCH_APP_ENV: KEY=VALUE")?;
            env.push((key.to_owned(), value.to_owned()));
        }
    }
    env.extend(more.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    App::launch_with_env(name, &[ws], &env).await
}

async fn connected(app: &App) -> Result<()> {
    app.wait_for_text("connection-text", "showed the model", |t| {
        t.contains("gemini-2.5-flash")
    })
    .await
    .map(|_| ())
}

/// Startup of one launch, in seconds after the process started.
#[derive(Debug, Clone, serde::Serialize)]
struct Startup {
    /// The UI's own `performance.mark('content')`, if it sets one.
    content_mark: Option<f64>,
    /// First contentful paint (Paint Timing), if WebKit reports it.
    first_contentful_paint: Option<f64>,
    /// When the harness first saw `<body data-ready="true">` (an upper bound: polled).
    data_ready_seen: f64,
    /// Whether `data-ready` was already set at the first poll.
    ready_at_first_poll: bool,
    /// `DOMContentLoaded` done.
    dom_content_loaded: Option<f64>,
    /// When the WebDriver session was ready (first poll).
    first_poll: f64,
    /// Where the time before content goes: navigation start (the page's time origin), the
    /// HTML's response end, the UI script starting (`performance.mark('script')`).
    navigation_start: Option<f64>,
    response_end: Option<f64>,
    script_start: Option<f64>,
    /// The UI mounted (`mounted` mark) and the first IPC answer (`app-info` mark).
    mounted: Option<f64>,
    app_info: Option<f64>,
}

const PAGE_TIMES: &str = "\
    const mark = performance.getEntriesByName('content')[0];\
    const fcp = performance.getEntriesByType('paint')\
      .find((e) => e.name === 'first-contentful-paint');\
    const nav = performance.getEntriesByType('navigation')[0];\
    const script = performance.getEntriesByName('script')[0];\
    const at = (name) => { const m = performance.getEntriesByName(name)[0]; return m ? m.startTime : null; };\
    return { now: performance.now(), mark: mark ? mark.startTime : null,\
      fcp: fcp ? fcp.startTime : null, nav: 0,\
      response: nav ? nav.responseEnd : null, script: script ? script.startTime : null,\
      mounted: at('mounted'), appInfo: at('app-info'),\
      dcl: nav ? nav.domContentLoadedEventEnd : null,\
      ready: document.body !== null && document.body.dataset.ready === 'true' };";

async fn measure_startup(app: &App, pid: u32) -> Result<Startup> {
    let ticks = clock_ticks();
    let started = stat_fields(pid)
        .and_then(|f| f.get(19)?.parse::<f64>().ok())
        .context("process start time")?
        / ticks;
    let mut first_poll = None;
    let mut first = true;
    loop {
        let before = boottime();
        let page = app.client().execute(PAGE_TIMES, vec![]).await?;
        let after = boottime();
        // The script ran at about the middle of the round trip; page times are milliseconds
        // on the page's clock, which started before the process reached content.
        let at = (before + after) / 2.0;
        let page_now = page["now"].as_f64().unwrap_or(0.0) / 1000.0;
        let since_start = |ms: &Value| ms.as_f64().map(|ms| at - page_now + ms / 1000.0 - started);
        let poll = at - started;
        first_poll.get_or_insert(poll);
        // The UI sets its `content` mark one animation frame after `data-ready`: wait for it
        // (for a while: an older UI has no mark).
        let marked = !page["mark"].is_null() || poll > first_poll.unwrap_or(poll) + 2.0;
        if page["ready"] == json!(true) && marked {
            return Ok(Startup {
                content_mark: since_start(&page["mark"]),
                first_contentful_paint: since_start(&page["fcp"]),
                data_ready_seen: poll,
                ready_at_first_poll: first,
                dom_content_loaded: since_start(&page["dcl"]),
                first_poll: first_poll.unwrap_or(poll),
                navigation_start: since_start(&page["nav"]),
                response_end: since_start(&page["response"]),
                script_start: since_start(&page["script"]),
                mounted: since_start(&page["mounted"]),
                app_info: since_start(&page["appInfo"]),
            });
        }
        first = false;
        if poll > 60.0 {
            bail!("the page never set data-ready");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[derive(Debug, Clone, serde::Serialize)]
struct Streaming {
    chunks: usize,
    chunk_chars: usize,
    /// Seconds the fake took to send every chunk (from the request's arrival).
    send_secs: f64,
    /// Achieved chunks per second.
    rate: f64,
    /// Last chunk handed to the connection → first frame showing the complete message (ms).
    lag_ms: f64,
    /// Frames the page rendered while the message streamed, per second.
    fps: f64,
    /// Longest gap between two frames while streaming (ms).
    max_frame_gap_ms: f64,
    /// CPU seconds of all app processes during the stream, per second of streaming.
    cpu_per_sec: f64,
    /// Resident memory of all app processes after the stream (MB).
    rss_after_mb: f64,
}

/// Page hook (test-only, injected over WebDriver; the UI has no hook of its own): a
/// requestAnimationFrame loop that counts frames once the DOM starts changing and records the
/// timestamp of the first frame whose DOM holds the end mark in the last model message.
const STREAM_HOOK: &str = "\
    const MARK = arguments[0];\
    const SEL = '[data-testid=\"message-model\"],[data-testid=\"assistant-text\"]';\
    const g = window.__gdBench = { done: null, frames: 0, maxGap: 0, first: null, last: null };\
    let dirty = false;\
    new MutationObserver(() => {\
      dirty = true;\
      if (g.first === null) { g.first = performance.now(); requestAnimationFrame(tick); }\
    }).observe(document.body, { childList: true, subtree: true, characterData: true });\
    function tick(ts) {\
      if (g.last !== null) { g.maxGap = Math.max(g.maxGap, ts - g.last); }\
      g.last = ts; g.frames += 1;\
      if (dirty) {\
        dirty = false;\
        const all = document.querySelectorAll(SEL);\
        const msg = all[all.length - 1];\
        if (msg && msg.textContent.includes(MARK)) {\
          g.done = performance.timeOrigin + ts; g.doneAt = ts; return;\
        }\
      }\
      requestAnimationFrame(tick);\
    }\
    return true;";

/// Waits until [`STREAM_HOOK`] saw the streamed message complete on screen; returns what it
/// recorded (`window.__gdBench`).
async fn stream_on_screen(app: &App, o: &Options) -> Result<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs_f64(o.stream_secs * 6.0 + 60.0);
    loop {
        let page = app
            .client()
            .execute("return window.__gdBench;", vec![])
            .await?;
        if page["done"].is_number() {
            return Ok(page);
        }
        if std::time::Instant::now() >= deadline {
            bail!("the streamed message never completed on screen: {page}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn measure_streaming(
    app: &App,
    pid: u32,
    fake: &FakeGemini,
    o: &Options,
) -> Result<Streaming> {
    let chunks = (o.stream_secs * o.rate).round() as usize;
    let text = stream_text(chunks * o.chunk_chars);
    fake.reset(
        json!({
            "chunk_chars": o.chunk_chars,
            "chunk_delay_ms": 1000.0 / o.rate,
            "steps": [{"text": text}]
        }),
        &[],
    );
    // Experiments: a script run in the page before the stream (e.g. a CSS rule through the
    // CSSOM, which the CSP allows), to compare rendering choices without rebuilding the app.
    if let Ok(script) = std::env::var("GD_BENCH_PREP_JS") {
        app.client()
            .execute(&script, vec![])
            .await
            .context("run GD_BENCH_PREP_JS")?;
    }
    app.client()
        .execute(STREAM_HOOK, vec![json!(END_MARK)])
        .await
        .context("install the page hook")?;
    let tree = process_tree(pid);
    let cpu_before = cpu_seconds(&tree);
    app.type_and_enter("prompt-input", "Stream a long answer")
        .await?;
    let page = stream_on_screen(app, o).await?;
    let cpu_after = cpu_seconds(&process_tree(pid));
    let record = fake
        .main_requests()
        .into_iter()
        .last()
        .context("the streamed request")?;
    let end = record
        .stream_end_ts
        .context("the fake recorded the stream's end")?;
    let send_secs = end - record.ts;
    let done_ms = page["done"].as_f64().unwrap_or_default();
    let streaming_ms =
        page["doneAt"].as_f64().unwrap_or_default() - page["first"].as_f64().unwrap_or_default();
    let sent = record.sse_chunks.unwrap_or(chunks);
    let rss: u64 = memory(&process_tree(pid)).iter().map(|m| m.rss_kb).sum();
    Ok(Streaming {
        chunks: sent,
        chunk_chars: o.chunk_chars,
        send_secs,
        rate: sent as f64 / send_secs,
        lag_ms: done_ms - end * 1000.0,
        fps: page["frames"].as_f64().unwrap_or_default() / (streaming_ms / 1000.0),
        max_frame_gap_ms: page["maxGap"].as_f64().unwrap_or_default(),
        cpu_per_sec: (cpu_after - cpu_before) / send_secs,
        rss_after_mb: rss as f64 / 1024.0,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn fmt_opt(value: Option<f64>) -> String {
    value.map_or("n/a".into(), |v| format!("{v:.3}"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let o = options()?;
    let binary = gd_e2e::app_binary()?.canonicalize()?;
    eprintln!("app: {}", binary.display());
    let fake = FakeGemini::start(json!({"steps": [{"text": "OK"}]}));
    if o.budget {
        return budget::run(&o, &binary, &fake).await;
    }
    if o.conversations {
        return conversations::run(&o, &binary, &fake).await;
    }

    let mut startups = Vec::new();
    let mut idle = Vec::new();
    for run in 0..o.runs {
        let temp = tempfile::tempdir()?;
        let ws = workspace(&temp);
        let app = launch(&format!("perf_startup_{run}"), &ws, &fake).await?;
        let pid = app_pid(&app, &binary)?;
        let startup = measure_startup(&app, pid).await?;
        connected(&app).await?;
        tokio::time::sleep(Duration::from_secs(o.idle_secs)).await;
        let mem = memory(&process_tree(pid));
        eprintln!("run {run}: {startup:?}");
        for m in &mem {
            eprintln!(
                "    {:<24} RSS {:>7.1} MB  PSS {:>7.1} MB",
                m.name,
                m.rss_kb as f64 / 1024.0,
                m.pss_kb as f64 / 1024.0
            );
        }
        startups.push(startup);
        idle.push(mem);
        app.close().await?;
    }

    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp);
    let app = launch("perf_streaming", &ws, &fake).await?;
    let pid = app_pid(&app, &binary)?;
    app.wait_ready().await?;
    connected(&app).await?;
    let streaming = measure_streaming(&app, pid, &fake, &o).await?;
    app.close().await?;
    eprintln!("streaming: {streaming:?}");

    let total = |mem: &Vec<Memory>, pss: bool| {
        mem.iter()
            .map(|m| if pss { m.pss_kb } else { m.rss_kb })
            .sum::<u64>() as f64
            / 1024.0
    };
    let pick = |f: fn(&Startup) -> Option<f64>| {
        let values: Vec<f64> = startups.iter().filter_map(f).collect();
        (!values.is_empty()).then(|| median(values))
    };
    let by_name = |name: &str| {
        median(
            idle.iter()
                .map(|mem| {
                    mem.iter()
                        .filter(|m| m.name.starts_with(name))
                        .map(|m| m.rss_kb)
                        .sum::<u64>() as f64
                        / 1024.0
                })
                .collect(),
        )
    };
    println!("| metric (median of {} launches) | value |", o.runs);
    println!("|---|---|");
    println!(
        "| start → UI `content` mark (s) | {} |",
        fmt_opt(pick(|s| s.content_mark))
    );
    println!(
        "| start → first contentful paint (s) | {} |",
        fmt_opt(pick(|s| s.first_contentful_paint))
    );
    println!(
        "| start → `data-ready` seen by WebDriver (s, upper bound) | {} |",
        fmt_opt(pick(|s| Some(s.data_ready_seen)))
    );
    println!(
        "| start → DOMContentLoaded (s) | {} |",
        fmt_opt(pick(|s| s.dom_content_loaded))
    );
    println!(
        "| idle RSS, all processes (MB) | {:.1} |",
        median(idle.iter().map(|m| total(m, false)).collect())
    );
    println!(
        "| idle PSS, all processes (MB) | {:.1} |",
        median(idle.iter().map(|m| total(m, true)).collect())
    );
    for name in ["gemini-desktop", "WebKitWebProces", "WebKitNetworkPr"] {
        println!("| idle RSS of {name}* (MB) | {:.1} |", by_name(name));
    }
    println!(
        "| streaming: chunks × chars, achieved rate | {} × {}, {:.0}/s over {:.2} s |",
        streaming.chunks, streaming.chunk_chars, streaming.rate, streaming.send_secs
    );
    println!(
        "| streaming: last chunk sent → complete message on screen (ms) | {:.0} |",
        streaming.lag_ms
    );
    println!(
        "| streaming: frames/s, longest frame gap (ms) | {:.0}, {:.0} |",
        streaming.fps, streaming.max_frame_gap_ms
    );
    println!(
        "| streaming: CPU of all app processes (cores) | {:.2} |",
        streaming.cpu_per_sec
    );
    println!(
        "| RSS after the stream (MB) | {:.1} |",
        streaming.rss_after_mb
    );

    if let Some(path) = &o.report {
        let idle_json: Vec<Value> = idle
            .iter()
            .map(|mem| {
                json!(
                    mem.iter()
                        .map(|m| json!({"name": m.name, "rss_kb": m.rss_kb, "pss_kb": m.pss_kb}))
                        .collect::<Vec<_>>()
                )
            })
            .collect();
        let report = json!({
            "app": binary,
            "startups": startups,
            "idle": idle_json,
            "streaming": streaming,
        });
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
