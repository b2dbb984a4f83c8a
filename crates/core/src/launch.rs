//! Turning a workspace, the user's settings and environment into a ready
//! session configuration, the same way for every frontend (CLI and app).
//!
//! Order of precedence, as in Gemini CLI: explicit options (flags), then
//! environment variables (with a `.env` file underneath), then settings.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gd_gemini::{Backend, ClientOptions, GeminiClient, GeminiError, RetryPolicy};
use gd_settings::layers::LoadOptions;
use gd_settings::{Settings, dotenv, load_layers};
use thiserror::Error;
use tracing::{debug, warn};

use crate::config::{ApprovalMode, FileFiltering, SessionConfig, default_generation_config};
use crate::policy::{PolicyApproval, mcp_settings_rules};
use crate::prompts::resolve_system_prompt;
use crate::tools::discovered::discover;
use crate::tools::mcp::McpTools;
#[cfg(unix)]
use crate::tools::shell;
use crate::tools::{SessionTools, ToolRegistry};
use gd_mcp::{McpManager, McpOptions};
use gd_policy::{AUTO_SAVED_POLICY_FILE, PolicyEngine, PolicySources};

/// The model used when nothing else names one.
pub const DEFAULT_MODEL: &str = "gemini-2.5-pro";

/// Why a session cannot start. Frontends map these to exit codes or screens.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LaunchError {
    /// No usable credentials.
    #[error("{0}")]
    Auth(String),
    /// A settings file, the system prompt file or the client setup is broken.
    #[error("{0}")]
    Config(String),
    /// Something the user passed is wrong (e.g. a missing include directory).
    #[error("{0}")]
    Input(String),
}

/// Process environment with a `.env` file underneath: real variables win.
#[derive(Debug, Default, Clone)]
pub struct Env {
    dotenv: HashMap<String, String>,
}

impl Env {
    /// Loads the `.env` file Gemini CLI would load for `workspace`.
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
        std::env::var(name)
            .ok()
            .or_else(|| self.dotenv.get(name).cloned())
    }
}

/// The user's home directory (`$HOME`).
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// What the frontend decided before reading settings.
#[derive(Debug, Clone, Default)]
pub struct LaunchOptions {
    pub workspace: PathBuf,
    /// Extra workspace directories (e.g. `--include-directories`).
    pub include_directories: Vec<String>,
    /// An explicit model (e.g. `-m`); beats `GEMINI_MODEL` and settings.
    pub model: Option<String>,
    /// An explicit approval mode; else `general.defaultApprovalMode`.
    pub approval_mode: Option<ApprovalMode>,
    /// Whether someone can answer confirmations.
    pub interactive: bool,
    /// `cli` or `desktop`, for the User-Agent.
    pub surface: String,
}

/// A session ready to spawn.
pub struct Launch {
    pub config: SessionConfig,
    pub client: GeminiClient,
    /// The built-in and discovered tools, and the MCP servers (already
    /// starting when a Tokio runtime was running during [`prepare`]).
    pub tools: SessionTools,
    pub policy: Arc<PolicyApproval>,
    pub settings: Settings,
    /// Problems that did not stop the launch (e.g. a broken policy file).
    pub warnings: Vec<String>,
}

