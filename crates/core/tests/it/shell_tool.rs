//! The shell tools against real processes: result format, exit codes and
//! signals, working directory, output limits, live output, cancellation of
//! whole process groups, background processes.
#![cfg(unix)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gd_core::chat::ToolCallRequest;
use gd_core::events::EventSink;
use gd_core::scheduler::Scheduler;
use gd_core::tools::shell::{self, BackgroundProcesses, RunShellCommand};
use gd_core::tools::{
    LlmContent, OutputSink, Tool, ToolContext, ToolErrorKind, ToolRegistry, ToolResult,
    ToolServices,
};
use gd_fake_gemini::fixtures::gemini_cli_fixture;
use gd_protocol::{ConfirmationDetails, Event, ToolCallStatus};
use serde_json::{Value, json};

/// Generous bound for one command; real runs take milliseconds.
const LIMIT: Duration = Duration::from_secs(20);

struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ctx: ToolContext,
    processes: Arc<BackgroundProcesses>,
    run: Arc<dyn Tool>,
    list: Arc<dyn Tool>,
    read: Arc<dyn Tool>,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    let root = root.canonicalize().unwrap();
    let mut ctx = ToolContext::new(vec![root.clone()]);
    ctx.services = Arc::new(ToolServices {
        temp_dir: dir.path().join("tmp"),
        ..Default::default()
    });
    let processes = Arc::new(BackgroundProcesses::new());
    let [run, list, read] = shell::tools(processes.clone());
    Setup {
        _dir: dir,
        root,
        ctx,
        processes,
        run,
        list,
        read,
    }
}

async fn exec(tool: &Arc<dyn Tool>, args: Value, ctx: &ToolContext) -> ToolResult {
    tokio::time::timeout(LIMIT, tool.execute(args, ctx))
        .await
        .expect("the tool did not finish in time")
}

fn text(result: &ToolResult) -> &str {
    match &result.llm_content {
        LlmContent::Text(t) => t,
        LlmContent::Parts(_) => panic!("expected text"),
    }
}

/// The number after `label` in `text`.
fn number_after(text: &str, label: &str) -> u32 {
    let start = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {text}"))
        + label.len();
    text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

fn pgid(result: &ToolResult) -> u32 {
    number_after(text(result), "Process Group PGID: ")
}

/// Live (non-zombie) processes whose process group is `pgid`, read from
/// /proc independently of the code under test.
fn live_group(pgid: u32) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .collect();
        if fields[2] == pgid.to_string() && !matches!(fields[0], "Z" | "X") {
            pids.push(pid);
        }
    }
    pids
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat[stat.rfind(')').unwrap() + 2..].chars().next();
        !matches!(state, Some('Z' | 'X'))
    })
}

/// Polls `condition` (for things that have no event) until `limit`.
async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    condition()
}

