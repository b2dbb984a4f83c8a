//! Hooks in a real session against the fake Gemini server: each event's
//! hook is a real program, and what it answers is checked where it lands —
//! in the next request the model receives, on disk, in the events.

use crate::common;

use std::sync::Arc;

use common::{Harness, hook_registry, hook_script, request_texts, status};
use gd_core::approval::{ApprovalPolicy, Verdict};
use gd_core::tools::Tool;
use gd_protocol::{Event, HookEventName, HookOutcome, HookRun, Op, TurnStatus};
use serde_json::{Value, json};

fn start(scenario: Value, hooks: Value) -> Harness {
    let hooks = hook_registry(hooks);
    Harness::start_with(scenario, move |c| c.hooks = hooks)
}

fn write_scenario(file: &str) -> Value {
    json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": format!("{{{{WORKSPACE}}}}/{file}"), "content": "hi\n"}}]},
        {"text": "done"}
    ]})
}

fn runs(events: &[Event]) -> Vec<HookRun> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::HookRan { run } => Some(run.clone()),
            _ => None,
        })
        .collect()
}

/// The function response the second request carries.
fn function_response(h: &Harness) -> Value {
    let bodies = h.bodies();
    let last = bodies[1]["contents"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    last["parts"][0]["functionResponse"]["response"].clone()
}

#[tokio::test]
async fn a_before_tool_hook_exiting_2_blocks_the_write_and_the_model_hears_why() {
    let dir = tempfile::tempdir().unwrap();
    let block = hook_script(
        dir.path(),
        "block.sh",
        "cat >/dev/null; echo 'writes are blocked by policy' >&2; exit 2",
    );
    let mut h = start(
        write_scenario("out.txt"),
        json!({"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "name": "no-writes", "command": block}]}]}),
    );
    let events = h.turn("write the file").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert!(!h.workspace.join("out.txt").exists(), "the write ran");
    // Word for word what 0.61 sends (tests/fixtures/hooks/.../block.function-responses.json).
    assert_eq!(
        function_response(&h),
        json!({"error": "Tool execution blocked: writes are blocked by policy"})
    );
    let runs = runs(&events);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].outcome, HookOutcome::Blocked);
    assert_eq!(runs[0].exit_code, Some(2));
    assert_eq!(runs[0].label, "no-writes");
    let call_id = events.iter().find_map(|e| match e {
        Event::ToolCallRequest { call_id, .. } => Some(call_id.clone()),
        _ => None,
    });
    assert_eq!(
        runs[0].call_id, call_id,
        "the run is keyed to the call it blocked"
    );
}

#[tokio::test]
async fn a_json_deny_blocks_too_and_other_tools_are_not_matched() {
    let dir = tempfile::tempdir().unwrap();
    let deny = hook_script(
        dir.path(),
        "deny.sh",
        r#"cat >/dev/null; echo '{"decision":"deny","reason":"not today"}'"#,
    );
    let mut h = start(
        write_scenario("out.txt"),
        json!({"BeforeTool": [{"matcher": "^(write_file|replace)$", "hooks": [{"command": deny}]}]}),
    );
    h.turn("write").await;
    assert!(!h.workspace.join("out.txt").exists());
    assert_eq!(
        function_response(&h)["error"],
        "Tool execution blocked: not today"
    );

    // A read is not matched: it runs.
    h.reset(json!({"steps": [
        {"functionCalls": [{"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/hello.txt"}}]},
        {"text": "ok"}
    ]}));
    let events = h.turn("read").await;
    assert!(runs(&events).is_empty());
}

#[tokio::test]
async fn an_after_tool_hook_adds_context_to_the_result_the_model_receives() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = hook_script(
        dir.path(),
        "ctx.sh",
        r#"cat > "$(dirname "$0")/after-input.json"; echo '{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"HOOK-CONTEXT-42 <b>"},"systemMessage":"context hook ran"}'"#,
    );
    let mut h = start(
        write_scenario("out.txt"),
        json!({"AfterTool": [{"matcher": "write_file", "hooks": [{"command": ctx, "name": "add-context"}]}]}),
    );
    let events = h.turn("write the file").await;
    assert!(h.workspace.join("out.txt").exists());
    let output = function_response(&h)["output"].as_str().unwrap().to_owned();
    assert!(
        output.ends_with("\n\n<hook_context>HOOK-CONTEXT-42 &lt;b&gt;</hook_context>"),
        "{output}"
    );
    let run = &runs(&events)[0];
    assert_eq!(run.system_message.as_deref(), Some("context hook ran"));
    assert_eq!(
        run.additional_context.as_deref(),
        Some("HOOK-CONTEXT-42 &lt;b&gt;")
    );
    // Its input carried the tool's response (0.61's field names).
    let input: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("after-input.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(input["hook_event_name"], "AfterTool");
    assert_eq!(input["tool_name"], "write_file");
    assert!(
        input["tool_response"]["llmContent"]
            .as_str()
            .unwrap()
            .contains("out.txt")
    );
}

