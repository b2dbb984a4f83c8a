//! Subagents (`invoke_agent`) against the fake server: the investigator's
//! read-only round trip and its request's shape, two agents at once, a
//! write refused by a headless policy, stopping one agent or the whole
//! turn with a valid history afterwards.

use crate::common;

use std::sync::Arc;

use common::*;
use gd_core::ApprovalMode;
use gd_core::approval::ApprovalPolicy;
use gd_core::policy::PolicyApproval;
use gd_core::subagents::{AgentCatalog, InvokeAgent, builtin};
use gd_core::tools::ToolRegistry;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{Event, Op, SubagentStatus, ToolCallStatus, TurnStatus};
use serde_json::{Value, json};

/// A session with the built-in agents and `invoke_agent` declared, and a
/// GEMINI.md in the workspace.
fn start(scenario: Value, policy: Arc<dyn ApprovalPolicy>) -> Harness {
    Harness::start_with_tools(
        scenario,
        |c| {
            c.agents = Arc::new(AgentCatalog::new(builtin::agents(), Vec::new()));
            let ws = c.workspace_dirs[0].clone();
            std::fs::write(ws.join("GEMINI.md"), "Agents read the project notes too.\n").unwrap();
            c.memory = Some(gd_core::memory::DiscoveryOptions {
                workspace: ws,
                home: None,
                file_names: vec!["GEMINI.md".into()],
                max_dirs: 200,
                filtering: Default::default(),
                workspace_files: true,
                boundary_markers: None,
                include_directories: false,
            });
        },
        policy,
        |_| {
            let mut tools = ToolRegistry::with_builtins();
            tools.register(Arc::new(InvokeAgent::new()));
            tools.into()
        },
    )
}

fn allow_all() -> Arc<dyn ApprovalPolicy> {
    Arc::new(gd_core::approval::AllowAll)
}

/// The built-in policies of a headless session in default mode.
fn headless_default() -> Arc<dyn ApprovalPolicy> {
    Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        false,
        None,
    ))
}

fn invoke(agent: &str, prompt: &str) -> Value {
    json!({"name": "invoke_agent", "args": {"agent_name": agent, "prompt": prompt}})
}

