//! What the CLI decides itself (prompt, approval mode from flags) before the
//! shared launch logic reads settings and environment.

use std::io::{IsTerminal, Read};

use gd_core::ApprovalMode;
use gd_core::launch::{self, Launch, LaunchError, LaunchOptions, TrustOverride};

use crate::args::Args;
use crate::exit::Fatal;

pub use gd_core::launch::DEFAULT_MODEL;

/// Everything needed to start the run.
pub struct Prepared {
    pub launch: Launch,
    pub prompt: String,
}

/// Resolves settings, prompt, model, credentials and tools.
pub fn prepare(args: &Args) -> Result<Prepared, Fatal> {
    let workspace = std::env::current_dir().map_err(|e| {
        Fatal::input(format!(
            "Cannot use the current directory as workspace: {e}"
        ))
    })?;
    let approval_mode = approval_mode(args)?;
    let prompt = read_prompt(args)?;
    let launch = launch::prepare(LaunchOptions {
        workspace,
        include_directories: args.include_directories.clone(),
        model: args.model.clone(),
        approval_mode,
        interactive: false,
        surface: "cli".into(),
        trust: if args.skip_trust {
            TrustOverride::Trust
        } else {
            TrustOverride::Decide
        },
    })
    .map_err(|e| match e {
        LaunchError::Auth(m) => Fatal::auth(m),
        LaunchError::Config(m) => Fatal::config(m),
        LaunchError::Untrusted(m) => Fatal::untrusted(m),
        LaunchError::Input(m) => Fatal::input(m),
    })?;
    Ok(Prepared { launch, prompt })
}

/// `-p`, the positional query and standard input, combined as Gemini CLI
/// does (stdin first, then the prompt).
fn read_prompt(args: &Args) -> Result<String, Fatal> {
    let flag = args.prompt.clone().or_else(|| args.query.clone());
    let stdin = std::io::stdin();
    let piped = if stdin.is_terminal() {
        None
    } else {
        let mut text = String::new();
        stdin
            .lock()
            .read_to_string(&mut text)
            .map_err(|e| Fatal::input(format!("Cannot read standard input: {e}")))?;
        Some(text).filter(|t| !t.trim().is_empty())
    };
    let prompt = match (piped, flag) {
        (Some(input), Some(flag)) => format!("{}\n\n{flag}", input.trim_end()),
        (Some(input), None) => input,
        (None, Some(flag)) => flag,
        (None, None) => String::new(),
    };
    if prompt.trim().is_empty() {
        return Err(Fatal::input(
            "No input provided. Pass a prompt with -p/--prompt or as an argument, or pipe it into standard input.",
        ));
    }
    Ok(prompt)
}

/// `--yolo` / `--approval-mode`; `None` leaves it to settings.
fn approval_mode(args: &Args) -> Result<Option<ApprovalMode>, Fatal> {
    match (&args.approval_mode, args.yolo) {
        (Some(_), true) => Err(Fatal::input(
            "Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead.",
        )),
        (Some(mode), false) => ApprovalMode::parse(mode).map(Some).ok_or_else(|| {
            Fatal::input(format!(
                "Invalid --approval-mode '{mode}'. Valid values: default, auto_edit, yolo, plan."
            ))
        }),
        (None, true) => Ok(Some(ApprovalMode::Yolo)),
        (None, false) => Ok(None),
    }
}

/// Settings `output.format` (`text` or `json`, as in Gemini CLI 0.61) for a
/// run without `-o`. Read before anything is printed, so a broken or
/// untrusted settings file simply gives no answer here: the launch reports
/// it afterwards, in the default format.
pub fn output_format_from_settings(skip_trust: bool) -> Option<crate::args::OutputFormat> {
    use crate::args::OutputFormat;
    let workspace = std::env::current_dir().ok()?;
    let trust = if skip_trust {
        TrustOverride::Trust
    } else {
        TrustOverride::Decide
    };
    let loaded = launch::load_workspace(&workspace, launch::home_dir().as_deref(), trust).ok()?;
    match loaded.loaded.merged.pointer("/output/format")?.as_str()? {
        "text" => Some(OutputFormat::Text),
        "json" => Some(OutputFormat::Json),
        other => {
            tracing::warn!(
                format = other,
                "settings output.format is `text` or `json`; using text"
            );
            None
        }
    }
}