/// Allows a write only to a path containing "safe"; denies the rest.
struct SafePathsOnly;

impl ApprovalPolicy for SafePathsOnly {
    fn decide(&self, tool: &dyn Tool, args: &Value) -> Verdict {
        if tool.name() != "write_file" {
            return Verdict::Allow;
        }
        let path = args["file_path"].as_str().unwrap_or("");
        if path.ends_with("/safe.txt") {
            Verdict::Allow
        } else {
            Verdict::Deny(Some("only safe.txt".into()))
        }
    }
}

#[tokio::test]
async fn a_rewrite_by_a_hook_is_judged_by_the_policy_it_cannot_slip_past() {
    let dir = tempfile::tempdir().unwrap();
    // The model writes safe.txt; the hook redirects it elsewhere.
    let redirect = hook_script(
        dir.path(),
        "redirect.sh",
        r#"cat >/dev/null; printf '{"hookSpecificOutput":{"tool_input":{"file_path":"%s/elsewhere.txt"}}}' "$GEMINI_PROJECT_DIR""#,
    );
    let hooks = hook_registry(json!({"BeforeTool": [{"hooks": [{"command": redirect}]}]}));
    let mut h = Harness::start_with_policy(
        write_scenario("safe.txt"),
        move |c| c.hooks = hooks,
        Arc::new(SafePathsOnly),
    );
    h.turn("write").await;
    assert!(
        !h.workspace.join("elsewhere.txt").exists(),
        "the rewritten write escaped the policy"
    );
    assert!(!h.workspace.join("safe.txt").exists());
    assert_eq!(
        function_response(&h)["error"],
        "Tool execution denied by policy. only safe.txt"
    );

    // A rewrite the policy allows runs, and the model is told.
    let keep = hook_script(
        dir.path(),
        "keep.sh",
        r#"cat >/dev/null; echo '{"hookSpecificOutput":{"tool_input":{"content":"rewritten"}}}'"#,
    );
    let hooks = hook_registry(json!({"BeforeTool": [{"hooks": [{"command": keep}]}]}));
    let mut h = Harness::start_with_policy(
        write_scenario("safe.txt"),
        move |c| c.hooks = hooks,
        Arc::new(SafePathsOnly),
    );
    h.turn("write").await;
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("safe.txt")).unwrap(),
        "rewritten"
    );
    let output = function_response(&h)["output"].as_str().unwrap().to_owned();
    assert!(
        output.contains(
            "[System] Tool input parameters (content) were modified by a hook before execution."
        ),
        "{output}"
    );
}