/// The text of the functionResponse answering `name` in a request body.
fn response_to(body: &Value, name: &str) -> Value {
    body["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap())
        .filter_map(|p| p.get("functionResponse"))
        .rfind(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no response to {name} in {body}"))["response"]
        .clone()
}

fn system_text(body: &Value) -> String {
    body["systemInstruction"].to_string()
}

/// The inner events of the subagent running under `parent`.
fn inner(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Subagent { event, .. } => Some((**event).clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_investigator_reads_and_returns_its_report_as_the_calls_result() {
    let mut h = start(
        json!({
            "steps": [
                {"functionCalls": [invoke("codebase_investigator", "Where is the greeting?")]},
                {"match_tool": "invoke_agent", "text": "The greeting is in hello.txt."}
            ],
            "branches": [{
                "system_contains": "Codebase Investigator",
                "steps": [
                    {"functionCalls": [
                        {"name": "list_directory", "args": {"dir_path": "{{WORKSPACE}}"}},
                        {"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/hello.txt"}}
                    ]},
                    {"functionCalls": [{"name": "complete_task", "args": {"report": {
                        "SummaryOfFindings": "hello.txt greets.",
                        "ExplorationTrace": ["listed", "read hello.txt"],
                        "RelevantLocations": [{"FilePath": "hello.txt", "Reasoning": "the greeting", "KeySymbols": []}]
                    }}}]}
                ]
            }]
        }),
        allow_all(),
    );
    let events = h.turn("Find the greeting").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    assert!(text(&events).contains("The greeting is in hello.txt."));

    // Started, its own stream wrapped, then finished with its report.
    let started = events
        .iter()
        .position(|e| matches!(e, Event::SubagentStarted { agent_name, .. } if agent_name == "codebase_investigator"))
        .expect("started");
    let finished = events
        .iter()
        .position(|e| {
            matches!(
                e,
                Event::SubagentFinished {
                    status: SubagentStatus::Completed,
                    ..
                }
            )
        })
        .expect("finished");
    assert!(started < finished);
    let nested = inner(&events);
    let mut succeeded: Vec<&str> = nested
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallResponse {
                name,
                status: ToolCallStatus::Success,
                ..
            } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    // Read-only calls run side by side: either may finish first.
    succeeded.sort_unstable();
    assert_eq!(succeeded, ["list_directory", "read_file"]);
    assert!(nested.iter().any(|e| matches!(
        e,
        Event::Usage {
            role: gd_protocol::RequestRole::Subagent,
            ..
        }
    )));

    // Requests: parent, agent x2, parent.
    let requests = h.fake.main_requests();
    assert_eq!(requests.len(), 4);
    let sub = body(requests[1].clone());
    assert_eq!(
        requests[1].model.as_deref(),
        Some("gemini-2.5-pro"),
        "0.61's investigator model for a 2.5 session"
    );
    assert_eq!(
        declared_names(&sub),
        [
            "list_directory",
            "read_file",
            "glob",
            "grep_search",
            "complete_task"
        ]
    );
    // 0.61 sends the model's defaults for it (see tests/it/subagent_wire.rs).
    assert_eq!(sub["generationConfig"]["temperature"], 1.0);
    assert_eq!(sub["generationConfig"]["topP"], 0.95);
    assert!(system_text(&sub).contains("Codebase Investigator"));
    assert!(system_text(&sub).contains("Environment Context"));
    assert!(
        !system_text(&sub).contains(SYSTEM_PROMPT),
        "not the parent's prompt"
    );
    let first = sub["contents"][0]["parts"][0]["text"].as_str().unwrap();
    assert!(
        first.contains("<objective>\nWhere is the greeting?\n</objective>"),
        "{first}"
    );
    let sub2 = body(requests[2].clone());
    assert!(
        response_to(&sub2, "read_file")
            .to_string()
            .to_lowercase()
            .contains("hello"),
        "{sub2}"
    );
    assert_eq!(
        sub2["contents"].as_array().unwrap().len(),
        3,
        "its own history only"
    );

    // The parent hears 0.61's shape.
    let parent = body(requests[3].clone());
    let output = response_to(&parent, "invoke_agent")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        output.starts_with(
            "Subagent 'codebase_investigator' finished.\nTermination Reason: GOAL\nResult:\n{"
        ),
        "{output}"
    );
    assert!(output.contains("\"SummaryOfFindings\": \"hello.txt greets.\""));
    assert_valid_history(parent["contents"].as_array().unwrap());
}

#[tokio::test]
async fn two_agents_of_one_response_run_at_the_same_time() {
    let mut h = start(
        json!({
            "steps": [
                {"functionCalls": [invoke("generalist", "task one"), invoke("generalist", "task two")]},
                {"text": "both done"}
            ],
            "branches": [{
                "system_contains": "general-purpose software engineering agent",
                "steps": [
                    {"functionCalls": [{"name": "complete_task", "args": {"result": "finished"}}]}
                ]
            }]
        }),
        allow_all(),
    );
    let events = h.turn("do two things").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    let order: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::SubagentStarted { .. } => Some("started"),
            Event::SubagentFinished { .. } => Some("finished"),
            _ => None,
        })
        .collect();
    // Both started before either finished: they overlapped.
    assert_eq!(order, ["started", "started", "finished", "finished"]);
    let parent = h.bodies().pop().unwrap();
    assert_valid_history(parent["contents"].as_array().unwrap());
}