#[tokio::test]
async fn echo_matches_gemini_cli_result_format() {
    let s = setup();
    let result = exec(
        &s.run,
        json!({"command": "echo hi", "description": "Print hi"}),
        &s.ctx,
    )
    .await;
    assert_eq!(result.error, None);
    let pgid = pgid(&result);
    assert_eq!(
        text(&result),
        format!(
            "<untrusted_context>\nOutput: hi\nProcess Group PGID: {pgid}\n</untrusted_context>"
        )
    );
    assert_eq!(result.display, "hi");

    // The same text as Gemini CLI 0.61 sent for this call, PGID aside.
    let fixture = gemini_cli_fixture("c_shell_req02_main_streamGenerateContent.json");
    let theirs = fixture["body"]["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap())
        .find_map(|p| p["functionResponse"]["response"]["output"].as_str())
        .unwrap();
    let their_pgid = number_after(theirs, "Process Group PGID: ");
    assert_eq!(
        text(&result).replace(&pgid.to_string(), "N"),
        theirs.replace(&their_pgid.to_string(), "N")
    );
}

#[tokio::test]
async fn stderr_is_interleaved_and_a_failing_exit_code_reported() {
    let s = setup();
    let result = exec(
        &s.run,
        json!({"command": "echo out; echo err >&2; echo out2; exit 3"}),
        &s.ctx,
    )
    .await;
    assert_eq!(result.error, None, "a failing command is still a result");
    let pgid = pgid(&result);
    assert_eq!(
        text(&result),
        format!(
            "<untrusted_context>\nOutput: out\nerr\nout2\nExit Code: 3\nProcess Group PGID: {pgid}\n</untrusted_context>"
        )
    );
    assert_eq!(result.display, "out\nerr\nout2");
    // People get the plain output and the exit code as data (no wrappers to parse).
    assert_eq!(result.output.as_deref(), Some("out\nerr\nout2"));
    assert_eq!(result.exit_code, Some(3));

    let silent = exec(&s.run, json!({"command": "exit 7"}), &s.ctx).await;
    let pgid = self::pgid(&silent);
    assert_eq!(
        text(&silent),
        format!(
            "<untrusted_context>\nOutput: (empty)\nExit Code: 7\nProcess Group PGID: {pgid}\n</untrusted_context>"
        )
    );
    assert_eq!(silent.display, "Command exited with code 7.");
    assert_eq!(silent.output.as_deref(), Some(""));
    assert_eq!(silent.exit_code, Some(7));
}

#[tokio::test]
async fn a_signal_is_reported() {
    let s = setup();
    let result = exec(
        &s.run,
        json!({"command": "echo before; kill -9 $$"}),
        &s.ctx,
    )
    .await;
    let pgid = pgid(&result);
    assert_eq!(
        text(&result),
        format!(
            "<untrusted_context>\nOutput: before\nSignal: 9\nProcess Group PGID: {pgid}\n</untrusted_context>"
        )
    );
    let quiet = exec(&s.run, json!({"command": "kill -TERM $$"}), &s.ctx).await;
    assert_eq!(quiet.display, "Command terminated by signal 15.");
}

#[tokio::test]
async fn runs_in_dir_path_inside_the_workspace_only() {
    let s = setup();
    std::fs::create_dir(s.root.join("sub")).unwrap();
    let result = exec(&s.run, json!({"command": "pwd", "dir_path": "sub"}), &s.ctx).await;
    assert_eq!(result.display, s.root.join("sub").display().to_string());
    let default = exec(&s.run, json!({"command": "pwd"}), &s.ctx).await;
    assert_eq!(default.display, s.root.display().to_string());

    for outside in ["..", "../", "/tmp", "sub/../.."] {
        let refused = exec(
            &s.run,
            json!({"command": "pwd", "dir_path": outside}),
            &s.ctx,
        )
        .await;
        assert_eq!(
            refused.error.map(|e| e.kind),
            Some(ToolErrorKind::PathNotInWorkspace),
            "{outside}"
        );
    }
    let missing = exec(
        &s.run,
        json!({"command": "pwd", "dir_path": "nope"}),
        &s.ctx,
    )
    .await;
    assert_eq!(missing.error.unwrap().kind, ToolErrorKind::NotFound);
    let empty = exec(&s.run, json!({"command": "  "}), &s.ctx).await;
    assert_eq!(empty.error.unwrap().kind, ToolErrorKind::InvalidParams);
}

#[tokio::test]
async fn prepare_describes_the_command_for_confirmation() {
    let s = setup();
    std::fs::create_dir(s.root.join("sub")).unwrap();
    let args =
        json!({"command": "git add . && FOO=1 npm test | grep -v $(cat skip)", "dir_path": "sub"});
    let details = s.run.prepare(&args, &s.ctx).await.unwrap();
    assert_eq!(
        details,
        Some(ConfirmationDetails::Execute {
            title: "Confirm Shell Command".into(),
            command: "git add . && FOO=1 npm test | grep -v $(cat skip)".into(),
            root_commands: vec!["git".into(), "npm".into(), "grep".into(), "cat".into()],
            directory: s.root.join("sub").display().to_string(),
        })
    );
    let escape = s
        .run
        .prepare(&json!({"command": "ls", "dir_path": "/"}), &s.ctx)
        .await;
    assert_eq!(escape.unwrap_err().kind, ToolErrorKind::PathNotInWorkspace);
    assert_eq!(
        s.run.describe_call(&json!({"command": "ls", "dir_path": "sub", "description": "List\nfiles", "is_background": true})),
        "ls [in sub] (List files) [background]"
    );
}

#[tokio::test]
async fn output_is_capped_keeping_beginning_and_end() {
    let s = setup();
    let big = exec(
        &s.run,
        json!({"command": "echo START; head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END"}),
        &s.ctx,
    )
    .await;
    let t = text(&big);
    assert!(t.len() < 1_100_000, "{} bytes", t.len());
    assert!(t.starts_with("<untrusted_context>\nOutput: START\naaa"));
    assert!(t.contains("of output omitted ...]"));
    assert!(t.contains("aaa\nEND\nProcess Group PGID: "));

    let small = RunShellCommand::new(s.processes.clone()).with_output_limits(6, 9);
    let result = tokio::time::timeout(
        LIMIT,
        small.execute(json!({"command": "seq 1 1000"}), &s.ctx),
    )
    .await
    .unwrap();
    assert_eq!(
        result.display,
        "1\n2\n3\n[... 3.8 KB of output omitted ...]\n999\n1000"
    );
}

#[tokio::test]
async fn ansi_escapes_are_stripped_and_binary_output_summarised() {
    let s = setup();
    let colored = exec(
        &s.run,
        json!({"command": "printf '\\033[1;31mred\\033[0m plain\\n'; printf '10%%\\r50%%\\r100%%\\n'"}),
        &s.ctx,
    )
    .await;
    assert_eq!(colored.display, "red plain\n100%");
    assert!(text(&colored).starts_with("<untrusted_context>\nOutput: red plain\n100%\n"));
    let binary = exec(
        &s.run,
        json!({"command": "printf 'PK\\003\\004\\000\\000xyz'"}),
        &s.ctx,
    )
    .await;
    assert_eq!(binary.display, "[Binary output, 9 bytes not shown]");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_output_at_most_once_per_second() {
    let mut s = setup();
    let (sink, mut events) = EventSink::new();
    s.ctx.output = Some(OutputSink::new(sink, "call-1".into()));
    let collector = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(event) = events.recv().await {
            if let Event::ToolCallOutput { call_id, output } = event {
                assert_eq!(call_id, "call-1");
                seen.push((Instant::now(), output));
            }
        }
        seen
    });
    let started = Instant::now();
    let result = exec(
        &s.run,
        json!({"command": "for i in $(seq 1 25); do echo line$i; sleep 0.1; done"}),
        &s.ctx,
    )
    .await;
    let elapsed = started.elapsed();
    drop(s.ctx);
    let seen = collector.await.unwrap();
    assert!(result.display.ends_with("line24\nline25"));
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(
        seen.len() as u128 <= elapsed.as_millis() / 1000 + 1,
        "{} updates in {elapsed:?}",
        seen.len()
    );
    assert!(seen[0].1.starts_with("line1"), "{:?}", seen[0].1);
    for pair in seen.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        // Measured where the events arrive; allow for scheduling jitter.
        assert!(gap >= Duration::from_millis(850), "updates {gap:?} apart");
        assert!(pair[1].1.starts_with(&pair[0].1), "output only grows");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_kills_the_whole_group_promptly() {
    let mut s = setup();
    let (sink, mut events) = EventSink::new();
    s.ctx.output = Some(OutputSink::new(sink, "c".into()));
    let ctx = s.ctx.clone();
    let run = s.run.clone();
    let task = tokio::spawn(async move {
        run.execute(json!({"command": "echo $$; sleep 100 & sleep 100"}), &ctx)
            .await
    });
    // The first live output carries the shell's PID, which is the PGID.
    let first = tokio::time::timeout(LIMIT, events.recv())
        .await
        .unwrap()
        .unwrap();
    let Event::ToolCallOutput { output, .. } = first else {
        panic!("unexpected {first:?}");
    };
    let pgid: u32 = output.trim().parse().unwrap();
    assert!(
        eventually(LIMIT, || live_group(pgid).len() >= 2).await,
        "both sleeps should be running: {:?}",
        live_group(pgid)
    );

    let cancelled_at = Instant::now();
    s.ctx.cancel.cancel();
    let result = tokio::time::timeout(LIMIT, task).await.unwrap().unwrap();
    assert!(cancelled_at.elapsed() < Duration::from_secs(3));
    assert_eq!(
        result.error.as_ref().unwrap().kind,
        ToolErrorKind::Cancelled
    );
    assert!(text(&result).contains("cancelled by the user"));
    assert!(text(&result).contains(&pgid.to_string()));
    // The model's text is wrapped; people read a sentence and the output beside it.
    let error = result.error.as_ref().unwrap();
    assert!(error.message.contains("untrusted_context"));
    assert_eq!(error.people_text(), "Command cancelled.");
    assert_eq!(
        result.output.as_deref().map(str::trim),
        Some(pgid.to_string().as_str())
    );
    assert_eq!(
        live_group(pgid),
        Vec::<u32>::new(),
        "nothing of the group may remain"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_turn_kills_the_group_when_the_scheduler_gives_up() {
    let s = setup();
    let scheduler = Scheduler::new(
        Arc::new(ToolRegistry::with_builtins()),
        Arc::new(gd_core::approval::AllowAll),
        Arc::new(gd_core::approval::Confirmations::default()),
    );
    let (sink, _events) = EventSink::new();
    let ctx = s.ctx.clone();
    let calls = vec![ToolCallRequest {
        call_id: "c1".into(),
        name: "run_shell_command".into(),
        args: json!({"command": "echo $$ > pid.txt; sleep 100 & sleep 100"}),
    }];
    let task = tokio::spawn(async move { scheduler.run(&calls, &ctx, &sink).await });
    let pid_file = s.root.join("pid.txt");
    let mut pgid = 0;
    assert!(
        eventually(LIMIT, || {
            pgid = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0);
            pgid > 0 && live_group(pgid).len() >= 2
        })
        .await
    );
    s.ctx.cancel.cancel();
    let done = tokio::time::timeout(LIMIT, task).await.unwrap().unwrap();
    assert_eq!(done.completed[0].status, ToolCallStatus::Cancelled);
    assert!(
        eventually(Duration::from_secs(3), || live_group(pgid).is_empty()).await,
        "left running: {:?}",
        live_group(pgid)
    );
}

#[tokio::test]
async fn background_processes_are_started_listed_read_and_ended_with_the_session() {
    let s = setup();
    let started = exec(
        &s.run,
        json!({"command": "printf 'one\\ntwo\\nthree\\n'; sleep 100", "is_background": true}),
        &s.ctx,
    )
    .await;
    assert_eq!(started.error, None);
    let pid = number_after(text(&started), "PID ");
    assert!(text(&started).starts_with(&format!(
        "Started in the background with PID {pid} (process group {pid})."
    )));
    assert_eq!(
        started.display,
        format!("Started in the background (PID {pid}).")
    );

    // The log has no event to wait for: poll the tool itself.
    let deadline = Instant::now() + LIMIT;
    let read = loop {
        let result = exec(&s.read, json!({"pid": pid, "lines": 2}), &s.ctx).await;
        if result.display == "two\nthree" || Instant::now() > deadline {
            break result;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(
        text(&read),
        format!(
            "Last 2 line(s) of output of background process {pid} (running):\n<untrusted_context>\ntwo\nthree\n</untrusted_context>"
        )
    );

    // A short one, waited for with delay_ms: returns as soon as it exits.
    let waited_from = Instant::now();
    let quick = exec(
        &s.run,
        json!({"command": "echo quick; exit 3", "is_background": true, "delay_ms": 15000}),
        &s.ctx,
    )
    .await;
    assert!(waited_from.elapsed() < Duration::from_secs(10));
    let quick_pid = number_after(text(&quick), "PID ");
    assert_eq!(
        text(&quick),
        format!(
            "Started in the background with PID {quick_pid}; it already exited with code 3.\nOutput:\n<untrusted_context>\nquick\n</untrusted_context>"
        )
    );

    let listed = exec(&s.list, json!({}), &s.ctx).await;
    let lines: Vec<&str> = text(&listed).lines().collect();
    assert_eq!(lines[0], "Background processes:");
    assert!(
        lines[1].starts_with(&format!("- PID {pid} (running; started ")),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].ends_with("; output 14 bytes): printf 'one\\ntwo\\nthree\\n'; sleep 100"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with(&format!("- PID {quick_pid} (exited with code 3; ")),
        "{}",
        lines[2]
    );
    assert_eq!(listed.display, "2 background process(es), 1 running.");

    let unknown = exec(&s.read, json!({"pid": 999_999_999}), &s.ctx).await;
    let error = unknown.error.unwrap();
    assert_eq!(error.kind, ToolErrorKind::NotFound);
    assert!(
        error
            .message
            .contains("No background process with PID 999999999")
    );

    // Ending the session (dropping its tools) ends the process.
    assert!(alive(pid));
    drop((s.run, s.list, s.read, s.processes));
    assert!(
        eventually(Duration::from_secs(3), || live_group(pid).is_empty()).await,
        "still running: {:?}",
        live_group(pid)
    );
}

#[tokio::test]
async fn processes_left_running_are_reported_adopted_and_ended_with_the_session() {
    let s = setup();
    let result = exec(
        &s.run,
        json!({"command": "sleep 100 & echo started"}),
        &s.ctx,
    )
    .await;
    let pgid = pgid(&result);
    let leftover = number_after(text(&result), "Background PIDs: ");
    assert_eq!(
        text(&result),
        format!(
            "<untrusted_context>\nOutput: started\nBackground PIDs: {leftover}\nProcess Group PGID: {pgid}\n</untrusted_context>"
        )
    );
    assert_eq!(live_group(pgid), vec![leftover]);

    let listed = exec(&s.list, json!({}), &s.ctx).await;
    assert!(
        text(&listed).contains(&format!("- PID {leftover} (running; started ")),
        "{}",
        text(&listed)
    );
    assert!(text(&listed).ends_with("): left running by: sleep 100 & echo started"));
    let read = exec(&s.read, json!({"pid": leftover}), &s.ctx).await;
    assert_eq!(
        text(&read),
        format!("Background process {leftover} (running) has produced no output yet.")
    );

    drop((s.run, s.list, s.read, s.processes));
    assert!(
        eventually(Duration::from_secs(3), || !alive(leftover)).await,
        "the leftover should be ended with the session"
    );
}

#[tokio::test]
async fn nothing_runs_when_already_cancelled() {
    let s = setup();
    s.ctx.cancel.cancel();
    let result = exec(&s.run, json!({"command": "touch made"}), &s.ctx).await;
    assert_eq!(result.error.unwrap().kind, ToolErrorKind::Cancelled);
    assert!(!s.root.join("made").exists());
}

#[test]
fn declarations_have_gemini_cli_parameter_schemas() {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("description");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let reference = gemini_cli_fixture("tools_yolo.json");
    let registry = ToolRegistry::with_builtins();
    for name in [
        "run_shell_command",
        "list_background_processes",
        "read_background_output",
    ] {
        let tool = registry.get(name).unwrap();
        let mut ours = tool.parameter_schema().clone();
        let mut theirs = reference
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["parametersJsonSchema"]
            .clone();
        strip(&mut ours);
        strip(&mut theirs);
        assert_eq!(ours, theirs, "{name}");
        // Property order matters for fidelity of the request body too.
        let keys = |v: &Value| -> Vec<String> {
            v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(keys(&ours), keys(&theirs), "{name}");
        assert!(tool.description().len() > 80);
    }
}