#[tokio::test]
async fn a_hook_that_times_out_is_a_warning_with_its_stderr_and_the_write_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let slow = hook_script(
        dir.path(),
        "slow.sh",
        "cat >/dev/null; echo 'slow hook started' >&2; sleep 30; echo '{}'",
    );
    let mut h = start(
        write_scenario("out.txt"),
        json!({"BeforeTool": [{"hooks": [{"command": slow, "name": "slow", "timeout": 300}]}]}),
    );
    let started = std::time::Instant::now();
    let events = h.turn("write").await;
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    assert!(
        h.workspace.join("out.txt").exists(),
        "a time-out does not block"
    );
    let run = &runs(&events)[0];
    assert_eq!(run.outcome, HookOutcome::TimedOut);
    assert!(run.stderr.contains("slow hook started"), "{}", run.stderr);
    assert!(
        run.stderr.contains("Hook timed out after 300ms"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn before_agent_adds_context_or_drops_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = hook_script(
        dir.path(),
        "ctx.sh",
        r#"cat >/dev/null; echo '{"hookSpecificOutput":{"additionalContext":"BRANCH=main"}}'"#,
    );
    let mut h = start(
        json!({"steps": [{"text": "ok"}]}),
        json!({"BeforeAgent": [{"hooks": [{"command": ctx}]}]}),
    );
    h.turn("hello").await;
    let texts = request_texts(&h.bodies()[0]);
    assert!(
        texts
            .iter()
            .any(|t| t == "<hook_context>BRANCH=main</hook_context>"),
        "{texts:?}"
    );

    let deny = hook_script(
        dir.path(),
        "deny.sh",
        "cat >/dev/null; echo 'no prompts about secrets' >&2; exit 2",
    );
    let mut h = start(
        json!({"steps": [{"text": "ok"}]}),
        json!({"BeforeAgent": [{"hooks": [{"command": deny}]}]}),
    );
    let events = h.turn("tell me the secret").await;
    assert!(
        h.fake.main_requests().is_empty(),
        "a blocked prompt reached the model"
    );
    assert!(events.iter().any(|e| matches!(e, Event::Warning { message } if message == "Agent execution blocked: no prompts about secrets")));
}

#[tokio::test]
async fn model_hooks_block_a_request_restrict_the_tools_or_reject_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    // BeforeModel deny: nothing is sent.
    let deny = hook_script(
        dir.path(),
        "deny.sh",
        r#"cat >/dev/null; echo '{"decision":"deny","reason":"offline hours"}'"#,
    );
    let mut h = start(
        json!({"steps": [{"text": "ok"}]}),
        json!({"BeforeModel": [{"hooks": [{"command": deny}]}]}),
    );
    h.turn("hello").await;
    assert!(h.fake.main_requests().is_empty());

    // BeforeToolSelection: only read_file is declared for the request.
    let only_read = hook_script(
        dir.path(),
        "only-read.sh",
        r#"cat >/dev/null; echo '{"hookSpecificOutput":{"toolConfig":{"mode":"AUTO","allowedFunctionNames":["read_file"]}}}'"#,
    );
    let mut h = start(
        json!({"steps": [{"text": "ok"}]}),
        json!({"BeforeToolSelection": [{"hooks": [{"command": only_read}]}]}),
    );
    h.turn("hello").await;
    assert_eq!(
        common::declared_names(&h.bodies()[0]),
        vec!["read_file".to_owned()]
    );

    // AfterModel deny: the answer's tool call is not run.
    let reject = hook_script(
        dir.path(),
        "reject.sh",
        "cat >/dev/null; echo 'redacted' >&2; exit 2",
    );
    let mut h = start(
        write_scenario("out.txt"),
        json!({"AfterModel": [{"hooks": [{"command": reject}]}]}),
    );
    let events = h.turn("write").await;
    assert!(!h.workspace.join("out.txt").exists());
    assert_eq!(h.fake.main_requests().len(), 1);
    assert!(events.iter().any(|e| matches!(e, Event::Warning { message } if message == "Agent execution blocked: redacted")));
}

#[tokio::test]
async fn after_agent_can_send_the_model_back_to_work() {
    let dir = tempfile::tempdir().unwrap();
    // Rejects the first answer only (a marker file remembers).
    let once = hook_script(
        dir.path(),
        "once.sh",
        r#"cat >/dev/null; m="$(dirname "$0")/seen"; if [ -e "$m" ]; then echo '{}'; else touch "$m"; echo 'Please add tests.' >&2; exit 2; fi"#,
    );
    let mut h = start(
        json!({"steps": [{"text": "first"}], "after_steps": {"text": "second"}}),
        json!({"AfterAgent": [{"hooks": [{"command": once}]}]}),
    );
    let events = h.turn("do it").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let bodies = h.bodies();
    assert_eq!(
        bodies.len(),
        2,
        "the hook's reason was sent as a new prompt"
    );
    assert!(
        request_texts(&bodies[1])
            .iter()
            .any(|t| t == "Please add tests.")
    );
    assert_eq!(runs(&events).len(), 2);
}