#[tokio::test]
async fn wait_for_previous_runs_the_second_agent_after_the_first() {
    let mut h = start(
        json!({
            "steps": [
                {"functionCalls": [
                    invoke("generalist", "task one"),
                    {"name": "invoke_agent", "args": {"agent_name": "generalist", "prompt": "task two", "wait_for_previous": true}}
                ]},
                {"text": "both done"}
            ],
            "branches": [{
                "system_contains": "general-purpose software engineering agent",
                "steps": [{"functionCalls": [{"name": "complete_task", "args": {"result": "finished"}}]}]
            }]
        }),
        allow_all(),
    );
    let events = h.turn("do two things in order").await;
    let order: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::SubagentStarted { .. } => Some("started"),
            Event::SubagentFinished { .. } => Some("finished"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["started", "finished", "started", "finished"]);
}

#[tokio::test]
async fn a_subagents_write_is_refused_by_a_headless_default_policy_and_the_parent_hears_it() {
    let mut h = start(
        json!({
            "steps": [
                {"functionCalls": [invoke("generalist", "Write a file")]},
                {"match_tool": "invoke_agent", "text": "It could not write."}
            ],
            "branches": [{
                "system_contains": "general-purpose software engineering agent",
                "steps": [
                    {"functionCalls": [{"name": "write_file", "args": {"file_path": "{{WORKSPACE}}/new.txt", "content": "x"}}]},
                    {"functionCalls": [{"name": "complete_task", "args": {"result": "The write was refused."}}]}
                ]
            }]
        }),
        headless_default(),
    );
    let events = h.turn("write please").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    assert!(!h.workspace.join("new.txt").exists());
    let nested = inner(&events);
    assert!(
        nested.iter().any(|e| matches!(e, Event::ToolCallResponse { name, status: ToolCallStatus::Error, .. } if name == "write_file")),
        "{nested:#?}"
    );
    let requests = h.bodies();
    let sub2 = &requests[2];
    let refusal = response_to(sub2, "write_file").to_string();
    assert!(refusal.contains("error"), "{refusal}");
    let parent = requests.last().unwrap();
    let output = response_to(parent, "invoke_agent")["output"].to_string();
    assert!(output.contains("The write was refused."), "{output}");
}

#[tokio::test]
async fn an_unknown_agent_is_an_error_naming_the_known_ones() {
    let mut h = start(
        json!({"steps": [
            {"functionCalls": [invoke("nobody", "x")]},
            {"text": "ok"}
        ]}),
        allow_all(),
    );
    h.turn("go").await;
    let parent = h.bodies().pop().unwrap();
    let error = response_to(&parent, "invoke_agent")["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains("Subagent 'nobody' not found"), "{error}");
    assert!(
        error.contains("codebase_investigator, generalist"),
        "{error}"
    );
}

/// A script whose agent hangs on its first request until stopped.
fn hanging() -> Value {
    json!({
        "steps": [
            {"functionCalls": [invoke("generalist", "long task")]},
            {"match_tool": "invoke_agent", "text": "carried on"}
        ],
        "branches": [{
            "system_contains": "general-purpose software engineering agent",
            "steps": [{"delay_ms": 20000, "text": "never"}]
        }]
    })
}

async fn until_started(h: &mut Harness, seen: &mut Vec<Event>) -> String {
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .expect("no subagent started")
            .expect("session ended");
        seen.push(event.clone());
        if let Event::SubagentStarted { parent_call_id, .. } = event {
            return parent_call_id;
        }
    }
}

#[tokio::test]
async fn cancel_subagent_stops_only_that_agent_and_the_turn_goes_on() {
    let mut h = start(hanging(), allow_all());
    h.handle.submit(Op::user_text("go")).unwrap();
    let mut events = Vec::new();
    let call = until_started(&mut h, &mut events).await;
    h.handle
        .submit(Op::CancelSubagent {
            parent_call_id: call.clone(),
        })
        .unwrap();
    events.extend(h.collect_turn().await);
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    assert!(text(&events).contains("carried on"));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::SubagentFinished {
            status: SubagentStatus::Cancelled,
            ..
        }
    )));
    let parent = h.bodies().pop().unwrap();
    let output = response_to(&parent, "invoke_agent")["output"].to_string();
    assert!(output.contains("stopped by the user"), "{output}");
    assert_valid_history(parent["contents"].as_array().unwrap());
}

