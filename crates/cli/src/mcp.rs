//! `gemini-desktop-cli mcp list`: the configured servers with their state
//! and tools (Gemini CLI's `gemini mcp list`, the text form of the app's
//! MCP panel and `/mcp`).
//!
//! `gemini-desktop-cli mcp auth [<server>] | logout <server>`: OAuth sign-in
//! to HTTP MCP servers from a terminal (what Gemini CLI's `/mcp auth` does).
//! The tokens go where the app keeps its secrets, so the desktop app and
//! later headless runs connect to the server signed in.

use std::sync::Arc;
use std::time::Duration;

use gd_core::launch::{TrustOverride, home_dir, load_workspace};
use gd_mcp::oauth::{SignInState, open_system_browser};
use gd_mcp::{McpEvent, McpManager, McpOAuth, McpOptions, TransportConfig};
use gd_protocol::McpServerState;

use crate::args::McpCommand;
use crate::exit;
use crate::output::terminal::{for_stderr, for_stdout};

/// Runs one `mcp` subcommand; returns the exit code.
pub async fn run(command: &McpCommand) -> i32 {
    let (options, oauth) = match options() {
        Ok(o) => o,
        Err(message) => {
            eprintln!("Error: {message}");
            return exit::CONFIG_ERROR;
        }
    };
    match command {
        McpCommand::List => list_servers(options).await,
        McpCommand::Auth { server: None, .. } => list(&options, &oauth).await,
        McpCommand::Auth {
            server: Some(server),
            no_browser,
        } => sign_in(options, server, *no_browser).await,
        McpCommand::Logout { server } => {
            let Some(url) = url_of(&options, server) else {
                return unknown(&options, server);
            };
            match oauth.sign_out(&url).await {
                Ok(()) => {
                    println!("Signed out of MCP server '{server}'.");
                    exit::SUCCESS
                }
                Err(e) => {
                    eprintln!("Error: {e}");
                    exit::GENERAL_ERROR
                }
            }
        }
    }
}

/// The MCP options of the current directory's settings.
fn options() -> Result<(McpOptions, McpOAuth), String> {
    let workspace =
        std::env::current_dir().map_err(|e| format!("Cannot use the current directory: {e}"))?;
    let home = home_dir();
    // An untrusted folder's workspace settings (and so its servers) are not read.
    let loaded = load_workspace(&workspace, home.as_deref(), TrustOverride::Decide)
        .map_err(|e| e.to_string())?;
    let settings = loaded.settings();
    let options = McpOptions::from_settings(settings, vec![workspace], home.as_deref());
    let oauth = McpOAuth::shared(settings, home.as_deref());
    Ok((options, oauth))
}

fn url_of(options: &McpOptions, server: &str) -> Option<String> {
    options
        .servers
        .iter()
        .find(|e| e.name == server)
        .and_then(|e| e.config.as_ref().ok())
        .and_then(|c| match &c.transport {
            TransportConfig::Http { url, .. } | TransportConfig::Sse { url, .. } => {
                Some(url.clone())
            }
            TransportConfig::Stdio { .. } => None,
        })
}

fn unknown(options: &McpOptions, server: &str) -> i32 {
    let names: Vec<&str> = options
        .servers
        .iter()
        .filter(|e| url_of(options, &e.name).is_some())
        .map(|e| e.name.as_str())
        .collect();
    if names.is_empty() {
        eprintln!(
            "Error: MCP server '{server}' is not an HTTP server in mcpServers (there are none)."
        );
    } else {
        eprintln!(
            "Error: MCP server '{server}' is not an HTTP server in mcpServers (HTTP servers: {}).",
            names.join(", ")
        );
    }
    exit::INPUT_ERROR
}

/// How long `mcp list` waits for the servers' prompt lists once they are
/// connected.
const LIST_PROMPTS_WAIT: Duration = Duration::from_secs(5);

/// `mcp list`: starts every server, waits for the discovery, prints each
/// one's state, target and transport (Gemini CLI's line), then its tools
/// and prompts. Exit 0 whatever the servers' states.
async fn list_servers(options: McpOptions) -> i32 {
    if options.servers.is_empty() {
        println!("No MCP servers configured.");
        return exit::SUCCESS;
    }
    let targets: Vec<(String, String)> = options
        .servers
        .iter()
        .map(|e| (e.name.clone(), target(e)))
        .collect();
    let manager = McpManager::new(options);
    manager.start();
    tokio::select! {
        _ = async {
            manager.wait_discovery().await;
            let _ = tokio::time::timeout(LIST_PROMPTS_WAIT, manager.wait_prompts()).await;
        } => {}
        _ = tokio::signal::ctrl_c() => {
            manager.terminate();
            return exit::INTERRUPTED;
        }
    }
    let prompts = manager.prompts();
    println!("Configured MCP servers:\n");
    for status in manager.statuses() {
        let (mark, word) = match status.state {
            McpServerState::Connected => ("✓", "Connected"),
            McpServerState::Connecting => ("…", "Connecting"),
            McpServerState::Blocked => ("⛔", "Blocked"),
            McpServerState::Disabled => ("○", "Disabled"),
            McpServerState::NeedsAuth => ("✗", "Needs authentication"),
            McpServerState::Error => ("✗", "Error"),
            McpServerState::Disconnected | McpServerState::Authenticating => ("✗", "Disconnected"),
        };
        let shown = targets
            .iter()
            .find(|(name, _)| *name == status.name)
            .map_or("", |(_, t)| t.as_str());
        let reason = status
            .error
            .as_deref()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        // Names, errors and tool names come from the servers' configuration and answers.
        let line = format!("{mark} {}: {shown} - {word}{reason}", status.name);
        println!("{}", for_stdout(&line));
        if !status.tool_list.is_empty() {
            let names: Vec<&str> = status.tool_list.iter().map(|t| t.name.as_str()).collect();
            println!("    Tools: {}", for_stdout(&names.join(", ")));
        }
        let own: Vec<&str> = prompts
            .iter()
            .filter(|p| p.server == status.name)
            .map(|p| p.name.as_str())
            .collect();
        if !own.is_empty() {
            println!("    Prompts: {}", for_stdout(&own.join(", ")));
        }
    }
    manager.shutdown(Duration::from_secs(2)).await;
    exit::SUCCESS
}