/// Reads settings and environment and builds the session's parts.
pub fn prepare(options: LaunchOptions) -> Result<Launch, LaunchError> {
    let workspace = options.workspace.canonicalize().map_err(|e| {
        LaunchError::Input(format!(
            "Cannot open workspace {}: {e}",
            options.workspace.display()
        ))
    })?;
    let home = home_dir();
    let env = Env::load(&workspace, home.as_deref());
    let getter = |name: &str| env.get(name);
    let settings = load_layers(&LoadOptions {
        home,
        workspace: workspace.clone(),
        env: &getter,
    })
    .map_err(|e| LaunchError::Config(e.to_string()))?
    .settings;

    let mut workspace_dirs = vec![workspace.clone()];
    for dir in options
        .include_directories
        .iter()
        .filter(|d| !d.trim().is_empty())
    {
        let path = resolve_dir(&workspace, dir).ok_or_else(|| {
            LaunchError::Input(format!("Include directory {dir} is not a directory"))
        })?;
        push_unique(&mut workspace_dirs, path);
    }
    for dir in &settings.context.include_directories {
        match resolve_dir(&workspace, dir) {
            Some(path) => push_unique(&mut workspace_dirs, path),
            None => warn!(
                dir,
                "context.includeDirectories entry is not a directory; skipped"
            ),
        }
    }

    // MCP servers are usually the slowest part of a start: start them before
    // anything else (they are stopped again if the launch fails below).
    let mcp = StartedMcp(mcp_manager(&settings, &workspace_dirs, home_dir().as_deref()));

    let model = resolve_model(options.model.as_deref(), &env, &settings);
    let backend = select_backend(&settings, &env)?;
    let client = GeminiClient::new(
        backend,
        ClientOptions {
            retry: RetryPolicy::from_env(|name| env.get(name)),
            surface: options.surface.clone(),
            ..ClientOptions::default()
        },
    )
    .map_err(|e| LaunchError::Config(e.to_string()))?;

    let system_prompt = resolve_system_prompt(&workspace, env.get("GEMINI_SYSTEM_MD").as_deref())
        .map_err(|e| LaunchError::Config(e.to_string()))?;
    let approval_mode = options.approval_mode.unwrap_or_else(|| {
        settings
            .general
            .default_approval_mode
            .as_deref()
            .and_then(ApprovalMode::parse)
            .filter(|m| *m != ApprovalMode::Yolo)
            .unwrap_or_default()
    });

    let mut config = SessionConfig::new(model.clone(), workspace, system_prompt);
    config.workspace_dirs = workspace_dirs;
    config.approval_mode = approval_mode;
    config.interactive = options.interactive;
    config.surface = options.surface;
    config.max_session_turns = settings
        .model
        .max_session_turns
        .filter(|n| *n > 0)
        .map(|n| n.min(i64::from(u32::MAX)) as u32);
    if let Some(threshold) = settings.model.compression_threshold {
        config.compression_threshold = threshold;
    }
    config.file_filtering = FileFiltering {
        respect_git_ignore: settings
            .context
            .file_filtering
            .respect_git_ignore
            .unwrap_or(true),
        respect_gemini_ignore: settings
            .context
            .file_filtering
            .respect_gemini_ignore
            .unwrap_or(true),
    };
    config.generation_config = Some(default_generation_config(&model));

    let mut warnings = Vec::new();
    let home = home_dir();
    let sources =
        PolicySources::standard(home.as_deref(), Some(&config.workspace_dirs[0]), &getter);
    let (mut engine, errors) = PolicyEngine::load(&sources);
    warnings.extend(errors.iter().map(|e| format!("Policy file skipped: {e}")));
    engine.add_rules(mcp_settings_rules(&settings));
    let policy = Arc::new(PolicyApproval::new(
        engine,
        approval_mode,
        options.interactive,
        sources.user_dir.map(|dir| dir.join(AUTO_SAVED_POLICY_FILE)),
    ));

    let mut tools = ToolRegistry::with_builtins();
    if let (Some(discovery), Some(call)) = (
        &settings.tools.discovery_command,
        &settings.tools.call_command,
    ) {
        match discover(discovery, call, &config.workspace_dirs[0]) {
            Ok(found) => found
                .into_iter()
                .for_each(|tool| tools.register(Arc::new(tool))),
            Err(e) => warnings.push(format!("Tool discovery failed: {e}")),
        }
    }
    tools.exclude(&settings.tools.exclude);
    // Tools the policy would never let run here (e.g. tools that need a
    // confirmation in a session nobody can confirm) are not offered at all.
    tools.retain(|tool| policy.would_declare(tool));
    for warning in &warnings {
        warn!("{warning}");
    }
    #[cfg(unix)]
    if tools.get(shell::RunShellCommand::NAME).is_none() {
        // Without the shell there are no background processes to look at
        // (Gemini CLI offers these tools only together with the shell).
        tools.exclude(&[
            shell::ListBackgroundProcesses::NAME.to_owned(),
            shell::ReadBackgroundOutput::NAME.to_owned(),
        ]);
    }
    let mcp = mcp.disarm().map(|manager| {
        for entry in manager.invalid_entries() {
            let message = format!("MCP server '{}' not started: {}", entry.0, entry.1);
            warn!("{message}");
            warnings.push(message);
        }
        let policy = policy.clone();
        McpTools {
            manager,
            exclude: settings.tools.exclude.clone(),
            declare: Arc::new(move |tool| policy.would_declare(tool)),
        }
    });
    Ok(Launch {
        config,
        client,
        tools: SessionTools {
            registry: tools,
            mcp,
        },
        policy,
        settings,
        warnings,
    })
}

