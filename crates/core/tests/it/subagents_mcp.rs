//! An agent's own MCP servers (`mcp_servers` in its front matter, Gemini CLI
//! 0.61's field), with a real python MCP server: started when the agent
//! runs, its tools offered to that agent only, `trust: true` letting its
//! calls run where nobody can be asked, the process gone when the agent is
//! done (answered, out of time, failed, interrupted while its call asks);
//! a bad entry is a `path:line` error at its own line; a server that cannot
//! start is reported and the agent still answers; the session's MCP rules
//! hold for these servers too (untrusted folder: none starts;
//! `mcp.excluded`; a server the user turned off).

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_core::subagents::{AgentCatalog, InvokeAgent, load};
use gd_core::tools::ToolRegistry;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{ConfirmationDetails, Event, Op, ToolCallStatus, TurnStatus};
use serde_json::{Value, json};

const PROMPT_MARK: &str = "CALC-AGENT";

fn fixture_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/mcp/fixture_server.py")
}

/// `~/.gemini/agents/calc.md` with `servers` as its `mcp_servers` (YAML).
fn write_agent(home: &Path, servers: &str) -> PathBuf {
    let dir = home.join(".gemini/agents");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("calc.md");
    std::fs::write(
        &file,
        format!(
            "---\nname: calc\ndescription: Adds numbers.\ntools:\n  - read_file\nmcp_servers:\n{servers}---\nYou are {PROMPT_MARK}. Add with the add tool.\n"
        ),
    )
    .unwrap();
    file
}

fn fixture_entry(marker: &str, trust: bool) -> String {
    format!(
        "  fixture:\n    command: \"{}\"\n    args: [\"{}\", stdio]\n    env:\n      GD_AGENT_MARKER: \"{marker}\"\n    trust: {trust}\n",
        mcp_python().display(),
        fixture_script().display()
    )
}

/// Processes whose environment holds `GD_AGENT_MARKER=<marker>`.
fn marked_processes(marker: &str) -> Vec<u32> {
    let needle = format!("GD_AGENT_MARKER={marker}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        })
        .collect()
}

/// A headless session in the default mode (an MCP call would be refused
/// there unless trusted) with the agents of `home`.
fn start(home: &Path, scenario: Value) -> Harness {
    start_in(home, scenario, Launch::default())
}

/// How [`start_in`] launches: the settings, whether the folder is trusted,
/// whether someone can answer confirmations, and agent files to write into
/// the workspace's `.gemini/agents` first.
struct Launch {
    settings: gd_settings::Settings,
    trusted: bool,
    interactive: bool,
    workspace_agents: Vec<(&'static str, String)>,
    /// A shorter time limit for `calc` than a file can give (minutes).
    calc_timeout: Option<Duration>,
}

impl Default for Launch {
    fn default() -> Self {
        Self {
            settings: gd_settings::Settings::default(),
            trusted: true,
            interactive: false,
            workspace_agents: Vec::new(),
            calc_timeout: None,
        }
    }
}

fn start_in(home: &Path, scenario: Value, launch: Launch) -> Harness {
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        launch.interactive,
        None,
    ));
    let home = home.to_path_buf();
    Harness::start_with_tools(
        scenario,
        move |c| {
            let ws = c.workspace_dirs[0].clone();
            let dir = ws.join(".gemini/agents");
            for (file, text) in &launch.workspace_agents {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(file), text).unwrap();
            }
            let catalog = load::load(&launch.settings, Some(&home), &ws, launch.trusted);
            c.agents = Arc::new(match launch.calc_timeout {
                Some(timeout) => {
                    let mut calc = catalog.get("calc").expect("calc loads").clone();
                    calc.timeout = timeout;
                    AgentCatalog::new(vec![calc], Vec::new())
                }
                None => catalog,
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

fn scenario() -> Value {
    json!({
        "steps": [
            {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "calc", "prompt": "Add 2 and 3"}}]},
            {"text": "The agent says 5."}
        ],
        "branches": [{
            "system_contains": PROMPT_MARK,
            "steps": [
                {"functionCalls": [{"name": "@mcp:fixture:add", "args": {"a": 2, "b": 3}}]},
                {"functionCalls": [{"name": "complete_task", "args": {"result": "2 + 3 = 5"}}]}
            ]
        }]
    })
}

#[tokio::test]
async fn the_agents_own_server_runs_for_it_alone_and_stops_with_it() {
    let home = tempfile::tempdir().unwrap();
    let marker = uuid::Uuid::new_v4().to_string();
    write_agent(home.path(), &fixture_entry(&marker, true));
    let mut h = start(home.path(), scenario());
    h.handle.submit(Op::user_text("add please")).unwrap();

    // While the agent runs, its server is a live process.
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .expect("the agent's MCP call within 60 s")
            .expect("session ended");
        let answered = matches!(&event, Event::Subagent { event, .. }
            if matches!(event.as_ref(), Event::ToolCallResponse { name, .. } if name == "mcp_fixture_add"));
        events.push(event);
        if answered {
            break;
        }
    }
    assert!(
        !marked_processes(&marker).is_empty(),
        "the server runs while the agent does"
    );
    events.extend(h.collect_turn().await);
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    let call = events.iter().find_map(|e| match e {
        Event::Subagent { event, .. } => match event.as_ref() {
            Event::ToolCallResponse { name, status, .. } if name == "mcp_fixture_add" => {
                Some(*status)
            }
            _ => None,
        },
        _ => None,
    });
    assert_eq!(
        call,
        Some(ToolCallStatus::Success),
        "trust: true runs it unasked"
    );

    let bodies = h.bodies();
    let (parent, agent): (Vec<&Value>, Vec<&Value>) = bodies
        .iter()
        .partition(|b| !b["systemInstruction"].to_string().contains(PROMPT_MARK));
    assert!(
        declared_names(agent[0]).contains(&"mcp_fixture_add".to_owned()),
        "{:?}",
        declared_names(agent[0])
    );
    assert!(declared_names(agent[0]).contains(&"read_file".to_owned()));
    for body in &parent {
        assert!(
            !declared_names(body)
                .iter()
                .any(|n| n.starts_with("mcp_fixture"))
        );
    }
    let added = agent[1]["contents"].to_string();
    assert!(
        added.contains("mcp_fixture_add") && added.contains('5'),
        "{added}"
    );
    let last = parent.last().unwrap()["contents"].to_string();
    assert!(last.contains("2 + 3 = 5"), "{last}");

    // Gone once the agent is done (SIGTERM to its process group).
    until_gone(&marker).await;
}

