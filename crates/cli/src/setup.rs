//! Everything decided before the session starts: environment, settings,
//! prompt, model, credentials, workspace and tools.

use std::collections::HashMap;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use gd_core::config::default_generation_config;
use gd_core::prompts::resolve_system_prompt;
use gd_core::tools::ToolRegistry;
use gd_core::{ApprovalMode, FileFiltering, SessionConfig};
use gd_gemini::{Backend, ClientOptions, GeminiClient, GeminiError, RetryPolicy};
use gd_settings::layers::LoadOptions;
use gd_settings::{Settings, dotenv, load_layers};
use tracing::{debug, warn};

use crate::args::Args;
use crate::exit::Fatal;

/// The model used when nothing else names one.
pub const DEFAULT_MODEL: &str = "gemini-2.5-pro";

/// Process environment with a `.env` file underneath: real variables win.
pub struct Env {
    dotenv: HashMap<String, String>,
}

impl Env {
    pub fn load(workspace: &Path, home: Option<&Path>) -> Self {
        let dotenv = dotenv::find_env_file(workspace, home)
            .and_then(|path| {
                debug!(path = %path.display(), "loading .env");
                std::fs::read_to_string(path).ok()
            })
            .map(|text| dotenv::parse(&text))
            .unwrap_or_default();
        Self { dotenv }
    }

    pub fn get(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().or_else(|| self.dotenv.get(name).cloned())
    }
}

/// Everything needed to start the run.
pub struct Prepared {
    pub config: SessionConfig,
    pub client: GeminiClient,
    pub tools: ToolRegistry,
    pub prompt: String,
}

pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// Resolves settings, prompt, model, credentials and tools.
pub fn prepare(args: &Args) -> Result<Prepared, Fatal> {
    let workspace = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| Fatal::input(format!("Cannot use the current directory as workspace: {e}")))?;
    let home = home_dir();
    let env = Env::load(&workspace, home.as_deref());
    let getter = |name: &str| env.get(name);
    let loaded = load_layers(&LoadOptions {
        home: home.clone(),
        workspace: workspace.clone(),
        env: &getter,
    })
    .map_err(|e| Fatal::config(e.to_string()))?;
    let settings = loaded.settings;

    let prompt = read_prompt(args)?;
    let approval_mode = approval_mode(args, &settings)?;
    let model = resolve_model(args, &env, &settings);
    let backend = select_backend(&settings, &env)?;
    let retry = RetryPolicy::from_env(|name| env.get(name));
    let client = GeminiClient::new(
        backend,
        ClientOptions {
            retry,
            surface: "cli".into(),
            ..ClientOptions::default()
        },
    )
    .map_err(|e| Fatal::config(e.to_string()))?;

    let mut workspace_dirs = vec![workspace.clone()];
    for dir in args.include_directories.iter().filter(|d| !d.trim().is_empty()) {
        let path = resolve_dir(&workspace, dir)
            .ok_or_else(|| Fatal::input(format!("--include-directories: {dir} is not a directory")))?;
        push_unique(&mut workspace_dirs, path);
    }
    for dir in &settings.context.include_directories {
        match resolve_dir(&workspace, dir) {
            Some(path) => push_unique(&mut workspace_dirs, path),
            None => warn!(dir, "context.includeDirectories entry is not a directory; skipped"),
        }
    }

    let system_prompt = resolve_system_prompt(&workspace, env.get("GEMINI_SYSTEM_MD").as_deref())
        .map_err(|e| Fatal::config(e.to_string()))?;
    let mut config = SessionConfig::new(model.clone(), workspace, system_prompt);
    config.workspace_dirs = workspace_dirs;
    config.approval_mode = approval_mode;
    config.interactive = false;
    config.max_session_turns = settings
        .model
        .max_session_turns
        .filter(|n| *n > 0)
        .map(|n| n.min(u32::MAX as i64) as u32);
    if let Some(threshold) = settings.model.compression_threshold {
        config.compression_threshold = threshold;
    }
    config.file_filtering = FileFiltering {
        respect_git_ignore: settings.context.file_filtering.respect_git_ignore.unwrap_or(true),
        respect_gemini_ignore: settings.context.file_filtering.respect_gemini_ignore.unwrap_or(true),
    };
    config.generation_config = Some(default_generation_config(&model));

    let mut tools = ToolRegistry::with_builtins();
    tools.exclude(&settings.tools.exclude);
    if approval_mode != ApprovalMode::Yolo {
        // Headless, nobody can confirm: tools that would ask are not offered.
        tools.retain(|tool| tool.kind().is_read_only());
    }
    Ok(Prepared {
        config,
        client,
        tools,
        prompt,
    })
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