#[tokio::test]
async fn interrupting_the_turn_stops_its_agents_and_the_next_request_is_valid() {
    let mut h = start(hanging(), allow_all());
    h.handle.submit(Op::user_text("go")).unwrap();
    let mut events = Vec::new();
    until_started(&mut h, &mut events).await;
    h.handle.submit(Op::Interrupt).unwrap();
    events.extend(h.collect_turn().await);
    assert_eq!(status(&events), TurnStatus::Cancelled);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::SubagentFinished {
            status: SubagentStatus::Cancelled,
            ..
        }
    )));
    h.reset(json!({"steps": [{"text": "fine"}]}));
    let events = h.turn("again").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let last = h.bodies().pop().unwrap();
    assert_valid_history(last["contents"].as_array().unwrap());
}

#[tokio::test]
async fn a_subagents_write_is_confirmed_through_the_sessions_confirmations() {
    let policy: Arc<dyn ApprovalPolicy> = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        None,
    ));
    let mut h = start(
        json!({
            "steps": [
                {"functionCalls": [invoke("generalist", "Write a file")]},
                {"match_tool": "invoke_agent", "text": "Written."}
            ],
            "branches": [{
                "system_contains": "general-purpose software engineering agent",
                "steps": [
                    {"functionCalls": [{"name": "write_file", "args": {"file_path": "{{WORKSPACE}}/new.txt", "content": "made by the agent\n"}}]},
                    {"functionCalls": [{"name": "complete_task", "args": {"result": "Wrote new.txt."}}]}
                ]
            }]
        }),
        policy,
    );
    h.handle.submit(Op::user_text("write please")).unwrap();
    let mut events = Vec::new();
    // The confirmation arrives nested under the parent's call.
    let (parent, call_id) = loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .expect("no confirmation")
            .expect("session ended");
        events.push(event.clone());
        if let Event::Subagent {
            parent_call_id,
            event,
            ..
        } = event
            && let Event::ToolConfirmationRequest { call_id, name, .. } = *event
        {
            assert_eq!(name, "write_file");
            break (parent_call_id, call_id);
        }
    };
    assert!(events.iter().any(|e| matches!(e, Event::ToolCallRequest { call_id, name, .. } if *call_id == parent && name == "invoke_agent")));
    h.handle
        .submit(Op::ConfirmTool {
            call_id,
            outcome: gd_protocol::ConfirmationOutcome::ProceedOnce,
            content: None,
            hunks: None,
        })
        .unwrap();
    let events = h.collect_turn().await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("new.txt")).unwrap(),
        "made by the agent\n"
    );
    let output = response_to(&h.bodies().pop().unwrap(), "invoke_agent")["output"].to_string();
    assert!(output.contains("Wrote new.txt."), "{output}");
}