#[tokio::test]
async fn an_untrusted_server_of_the_agent_is_refused_headless_like_any_mcp_call() {
    let home = tempfile::tempdir().unwrap();
    let marker = uuid::Uuid::new_v4().to_string();
    write_agent(home.path(), &fixture_entry(&marker, false));
    let mut h = start(home.path(), scenario());
    let events = h.turn("add please").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let refused = events.iter().any(|e| matches!(e, Event::Subagent { event, .. }
        if matches!(event.as_ref(), Event::ToolCallResponse { name, status: ToolCallStatus::Error, .. } if name == "mcp_fixture_add")));
    assert!(refused, "{events:#?}");
}

#[test]
fn a_bad_server_entry_is_an_error_naming_the_file_and_line() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    // Line 6 is `mcp_servers:`, line 9 the broken server's entry.
    let file = write_agent(
        home.path(),
        "  fine:\n    command: x\n  broken:\n    args: 3\n",
    );
    let catalog = load::load(
        &gd_settings::Settings::default(),
        Some(home.path()),
        ws.path(),
        true,
    );
    assert!(catalog.get("calc").is_none(), "the agent is not loaded");
    let error = catalog
        .errors()
        .iter()
        .map(ToString::to_string)
        .find(|e| e.contains("mcp_servers.broken"))
        .unwrap_or_else(|| panic!("{:?}", catalog.errors()));
    assert!(
        error.starts_with(&format!("{}:9:", file.display())),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_that_cannot_start_is_reported_and_the_agent_still_answers() {
    let home = tempfile::tempdir().unwrap();
    write_agent(
        home.path(),
        "  missing:\n    command: /nonexistent/gd-test-server\n",
    );
    let mut h = start(
        home.path(),
        json!({
            "steps": [
                {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "calc", "prompt": "Add"}}]},
                {"text": "done"}
            ],
            "branches": [{
                "system_contains": PROMPT_MARK,
                "steps": [{"functionCalls": [{"name": "complete_task", "args": {"result": "no tools, still here"}}]}]
            }]
        }),
    );
    let events = h.turn("add please").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let warned = events.iter().any(|e| matches!(e, Event::Subagent { event, .. }
        if matches!(event.as_ref(), Event::Warning { message } if message.contains("'calc'") && message.contains("'missing'"))));
    assert!(warned, "{events:#?}");
    let last = h.bodies().last().unwrap()["contents"].to_string();
    assert!(last.contains("no tools, still here"), "{last}");
}

