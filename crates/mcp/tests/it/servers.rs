//! The MCP client against real servers: the python fixture server (stdio,
//! streamable HTTP, SSE), the paged server (low-level SDK API, paged
//! lists) and server-everything (node, stdio).

use crate::common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::*;
use gd_mcp::content::{is_error, result_display, result_to_parts};
use gd_mcp::names::{WAIT_FOR_PREVIOUS_DESCRIPTION, declared_tool_name};
use gd_mcp::{CallError, McpEvent, McpManager};
use gd_protocol::{McpDiscoveryState, McpServerState, McpTransportKind};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn declared(manager: &McpManager) -> Vec<String> {
    manager
        .tools()
        .iter()
        .map(|t| t.declared_name.clone())
        .collect()
}

fn texts(result: &Value, tool: &str) -> Vec<String> {
    result_to_parts(result, tool)
        .into_iter()
        .filter_map(|p| p.text)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_discovery_names_and_schemas() {
    let ws = tempfile::tempdir().unwrap();
    let manager = started(options(json!({"fx": fixture_stdio(json!({}))}), ws.path())).await;
    assert_eq!(manager.discovery_state(), McpDiscoveryState::Completed);
    assert_connected(&manager, "fx");
    // Prompts and resources arrive after the tools (the first request does
    // not wait for them).
    let status = wait_status(&manager, "fx", "fully listed", |s| {
        (s.prompts, s.resources) == (2, 2)
    })
    .await;
    assert_eq!(status.state, McpServerState::Connected);
    assert_eq!(status.transport, Some(McpTransportKind::Stdio));
    assert!(status.latency_ms.is_some());
    let names = declared(&manager);
    assert_eq!(
        names,
        [
            "mcp_fx_add",
            "mcp_fx_echo",
            "mcp_fx_image",
            "mcp_fx_audio",
            "mcp_fx_resource_text",
            "mcp_fx_resource_blob",
            "mcp_fx_resource_link",
            "mcp_fx_fail",
            "mcp_fx_slow",
            "mcp_fx_crash",
            "mcp_fx_env",
            "mcp_fx_add_tool",
            // `untyped` is skipped: its parameter has no type.
            "mcp_fx_a_tool_with_a_name_that...g_for_the_gemini_api_limit_xyz",
        ]
    );
    assert_eq!(status.tools as usize, names.len());
    assert_eq!(names.last().unwrap().len(), 63);
    assert!(
        manager
            .log("fx")
            .unwrap()
            .iter()
            .any(|l| l.contains("skipping tool 'untyped'")),
        "{:?}",
        manager.log("fx")
    );
    let add = &manager.tools()[0];
    assert_eq!(add.name, "add");
    assert_eq!(
        add.schema,
        json!({
            "type": "object",
            "properties": {
                "a": {"title": "A", "type": "integer"},
                "b": {"title": "B", "type": "integer"},
                "wait_for_previous": {"type": "boolean", "description": WAIT_FOR_PREVIOUS_DESCRIPTION}
            },
            "required": ["a", "b"],
            "title": "addArguments"
        })
    );
    // The key order of d_mcp_tiny's fixture (type, properties, required, title).
    let keys: Vec<&String> = add.schema.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "properties", "required", "title"]);
    let prompts = manager.prompts();
    assert_eq!(prompts[0].name, "greet");
    assert!(prompts[0].arguments[0].required);
    let text = manager
        .get_prompt(
            "fx",
            "greet",
            &BTreeMap::from([("name".to_owned(), "Ada".to_owned())]),
        )
        .await
        .unwrap();
    assert_eq!(text, "Please greet Ada warmly.");
    let uris: Vec<String> = manager.resources().into_iter().map(|r| r.uri).collect();
    assert_eq!(uris, ["fixture://hello", "fixture://blob"]);
    let read = manager
        .read_resource("fx", "fixture://hello", &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "hello from a resource");
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_content_type_and_tool_errors() {
    let ws = tempfile::tempdir().unwrap();
    let manager = started(options(json!({"fx": fixture_stdio(json!({}))}), ws.path())).await;
    assert_connected(&manager, "fx");
    let cancel = CancellationToken::new();
    let call = |tool: &'static str, args: Value| {
        let manager = manager.clone();
        let cancel = cancel.clone();
        async move { manager.call_tool("fx", tool, args, &cancel).await.unwrap() }
    };

    let add = call("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(
        texts(&add, "add"),
        ["<untrusted_context>\n5\n</untrusted_context>"]
    );
    assert!(!is_error(&add));

    let image = call("image", json!({})).await;
    let parts = result_to_parts(&image, "image");
    assert_eq!(
        parts[0].text.as_deref(),
        Some("[Tool 'image' provided the following image data with mime-type: image/png]")
    );
    assert_eq!(
        parts[1].inline_data.as_ref().unwrap().mime_type,
        "image/png"
    );
    assert_eq!(result_display(&image), "[Image: image/png]");

    let audio = call("audio", json!({})).await;
    assert_eq!(
        texts(&audio, "audio"),
        ["[Tool 'audio' provided the following audio data with mime-type: audio/wav]"]
    );
    assert_eq!(
        result_to_parts(&audio, "audio")[1]
            .inline_data
            .as_ref()
            .unwrap()
            .data,
        "UklGRjAwMDBXQVZF"
    );

    let resource = call("resource_text", json!({})).await;
    assert_eq!(
        texts(&resource, "resource_text"),
        ["<untrusted_context>\ninline text\n</untrusted_context>"]
    );

    let blob = call("resource_blob", json!({})).await;
    let parts = result_to_parts(&blob, "resource_blob");
    assert_eq!(
        parts[0].text.as_deref(),
        Some(
            "[Tool 'resource_blob' provided the following embedded resource with mime-type: application/pdf]"
        )
    );
    assert_eq!(
        parts[1].inline_data.as_ref().unwrap().mime_type,
        "application/pdf"
    );
    assert_eq!(
        result_display(&blob),
        "[Embedded Resource: application/pdf]"
    );

    let link = call("resource_link", json!({})).await;
    assert_eq!(
        texts(&link, "resource_link"),
        [
            "<untrusted_context>\nsee the link\n</untrusted_context>",
            "Resource Link: Hello resource at fixture://hello"
        ]
    );
    assert_eq!(
        result_display(&link),
        "see the link\n[Link to Hello resource: fixture://hello]"
    );

    let failed = call("fail", json!({"message": "no good"})).await;
    assert!(is_error(&failed), "{failed}");
    assert!(
        result_display(&failed).contains("Error executing tool fail"),
        "{failed}"
    );

    // A tool the server does not have is a JSON-RPC or tool error, not a hang.
    match manager.call_tool("fx", "nope", json!({}), &cancel).await {
        Ok(result) => assert!(is_error(&result), "{result}"),
        Err(CallError::Failed(_)) => {}
        Err(other) => panic!("{other:?}"),
    }
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn timeouts_and_cancellation() {
    let ws = tempfile::tempdir().unwrap();
    // The server notes each call that `notifications/cancelled` interrupted.
    let cancelled_calls = ws.path().join("cancelled.txt");
    let manager = started(options(
        json!({"fx": fixture_stdio(json!({
            // Also the handshake's limit: roomy for a loaded machine.
            "timeout": 15000,
            "env": {"FIXTURE_CANCEL_FILE": cancelled_calls}
        }))}),
        ws.path(),
    ))
    .await;
    assert_connected(&manager, "fx");
    let cancel = CancellationToken::new();
    let started_at = Instant::now();
    let timed_out = manager
        .call_tool("fx", "slow", json!({"seconds": 30}), &cancel)
        .await;
    assert_eq!(
        timed_out,
        Err(CallError::Timeout(Duration::from_millis(15000)))
    );
    assert!(started_at.elapsed() < Duration::from_secs(25));
    // The server was told to stop working on it.
    wait_for_lines(&cancelled_calls, 1).await;

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started_at = Instant::now();
    let cancelled = manager
        .call_tool("fx", "slow", json!({"seconds": 30}), &cancel)
        .await;
    assert_eq!(cancelled, Err(CallError::Cancelled));
    assert!(started_at.elapsed() < Duration::from_secs(5));
    // Cancelling sends `notifications/cancelled`: the server's handler was
    // interrupted while the connection stays up (its 30 s sleep would
    // otherwise still run).
    let lines = wait_for_lines(&cancelled_calls, 2).await;
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("slow 30") && l.ends_with("cancelled")),
        "{lines:?}"
    );
    assert_connected(&manager, "fx");

    // The server is still fine.
    let ok = manager
        .call_tool(
            "fx",
            "slow",
            json!({"seconds": 0.01}),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        texts(&ok, "slow"),
        ["<untrusted_context>\nslept 0.01\n</untrusted_context>"]
    );
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_server_restarts_and_its_tools_come_back() {
    let ws = tempfile::tempdir().unwrap();
    let crashes = ws.path().join("crashes.txt");
    let manager = started(options(
        json!({"fx": fixture_stdio(json!({"env": {"FIXTURE_CRASH_FILE": crashes}}))}),
        ws.path(),
    ))
    .await;
    assert_connected(&manager, "fx");
    let mut events = manager.subscribe();
    let before = manager.tools_generation();
    let crashed = manager
        .call_tool("fx", "crash", json!({}), &CancellationToken::new())
        .await;
    assert!(
        matches!(&crashed, Err(CallError::Failed(m)) if m.contains("closed the connection")),
        "{crashed:?}"
    );
    let error = wait_status(&manager, "fx", "in error", |s| {
        s.state == McpServerState::Error
    })
    .await;
    let message = error.error.unwrap();
    assert!(message.contains("exit code 3"), "{message}");
    assert!(message.contains("crashing on purpose"), "{message}");
    assert!(message.contains("restarting in 200 ms"), "{message}");
    let back = wait_status(&manager, "fx", "connected again", |s| {
        s.state == McpServerState::Connected && s.restarts == 1
    })
    .await;
    assert_eq!(back.tools, 13);
    assert!(declared(&manager).contains(&"mcp_fx_add".to_owned()));
    assert!(manager.tools_generation() >= before + 2);
    assert_eq!(std::fs::read_to_string(&crashes).unwrap(), "crash\n");
    let mut saw = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let McpEvent::Status(s) = event {
            saw.push(s.state);
        }
    }
    assert!(
        saw.windows(3).any(|w| w
            == [
                McpServerState::Error,
                McpServerState::Connecting,
                McpServerState::Connected
            ]),
        "{saw:?}"
    );
    let ok = manager
        .call_tool(
            "fx",
            "add",
            json!({"a": 1, "b": 1}),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        texts(&ok, "add"),
        ["<untrusted_context>\n2\n</untrusted_context>"]
    );
    manager.shutdown(Duration::from_secs(1)).await;
}

