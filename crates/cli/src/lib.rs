//! The headless front end: parse arguments, prepare a session, run one
//! prompt, render events in the chosen format and exit with Gemini CLI's
//! exit codes.

pub mod agents;
pub mod args;
pub mod auth;
pub mod checkpoints;
pub mod exit;
pub mod extensions;
pub mod extensions_config;
pub mod extensions_new;
pub mod history;
pub mod mcp;
pub mod output;
mod prompt;
pub mod setup;
pub mod skills;
pub mod slash;
pub mod stats;

use std::io::Write;
use std::time::Instant;

use clap::Parser;
use gd_core::Session;
use gd_core::history::{HistoryRecorder, open_for_launch};
use gd_core::hooks::trusted::UnseenHooks;
use gd_protocol::{ErrorKind, Event, McpServerState, Op, TurnStatus};
use gd_store::Store;
use gd_store::retention::Retention;
use tracing_subscriber::EnvFilter;

use crate::args::{Args, Command};
use crate::exit::Fatal;
use crate::output::Output;
use crate::stats::Stats;

/// Runs the CLI and returns the process exit code.
pub fn main_entry() -> i32 {
    let mut args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::INPUT_ERROR
            } else {
                exit::SUCCESS
            };
            let _ = e.print();
            return code;
        }
    };
    init_tracing(args.debug);
    if args.output_format.is_none() {
        args.output_format = setup::output_format_from_settings(args.skip_trust);
    }
    // Worker threads rather than a current-thread runtime: MCP servers and
    // other start-up tasks spawned while the session is prepared start at
    // once, instead of waiting for the preparation to finish and yield.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: cannot start the async runtime: {e}");
            return exit::GENERAL_ERROR;
        }
    };
    if let Some(Command::Auth(command)) = &args.command {
        if args.prompt.is_some() || args.query.is_some() {
            eprintln!(
                "Error: `auth` takes no prompt. Run the prompt separately, or quote it: gemini-desktop-cli -p \"auth ...\"."
            );
            return exit::INPUT_ERROR;
        }
        return runtime.block_on(auth::run(command));
    }
    if let Some(Command::Mcp(command)) = &args.command {
        if args.prompt.is_some() || args.query.is_some() {
            eprintln!("Error: `mcp` takes no prompt.");
            return exit::INPUT_ERROR;
        }
        return runtime.block_on(mcp::run(command));
    }
    if let Some(Command::Agents(command)) = &args.command {
        if args.prompt.is_some() || args.query.is_some() {
            eprintln!("Error: `agents` takes no prompt.");
            return exit::INPUT_ERROR;
        }
        return agents::run(command, args.output_format, args.skip_trust);
    }
    if let Some(Command::Skills(command)) = &args.command {
        if args.prompt.is_some() || args.query.is_some() {
            eprintln!("Error: `skills` takes no prompt.");
            return exit::INPUT_ERROR;
        }
        return skills::run(command, args.output_format, args.skip_trust);
    }
    if let Some(Command::Extensions(command)) = &args.command {
        if args.prompt.is_some() || args.query.is_some() {
            eprintln!("Error: `extensions` takes no prompt.");
            return exit::INPUT_ERROR;
        }
        return extensions::run(command);
    }
    if (!args.extensions.is_empty() || args.list_extensions)
        && let Some(code) = extensions::only_these(&args.extensions, args.list_extensions)
    {
        return code;
    }
    if args.list_checkpoints || args.restore_checkpoint.is_some() {
        return runtime.block_on(checkpoints::run(&args));
    }
    if args.list_sessions || args.delete_session.is_some() {
        if args.prompt.is_some() || args.query.is_some() {
            eprintln!("Error: --list-sessions and --delete-session take no prompt.");
            return exit::INPUT_ERROR;
        }
        let workspace = match std::env::current_dir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("Error: cannot use the current directory: {e}");
                return exit::INPUT_ERROR;
            }
        };
        // Titles come from prompts, imported Gemini CLI sessions included.
        let mut stdout = output::terminal::guard(std::io::stdout());
        return match &args.delete_session {
            Some(key) => history::delete(&workspace, key, &mut *stdout),
            None => history::list(&workspace, &mut *stdout),
        };
    }
    // Model text, tool output and server messages reach a terminal without control
    // sequences; pipes and files get every byte (JSON formats escape controls themselves).
    let stdout: Box<dyn Write> = match args.format() {
        args::OutputFormat::Text => output::terminal::guard(std::io::stdout()),
        _ => Box::new(std::io::stdout()),
    };
    let stderr = output::terminal::guard(std::io::stderr());
    let mut output = output::for_format(args.format(), stdout, stderr);
    runtime.block_on(run(&args, output.as_mut()))
}