/// Waits until no process carries `marker` (the agent's server exited).
async fn until_gone(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !marked_processes(marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the agent's MCP server outlived it"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The subagent's warnings.
fn agent_warnings(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Subagent { event, .. } => match event.as_ref() {
                Event::Warning { message } => Some(message.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The parent invokes `calc`, which answers at once (its server's tool,
/// when declared, is not called).
fn answers_at_once() -> Value {
    json!({
        "steps": [
            {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "calc", "prompt": "Add"}}]},
            {"text": "done"}
        ],
        "branches": [{
            "system_contains": PROMPT_MARK,
            "steps": [{"functionCalls": [{"name": "complete_task", "args": {"result": "answered without it"}}]}]
        }]
    })
}

#[tokio::test]
async fn in_an_untrusted_folder_no_agents_server_starts() {
    let home = tempfile::tempdir().unwrap();
    let marker = uuid::Uuid::new_v4().to_string();
    write_agent(home.path(), &fixture_entry(&marker, true));
    let ws_marker = uuid::Uuid::new_v4().to_string();
    let ws_agent = format!(
        "---\nname: repo-agent\ndescription: From the repository.\nmcp_servers:\n{}---\nHi.\n",
        fixture_entry(&ws_marker, true)
    );
    let mut h = start_in(
        home.path(),
        answers_at_once(),
        Launch {
            trusted: false,
            workspace_agents: vec![("repo-agent.md", ws_agent)],
            ..Launch::default()
        },
    );
    let events = h.turn("add please").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    let warnings = agent_warnings(&events);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("'calc'") && w.contains("fixture") && w.contains("not trusted")),
        "{warnings:?}"
    );
    let bodies = h.bodies();
    let agent = bodies
        .iter()
        .find(|b| b["systemInstruction"].to_string().contains(PROMPT_MARK))
        .expect("the agent ran");
    assert!(
        !declared_names(agent)
            .iter()
            .any(|n| n.starts_with("mcp_fixture")),
        "{:?}",
        declared_names(agent)
    );
    // Neither the user agent's server nor the repository agent's ran.
    assert!(marked_processes(&marker).is_empty());
    assert!(marked_processes(&ws_marker).is_empty());
    // The repository's agent is not even loaded; the listing says why the
    // user agent's servers stay off.
    let catalog = load::load(
        &gd_settings::Settings::default(),
        Some(home.path()),
        Path::new(&h.ws()),
        false,
    );
    assert!(catalog.get("repo-agent").is_none());
    let note = catalog.note("calc").unwrap_or_default();
    assert!(note.contains("not trusted"), "{note}");
    let last = bodies.last().unwrap()["contents"].to_string();
    assert!(last.contains("answered without it"), "{last}");
}

#[tokio::test]
async fn mcp_excluded_in_the_settings_blocks_an_agents_server_too() {
    let home = tempfile::tempdir().unwrap();
    let marker = uuid::Uuid::new_v4().to_string();
    write_agent(home.path(), &fixture_entry(&marker, true));
    let mut settings = gd_settings::Settings::default();
    settings.mcp.excluded = vec!["fixture".into()];
    let mut h = start_in(
        home.path(),
        answers_at_once(),
        Launch {
            settings,
            ..Launch::default()
        },
    );
    let events = h.turn("add please").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    let warnings = agent_warnings(&events);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("'calc'") && w.contains("'fixture'") && w.contains("mcp.excluded")),
        "{warnings:?}"
    );
    assert!(marked_processes(&marker).is_empty());
    let agent = h
        .bodies()
        .into_iter()
        .find(|b| b["systemInstruction"].to_string().contains(PROMPT_MARK))
        .expect("the agent ran");
    assert!(!declared_names(&agent).contains(&"mcp_fixture_add".to_owned()));
}

#[tokio::test]
async fn an_agents_server_call_asks_naming_the_agent_and_cancelling_stops_the_server() {
    let home = tempfile::tempdir().unwrap();
    let marker = uuid::Uuid::new_v4().to_string();
    write_agent(home.path(), &fixture_entry(&marker, false));
    let mut h = start_in(
        home.path(),
        scenario(),
        Launch {
            interactive: true,
            ..Launch::default()
        },
    );
    h.handle.submit(Op::user_text("add please")).unwrap();
    let (agent, details) = loop {
        let event = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .expect("a confirmation within 60 s")
            .expect("session ended");
        if let Event::Subagent {
            agent_name, event, ..
        } = event
            && let Event::ToolConfirmationRequest { details, .. } = *event
        {
            break (agent_name, details);
        }
    };
    assert_eq!(agent, "calc", "the confirmation says which agent asked");
    match details {
        ConfirmationDetails::Mcp {
            server_name,
            tool_name,
            ..
        } => assert_eq!(
            (server_name.as_str(), tool_name.as_str()),
            ("fixture", "add")
        ),
        other => panic!("expected an MCP confirmation, got {other:?}"),
    }
    assert!(
        !marked_processes(&marker).is_empty(),
        "the server runs while its call waits"
    );
    // The user stops the turn instead of answering.
    h.handle.submit(Op::Interrupt).unwrap();
    let events = h.collect_turn().await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::TurnComplete { .. })),
        "{events:#?}"
    );
    until_gone(&marker).await;
}

