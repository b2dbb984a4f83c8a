//! The hook answers that change what the model is asked or what it said —
//! BeforeModel's request changes and answers, AfterModel on each streamed
//! chunk, AfterAgent's `clearContext`, AfterTool's tail calls — in a real
//! session against the fake Gemini server, each hook a real program.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::{Harness, hook_registry, hook_script, request_texts, status, text};
use gd_core::approval::{ApprovalPolicy, Verdict};
use gd_core::tools::Tool;
use gd_protocol::{ConfirmationOutcome, Event, HookEventName, Op, TurnStatus};
use serde_json::{Value, json};

fn start_with_policy(scenario: Value, hooks: Value, policy: Arc<dyn ApprovalPolicy>) -> Harness {
    let hooks = hook_registry(hooks);
    Harness::start_with_policy(scenario, move |c| c.hooks = hooks, policy)
}

fn start(scenario: Value, hooks: Value) -> Harness {
    start_with_policy(scenario, hooks, Arc::new(gd_core::approval::AllowAll))
}

fn warnings(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn deltas(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ContentDelta { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn runs_of(events: &[Event], event: HookEventName) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::HookRan { run } if run.event == event))
        .count()
}

#[tokio::test]
async fn before_model_changes_the_model_sampling_and_text_of_one_request() {
    let dir = tempfile::tempdir().unwrap();
    let rewrite = hook_script(
        dir.path(),
        "rewrite.sh",
        r#"cat >/dev/null; echo '{"hookSpecificOutput":{"llm_request":{"model":"gemini-2.5-pro","config":{"temperature":0.25},"messages":[{"role":"user","content":"the rewritten prompt"}]}}}'"#,
    );
    let mut h = start(
        json!({"steps": [{"text": "ok"}]}),
        json!({"BeforeModel": [{"hooks": [{"command": rewrite}]}]}),
    );
    let events = h.turn("the original prompt").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let requests = h.fake.main_requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].path.contains("/models/gemini-2.5-pro:"),
        "{}",
        requests[0].path
    );
    let body = h.bodies().remove(0);
    assert_eq!(body["generationConfig"]["temperature"], json!(0.25));
    assert_eq!(
        request_texts(&body),
        vec!["the rewritten prompt".to_owned()]
    );
}

#[tokio::test]
async fn before_model_answers_itself_or_stops_and_nothing_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    // Answers every prompt itself until one says "now live".
    let cache = hook_script(
        dir.path(),
        "cache.sh",
        r#"if grep -q 'now live'; then echo '{}'; else echo '{"hookSpecificOutput":{"llm_response":{"candidates":[{"content":{"role":"model","parts":["the cached answer"]}}]}}}'; fi"#,
    );
    let mut h = start(
        json!({"steps": [{"text": "live answer"}]}),
        json!({"BeforeModel": [{"hooks": [{"command": cache}]}]}),
    );
    let events = h.turn("answer from cache").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(text(&events), "the cached answer");
    assert!(h.fake.main_requests().is_empty(), "a request was sent");
    // The answer is the model's in the conversation that follows.
    let events = h.turn("and now live").await;
    assert_eq!(text(&events), "live answer");
    let body = h.bodies().remove(0);
    assert!(request_texts(&body).contains(&"the cached answer".to_owned()));

    let stop = hook_script(
        dir.path(),
        "stop.sh",
        r#"cat >/dev/null; echo '{"continue":false,"stopReason":"quota for today"}'"#,
    );
    let mut h = start(
        json!({"steps": [{"text": "ok"}]}),
        json!({"BeforeModel": [{"hooks": [{"command": stop}]}]}),
    );
    let events = h.turn("hello").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert!(h.fake.main_requests().is_empty());
    assert_eq!(
        warnings(&events),
        vec!["Agent execution stopped: quota for today".to_owned()]
    );
}

#[tokio::test]
async fn after_model_replaces_each_chunk_before_it_is_shown_or_kept() {
    let dir = tempfile::tempdir().unwrap();
    let redact = hook_script(
        dir.path(),
        "redact.sh",
        r#"cat >/dev/null; echo '{"hookSpecificOutput":{"llm_response":{"candidates":[{"content":{"role":"model","parts":["[x]"]}}]}}}'"#,
    );
    let mut h = start(
        json!({"chunk_chars": 4, "steps": [{"text": "the secret answer"}, {"text": "second"}]}),
        json!({"AfterModel": [{"hooks": [{"command": redact}]}]}),
    );
    let events = h.turn("tell me").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let shown = deltas(&events);
    let chunks = runs_of(&events, HookEventName::AfterModel);
    assert!(
        chunks >= 4,
        "AfterModel ran {chunks} times for a 4-chunk answer"
    );
    assert!(shown.iter().all(|d| d == "[x]"), "{shown:?}");
    // What the model hears next is what was shown.
    h.turn("again").await;
    let body = h.bodies().remove(1);
    let all = request_texts(&body).join("|");
    assert!(!all.contains("secret"), "{all}");
    assert!(all.contains("[x][x]"), "{all}");
}

