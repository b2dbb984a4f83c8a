//! The turn context (`Op::OverrideTurnContext`, `Event::TurnContext`), the
//! model list (`Op::ListModels`) and the turn's usage in `TurnComplete`.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use gd_core::approval::{ApprovalPolicy, ModeRefused, Verdict};
use gd_core::tools::Tool;
use gd_protocol::{ApprovalMode, Event, Op, TurnStatus, TurnUsage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// What a session without the sandbox reports (the harness's settings have none).
fn no_sandbox() -> gd_protocol::SandboxState {
    gd_core::sandbox::state(&gd_core::sandbox::SandboxSettings::default())
}

async fn next_matching(h: &mut Harness, wanted: impl Fn(&Event) -> bool) -> Event {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("no event within 30 s")
            .expect("session ended");
        if wanted(&event) {
            return event;
        }
    }
}

#[tokio::test]
async fn the_turn_context_follows_session_configured() {
    let mut h = Harness::start(json!({"steps": [{"text": "x"}]}));
    let first = h.events.recv().await.unwrap();
    assert!(
        matches!(first, Event::SessionConfigured { .. }),
        "{first:?}"
    );
    assert_eq!(
        h.events.recv().await.unwrap(),
        Event::TurnContext {
            approval_mode: ApprovalMode::Default,
            model: MODEL.into(),
            review_mode: false,
            sandbox: no_sandbox(),
        }
    );
}