/// Waits for the subagent's call of `tool` to start (its server is up).
async fn until_agent_calls(h: &mut Harness, tool: &str) -> Vec<Event> {
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .expect("the agent's call within 60 s")
            .expect("session ended");
        let started = matches!(&event, Event::Subagent { event, .. }
            if matches!(event.as_ref(), Event::ToolCallRequest { name, .. } if name == tool));
        events.push(event);
        if started {
            return events;
        }
    }
}

#[tokio::test]
async fn the_server_stops_when_the_agent_runs_out_of_time() {
    let home = tempfile::tempdir().unwrap();
    let marker = uuid::Uuid::new_v4().to_string();
    write_agent(home.path(), &fixture_entry(&marker, true));
    let mut h = start_in(
        home.path(),
        json!({
            "steps": [
                {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "calc", "prompt": "Wait"}}]},
                {"text": "done"}
            ],
            "branches": [{
                "system_contains": PROMPT_MARK,
                "steps": [
                    {"functionCalls": [{"name": "@mcp:fixture:slow", "args": {"seconds": 120}}]},
                    {"functionCalls": [{"name": "complete_task", "args": {"result": "out of time"}}]}
                ]
            }]
        }),
        Launch {
            calc_timeout: Some(Duration::from_secs(2)),
            ..Launch::default()
        },
    );
    h.handle.submit(Op::user_text("wait please")).unwrap();
    until_agent_calls(&mut h, "mcp_fixture_slow").await;
    assert!(!marked_processes(&marker).is_empty(), "the server runs");
    let events = h.collect_turn().await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    let finished = finished_status(&events);
    assert_eq!(
        finished,
        Some(gd_protocol::SubagentStatus::Completed),
        "{events:#?}"
    );
    until_gone(&marker).await;
}

#[tokio::test]
async fn the_server_stops_when_the_agents_request_fails() {
    let home = tempfile::tempdir().unwrap();
    let marker = uuid::Uuid::new_v4().to_string();
    write_agent(home.path(), &fixture_entry(&marker, true));
    let mut h = start(
        home.path(),
        json!({
            // Request 2 is the agent's first: refused for good.
            "faults": [{"request": 2, "kind": "http_error", "status": 400, "message": "bad agent request"}],
            "steps": [
                {"functionCalls": [{"name": "invoke_agent", "args": {"agent_name": "calc", "prompt": "Add"}}]},
                {"text": "the agent failed"}
            ],
            "branches": [{
                "system_contains": PROMPT_MARK,
                "steps": [{"functionCalls": [{"name": "complete_task", "args": {"result": "never"}}]}]
            }]
        }),
    );
    let events = h.turn("add please").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    let failed = finished_status(&events);
    assert_eq!(
        failed,
        Some(gd_protocol::SubagentStatus::Failed),
        "{events:#?}"
    );
    until_gone(&marker).await;
}

#[tokio::test]
async fn a_server_the_user_turned_off_does_not_start_for_an_agent_either() {
    let home = tempfile::tempdir().unwrap();
    let marker = uuid::Uuid::new_v4().to_string();
    write_agent(home.path(), &fixture_entry(&marker, true));
    // What `gemini mcp disable fixture` writes (0.61's file).
    std::fs::write(
        home.path().join(".gemini/mcp-server-enablement.json"),
        r#"{"fixture": {"enabled": false}}"#,
    )
    .unwrap();
    let mut h = start(home.path(), answers_at_once());
    let events = h.turn("add please").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");
    let warnings = agent_warnings(&events);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("'calc'") && w.contains("'fixture'") && w.contains("disabled")),
        "{warnings:?}"
    );
    assert!(marked_processes(&marker).is_empty());
    let last = h.bodies().last().unwrap()["contents"].to_string();
    assert!(last.contains("answered without it"), "{last}");
}

/// How the agent's run ended, from its `SubagentFinished` event.
fn finished_status(events: &[Event]) -> Option<gd_protocol::SubagentStatus> {
    events.iter().find_map(|e| match e {
        Event::SubagentFinished { status, .. } => Some(*status),
        _ => None,
    })
}