fn init_tracing(debug: bool) {
    let filter = if debug {
        EnvFilter::new("debug,hyper=info,reqwest=info,h2=info,rustls=info")
    } else {
        EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| EnvFilter::new("error"))
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// One headless run.
pub async fn run(args: &Args, output: &mut dyn Output) -> i32 {
    let started = Instant::now();
    let prepared = match setup::prepare(args) {
        Ok(p) => p,
        Err(fatal) => {
            return report_failure(output, None, &fatal, &Stats::empty(), started);
        }
    };
    let mut launch = prepared.launch;
    // Remembered only once the output has shown the warnings: the early
    // returns below (listings, a failed start) show none of them.
    let mut unseen_hooks = launch.unseen_hooks.take();
    let model = launch.config.model.clone();
    if let Some(fatal) = slash::unsupported(&prepared.prompt, launch.config.checkpointing.is_some())
    {
        if let Some(mcp) = &launch.tools.mcp {
            mcp.manager.terminate();
        }
        return report_failure(output, None, &fatal, &Stats::empty(), started);
    }
    if agents::is_agents_command(&prepared.prompt) {
        // `/agents` lists the session's agents; nothing goes to the model.
        if let Some(mcp) = &launch.tools.mcp {
            mcp.manager.terminate();
        }
        return agents::print(&launch.config.agents, Some(args.format()));
    }
    if let Some(code) = skills::headless_command(&prepared.prompt, &launch.config, args) {
        // `/skills …` lists or changes the session's skills; nothing goes to the model.
        if let Some(mcp) = &launch.tools.mcp {
            mcp.manager.terminate();
        }
        return code;
    }
    let mut warnings = launch.warnings.clone();
    let mut recorder = match open_history(args, &mut launch, &mut warnings).await {
        Ok(recorder) => recorder,
        Err(fatal) => {
            return report_failure(output, None, &fatal, &Stats::empty(), started);
        }
    };
    // The statistics a run reports are its own, also after `--resume` (as Gemini CLI 0.61's
    // `-o json`); the app's meter counts the whole conversation instead.
    if let Some(recorder) = recorder.as_mut() {
        recorder.take_resumed_usage();
    }
    let session_id = launch.config.session_id.clone();
    let (handle, mut events) = Session::spawn_recorded(
        launch.config,
        launch.client,
        launch.tools,
        launch.policy.clone(),
        recorder,
    );
    if let Err(e) = output.start(&session_id, &model, &prepared.prompt) {
        return broken_pipe(e);
    }
    for message in &warnings {
        if let Err(e) = output.event(&Event::Warning {
            message: message.clone(),
        }) {
            return broken_pipe(e);
        }
    }
    remember_once_shown(&mut unseen_hooks, output);
    // One listener for the whole run: a `ctrl_c()` future made anew each
    // time round the loop below misses a signal that lands between two
    // events (and, the handler being installed, nothing else stops us).
    let (sigint_tx, mut sigint) = tokio::sync::mpsc::unbounded_channel::<()>();
    let listener = tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if sigint_tx.send(()).is_err() {
                break;
            }
        }
    });
    if handle.submit(Op::user_text(prepared.prompt)).is_err() {
        let fatal = Fatal::general(
            "InternalError",
            "the session ended before the prompt was sent",
        );
        let code = report_failure(output, Some(&session_id), &fatal, &Stats::empty(), started);
        remember_once_shown(&mut unseen_hooks, output);
        return code;
    }

    let mut last_error: Option<(ErrorKind, String)> = None;
    let mut interrupted = false;
    let status = loop {
        let event = tokio::select! {
            event = events.recv() => event,
            Some(()) = sigint.recv() => {
                // The second Ctrl+C stops waiting for the turn to wind down.
                if interrupted {
                    break TurnStatus::Cancelled;
                }
                interrupted = true;
                handle.interrupt();
                continue;
            }
        };
        let Some(event) = event else {
            break TurnStatus::Failed;
        };
        if let Event::Error {
            kind,
            message,
            fatal: true,
            ..
        } = &event
        {
            last_error = Some((*kind, message.clone()));
        }
        if let Event::TurnComplete { status, .. } = event {
            break status;
        }
        if let Err(e) = output.event(&event) {
            return broken_pipe(e);
        }
        if let Some(warning) = mcp_problem(&event)
            && let Err(e) = output.event(&warning)
        {
            return broken_pipe(e);
        }
    };
    listener.abort();
    let stats = session_stats(&handle, &mut events).await;
    // Stop the MCP servers: their process groups get SIGTERM now, and the
    // process exits without waiting for them (as Gemini CLI does).
    if let Some(mcp) = handle.mcp() {
        mcp.terminate();
    }
    let _ = handle.submit(Op::Shutdown);
    let code = finish(output, &session_id, status, last_error, &stats, started);
    remember_once_shown(&mut unseen_hooks, output);
    code
}