/// What a server runs or where it is, with its transport, as Gemini CLI's
/// `mcp list` writes it: `python server.py (stdio)`, `https://… (http)`.
fn target(entry: &gd_mcp::ServerEntry) -> String {
    match &entry.config {
        Err(reason) => format!("invalid entry ({reason})"),
        Ok(config) => match &config.transport {
            TransportConfig::Stdio { command, args, .. } => {
                format!("{command} {} (stdio)", args.join(" "))
            }
            TransportConfig::Http { url, .. } => format!("{url} (http)"),
            TransportConfig::Sse { url, .. } => format!("{url} (sse)"),
        },
    }
}

/// The HTTP servers and their sign-in state.
async fn list(options: &McpOptions, oauth: &McpOAuth) -> i32 {
    let mut any = false;
    for entry in &options.servers {
        let Some(url) = url_of(options, &entry.name) else {
            continue;
        };
        any = true;
        let state = match oauth.sign_in_state(&url).await {
            SignInState::SignedIn => "signed in",
            SignInState::None => "not signed in",
            SignInState::Rejected => "sign-in expired or revoked",
        };
        println!("{}\t{url}\t{state}", entry.name);
    }
    if !any {
        println!("No HTTP MCP servers in mcpServers.");
    }
    exit::SUCCESS
}

async fn sign_in(mut options: McpOptions, server: &str, no_browser: bool) -> i32 {
    if url_of(&options, server).is_none() {
        return unknown(&options, server);
    }
    // Only this server: the others are not started.
    options.servers.retain(|e| e.name == server);
    let name = server.to_owned();
    McpOAuth::set_default_opener(Arc::new(move |url: &str| {
        eprintln!(
            "To sign in to MCP server '{name}', open this address in your browser:\n\n  {url}\n"
        );
        if !no_browser && let Err(e) = open_system_browser(url) {
            eprintln!("({e}; open the address yourself.)");
        }
        Ok(())
    }));
    let manager = McpManager::new(options);
    let mut events = manager.subscribe();
    let result = tokio::select! {
        result = manager.authenticate(server) => result,
        _ = tokio::signal::ctrl_c() => {
            let _ = manager.cancel_authentication(server);
            eprintln!("Sign-in cancelled.");
            return exit::INTERRUPTED;
        }
    };
    if let Err(error) = result {
        eprintln!("Error: {}", for_stderr(&error.to_string()));
        return exit::AUTH_ERROR;
    }
    // Connect once with the new tokens to check them.
    let status = wait_settled(&manager, &mut events, server).await;
    manager.shutdown(Duration::from_secs(2)).await;
    match status {
        Some(s) if s.state == McpServerState::Connected => {
            println!(
                "Signed in to MCP server '{server}': connected, {} tool{}.",
                s.tools,
                if s.tools == 1 { "" } else { "s" }
            );
            exit::SUCCESS
        }
        Some(s) => {
            eprintln!(
                "Signed in to MCP server '{server}', but connecting failed: {}",
                s.error.unwrap_or_default()
            );
            exit::GENERAL_ERROR
        }
        None => {
            eprintln!("Signed in to MCP server '{server}', but it did not answer in time.");
            exit::GENERAL_ERROR
        }
    }
}

/// The server's status once it is no longer connecting (`None` after two
/// minutes).
async fn wait_settled(
    manager: &McpManager,
    events: &mut tokio::sync::broadcast::Receiver<McpEvent>,
    server: &str,
) -> Option<gd_protocol::McpServerStatus> {
    let settled = |s: &gd_protocol::McpServerStatus| {
        !matches!(
            s.state,
            McpServerState::Connecting
                | McpServerState::Disconnected
                | McpServerState::Authenticating
        )
    };
    let wait = async {
        loop {
            if let Some(status) = manager.status(server).filter(settled) {
                return Some(status);
            }
            if let Err(tokio::sync::broadcast::error::RecvError::Closed) = events.recv().await {
                return manager.status(server);
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(120), wait)
        .await
        .ok()
        .flatten()
}