fn approval_mode(args: &Args, settings: &Settings) -> Result<ApprovalMode, Fatal> {
    match (&args.approval_mode, args.yolo) {
        (Some(_), true) => Err(Fatal::input(
            "Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead.",
        )),
        (Some(mode), false) => ApprovalMode::parse(mode).ok_or_else(|| {
            Fatal::input(format!("Invalid --approval-mode '{mode}'. Valid values: default, auto_edit, yolo."))
        }),
        (None, true) => Ok(ApprovalMode::Yolo),
        (None, false) => Ok(settings
            .general
            .default_approval_mode
            .as_deref()
            .and_then(ApprovalMode::parse)
            .filter(|m| *m != ApprovalMode::Yolo)
            .unwrap_or_default()),
    }
}

fn resolve_model(args: &Args, env: &Env, settings: &Settings) -> String {
    let chosen = args
        .model
        .clone()
        .or_else(|| env.get("GEMINI_MODEL"))
        .or_else(|| settings.model.name.clone())
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    // Gemini CLI's "auto" routing picks a model per request; we use the
    // default model until routing is implemented.
    if chosen == "auto" || chosen.starts_with("auto-") {
        debug!(chosen, "model routing is not supported; using the default model");
        return DEFAULT_MODEL.to_owned();
    }
    chosen
}

/// Picks the backend: `security.auth.selectedType` when set, else the
/// environment.
fn select_backend(settings: &Settings, env: &Env) -> Result<Backend, Fatal> {
    let selected = settings.security.auth.selected_type.as_deref();
    let result = match selected {
        Some("oauth-personal") | Some("cloud-shell") | Some("compute-default-credentials") => {
            return Err(Fatal::auth(format!(
                "Auth method '{}' (Google sign-in) is not available in gemini-desktop-cli yet. Set GEMINI_API_KEY, or configure Vertex AI (GOOGLE_GENAI_USE_VERTEXAI with GOOGLE_API_KEY).",
                selected.unwrap_or_default()
            )));
        }
        Some("vertex-ai") => Backend::from_env(
            |name| match name {
                "GOOGLE_GENAI_USE_VERTEXAI" => Some("true".into()),
                other => env.get(other),
            },
            None,
        ),
        Some("gemini-api-key") => Backend::from_env(
            |name| match name {
                "GOOGLE_GENAI_USE_VERTEXAI" => None,
                other => env.get(other),
            },
            None,
        ),
        _ => Backend::from_env(|name| env.get(name), None),
    };
    result.map_err(|e| match e {
        GeminiError::Credentials(message) | GeminiError::Config(message) => Fatal::auth(format!(
            "Authentication is not configured: {message}. Put the key in the environment or in a .env file (e.g. .gemini/.env)."
        )),
        other => Fatal::auth(other.to_string()),
    })
}

fn resolve_dir(base: &Path, dir: &str) -> Option<PathBuf> {
    let path = gd_core::tools::files::resolve(base, dir.trim());
    path.canonicalize().ok().filter(|p| p.is_dir())
}

fn push_unique(dirs: &mut Vec<PathBuf>, dir: PathBuf) {
    if !dirs.contains(&dir) {
        dirs.push(dir);
    }
}