/// Records the workspace's new hooks as seen once `output` has shown the
/// warnings, their announcement among them (0.61 names them once).
fn remember_once_shown(unseen: &mut Option<UnseenHooks>, output: &dyn Output) {
    if output.warnings_shown()
        && let Some(hooks) = unseen.take()
    {
        hooks.remember();
    }
}

/// What the session used (`Op::Stats`); nothing when the session has
/// ended already.
async fn session_stats(
    handle: &gd_core::SessionHandle,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
) -> Stats {
    if handle.submit(Op::Stats).is_err() {
        return Stats::empty();
    }
    while let Some(event) = events.recv().await {
        if let Event::SessionStats { stats } = event {
            return stats.into();
        }
    }
    Stats::empty()
}

/// Opens the history and starts (or, with `--resume`, continues) this
/// run's session in it. A new run does not wait for it: the database is
/// opened (created, on a fresh HOME) and the session created on the
/// blocking pool while the first request goes out, and the prompt is
/// committed before any of the answer is shown (see gd-core's
/// `HistoryRecorder::start_deferred`); without a usable history the run
/// goes on unrecorded, with a warning. A resume needs the stored session
/// first, and cannot go on without it.
async fn open_history(
    args: &Args,
    launch: &mut gd_core::launch::Launch,
    warnings: &mut Vec<String>,
) -> Result<Option<HistoryRecorder>, Fatal> {
    let workspace = history::workspace_key(launch.config.primary_workspace());
    let retention = match &launch.settings.general.session_retention {
        None => None,
        Some(value) => match Retention::from_value(value) {
            Ok(retention) => Some(retention),
            Err(e) => {
                warnings.push(e.to_string());
                None
            }
        },
    };
    // `keep`: the running session, never deleted.
    let retain = move |store: &Store, keep: &str| -> Option<String> {
        let retention = retention.as_ref()?;
        store
            .apply_retention(retention, gd_store::now_ms(), Some(keep))
            .err()
            .map(|e| format!("Session retention failed: {e}"))
    };
    let Some(key) = &args.resume else {
        let keep = launch.config.session_id.clone();
        return Ok(Some(HistoryRecorder::start_deferred(
            Box::new(Store::open_default),
            Box::new(move |store| retain(store, &keep).into_iter().collect()),
            &launch.config.session_id,
            &workspace,
            &launch.config.model,
        )));
    };
    let store = tokio::task::spawn_blocking(Store::open_default)
        .await
        .map_err(|e| Fatal::general("InternalError", e.to_string()))?
        .map_err(|e| {
            Fatal::general(
                "HistoryError",
                format!("Cannot open the session history: {e}"),
            )
        })?;
    let (s, ws, key) = (store.clone(), workspace.clone(), key.clone());
    let id = tokio::task::spawn_blocking(move || resume_target(&s, &ws, &key))
        .await
        .map_err(|e| Fatal::general("InternalError", e.to_string()))??;
    let recorder = open_for_launch(store.clone(), &mut launch.config, &workspace, Some(&id))
        .await
        .map_err(|e| Fatal::general("HistoryError", e.to_string()))?;
    let keep = launch.config.session_id.clone();
    let retained = tokio::task::spawn_blocking(move || retain(&store, &keep)).await;
    if let Ok(Some(warning)) = retained {
        warnings.push(warning);
    }
    Ok(Some(recorder))
}

