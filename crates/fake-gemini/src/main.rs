//! `fake-gemini`: the fake Gemini API server as a standalone process, with
//! the same command line as the reference `fake_gemini.py`.

use anyhow::{Context, Result, bail};
use clap::Parser;
use gd_fake_gemini::scenario;
use gd_fake_gemini::server;
use gd_fake_gemini::state::ServerState;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// Fake Gemini API server (scripted replies, request log).
#[derive(Parser, Debug)]
#[command(name = "fake-gemini", version)]
struct Args {
    /// Port to listen on; 0 picks a free port (see --port-file).
    #[arg(long, default_value_t = 8765)]
    port: u16,
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Scenario JSON file (can be changed later via POST /__admin/reset).
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// Substitute {{NAME}} in the --scenario file (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    vars: Vec<String>,
    /// Append every request as one JSON line to this file (default: no log).
    #[arg(long)]
    log: Option<PathBuf>,
    /// Write the bound port to this file (atomically) once listening.
    #[arg(long)]
    port_file: Option<PathBuf>,
}

fn parse_vars(raw: &[String]) -> Result<Vec<(String, String)>> {
    raw.iter()
        .map(|v| match v.split_once('=') {
            Some((name, value)) => Ok((name.to_string(), value.to_string())),
            None => bail!("--var {v:?} must look like NAME=VALUE"),
        })
        .collect()
}

fn write_port_file(path: &PathBuf, port: u16) -> Result<()> {
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    std::fs::write(&tmp, port.to_string()).with_context(|| format!("write {}", path.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("rename to {}", path.display()))
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let vars = parse_vars(&args.vars)?;
    let source = match &args.scenario {
        Some(path) => Value::String(path.to_string_lossy().into_owned()),
        None => Value::Null,
    };
    let scenario = scenario::load(&source, &vars)?;
    let state = Arc::new(ServerState::new(scenario, args.log.clone()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
            .await
            .with_context(|| format!("bind {}:{}", args.host, args.port))?;
        let port = listener.local_addr()?.port();
        if let Some(path) = &args.port_file {
            write_port_file(path, port)?;
        }
        eprintln!("fake-gemini listening on http://{}:{port}", args.host);
        server::serve(listener, state, shutdown_signal()).await?;
        anyhow::Ok(())
    })?;
    // Open connections (hangs, stalled streams) are dropped, not waited for.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(())
}