#[tokio::test]
async fn after_agent_clear_context_makes_the_model_start_over() {
    let dir = tempfile::tempdir().unwrap();
    let once = hook_script(
        dir.path(),
        "once.sh",
        r#"cat >/dev/null; m="$(dirname "$0")/seen"; if [ -e "$m" ]; then echo '{}'; else touch "$m"; echo '{"decision":"deny","reason":"Start over, shorter.","hookSpecificOutput":{"clearContext":true}}'; fi"#,
    );
    let mut h = start(
        json!({"steps": [{"text": "a long first answer"}]}),
        json!({"AfterAgent": [{"hooks": [{"command": once}]}]}),
    );
    let events = h.turn("explain it").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert!(
        warnings(&events).contains(&"Agent execution blocked: Start over, shorter.".to_owned())
    );
    let bodies = h.bodies();
    assert_eq!(bodies.len(), 2);
    let second = request_texts(&bodies[1]).join("|");
    assert!(second.contains("Start over, shorter."), "{second}");
    assert!(!second.contains("a long first answer"), "{second}");
    assert!(!second.contains("explain it"), "{second}");
    // The user still sees both answers (the fake answers the fresh
    // conversation with its first step again).
    assert_eq!(text(&events), "a long first answera long first answer");
}

fn read_then_answer() -> Value {
    json!({"steps": [
        {"functionCalls": [{"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/README.md"}}]},
        {"text": "done"}
    ]})
}

fn tail_to(dir: &Path, name: &str, tail: Value) -> String {
    hook_script(
        dir,
        name,
        &format!(
            "cat >/dev/null; echo '{}'",
            json!({"hookSpecificOutput": {"tailToolCallRequest": tail}})
        ),
    )
}

/// The call ids and names of the function responses the second request
/// carries, with their outputs.
fn responses(h: &Harness) -> Vec<(String, String, Value)> {
    let bodies = h.bodies();
    let last = bodies[1]["contents"].as_array().unwrap().last().unwrap();
    last["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.get("functionResponse"))
        .map(|r| {
            (
                r["id"].as_str().unwrap_or_default().to_owned(),
                r["name"].as_str().unwrap().to_owned(),
                r["response"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_tail_call_answers_in_place_of_the_call_the_model_made() {
    let dir = tempfile::tempdir().unwrap();
    let tail = tail_to(
        dir.path(),
        "tail.sh",
        json!({"name": "read_file", "args": {"file_path": "hello.txt"}}),
    );
    let mut h = start(
        read_then_answer(),
        json!({"AfterTool": [{"matcher": "read_file", "hooks": [{"command": tail}]}]}),
    );
    let events = h.turn("read the readme").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let ids: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResponse { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        ids.len(),
        4,
        "the call, its tail, the tail's tail, ...: {ids:?}"
    );
    let original = &ids[0];
    assert_eq!(ids[1], format!("{original}#tail1"));
    // One response for the model's one call: the last tail's, under the
    // model's id and tool name.
    let answered = responses(&h);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(&answered[0].0, original);
    assert_eq!(answered[0].1, "read_file");
    let hello = std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap();
    assert_eq!(
        answered[0].2["output"].as_str().unwrap().trim(),
        hello.trim()
    );
    // The hook names itself again each time: the chain stops, with a warning.
    assert!(
        warnings(&events)
            .iter()
            .any(|w| w.starts_with("A hook asked for more than 3 tail calls")),
        "{:?}",
        warnings(&events)
    );
}

struct WritesAsk;

impl ApprovalPolicy for WritesAsk {
    fn decide(&self, tool: &dyn Tool, _args: &Value) -> Verdict {
        match tool.name() {
            "write_file" => Verdict::Ask,
            _ => Verdict::Allow,
        }
    }
}

#[tokio::test]
async fn a_tail_call_is_asked_for_like_any_call_and_a_no_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let tail = tail_to(
        dir.path(),
        "tail.sh",
        json!({"name": "write_file", "args": {"file_path": "tail.txt", "content": "from a hook"}}),
    );
    for (answer, written) in [
        (ConfirmationOutcome::Cancel, false),
        (ConfirmationOutcome::ProceedOnce, true),
    ] {
        let mut h = start_with_policy(
            read_then_answer(),
            json!({"AfterTool": [{"matcher": "read_file", "hooks": [{"command": tail}]}]}),
            Arc::new(WritesAsk),
        );
        h.handle.submit(Op::user_text("read the readme")).unwrap();
        let mut asked = Vec::new();
        let mut events = Vec::new();
        while !matches!(events.last(), Some(Event::TurnComplete { .. })) {
            let event = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
                .await
                .unwrap()
                .unwrap();
            if let Event::ToolConfirmationRequest { call_id, .. } = &event {
                asked.push(call_id.clone());
                h.handle
                    .submit(Op::ConfirmTool {
                        call_id: call_id.clone(),
                        outcome: answer,
                        content: None,
                        hunks: None,
                    })
                    .unwrap();
            }
            events.push(event);
        }
        assert_eq!(asked.len(), 1, "the tail write was not asked for");
        assert!(asked[0].ends_with("#tail1"), "{asked:?}");
        assert_eq!(h.workspace.join("tail.txt").exists(), written);
        if written {
            assert_eq!(status(&events), TurnStatus::Completed);
            let answered = responses(&h);
            assert_eq!(answered.len(), 1);
            assert_eq!(answered[0].1, "read_file");
        } else {
            assert_eq!(status(&events), TurnStatus::Declined);
        }
    }
}