/// The session's MCP servers from `mcpServers` (none when there are none),
/// started at once when a Tokio runtime is running.
fn mcp_manager(
    settings: &Settings,
    workspace_dirs: &[PathBuf],
    home: Option<&Path>,
) -> Option<McpManager> {
    if settings.mcp_servers.is_empty() {
        return None;
    }
    let options = McpOptions::from_settings(settings, workspace_dirs.to_vec(), home);
    let manager = McpManager::new(options);
    if tokio::runtime::Handle::try_current().is_ok() {
        manager.start();
    }
    Some(manager)
}

/// MCP servers started during a launch that may still fail: stopped again
/// unless the launch succeeds.
struct StartedMcp(Option<McpManager>);

impl StartedMcp {
    fn disarm(mut self) -> Option<McpManager> {
        self.0.take()
    }
}

impl Drop for StartedMcp {
    fn drop(&mut self) {
        if let Some(manager) = self.0.take() {
            manager.terminate();
        }
    }
}

/// `explicit`, else `GEMINI_MODEL`, else `model.name`, else the default.
pub fn resolve_model(explicit: Option<&str>, env: &Env, settings: &Settings) -> String {
    let chosen = explicit
        .map(str::to_owned)
        .or_else(|| env.get("GEMINI_MODEL"))
        .or_else(|| settings.model.name.clone())
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    // Gemini CLI's "auto" routing picks a model per request; until routing
    // exists here, auto means the default model.
    if chosen == "auto" || chosen.starts_with("auto-") {
        debug!(
            chosen,
            "model routing is not supported; using the default model"
        );
        return DEFAULT_MODEL.to_owned();
    }
    chosen
}

/// Picks the backend: `security.auth.selectedType` when set, else the
/// environment (Vertex AI when `GOOGLE_GENAI_USE_VERTEXAI`, else API key).
pub fn select_backend(settings: &Settings, env: &Env) -> Result<Backend, LaunchError> {
    let selected = settings.security.auth.selected_type.as_deref();
    let result = match selected {
        Some(kind @ ("oauth-personal" | "cloud-shell" | "compute-default-credentials")) => {
            return Err(LaunchError::Auth(format!(
                "Auth method '{kind}' (Google sign-in) is not available yet. Set GEMINI_API_KEY, or configure Vertex AI (GOOGLE_GENAI_USE_VERTEXAI with GOOGLE_API_KEY)."
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
        GeminiError::Credentials(message) | GeminiError::Config(message) => LaunchError::Auth(format!(
            "Authentication is not configured: {message}. Put the key in the environment or in a .env file (e.g. .gemini/.env)."
        )),
        other => LaunchError::Auth(other.to_string()),
    })
}

fn resolve_dir(base: &Path, dir: &str) -> Option<PathBuf> {
    crate::tools::files::resolve(base, dir.trim())
        .canonicalize()
        .ok()
        .filter(|p| p.is_dir())
}

fn push_unique(dirs: &mut Vec<PathBuf>, dir: PathBuf) {
    if !dirs.contains(&dir) {
        dirs.push(dir);
    }
}
