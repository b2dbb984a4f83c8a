//! Plan mode (Gemini CLI 0.61's): the model enters it, researches with
//! read-only tools, writes its plan into the plans directory, presents it
//! with `exit_plan_mode`, and the user's answer either switches the session
//! to the chosen execution mode or sends feedback back to the model. The
//! fake Gemini server plays the model; the files are real.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_fake_gemini::fixtures::gemini_cli_fixture;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{ConfirmationDetails, ConfirmationOutcome, Event, Op, PlanApproval, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn policy(mode: ApprovalMode) -> Arc<PolicyApproval> {
    Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        mode,
        true,
        None,
    ))
}

/// How a test answers each confirmation, in order.
enum Reply {
    Confirm(ConfirmationOutcome),
    Plan(PlanApproval),
}

async fn turn_answering(
    h: &mut Harness,
    prompt: &str,
    replies: Vec<Reply>,
) -> (Vec<Event>, Vec<ConfirmationDetails>) {
    h.handle.submit(Op::user_text(prompt)).unwrap();
    let mut replies = replies.into_iter();
    let (mut events, mut asked) = (Vec::new(), Vec::new());
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::ToolConfirmationRequest {
            call_id, details, ..
        } = &event
        {
            asked.push(details.clone());
            let op = match replies.next().expect("a reply for every confirmation") {
                Reply::Confirm(outcome) => Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome,
                    content: None,
                    hunks: None,
                },
                Reply::Plan(approval) => Op::AnswerPlan {
                    call_id: call_id.clone(),
                    approval,
                },
            };
            h.handle.submit(op).unwrap();
        }
        let done = matches!(event, Event::TurnComplete { .. });
        events.push(event);
        if done {
            return (events, asked);
        }
    }
}

/// The `response` of each function response of `tool` in the last request
/// (which carries the whole conversation).
fn responses(h: &Harness, tool: &str) -> Vec<Value> {
    h.bodies()
        .last()
        .into_iter()
        .flat_map(|b| b["contents"].as_array().cloned().unwrap_or_default())
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["functionResponse"]["name"] == tool)
        .map(|p| p["functionResponse"]["response"].clone())
        .collect::<Vec<_>>()
}

/// The last request's `functionResponse` of `tool`, as text.
fn last_response(h: &Harness, tool: &str) -> String {
    let all = responses(h, tool);
    all.last()
        .unwrap_or_else(|| panic!("no response of {tool}"))
        .to_string()
}

fn plans_dir(h: &Harness) -> PathBuf {
    let tmp = h._dir.path().join("tmp");
    let session = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("plans").is_dir())
        .expect("a session directory with plans");
    session.join("plans")
}

fn modes(events: &[Event]) -> Vec<ApprovalMode> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TurnContext { approval_mode, .. } => Some(*approval_mode),
            _ => None,
        })
        .collect()
}