/// The stored session `--resume KEY` names, importing a Gemini CLI one.
fn resume_target(store: &Store, workspace: &str, key: &str) -> Result<String, Fatal> {
    let history_error = |e: gd_store::StoreError| Fatal::general("HistoryError", e.to_string());
    let entries = history::entries(store, workspace).map_err(history_error)?;
    let entry = match history::resolve(&entries, key) {
        Ok(entry) => entry,
        // A full id of a session recorded in another workspace.
        Err(message) => match store.session(key.trim()).map_err(history_error)? {
            Some(s) => return Ok(s.id),
            None => return Err(Fatal::input(message)),
        },
    };
    match entry {
        history::Entry::Stored(s) => Ok(s.id.clone()),
        history::Entry::GeminiCli(s) => {
            store.import_gemini_cli(s, workspace).map_err(history_error)
        }
    }
}

/// An MCP server that could not start, as a warning on stderr (Gemini CLI
/// reports these too; the run goes on without the server's tools).
fn mcp_problem(event: &Event) -> Option<Event> {
    let Event::McpServerStatus { status } = event else {
        return None;
    };
    // An invalid settings entry (no transport): the launch warnings said so already.
    status.transport?;
    let what = match status.state {
        McpServerState::Error if status.restarts == 0 => "failed",
        McpServerState::NeedsAuth => "needs authentication",
        _ => return None,
    };
    Some(Event::Warning {
        message: format!(
            "MCP server '{}' {what}: {}",
            status.name,
            status.error.as_deref().unwrap_or("unknown error")
        ),
    })
}

fn finish(
    output: &mut dyn Output,
    session_id: &str,
    status: TurnStatus,
    last_error: Option<(ErrorKind, String)>,
    stats: &Stats,
    started: Instant,
) -> i32 {
    let fatal = match status {
        TurnStatus::Completed => None,
        // Headless sessions cannot decline (nobody is asked), but treat it as a cancel.
        TurnStatus::Cancelled | TurnStatus::Declined => Some(Fatal::cancelled()),
        TurnStatus::TurnLimitReached => Some(Fatal::turn_limit(
            last_error
                .map(|(_, m)| m)
                .unwrap_or_else(|| "Reached the maximum number of session turns.".into()),
        )),
        TurnStatus::LoopDetected => Some(Fatal::general(
            "LoopDetectedError",
            "The agent was stopped because it was repeating itself.",
        )),
        TurnStatus::Failed => Some(match last_error {
            Some((ErrorKind::Auth, message)) => Fatal::auth(message),
            Some((ErrorKind::Input, message)) => Fatal::input(message),
            Some((kind, message)) => Fatal::general(error_type(kind), message),
            None => Fatal::general("InternalError", "The session ended unexpectedly."),
        }),
    };
    match fatal {
        None => {
            let duration = started.elapsed().as_millis() as u64;
            match output.success(session_id, stats, duration) {
                Ok(()) => exit::SUCCESS,
                Err(e) => broken_pipe(e),
            }
        }
        Some(fatal) => report_failure(output, Some(session_id), &fatal, stats, started),
    }
}

fn error_type(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Auth => "FatalAuthenticationError",
        ErrorKind::Api => "ApiError",
        ErrorKind::Network => "NetworkError",
        ErrorKind::StreamInterrupted => "StreamInterruptedError",
        ErrorKind::Blocked => "PromptBlockedError",
        ErrorKind::InvalidResponse => "InvalidResponseError",
        ErrorKind::TurnLimit => "FatalTurnLimitedError",
        ErrorKind::Input => "FatalInputError",
        ErrorKind::Internal => "InternalError",
    }
}

fn report_failure(
    output: &mut dyn Output,
    session_id: Option<&str>,
    fatal: &Fatal,
    stats: &Stats,
    started: Instant,
) -> i32 {
    let duration = started.elapsed().as_millis() as u64;
    if output.failure(session_id, fatal, stats, duration).is_err() {
        let _ = writeln!(
            output::terminal::guard(std::io::stderr()),
            "Error: {}",
            fatal.message
        );
    }
    fatal.code
}

/// Standard output went away (e.g. `| head`): stop quietly.
fn broken_pipe(error: std::io::Error) -> i32 {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        exit::SUCCESS
    } else {
        let _ = writeln!(std::io::stderr(), "Error: cannot write output: {error}");
        exit::GENERAL_ERROR
    }
}