#[tokio::test]
async fn a_new_model_is_used_from_the_next_request_on() {
    let mut h = Harness::start(json!({"steps": [{"text": "one"}, {"text": "two"}]}));
    h.turn("first").await;
    h.handle
        .submit(Op::OverrideTurnContext {
            approval_mode: None,
            model: Some("gemini-2.5-pro".into()),
            review_mode: None,
        })
        .unwrap();
    let answer = next_matching(&mut h, |e| matches!(e, Event::TurnContext { .. })).await;
    assert_eq!(
        answer,
        Event::TurnContext {
            approval_mode: ApprovalMode::Default,
            model: "gemini-2.5-pro".into(),
            review_mode: false,
            sandbox: no_sandbox(),
        }
    );
    let events = h.turn("second").await;
    let paths: Vec<String> = h.fake.main_requests().into_iter().map(|r| r.path).collect();
    assert!(paths[0].contains(MODEL), "{paths:?}");
    assert!(paths[1].contains("gemini-2.5-pro"), "{paths:?}");
    let Some(Event::TurnComplete { usage, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(usage.model, "gemini-2.5-pro");
}

#[tokio::test]
async fn turn_complete_sums_the_usage_of_the_turns_requests() {
    let usage_of = |prompt: u64, output: u64| {
        json!({"promptTokenCount": prompt, "candidatesTokenCount": output,
               "cachedContentTokenCount": 2, "thoughtsTokenCount": 1,
               "totalTokenCount": prompt + output + 1})
    };
    let mut h = Harness::start(json!({"steps": [
        {"functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}}],
         "usage": usage_of(100, 5)},
        {"text": "done", "usage": usage_of(120, 8)}
    ]}));
    let events = h.turn("look").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let Some(Event::TurnComplete { usage, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(
        TurnUsage {
            duration_ms: 0,
            ..usage.clone()
        },
        TurnUsage {
            model: MODEL.into(),
            requests: 2,
            prompt_tokens: 220,
            cached_tokens: 4,
            output_tokens: 13,
            thoughts_tokens: 2,
            total_tokens: 235,
            duration_ms: 0,
            tool_tokens: 0,
        }
    );
    // The next turn counts from zero.
    h.reset(json!({"steps": [{"text": "again", "usage": usage_of(10, 1)}]}));
    let events = h.turn("again").await;
    let Some(Event::TurnComplete { usage, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!((usage.requests, usage.prompt_tokens), (1, 10));
}

#[tokio::test]
async fn list_models_answers_with_the_apis_gemini_models() {
    let mut h = Harness::start(json!({"steps": []}));
    h.handle.submit(Op::ListModels).unwrap();
    let Event::Models { models } =
        next_matching(&mut h, |e| matches!(e, Event::Models { .. })).await
    else {
        unreachable!()
    };
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    assert!(names.contains(&"gemini-2.5-pro"), "{names:?}");
    assert!(names.windows(2).all(|w| w[0] <= w[1]), "sorted: {names:?}");
    let pro = models.iter().find(|m| m.name == "gemini-2.5-pro").unwrap();
    assert_eq!(pro.display_name, "Gemini 2.5 Pro");
}

/// Allows everything, records the modes it is switched to and refuses
/// YOLO (like an untrusted folder refuses privileged modes).
#[derive(Default)]
struct ModePolicy {
    modes: Mutex<Vec<ApprovalMode>>,
}

impl ApprovalPolicy for ModePolicy {
    fn decide(&self, _: &dyn Tool, _: &Value) -> Verdict {
        Verdict::Allow
    }

    fn set_approval_mode(&self, mode: ApprovalMode) -> Result<(), ModeRefused> {
        if mode == ApprovalMode::Yolo {
            return Err(ModeRefused("not here".into()));
        }
        self.modes.lock().unwrap().push(mode);
        Ok(())
    }
}

#[tokio::test]
async fn an_approval_mode_goes_to_the_policy_and_a_refusal_is_reported() {
    let policy = Arc::new(ModePolicy::default());
    let mut h = Harness::start_with_policy(json!({"steps": []}), |_| {}, policy.clone());
    h.handle
        .submit(Op::OverrideTurnContext {
            approval_mode: Some(ApprovalMode::AutoEdit),
            model: None,
            review_mode: None,
        })
        .unwrap();
    let answer = next_matching(&mut h, |e| matches!(e, Event::TurnContext { .. })).await;
    // Skip the one sent at start.
    let answer = if answer
        == (Event::TurnContext {
            approval_mode: ApprovalMode::Default,
            model: MODEL.into(),
            review_mode: false,
            sandbox: no_sandbox(),
        }) {
        next_matching(&mut h, |e| matches!(e, Event::TurnContext { .. })).await
    } else {
        answer
    };
    assert_eq!(
        answer,
        Event::TurnContext {
            approval_mode: ApprovalMode::AutoEdit,
            model: MODEL.into(),
            review_mode: false,
            sandbox: no_sandbox(),
        }
    );
    assert_eq!(*policy.modes.lock().unwrap(), [ApprovalMode::AutoEdit]);

    h.handle
        .submit(Op::OverrideTurnContext {
            approval_mode: Some(ApprovalMode::Yolo),
            model: None,
            review_mode: None,
        })
        .unwrap();
    let warning = next_matching(&mut h, |e| matches!(e, Event::Warning { .. })).await;
    assert_eq!(
        warning,
        Event::Warning {
            message: "not here".into()
        }
    );
    let answer = next_matching(&mut h, |e| matches!(e, Event::TurnContext { .. })).await;
    assert_eq!(
        answer,
        Event::TurnContext {
            approval_mode: ApprovalMode::AutoEdit,
            model: MODEL.into(),
            review_mode: false,
            sandbox: no_sandbox(),
        }
    );
}

#[tokio::test]
async fn turning_yolo_on_without_the_sandbox_says_what_it_means() {
    let mut h = Harness::start(json!({"steps": []}));
    h.handle
        .submit(Op::OverrideTurnContext {
            approval_mode: Some(ApprovalMode::Yolo),
            model: None,
            review_mode: None,
        })
        .unwrap();
    let warning = next_matching(&mut h, |e| matches!(e, Event::Warning { .. })).await;
    let Event::Warning { message } = warning else {
        unreachable!()
    };
    assert_eq!(message, no_sandbox().summary);
    assert!(
        message.starts_with("Commands run without a sandbox"),
        "{message}"
    );
    let answer = next_matching(&mut h, |e| {
        matches!(
            e,
            Event::TurnContext {
                approval_mode: ApprovalMode::Yolo,
                ..
            }
        )
    })
    .await;
    let Event::TurnContext { sandbox, .. } = answer else {
        unreachable!()
    };
    assert!(!sandbox.enabled);
    // Once: choosing YOLO again while in YOLO says nothing more.
    h.handle
        .submit(Op::OverrideTurnContext {
            approval_mode: Some(ApprovalMode::Yolo),
            model: None,
            review_mode: None,
        })
        .unwrap();
    let next = next_matching(&mut h, |e| {
        matches!(e, Event::Warning { .. } | Event::TurnContext { .. })
    })
    .await;
    assert!(matches!(next, Event::TurnContext { .. }), "{next:?}");
}