const PLAN: &str = "# Plan\n\nChange the greeting in hello.txt.\n\nThen run the tests.\n";

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = walk(dir)
        .into_iter()
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test]
async fn enter_research_plan_then_approve_with_auto_edit() {
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "enter_plan_mode", "args": {"reason": "a risky change"}}]},
        {"functionCalls": [{"name": "read_file", "args": {"file_path": "hello.txt"}}]},
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "plan.md", "content": PLAN}}]},
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "hello.txt", "content": "too early\n"}}]},
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "touch made-by-shell"}}]},
        {"functionCalls": [{"name": "exit_plan_mode", "args": {"plan_filename": "plan.md"}}]},
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "hello.txt", "content": "hi there\n"}}]},
        {"text": "Done."}
    ]});
    let mut h = Harness::start_with_policy(scenario, |_| {}, policy(ApprovalMode::Default));
    let before = snapshot(&h.workspace);
    let (events, asked) = turn_answering(
        &mut h,
        "change the greeting, plan first",
        vec![
            Reply::Confirm(ConfirmationOutcome::ProceedOnce),
            Reply::Plan(PlanApproval {
                approved: true,
                approval_mode: Some(ApprovalMode::AutoEdit),
                feedback: None,
            }),
        ],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);

    // Asked twice: entering plan mode, then the plan. The final edit ran
    // without a question (auto_edit).
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        matches!(&asked[0], ConfirmationDetails::Info { title, .. } if title == "Enter Plan Mode")
    );
    let plans = plans_dir(&h);
    let ConfirmationDetails::ExitPlanMode {
        plan, plan_path, ..
    } = &asked[1]
    else {
        panic!("not a plan approval: {:?}", asked[1]);
    };
    assert_eq!(plan, PLAN);
    assert_eq!(Path::new(plan_path), plans.join("plan.md"));
    assert_eq!(
        std::fs::read_to_string(plans.join("plan.md")).unwrap(),
        PLAN
    );

    // The mode went plan, then auto_edit (TurnContext echoes both).
    // (The first is the session's own, sent when it starts.)
    let switched = modes(&events);
    assert_eq!(
        switched,
        vec![
            ApprovalMode::Default,
            ApprovalMode::Plan,
            ApprovalMode::AutoEdit
        ]
    );

    // While planning, the write outside the plans dir and the shell were refused.
    let write = responses(&h, "write_file");
    assert!(
        write[1].to_string().contains(
            "You are in Plan Mode and cannot modify source code. You may ONLY use write_file or replace to save plans to the designated plans directory as .md files."
        ),
        "{write:?}"
    );
    let shell = last_response(&h, "run_shell_command");
    assert!(
        shell.contains("You are in Plan Mode with access to read-only tools."),
        "{shell}"
    );
    assert!(!h.workspace.join("made-by-shell").exists());
    // The model heard 0.61's approval text.
    let exit = last_response(&h, "exit_plan_mode");
    assert!(
        exit.contains(
            "Plan approved. Switching to Auto-Edit mode (edits will be applied automatically)."
        ) && exit.contains("Read and follow the plan strictly during implementation."),
        "{exit}"
    );
    assert!(last_response(&h, "enter_plan_mode").contains("Switching to Plan mode."));

    // Only the approved edit changed the workspace.
    let after = snapshot(&h.workspace);
    let changed: Vec<&PathBuf> = after
        .iter()
        .filter(|(p, bytes)| before.iter().find(|(q, _)| q == p).map(|(_, b)| b) != Some(bytes))
        .map(|(p, _)| p)
        .collect();
    assert_eq!(changed, vec![&h.workspace.join("hello.txt")]);
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap(),
        "hi there\n"
    );

    // Declarations follow the mode: enter before, exit while planning, enter after.
    let bodies = h.bodies();
    // So does the system instruction: plan mode's rules only while planning.
    let system = |b: &Value| {
        b["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(!system(&bodies[0]).contains("Active Approval Mode: Plan"));
    let planning = system(&bodies[1]);
    assert!(
        planning.contains("# Active Approval Mode: Plan"),
        "{planning}"
    );
    assert!(
        planning.contains(&format!("{}/", plans.display())),
        "{planning}"
    );
    assert!(!system(bodies.last().unwrap()).contains("Active Approval Mode: Plan"));
    assert!(declared_names(&bodies[0]).contains(&"enter_plan_mode".to_owned()));
    assert!(!declared_names(&bodies[0]).contains(&"exit_plan_mode".to_owned()));
    assert!(declared_names(&bodies[1]).contains(&"exit_plan_mode".to_owned()));
    assert!(!declared_names(&bodies[1]).contains(&"enter_plan_mode".to_owned()));
    assert!(declared_names(bodies.last().unwrap()).contains(&"enter_plan_mode".to_owned()));
}

#[tokio::test]
async fn asking_for_changes_sends_the_feedback_and_keeps_planning() {
    let mut h = Harness::start_with_policy(
        json!({"steps": []}),
        |c| {
            c.approval_mode = ApprovalMode::Plan;
            c.session_id = "plan-session".into();
        },
        policy(ApprovalMode::Plan),
    );
    // The plan's absolute path, as the model hears it with the feedback.
    let plan_path = h._dir.path().join("tmp/plan-session/plans/plan.md");
    h.reset(json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "plan.md", "content": PLAN}}]},
        {"functionCalls": [{"name": "exit_plan_mode", "args": {"plan_filename": "plan.md"}}]},
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "src/main.rs", "content": "x"}}]},
        {"functionCalls": [{"name": "read_file", "args": {"file_path": plan_path.to_str().unwrap()}}]},
        {"text": "I will revise the plan."}
    ]}));
    let before = snapshot(&h.workspace);
    let (events, asked) = turn_answering(
        &mut h,
        "plan the change",
        vec![Reply::Plan(PlanApproval {
            approved: false,
            approval_mode: None,
            feedback: Some("> Then run the tests.\nAlso update the README.".into()),
        })],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(asked.len(), 1);
    let exit = last_response(&h, "exit_plan_mode");
    assert!(
        exit.contains(
            "Plan rejected. User feedback: > Then run the tests.\\nAlso update the README."
        ) && exit.contains("Revise the plan based on the feedback."),
        "{exit}"
    );
    // Still planning: the source edit was refused, the workspace is untouched.
    assert_eq!(modes(&events), vec![ApprovalMode::Plan]);
    assert!(last_response(&h, "write_file").contains("You are in Plan Mode"));
    assert_eq!(snapshot(&h.workspace), before);
    // The plan outside the workspace can be read again (0.61 adds the plans directory).
    let read = last_response(&h, "read_file");
    assert!(read.contains("Then run the tests."), "{read}");
    assert!(
        exit.contains(&format!("The plan is stored at: {}", plan_path.display())),
        "{exit}"
    );
}

