//! Running real hook programs: the input on stdin, the environment, exit
//! codes, and a time-out that stops the hook's whole process group.

use std::path::Path;
use std::time::{Duration, Instant};

use gd_hooks::config::parse_hooks;
use gd_hooks::registry::CallRef;
use gd_hooks::{Fired, HookEnv, HookEventName, HookOutcome, HookRegistry, HookSource, HooksConfig};
use serde_json::{Map, Value, json};

fn registry(dir: &Path, hooks: Value) -> HookRegistry {
    let (defs, errors) = parse_hooks(&hooks, HookSource::User, None, &dir.join("settings.json"));
    assert!(errors.is_empty(), "{errors:?}");
    HookRegistry::new(
        defs,
        HooksConfig::default(),
        HookEnv {
            session_id: "s-1".into(),
            transcript_path: dir.join("t.json"),
            cwd: dir.to_owned(),
            plans_dir: dir.join("plans"),
            base_env: vec![("PATH".into(), std::env::var("PATH").unwrap())],
        },
    )
}

fn tool_fields(name: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("tool_name".into(), name.into());
    m.insert("tool_input".into(), json!({"file_path": "a.txt"}));
    m
}

/// Fires BeforeTool for a call of `tool` (no call id).
async fn before_tool(reg: &HookRegistry, tool: &str) -> Fired {
    reg.fire(
        HookEventName::BeforeTool,
        Some(tool),
        tool_fields(tool),
        CallRef::default(),
    )
    .await
}

/// A JSON file a hook wrote into `dir`.
fn written(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

#[tokio::test]
async fn the_hook_reads_its_input_and_sees_the_gemini_variables() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = "cat > input.json; env | grep -E '^(GEMINI|CLAUDE)_' | sort > env.txt; echo '{}'";
    let reg = registry(
        dir.path(),
        json!({"BeforeTool": [{"matcher": "write_.*", "hooks": [{"command": cmd, "name": "log"}]}]}),
    );
    let fired = before_tool(&reg, "write_file").await;
    assert_eq!(fired.runs.len(), 1);
    assert_eq!(fired.runs[0].outcome, HookOutcome::Success);
    let input: Value = written(dir.path(), "input.json");
    // The field names of 0.61's BeforeTool input (tests/fixtures/hooks).
    let fixture: Value = serde_json::from_str(include_str!(
        "../../../tests/fixtures/hooks/gemini-cli-0.61/input-BeforeTool.json"
    ))
    .unwrap();
    let mut want: Vec<&String> = fixture
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !k.starts_with('_'))
        .collect();
    let mut got: Vec<&String> = input.as_object().unwrap().keys().collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(input["hook_event_name"], "BeforeTool");
    assert_eq!(input["session_id"], "s-1");
    let env = std::fs::read_to_string(dir.path().join("env.txt")).unwrap();
    let cwd = dir.path().display().to_string();
    assert!(
        env.contains(&format!("GEMINI_PROJECT_DIR={cwd}\n")),
        "{env}"
    );
    assert!(env.contains("GEMINI_SESSION_ID=s-1\n"), "{env}");
    assert!(
        env.contains(&format!("CLAUDE_PROJECT_DIR={cwd}\n")),
        "{env}"
    );
    // Nothing but the base environment is inherited.
    assert!(!env.contains("GEMINI_API_KEY"), "{env}");

    // Another tool does not match.
    let fired = before_tool(&reg, "read_file").await;
    assert!(fired.runs.is_empty());
}

#[tokio::test]
async fn exit_two_blocks_with_stderr_as_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(
        dir.path(),
        json!({"BeforeTool": [{"hooks": [{"command": "cat >/dev/null; echo 'no writes here' >&2; exit 2", "name": "guard"}]}]}),
    );
    let fired = reg
        .fire(
            HookEventName::BeforeTool,
            Some("write_file"),
            tool_fields("write_file"),
            CallRef {
                call_id: Some("c1".into()),
                tool_name: Some("write_file".into()),
            },
        )
        .await;
    assert_eq!(fired.blocked().as_deref(), Some("no writes here"));
    let run = &fired.runs[0];
    assert_eq!(run.outcome, HookOutcome::Blocked);
    assert_eq!(run.exit_code, Some(2));
    assert_eq!(run.call_id.as_deref(), Some("c1"));
    assert_eq!(run.label, "guard");
    // The hooks view shows it as the last run.
    let info = reg.infos();
    assert_eq!(
        info[0].last_run.as_ref().unwrap().outcome,
        HookOutcome::Blocked
    );
}

