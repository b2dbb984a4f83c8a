//! Starts the MCP servers of a settings file and reports how long each
//! took to answer `initialize` and to be discovered.
//!
//!     cargo run --release -p gd-mcp --example mcp_probe -- SETTINGS.json [--call SERVER TOOL JSON]

use std::time::Instant;

use gd_mcp::{McpManager, McpOptions};
use serde_json::Value;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: mcp_probe SETTINGS.json [--call SERVER TOOL JSON]");
        std::process::exit(2);
    };
    let started = Instant::now();
    let text = std::fs::read_to_string(path).expect("readable settings");
    let settings: Value = serde_json::from_str(&text).expect("JSON settings");
    let servers = settings
        .get("mcpServers")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let cwd = std::env::current_dir().expect("a current directory");
    let manager = McpManager::new(McpOptions::new(&servers, vec![cwd]));
    manager.start();
    manager.wait_discovery().await;
    let discovered = started.elapsed();
    for status in manager.statuses() {
        println!(
            "{}\t{:?}\tinitialize {} ms\ttools {}\tprompts {}\tresources {}\t{}",
            status.name,
            status.state,
            status.latency_ms.unwrap_or_default(),
            status.tools,
            status.prompts,
            status.resources,
            status.error.unwrap_or_default()
        );
    }
    println!("discovered in {} ms", discovered.as_millis());
    if let (Some("--call"), Some(server), Some(tool), Some(json)) = (
        args.get(1).map(String::as_str),
        args.get(2),
        args.get(3),
        args.get(4),
    ) {
        let args: Value = serde_json::from_str(json).expect("JSON arguments");
        let cancel = tokio_util::sync::CancellationToken::new();
        match manager.call_tool(server, tool, args, &cancel).await {
            Ok(result) => println!("{}", serde_json::to_string_pretty(&result).unwrap()),
            Err(e) => println!("error: {e}"),
        }
    }
    manager
        .shutdown(std::time::Duration::from_millis(500))
        .await;
}