#[tokio::test]
async fn plan_paths_cannot_leave_the_plans_directory() {
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "../escape.md", "content": "x"}}]},
        {"functionCalls": [{"name": "exit_plan_mode", "args": {"plan_filename": "missing.md"}}]},
        {"text": "ok"}
    ]});
    let mut h = Harness::start_with_policy(
        scenario,
        |c| c.approval_mode = ApprovalMode::Plan,
        policy(ApprovalMode::Plan),
    );
    let events = h.turn("plan").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    // Resolved against the plans directory, it would leave it: refused
    // with 0.61's message.
    let write = last_response(&h, "write_file");
    assert!(
        write.contains(
            "Access denied: plan path (../escape.md) must be within the designated plans directory"
        ),
        "{write}"
    );
    assert!(!h.workspace.parent().unwrap().join("escape.md").exists());
    // The card says plan mode refused it (not a bare failure).
    let refused = events.iter().find_map(|e| match e {
        Event::ToolCallDecided { decided_by, .. } => Some(*decided_by.clone()),
        _ => None,
    });
    assert!(
        matches!(
            refused,
            Some(gd_protocol::DecidedBy::ApprovalMode {
                outcome: gd_protocol::PolicyOutcome::Deny,
                ..
            })
        ),
        "{refused:?}"
    );
    let exit = last_response(&h, "exit_plan_mode");
    assert!(
        exit.contains("Plan file does not exist: missing.md. You must create the plan file before requesting approval."),
        "{exit}"
    );
}

#[tokio::test]
async fn exit_outside_plan_mode_is_refused_with_gemini_clis_message() {
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "exit_plan_mode", "args": {"plan_filename": "plan.md"}}]},
        {"text": "ok"}
    ]});
    let mut h = Harness::start_with_policy(scenario, |_| {}, policy(ApprovalMode::Default));
    let events = h.turn("go").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert!(last_response(&h, "exit_plan_mode").contains(
        "You are not currently in Plan Mode. Use enter_plan_mode first to design a plan."
    ));
}

/// The declarations, as 0.61 sends them: `enter_plan_mode` as in
/// tools_yolo.json (its descriptions are redacted there to their length),
/// `exit_plan_mode` pinned from the 0.61 bundle (`getExitPlanModeDeclaration`).
#[test]
fn declarations_match_gemini_cli_0_61() {
    let registry = gd_core::tools::ToolRegistry::with_builtins();
    let ours = |name: &str| {
        let d = registry
            .declarations()
            .into_iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("{name} not declared"));
        serde_json::to_value(d).unwrap()
    };
    let fixture = gemini_cli_fixture("tools_yolo.json");
    let theirs = fixture
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "enter_plan_mode")
        .unwrap()
        .clone();
    let enter = ours("enter_plan_mode");
    // Descriptions: the fixture keeps only their lengths.
    assert_eq!(
        theirs["description"],
        format!(
            "<redacted: {} chars>",
            enter["description"].as_str().unwrap().len()
        )
    );
    let reason = &enter["parametersJsonSchema"]["properties"]["reason"]["description"];
    assert_eq!(
        theirs["parametersJsonSchema"]["properties"]["reason"]["description"],
        format!("<redacted: {} chars>", reason.as_str().unwrap().len())
    );
    let (mut a, mut b) = (enter.clone(), theirs.clone());
    strip_descriptions(&mut a);
    strip_descriptions(&mut b);
    assert_eq!(a, b);

    assert_eq!(
        ours("exit_plan_mode"),
        json!({
            "name": "exit_plan_mode",
            "description": "Finalizes the planning phase and transitions to implementation by presenting the plan for formal user approval. You MUST reach an informal agreement with the user in the chat regarding the proposed strategy BEFORE calling this tool. This tool MUST be used to exit Plan Mode before any source code edits can be performed.",
            "parametersJsonSchema": {
                "type": "object",
                "required": ["plan_filename"],
                "properties": {
                    "plan_filename": {
                        "type": "string",
                        "description": "The filename of the finalized plan (e.g., \"feature-x.md\"). Do not provide an absolute path."
                    }
                }
            }
        })
    );
}

fn headless_policy(mode: ApprovalMode) -> Arc<PolicyApproval> {
    Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        mode,
        false,
        None,
    ))
}