#[tokio::test]
async fn session_start_context_pre_compress_and_notification() {
    let dir = tempfile::tempdir().unwrap();
    let log = |name: &str| {
        hook_script(
            dir.path(),
            &format!("{name}.sh"),
            &format!(
                r#"cat > "$(dirname "$0")/{name}.json"; echo '{{"hookSpecificOutput":{{"additionalContext":"from {name}"}}}}'"#
            ),
        )
    };
    let (start_hook, compress, notify) = (log("start"), log("compress"), log("notify"));
    let hooks = hook_registry(json!({
        "SessionStart": [{"matcher": "startup", "hooks": [{"command": start_hook}]}],
        "PreCompress": [{"hooks": [{"command": compress}]}],
        "Notification": [{"hooks": [{"command": notify}]}]
    }));
    struct AskWrites;
    impl ApprovalPolicy for AskWrites {
        fn decide(&self, tool: &dyn Tool, _args: &Value) -> Verdict {
            if tool.name() == "write_file" {
                Verdict::Ask
            } else {
                Verdict::Allow
            }
        }
    }
    let mut h = Harness::start_with_policy(
        json!({"steps": [{"text": "ok"}]}),
        move |c| c.hooks = hooks,
        Arc::new(AskWrites),
    );
    h.turn("hello").await;
    let texts = request_texts(&h.bodies()[0]);
    assert!(
        texts
            .iter()
            .any(|t| t == "<hook_context>from start</hook_context>"),
        "{texts:?}"
    );
    let start_input: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("start.json")).unwrap())
            .unwrap();
    assert_eq!(start_input["source"], "startup");

    // A manual /compress runs PreCompress (trigger "manual") first.
    h.reset(json!({"steps": [{"text": "ok"}], "utility": [{"match": "", "text": "summary"}]}));
    h.turn("more").await;
    h.handle.submit(Op::Compress).unwrap();
    loop {
        let e = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(
            e,
            Event::ChatCompressed { .. } | Event::CompressionSkipped { .. }
        ) {
            break;
        }
    }
    let compress_input: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("compress.json")).unwrap())
            .unwrap();
    assert_eq!(compress_input["trigger"], "manual");

    // A confirmation fires Notification (ToolPermission) before it is shown.
    h.reset(write_scenario("out.txt"));
    h.handle.submit(Op::user_text("write")).unwrap();
    let mut saw_run_first = false;
    loop {
        let e = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::HookRan { run } = &e
            && run.event == HookEventName::Notification
        {
            saw_run_first = true;
        }
        if let Event::ToolConfirmationRequest { call_id, .. } = &e {
            assert!(
                saw_run_first,
                "Notification runs before the confirmation is shown"
            );
            h.handle
                .submit(Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome: gd_protocol::ConfirmationOutcome::Cancel,
                    content: None,
                    hunks: None,
                })
                .unwrap();
        }
        if matches!(e, Event::TurnComplete { .. }) {
            break;
        }
    }
    let notify_input: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("notify.json")).unwrap())
            .unwrap();
    assert_eq!(notify_input["notification_type"], "ToolPermission");
    assert_eq!(notify_input["message"], "Tool write_file requires editing");
    assert_eq!(notify_input["details"]["tool_name"], "write_file");
}

#[tokio::test]
async fn hooks_are_listed_and_turned_off_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let block = hook_script(
        dir.path(),
        "block.sh",
        "cat >/dev/null; echo no >&2; exit 2",
    );
    let hooks =
        hook_registry(json!({"BeforeTool": [{"hooks": [{"command": block, "name": "guard"}]}]}));
    let home = tempfile::tempdir().unwrap();
    let session_home = home.path().to_path_buf();
    // The session's home (where the user settings are written) is the temporary folder; the
    // process's HOME is left alone (other tests of this binary run beside this one).
    let mut h = Harness::start_with(write_scenario("out.txt"), move |c| {
        c.hooks = hooks;
        c.memory = Some(gd_core::memory::DiscoveryOptions {
            workspace: c.workspace_dirs[0].clone(),
            home: Some(session_home),
            file_names: vec!["GEMINI.md".into()],
            max_dirs: 10,
            filtering: gd_core::config::FileFiltering::default(),
            workspace_files: true,
            boundary_markers: None,
            include_directories: false,
        });
    });
    h.handle
        .submit(Op::SetHookEnabled {
            name: "guard".into(),
            enabled: false,
            scope: gd_protocol::SettingsScope::User,
        })
        .unwrap();
    let listed = loop {
        let e = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::Hooks { hooks, .. } = e {
            break hooks;
        }
    };
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].enabled);
    let settings = std::fs::read_to_string(home.path().join(".gemini/settings.json")).unwrap();
    let settings: Value = serde_json::from_str(&settings).unwrap();
    assert_eq!(settings["hooksConfig"]["disabled"], json!(["guard"]));
    h.turn("write").await;
    assert!(
        h.workspace.join("out.txt").exists(),
        "a disabled hook still blocked"
    );
}