/// Waits (up to 20 s) until `path` has `n` lines; returns them.
async fn wait_for_lines(path: &std::path::Path, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let lines: Vec<String> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(
            Instant::now() < deadline,
            "{} has {} lines, expected {n}: {lines:?}",
            path.display(),
            lines.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_http_server_is_reconnected_and_its_tools_come_back() {
    let ws = tempfile::tempdir().unwrap();
    let crashes = ws.path().join("crashes.txt");
    let mut first = HttpFixture::start_with("http", None, &[("FIXTURE_CRASH_FILE", &crashes)]);
    let port = first.port;
    let mut options = options(
        json!({"remote": {"httpUrl": format!("http://127.0.0.1:{port}/mcp")}}),
        ws.path(),
    );
    // Enough attempts to outlast the new server's start-up.
    options.restart.max_attempts = 30;
    let manager = started(options).await;
    let status = assert_connected(&manager, "remote");
    assert_eq!(status.transport, Some(McpTransportKind::Http));
    let tools = status.tools;
    assert!(declared(&manager).contains(&"mcp_remote_add".to_owned()));

    // The server process dies while answering a call.
    let crashed = manager
        .call_tool("remote", "crash", json!({}), &CancellationToken::new())
        .await;
    assert!(crashed.is_err(), "{crashed:?}");
    assert_eq!(first.wait_exit().code(), Some(3));
    assert_eq!(std::fs::read_to_string(&crashes).unwrap(), "crash\n");
    let down = wait_status(&manager, "remote", "in error, restarting", |s| {
        s.state == McpServerState::Error
    })
    .await;
    let message = down.error.unwrap();
    assert!(
        message.starts_with("the server stopped answering") && message.contains("restarting in"),
        "{message}"
    );
    assert!(
        !declared(&manager)
            .iter()
            .any(|t| t.starts_with("mcp_remote_")),
        "its tools are withdrawn while it is down"
    );

    // The server comes back on the same address: the manager reconnects.
    let _second = HttpFixture::start_with("http", Some(port), &[]);
    let back = wait_status(&manager, "remote", "connected again", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    assert!(back.restarts >= 1, "{back:?}");
    assert_eq!(back.tools, tools);
    assert!(declared(&manager).contains(&"mcp_remote_add".to_owned()));
    let sum = manager
        .call_tool(
            "remote",
            "add",
            json!({"a": 20, "b": 22}),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(result_display(&sum), "42");
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_and_resources_are_listed_across_pages() {
    let ws = tempfile::tempdir().unwrap();
    let manager = started(options(json!({"paged": paged_stdio(json!({}))}), ws.path())).await;
    let status = assert_connected(&manager, "paged");
    let mut expected: Vec<String> = (0..25).map(|i| format!("mcp_paged_tool_{i:02}")).collect();
    expected.extend([
        "mcp_paged_cursors".to_owned(),
        "mcp_paged_chatter".to_owned(),
    ]);
    assert_eq!(declared(&manager), expected, "all three pages, in order");
    assert_eq!(status.tools, 27);
    // The server saw the first page asked without a cursor, then each
    // nextCursor it gave.
    let cursors = manager
        .call_tool("paged", "cursors", json!({}), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(result_display(&cursors), r#"[null, "page-2", "page-3"]"#);
    manager
        .wait_resources(&CancellationToken::new())
        .await
        .unwrap();
    let uris: Vec<String> = manager.resources().into_iter().map(|r| r.uri).collect();
    assert_eq!(
        uris,
        (0..5)
            .map(|i| format!("paged://doc/{i}"))
            .collect::<Vec<_>>()
    );
    assert_eq!(manager.status("paged").unwrap().resources, 5);
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_are_offered_from_the_capability_before_their_list_arrives() {
    let ws = tempfile::tempdir().unwrap();
    // Each resources/list page takes a second: discovery (tools) is over
    // long before the resources are known.
    let manager = started(options(
        json!({"paged": paged_stdio(json!({"env": {"PAGED_RESOURCES_DELAY": "1"}}))}),
        ws.path(),
    ))
    .await;
    assert_eq!(manager.discovery_state(), McpDiscoveryState::Completed);
    assert_connected(&manager, "paged");
    assert!(
        manager.resources().is_empty(),
        "the list is still coming: {:?}",
        manager.resources()
    );
    assert!(
        manager.offers_resources(),
        "the `resources` capability is enough to offer the resource tools"
    );
    let generation = manager.tools_generation();
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    assert_eq!(
        manager.wait_resources(&cancelled).await,
        Err(CallError::Cancelled)
    );
    let started_at = Instant::now();
    manager
        .wait_resources(&CancellationToken::new())
        .await
        .unwrap();
    assert!(
        started_at.elapsed() >= Duration::from_millis(500),
        "it waited for the list"
    );
    assert_eq!(manager.resources().len(), 5);
    assert!(manager.offers_resources());
    assert!(
        manager.tools_generation() > generation,
        "the arrival of the list is announced"
    );
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stderr_growth_is_announced_at_most_every_250_ms() {
    let ws = tempfile::tempdir().unwrap();
    let manager = started(options(json!({"paged": paged_stdio(json!({}))}), ws.path())).await;
    assert_connected(&manager, "paged");
    let mut events = manager.subscribe();
    let call = {
        let manager = manager.clone();
        tokio::spawn(async move {
            manager
                .call_tool(
                    "paged",
                    "chatter",
                    json!({"count": 150}),
                    &CancellationToken::new(),
                )
                .await
        })
    };
    let mut announced = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("the last line is announced")
            .unwrap();
        if event == McpEvent::LogChanged("paged".into()) {
            announced.push(Instant::now());
            let log = manager.log("paged").unwrap();
            if log.iter().any(|l| l == "chatter 149") {
                break;
            }
        }
    }
    let result = call.await.unwrap().unwrap();
    assert_eq!(result_display(&result), "wrote 150 lines");
    let log = manager.log("paged").unwrap();
    assert_eq!(
        log.iter().filter(|l| l.starts_with("chatter ")).count(),
        150
    );
    // 150 writes, but only a few events: at most one per 250 ms (plus the
    // first one, sent at once).
    let span = announced.last().unwrap().duration_since(announced[0]);
    let allowed = (span.as_millis() / 250) as usize + 2;
    assert!(
        announced.len() <= allowed,
        "{} events in {span:?} (allowed {allowed})",
        announced.len()
    );
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn list_changed_rediscovers_tools() {
    let ws = tempfile::tempdir().unwrap();
    let manager = started(options(json!({"fx": fixture_stdio(json!({}))}), ws.path())).await;
    assert_connected(&manager, "fx");
    assert!(!declared(&manager).contains(&"mcp_fx_extra".to_owned()));
    let generation = manager.tools_generation();
    manager
        .call_tool("fx", "add_tool", json!({}), &CancellationToken::new())
        .await
        .unwrap();
    let status = wait_status(&manager, "fx", "one tool more", |s| s.tools == 14).await;
    assert_eq!(status.state, McpServerState::Connected);
    assert!(manager.tools_generation() > generation);
    assert!(declared(&manager).contains(&"mcp_fx_extra".to_owned()));
    // The status carries the new list too (the MCP panel shows it).
    assert_eq!(status.tool_list.len(), 14);
    let extra_info = status
        .tool_list
        .iter()
        .find(|t| t.name == "extra")
        .expect("extra in the status's tool list");
    assert_eq!(extra_info.declared_name, "mcp_fx_extra");
    assert_eq!(extra_info.description, "A tool added at run time.");
    let extra = manager
        .call_tool("fx", "extra", json!({}), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        texts(&extra, "extra"),
        ["<untrusted_context>\nextra!\n</untrusted_context>"]
    );
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn include_exclude_allowed_excluded_and_invalid_entries() {
    let ws = tempfile::tempdir().unwrap();
    let mut opts = options(
        json!({
            "picky": fixture_stdio(json!({"includeTools": ["add", "echo(text)", "crash"], "excludeTools": ["crash"]})),
            "blocked": fixture_stdio(json!({})),
            "broken": {"args": ["no command"]},
            "missing": {"command": "/nonexistent/mcp-server"},
        }),
        ws.path(),
    );
    opts.filter = gd_mcp::ServerFilter {
        allowed: None,
        excluded: vec!["BLOCKED".into()],
    };
    let manager = started(opts).await;
    assert_connected(&manager, "picky");
    assert_eq!(declared(&manager), ["mcp_picky_add", "mcp_picky_echo"]);
    let blocked = manager.status("blocked").unwrap();
    assert_eq!(blocked.state, McpServerState::Blocked);
    assert!(blocked.error.unwrap().contains("mcp.excluded"));
    assert_eq!(manager.server_pid("blocked"), None);
    let broken = manager.status("broken").unwrap();
    assert_eq!(
        (broken.state, broken.transport),
        (McpServerState::Error, None)
    );
    assert!(broken.error.unwrap().contains("missing `command`"));
    let missing = manager.status("missing").unwrap();
    assert_eq!(missing.state, McpServerState::Error);
    assert!(
        missing
            .error
            .as_deref()
            .unwrap()
            .contains("cannot start `/nonexistent/mcp-server`"),
        "{missing:?}"
    );
    assert!(manager.restart("blocked").is_err());
    manager.shutdown(Duration::from_secs(1)).await;

    let mut opts = options(
        json!({"a": fixture_stdio(json!({})), "b": fixture_stdio(json!({}))}),
        ws.path(),
    );
    opts.filter.allowed = Some(vec!["b".into()]);
    let manager = started(opts).await;
    assert_eq!(manager.status("a").unwrap().state, McpServerState::Blocked);
    assert!(
        manager
            .status("a")
            .unwrap()
            .error
            .unwrap()
            .contains("mcp.allowed")
    );
    assert_connected(&manager, "b");
    manager.shutdown(Duration::from_secs(1)).await;
}

/// A manager call made on another thread.
type ManagerAction = Box<dyn FnOnce(&McpManager) -> Result<(), gd_mcp::McpError> + Send>;

/// The desktop app calls restart and enable/disable from its UI thread,
/// which is no Tokio thread: the manager must still run the servers (on the
/// runtime it started on) instead of panicking.
#[tokio::test(flavor = "multi_thread")]
async fn restart_and_enabling_work_from_threads_without_a_runtime() {
    let ws = tempfile::tempdir().unwrap();
    let manager = started(options(json!({"fx": fixture_stdio(json!({}))}), ws.path())).await;
    assert_connected(&manager, "fx");
    let first = manager.server_pid("fx").unwrap();
    let on_plain_thread = |f: ManagerAction| {
        let manager = manager.clone();
        std::thread::spawn(move || f(&manager))
            .join()
            .expect("no panic")
    };

    on_plain_thread(Box::new(|m| m.set_enabled("fx", false))).unwrap();
    wait_status(&manager, "fx", "disabled", |s| {
        s.state == McpServerState::Disabled
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(first) {
        assert!(Instant::now() < deadline, "the disabled server still runs");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    on_plain_thread(Box::new(|m| m.set_enabled("fx", true))).unwrap();
    wait_status(&manager, "fx", "connected again", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    let second = manager.server_pid("fx").unwrap();
    assert_ne!(second, first);

    on_plain_thread(Box::new(|m| m.restart("fx"))).unwrap();
    wait_status(&manager, "fx", "connected after restart", |s| {
        s.state == McpServerState::Connected && manager.server_pid("fx") != Some(second)
    })
    .await;
    assert_eq!(manager.status("fx").unwrap().tools, 13);
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn disabling_persists_and_enabling_starts_again() {
    let ws = tempfile::tempdir().unwrap();
    let file = ws.path().join("home/.gemini/mcp-server-enablement.json");
    let make = || {
        let mut opts = options(json!({"Fx": fixture_stdio(json!({}))}), ws.path());
        opts.enablement = gd_mcp::enablement::Enablement::new(Some(file.clone()));
        opts
    };
    let manager = started(make()).await;
    assert_connected(&manager, "Fx");
    let pid = manager.server_pid("Fx").unwrap();
    manager.set_enabled("Fx", false).unwrap();
    assert_eq!(
        manager.status("Fx").unwrap().state,
        McpServerState::Disabled
    );
    assert!(manager.tools().is_empty());
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved, json!({"fx": {"enabled": false}}));
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(Instant::now() < deadline, "the disabled server still runs");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    manager.shutdown(Duration::from_secs(1)).await;

    let again = started(make()).await;
    assert_eq!(again.status("Fx").unwrap().state, McpServerState::Disabled);
    again.set_enabled("Fx", true).unwrap();
    wait_status(&again, "Fx", "connected", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "{}");
    again.restart("Fx").unwrap();
    wait_status(&again, "Fx", "connected after restart", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    again.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn server_environment_is_sanitised() {
    let ws = tempfile::tempdir().unwrap();
    let mut opts = options(
        json!({"fx": fixture_stdio(json!({"env": {"EXTRA": "yes", "LD_PRELOAD": "/evil.so"}}))}),
        ws.path(),
    );
    opts.process_env = Some(
        std::env::vars()
            .filter(|(k, _)| k == "PATH" || k == "HOME")
            .chain([
                ("MY_SECRET_TOKEN".to_owned(), "s3cret".to_owned()),
                ("PLAIN".to_owned(), "visible".to_owned()),
            ])
            .collect(),
    );
    let manager = started(opts).await;
    assert_connected(&manager, "fx");
    let cancel = CancellationToken::new();
    let mut values = Vec::new();
    for name in [
        "MY_SECRET_TOKEN",
        "PLAIN",
        "EXTRA",
        "GEMINI_CLI",
        "LD_PRELOAD",
    ] {
        let result = manager
            .call_tool("fx", "env", json!({"name": name}), &cancel)
            .await
            .unwrap();
        values.push(result_display(&result));
    }
    assert_eq!(values, ["(unset)", "visible", "yes", "1", "(unset)"]);
    assert!(
        manager
            .log("fx")
            .unwrap()
            .iter()
            .any(|l| l.contains("not setting LD_PRELOAD"))
    );
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_kills_the_process_group() {
    let ws = tempfile::tempdir().unwrap();
    let pid_file = ws.path().join("sleeper.pid");
    let script = format!(
        "sleep 600 & echo $! > '{}'; exec '{}' '{}' stdio",
        pid_file.display(),
        python().display(),
        fixture_server().display()
    );
    let manager = started(options(
        json!({"fx": {"command": "bash", "args": ["-c", script], "timeout": 60000}}),
        ws.path(),
    ))
    .await;
    assert_connected(&manager, "fx");
    let server = manager.server_pid("fx").unwrap();
    let sleeper: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(server) && alive(sleeper));
    manager.shutdown(Duration::from_millis(500)).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(server) || alive(sleeper) {
        assert!(
            Instant::now() < deadline,
            "server {} / sleeper {} still alive",
            alive(server),
            alive(sleeper)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_and_sse_transports() {
    let http = HttpFixture::start("http");
    let sse = HttpFixture::start("sse");
    let ws = tempfile::tempdir().unwrap();
    let manager = started(options(
        json!({
            "http": {"httpUrl": format!("http://127.0.0.1:{}/mcp", http.port), "headers": {"X-Test": "1"}},
            "typed": {"url": format!("http://127.0.0.1:{}/mcp", http.port), "type": "http"},
            "sse": {"url": format!("http://127.0.0.1:{}/sse", sse.port), "type": "sse"},
            // `url` without `type`: streamable HTTP fails on an SSE endpoint, SSE works.
            "legacy": {"url": format!("http://127.0.0.1:{}/sse", sse.port)},
        }),
        ws.path(),
    ))
    .await;
    let cancel = CancellationToken::new();
    for (server, kind) in [
        ("http", McpTransportKind::Http),
        ("typed", McpTransportKind::Http),
        ("sse", McpTransportKind::Sse),
        ("legacy", McpTransportKind::Http),
    ] {
        let status = assert_connected(&manager, server);
        assert_eq!(status.transport, Some(kind));
        let result = manager
            .call_tool(server, "echo", json!({"text": server}), &cancel)
            .await
            .unwrap();
        assert_eq!(result_display(&result), server);
        // Several calls at once over one connection.
        let calls = (0..5).map(|i| {
            let manager = manager.clone();
            let cancel = cancel.clone();
            async move {
                manager
                    .call_tool(server, "add", json!({"a": i, "b": 1}), &cancel)
                    .await
                    .unwrap()
            }
        });
        let sums: Vec<String> = futures::future::join_all(calls)
            .await
            .iter()
            .map(result_display)
            .collect();
        assert_eq!(sums, ["1", "2", "3", "4", "5"]);
    }
    assert!(
        manager
            .log("legacy")
            .unwrap()
            .iter()
            .any(|l| l.contains("trying the SSE transport"))
    );
    // Cancelling and timeouts work over SSE too.
    let timed_out = manager
        .call_tool("sse", "slow", json!({"seconds": 30}), &{
            let c = CancellationToken::new();
            let t = c.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                t.cancel();
            });
            c
        })
        .await;
    assert_eq!(timed_out, Err(CallError::Cancelled));
    manager.shutdown(Duration::from_secs(1)).await;
}

/// A loopback HTTP server that answers every request with 401.
async fn unauthorized_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                let _ = socket.read(&mut buf).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"mcp\", resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread")]
async fn http_401_means_needs_authentication() {
    let port = unauthorized_server().await;
    let ws = tempfile::tempdir().unwrap();
    let manager = started(options(
        json!({
            "http": {"httpUrl": format!("http://127.0.0.1:{port}/mcp")},
            "sse": {"url": format!("http://127.0.0.1:{port}/sse"), "type": "sse"},
            "untyped": {"url": format!("http://127.0.0.1:{port}/mcp")},
        }),
        ws.path(),
    ))
    .await;
    for server in ["http", "sse", "untyped"] {
        let status = manager.status(server).unwrap();
        assert_eq!(
            status.state,
            McpServerState::NeedsAuth,
            "{server}: {status:?}"
        );
        let error = status.error.unwrap();
        assert!(error.starts_with("needs authentication"), "{error}");
    }
    assert!(
        manager
            .status("http")
            .unwrap()
            .error
            .unwrap()
            .contains("Bearer realm=\"mcp\"")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn server_everything_over_stdio() {
    let ws = tempfile::tempdir().unwrap();
    let manager = started(options(
        json!({"everything": {"command": "node", "args": [everything_js(), "stdio"], "trust": true, "timeout": 60000}}),
        ws.path(),
    ))
    .await;
    let status = assert_connected(&manager, "everything");
    assert!(status.trust);
    // Exactly the tools and schemas Gemini CLI 0.61 declares for it
    // (fixture tools_mcp_all.json; descriptions are redacted there).
    let fixture: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(
            repo_root().join("tests/fixtures/gemini-cli-0.61/tools_mcp_all.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let expected: Vec<&Value> = fixture
        .iter()
        .filter(|t| t["name"].as_str().unwrap().starts_with("mcp_everything_"))
        .collect();
    let tools = manager.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.declared_name.as_str()).collect();
    let expected_names: Vec<&str> = expected
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, expected_names);
    fn redact(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        if k == "description" && v.is_string() {
                            (k.clone(), json!("<redacted>"))
                        } else {
                            (k.clone(), redact(v))
                        }
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
            other => other.clone(),
        }
    }
    for (tool, want) in tools.iter().zip(&expected) {
        let ours = serde_json::to_string(&redact(&tool.schema)).unwrap();
        let theirs = serde_json::to_string(&redact(&want["parametersJsonSchema"])).unwrap();
        assert_eq!(ours, theirs, "{}", tool.declared_name);
    }

    let cancel = CancellationToken::new();
    let echo = manager
        .call_tool("everything", "echo", json!({"message": "hello"}), &cancel)
        .await
        .unwrap();
    assert_eq!(
        texts(&echo, "echo"),
        ["<untrusted_context>\nEcho: hello\n</untrusted_context>"]
    );
    let image = manager
        .call_tool("everything", "get-tiny-image", json!({}), &cancel)
        .await
        .unwrap();
    let parts = result_to_parts(&image, "get-tiny-image");
    assert!(parts.iter().any(|p| {
        p.inline_data
            .as_ref()
            .is_some_and(|b| b.mime_type == "image/png")
    }));
    let links = manager
        .call_tool(
            "everything",
            "get-resource-links",
            json!({"count": 2}),
            &cancel,
        )
        .await
        .unwrap();
    assert!(
        texts(&links, "get-resource-links")
            .iter()
            .any(|t| t.starts_with("Resource Link: ")),
        "{links}"
    );
    // Our roots: the workspace.
    let roots = manager
        .call_tool("everything", "get-roots-list", json!({}), &cancel)
        .await
        .unwrap();
    let ws_uri = reqwest::Url::from_directory_path(
        ws.path().canonicalize().unwrap_or(ws.path().to_path_buf()),
    )
    .unwrap()
    .to_string();
    let display = result_display(&roots);
    assert!(
        display.contains(ws_uri.trim_end_matches('/'))
            || display.contains(&ws.path().display().to_string()),
        "{display}"
    );
    wait_status(&manager, "everything", "with prompts and resources", |s| {
        s.prompts > 0 && s.resources > 0
    })
    .await;
    assert_eq!(
        declared_tool_name("everything", "echo"),
        "mcp_everything_echo"
    );
    manager.shutdown(Duration::from_secs(1)).await;
}

/// `"sandbox": true` (issue 36): the server runs under bubblewrap with the session's rules —
/// it starts and answers, writes in the workspace, and cannot write outside it.
#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_stdio_server_works_and_cannot_write_outside_the_workspace() {
    // Not under /tmp: the sandbox has a /tmp of its own.
    let ws = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let marker = outside.path().join("escaped");
    let script = format!(
        "touch '{}'; touch '{}'; exec '{}' '{}' stdio",
        marker.display(),
        ws.path().join("inside").display(),
        python().display(),
        fixture_server().display()
    );
    let entry = json!({"command": "sh", "args": ["-c", script], "sandbox": true, "timeout": 60000});
    let mut options = options(json!({"fx": entry}), ws.path());
    // A checkout under /tmp (a fresh CI clone) has the test's Python and server there, which
    // the sandbox's own /tmp hides: their folders are then granted, as a user would grant them
    // (not the folder `outside` is in).
    let root = std::fs::canonicalize(repo_root()).unwrap();
    if root.starts_with("/tmp") {
        for dir in ["target/test-deps", "tests/fixtures/mcp"] {
            options.sandbox.extra_writable.push(root.join(dir));
        }
    }
    let manager = started(options).await;
    assert_connected(&manager, "fx");
    assert!(!declared(&manager).is_empty(), "its tools are listed");
    assert!(
        ws.path().join("inside").exists(),
        "it writes in the workspace"
    );
    assert!(!marker.exists(), "it wrote outside the workspace");
}