/// Issue 33: where nobody can answer, leaving plan mode goes back to at
/// most the mode the session had before it planned. 0.61 switches to YOLO
/// whatever that was; from `auto_edit` we go back to `auto_edit` (and tell
/// the model why), from `yolo` to `yolo`.
#[tokio::test]
async fn headless_exit_returns_to_at_most_the_mode_before_planning() {
    for (start, approved) in [(ApprovalMode::AutoEdit, false), (ApprovalMode::Yolo, true)] {
        let scenario = json!({"steps": [
            {"functionCalls": [{"name": "enter_plan_mode", "args": {}}]},
            {"functionCalls": [{"name": "write_file", "args": {"file_path": "plan.md", "content": PLAN}}]},
            {"functionCalls": [{"name": "exit_plan_mode", "args": {"plan_filename": "plan.md"}}]},
            {"text": "ok"}
        ]});
        let mut h = Harness::start_with_policy(
            scenario,
            |c| c.approval_mode = start,
            headless_policy(start),
        );
        let events = h.turn("plan, then do it").await;
        assert_eq!(status(&events), TurnStatus::Completed);
        assert_eq!(
            modes(&events),
            vec![start, ApprovalMode::Plan, start],
            "{start:?}"
        );
        let exit = last_response(&h, "exit_plan_mode");
        if approved {
            assert!(
                exit.contains("Plan approved. Switching to YOLO mode"),
                "{exit}"
            );
        } else {
            assert!(
                exit.contains(
                    "Plan not approved. Nobody can approve a plan in this non-interactive session"
                ) && exit.contains("returns to the mode it had before planning: Auto-Edit mode"),
                "{exit}"
            );
        }
    }
}

/// The approval inbox's "Approve" answers a plan with `Op::ConfirmTool`: the
/// user's click, so the plan runs in `default` as the card says, even in a
/// session that started in plan mode (where an unanswered exit stays).
#[tokio::test]
async fn approving_from_the_inbox_runs_the_plan_asking_first() {
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "plan.md", "content": PLAN}}]},
        {"functionCalls": [{"name": "exit_plan_mode", "args": {"plan_filename": "plan.md"}}]},
        {"text": "ok"}
    ]});
    let mut h = Harness::start_with_policy(
        scenario,
        |c| {
            c.approval_mode = ApprovalMode::Plan;
            c.interactive = true;
        },
        policy(ApprovalMode::Plan),
    );
    let (events, asked) = turn_answering(
        &mut h,
        "plan it",
        vec![Reply::Confirm(ConfirmationOutcome::ProceedOnce)],
    )
    .await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert!(matches!(
        asked[..],
        [ConfirmationDetails::ExitPlanMode { .. }]
    ));
    assert_eq!(
        modes(&events),
        vec![ApprovalMode::Plan, ApprovalMode::Default]
    );
    assert!(
        last_response(&h, "exit_plan_mode").contains("Plan approved. Switching to Default mode"),
    );
}

/// A plan name that is a symbolic link out of the plans directory (say, a
/// link the repository ships in a plans folder its settings name) is
/// refused like `../`: neither presented nor written through.
#[cfg(unix)]
#[tokio::test]
async fn a_plan_that_links_out_of_the_plans_directory_is_refused() {
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "exit_plan_mode", "args": {"plan_filename": "linked.md"}}]},
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "linked.md", "content": "x"}}]},
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "dangling.md", "content": "x"}}]},
        {"text": "ok"}
    ]});
    let mut h = Harness::start_with_policy(
        scenario,
        |c| {
            c.approval_mode = ApprovalMode::Plan;
            c.session_id = "plan-session".into();
        },
        policy(ApprovalMode::Plan),
    );
    let plans = h._dir.path().join("tmp/plan-session/plans");
    std::fs::create_dir_all(&plans).unwrap();
    std::os::unix::fs::symlink(h.workspace.join("hello.txt"), plans.join("linked.md")).unwrap();
    std::os::unix::fs::symlink(h.workspace.join("new.txt"), plans.join("dangling.md")).unwrap();
    let before = snapshot(&h.workspace);
    let events = h.turn("plan").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let exit = last_response(&h, "exit_plan_mode");
    assert!(
        exit.contains(
            "Access denied: plan path (linked.md) must be within the designated plans directory"
        ),
        "{exit}"
    );
    let writes = responses(&h, "write_file");
    assert!(
        writes[0].to_string().contains("Access denied"),
        "{writes:?}"
    );
    // A link to a file that does not exist yet is caught by the write itself.
    assert!(
        writes[1].to_string().contains("through a symbolic link"),
        "{writes:?}"
    );
    assert_eq!(snapshot(&h.workspace), before, "{writes:?}");
}