#[tokio::test]
async fn a_subagents_requests_count_in_the_turn_and_in_stats_as_subagent() {
    let mut h = start(
        json!({
            "steps": [
                {"functionCalls": [invoke("codebase_investigator", "look")]},
                {"text": "ok"}
            ],
            "branches": [{
                "system_contains": "Codebase Investigator",
                "steps": [{"functionCalls": [{"name": "complete_task", "args": {"report": {
                    "SummaryOfFindings": "s", "ExplorationTrace": [], "RelevantLocations": []
                }}}]}]
            }]
        }),
        allow_all(),
    );
    let events = h.turn("go").await;
    let usage = events
        .iter()
        .find_map(|e| match e {
            Event::TurnComplete { usage, .. } => Some(usage.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(usage.requests, 3, "two of the parent, one of the agent");
    h.handle.submit(Op::Stats).unwrap();
    let stats = loop {
        if let Event::SessionStats { stats } = h.events.recv().await.unwrap() {
            break stats;
        }
    };
    let agent_model = stats
        .models
        .iter()
        .find(|m| m.model == "gemini-2.5-pro")
        .expect("the investigator's model is listed");
    assert_eq!(agent_model.requests, 1);
    assert_eq!(
        agent_model.roles[0].role,
        gd_protocol::RequestRole::Subagent
    );
}

#[tokio::test]
async fn out_of_turns_the_agent_gets_one_grace_turn_then_the_parent_hears_the_limit() {
    let mut agent = builtin::agents().remove(1);
    agent.max_turns = 1;
    let mut h = Harness::start_with_tools(
        json!({
            "steps": [
                {"functionCalls": [invoke("generalist", "work")]},
                {"match_tool": "invoke_agent", "text": "ok"}
            ],
            "branches": [{
                "system_contains": "general-purpose software engineering agent",
                "steps": [
                    {"functionCalls": [{"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/hello.txt"}}]},
                    {"text": "still thinking"}
                ]
            }]
        }),
        move |c| c.agents = Arc::new(AgentCatalog::new(vec![agent], Vec::new())),
        allow_all(),
        |_| {
            let mut tools = ToolRegistry::with_builtins();
            tools.register(Arc::new(InvokeAgent::new()));
            tools.into()
        },
    );
    let events = h.turn("go").await;
    assert!(events.iter().any(|e| matches!(
        e,
        Event::SubagentFinished {
            status: SubagentStatus::TurnLimit,
            ..
        }
    )));
    let bodies = h.bodies();
    // The grace request answers the pending call and carries the warning.
    let grace = &bodies[2];
    assert_valid_history(grace["contents"].as_array().unwrap());
    let last = grace["contents"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(last.contains("complete_task"), "{last}");
    let output = response_to(bodies.last().unwrap(), "invoke_agent")["output"].to_string();
    assert!(output.contains("Termination Reason: MAX_TURNS"), "{output}");
    assert!(
        output.contains("Agent reached max turns limit (1)."),
        "{output}"
    );
}

#[tokio::test]
async fn plan_mode_starts_the_investigator_but_not_the_generalist() {
    let policy: Arc<dyn ApprovalPolicy> = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Plan,
        false,
        None,
    ));
    let mut h = Harness::start_with_tools(
        json!({
            "steps": [
                {"functionCalls": [invoke("codebase_investigator", "look"), invoke("generalist", "change things")]},
                {"text": "ok"}
            ],
            "branches": [{
                "system_contains": "Codebase Investigator",
                "steps": [{"functionCalls": [{"name": "complete_task", "args": {"report": {
                    "SummaryOfFindings": "s", "ExplorationTrace": [], "RelevantLocations": []
                }}}]}]
            }]
        }),
        |c| {
            c.agents = Arc::new(AgentCatalog::new(builtin::agents(), Vec::new()));
            c.approval_mode = ApprovalMode::Plan;
        },
        policy,
        |_| {
            let mut tools = ToolRegistry::with_builtins();
            tools.register(Arc::new(InvokeAgent::new()));
            tools.into()
        },
    );
    h.turn("plan it").await;
    let parent = h.bodies().pop().unwrap();
    let answers: Vec<Value> = parent["contents"].as_array().unwrap().last().unwrap()["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["functionResponse"]["response"].clone())
        .collect();
    assert!(
        answers[0]["output"]
            .to_string()
            .contains("Termination Reason: GOAL"),
        "{answers:?}"
    );
    assert!(
        answers[1]["error"].to_string().contains("denied by policy"),
        "{answers:?}"
    );
    let agent = &h.bodies()[1];
    assert!(
        system_text(agent).contains("# Execution Constraints"),
        "plan mode is told"
    );
}

#[tokio::test]
async fn out_of_time_the_agent_gets_a_grace_turn_with_a_valid_history() {
    let mut agent = builtin::agents().remove(1);
    // The deadline is the event under test: the agent's second request
    // hangs on the server until it passes.
    agent.timeout = std::time::Duration::from_millis(300);
    let mut h = Harness::start_with_tools(
        json!({
            "steps": [
                {"functionCalls": [invoke("generalist", "work")]},
                {"match_tool": "invoke_agent", "text": "ok"}
            ],
            "branches": [{
                "system_contains": "general-purpose software engineering agent",
                "steps": [
                    {"functionCalls": [{"name": "read_file", "args": {"file_path": "{{WORKSPACE}}/hello.txt"}}]},
                    {"functionCalls": [{"name": "complete_task", "args": {"result": "Partial: hello.txt read."}}]}
                ]
            }],
            // The agent's second request (the third of the run) never answers.
            "faults": [{"request": 3, "kind": "hang"}]
        }),
        move |c| c.agents = Arc::new(AgentCatalog::new(vec![agent], Vec::new())),
        allow_all(),
        |_| {
            let mut tools = ToolRegistry::with_builtins();
            tools.register(Arc::new(InvokeAgent::new()));
            tools.into()
        },
    );
    let events = h.turn("go").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    let bodies = h.bodies();
    // parent, agent (read), agent (hangs), agent (grace), parent.
    assert_eq!(bodies.len(), 5);
    let grace = &bodies[3];
    let contents = grace["contents"].as_array().unwrap();
    assert_valid_history(contents);
    let last = contents.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(last["parts"][0].get("functionResponse").is_some(), "{last}");
    assert!(last.to_string().contains("run out of time"), "{last}");
    // The grace turn answered: the run counts as completed.
    assert!(events.iter().any(|e| matches!(
        e,
        Event::SubagentFinished {
            status: SubagentStatus::Completed,
            ..
        }
    )));
    let output = response_to(bodies.last().unwrap(), "invoke_agent")["output"].to_string();
    assert!(output.contains("Partial: hello.txt read."), "{output}");
}

#[tokio::test]
async fn the_time_limit_does_not_run_while_a_confirmation_waits() {
    let mut agent = builtin::agents().remove(1);
    agent.timeout = std::time::Duration::from_millis(300);
    let policy: Arc<dyn ApprovalPolicy> = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        None,
    ));
    let mut h = Harness::start_with_tools(
        json!({
            "steps": [
                {"functionCalls": [invoke("generalist", "write")]},
                {"match_tool": "invoke_agent", "text": "ok"}
            ],
            "branches": [{
                "system_contains": "general-purpose software engineering agent",
                "steps": [
                    {"functionCalls": [{"name": "write_file", "args": {"file_path": "{{WORKSPACE}}/new.txt", "content": "x\n"}}]},
                    {"functionCalls": [{"name": "complete_task", "args": {"result": "written"}}]}
                ]
            }]
        }),
        move |c| c.agents = Arc::new(AgentCatalog::new(vec![agent], Vec::new())),
        policy,
        |_| {
            let mut tools = ToolRegistry::with_builtins();
            tools.register(Arc::new(InvokeAgent::new()));
            tools.into()
        },
    );
    h.handle.submit(Op::user_text("go")).unwrap();
    let call_id = loop {
        let event = h.events.recv().await.unwrap();
        if let Event::Subagent { event, .. } = event
            && let Event::ToolConfirmationRequest { call_id, .. } = *event
        {
            break call_id;
        }
    };
    // The user takes longer than the agent's whole time limit to answer:
    // what is under test is that nothing happens meanwhile.
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    h.handle
        .submit(Op::ConfirmTool {
            call_id,
            outcome: gd_protocol::ConfirmationOutcome::ProceedOnce,
            content: None,
            hunks: None,
        })
        .unwrap();
    let events = h.collect_turn().await;
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::SubagentFinished {
                status: SubagentStatus::Completed,
                ..
            }
        )),
        "{events:#?}"
    );
    assert_eq!(h.bodies().len(), 4, "no grace turn: it never timed out");
    assert!(h.workspace.join("new.txt").exists());
}