#[tokio::test]
async fn a_time_out_stops_the_whole_process_group_and_keeps_stderr() {
    let dir = tempfile::tempdir().unwrap();
    // The hook starts a grandchild that would outlive it and hold its
    // output open, then waits.
    let cmd = "echo started >&2; (sleep 30; touch grandchild-survived) & echo $! > grandchild.pid; sleep 30";
    let reg = registry(
        dir.path(),
        json!({"BeforeTool": [{"hooks": [{"command": cmd, "name": "slow", "timeout": 500}]}]}),
    );
    let started = Instant::now();
    let fired = before_tool(&reg, "x").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?}",
        started.elapsed()
    );
    let run = &fired.runs[0];
    assert_eq!(run.outcome, HookOutcome::TimedOut);
    assert!(run.stderr.contains("started"), "{}", run.stderr);
    assert!(
        run.stderr.contains("Hook timed out after 500ms"),
        "{}",
        run.stderr
    );
    assert_eq!(fired.blocked(), None, "a time-out does not block");
    let pid: i32 = std::fs::read_to_string(dir.path().join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Gone, or a zombie nobody has reaped yet (its parent, the hook's
    // shell, is gone: it is not running any more either way).
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim().chars().next())
        })
        .flatten();
    assert!(
        matches!(state, None | Some('Z')),
        "the grandchild {pid} outlived the time-out ({state:?})"
    );
    assert!(!dir.path().join("grandchild-survived").exists());
}

#[tokio::test]
async fn a_sequential_group_passes_rewritten_input_on() {
    let dir = tempfile::tempdir().unwrap();
    let first =
        r#"cat >/dev/null; echo '{"hookSpecificOutput":{"tool_input":{"file_path":"b.txt"}}}'"#;
    let second = "cat > seen.json; echo '{}'";
    let reg = registry(
        dir.path(),
        json!({"BeforeTool": [{"sequential": true, "hooks": [{"command": first}, {"command": second}]}]}),
    );
    let fired = before_tool(&reg, "write_file").await;
    assert_eq!(fired.runs.len(), 2);
    let seen: Value = written(dir.path(), "seen.json");
    assert_eq!(seen["tool_input"]["file_path"], "b.txt");
    assert_eq!(
        fired.merged.unwrap().specific("tool_input").unwrap()["file_path"],
        "b.txt"
    );
}

#[tokio::test]
async fn disabled_hooks_and_a_missing_program() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(
        dir.path(),
        json!({"SessionStart": [{"matcher": "startup", "hooks": [
            {"command": "touch ran", "name": "starter"},
            {"command": "/nonexistent/hook", "name": "missing"}
        ]}]}),
    );
    assert!(reg.set_enabled("starter", false));
    let fired = reg
        .fire(
            HookEventName::SessionStart,
            Some("startup"),
            Map::new(),
            CallRef::default(),
        )
        .await;
    assert!(!dir.path().join("ran").exists());
    assert_eq!(fired.runs.len(), 1);
    // bash says the program is missing and exits 127: a block (0.61 treats
    // every exit code but 0 and 1 so).
    assert_eq!(fired.runs[0].exit_code, Some(127));
    let fired = reg
        .fire(
            HookEventName::SessionStart,
            Some("resume"),
            Map::new(),
            CallRef::default(),
        )
        .await;
    assert!(
        fired.runs.is_empty(),
        "the matcher is exact for lifecycle events"
    );
    let info = reg.infos();
    assert!(!info[0].enabled);
    assert_eq!(
        info[0].note.as_deref(),
        Some("turned off (hooksConfig.disabled)")
    );
}
