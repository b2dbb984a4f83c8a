//! Turning a workspace, the user's settings and environment into a ready
//! session configuration, the same way for every frontend (CLI and app).
//!
//! Order of precedence, as in Gemini CLI: explicit options (flags), then
//! environment variables (with a `.env` file underneath), then settings.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gd_auth::{AuthConfig, AuthManager};
use gd_gemini::{Backend, ClientOptions, GeminiClient};
use gd_settings::layers::LoadOptions;
use gd_settings::{LoadedSettings, Settings, WorkspaceTrust, dotenv, load_layers, workspace_trust};
use thiserror::Error;
use tracing::{debug, warn};

use crate::config::{ApprovalMode, FileFiltering, SessionConfig};
use crate::hooks::trusted::UnseenHooks;
pub use crate::launch_settings::{
    MAX_ATTEMPTS, apply_env_settings, checkpointing, retry_policy, shell_settings,
    tool_output_limit,
};
use crate::policy::{PolicyApproval, mcp_settings_rules};
use crate::prompts::resolve_system_prompt;
use crate::tools::SessionTools;
use crate::tools::mcp::McpTools;
use gd_mcp::{McpManager, McpOptions};
use gd_policy::{AUTO_SAVED_POLICY_FILE, PolicyEngine, PolicySources};

/// The model used when nothing else names one: `auto` (routed per
/// prompt), as in Gemini CLI 0.61.
pub const DEFAULT_MODEL: &str = gd_gemini::models::DEFAULT_MODEL;

/// Why a session cannot start. Frontends map these to exit codes or screens.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LaunchError {
    /// No usable credentials.
    #[error("{0}")]
    Auth(String),
    /// A settings file, the system prompt file or the client setup is broken.
    #[error("{0}")]
    Config(String),
    /// The workspace is not trusted and this frontend cannot ask (the
    /// headless CLI: Gemini CLI's exit code 55).
    #[error("{0}")]
    Untrusted(String),
    /// Something the user passed is wrong (e.g. a missing include directory).
    #[error("{0}")]
    Input(String),
}

/// Process environment with a `.env` file underneath: real variables win.
#[derive(Debug, Default, Clone)]
pub struct Env {
    pub(crate) dotenv: HashMap<String, String>,
    /// The `.env` file read, if any.
    pub(crate) file: Option<PathBuf>,
}

impl Env {
    /// Loads the `.env` file Gemini CLI would load for `workspace`. In an
    /// untrusted workspace `.gemini/.env` files are skipped and a `.env`
    /// file only provides the credential variables (see
    /// [`dotenv::restrict`]).
    pub fn load(workspace: &Path, home: Option<&Path>, trusted: bool) -> Self {
        Self::load_with(workspace, home, trusted, false)
    }

    /// [`Env::load`]; `ignore_local` is `advanced.ignoreLocalEnv`.
    pub fn load_with(
        workspace: &Path,
        home: Option<&Path>,
        trusted: bool,
        ignore_local: bool,
    ) -> Self {
        let file = dotenv::find_env_file_with(workspace, home, trusted, ignore_local);
        let vars = file
            .as_ref()
            .and_then(|path| {
                debug!(path = %path.display(), trusted, "loading .env");
                std::fs::read_to_string(path).ok()
            })
            .map(|text| dotenv::parse(&text))
            .unwrap_or_default();
        let dotenv = if trusted {
            vars
        } else {
            dotenv::restrict(vars)
        };
        Self { dotenv, file }
    }

    pub fn get(&self, name: &str) -> Option<String> {
        std::env::var(name)
            .ok()
            .or_else(|| self.dotenv.get(name).cloned())
    }
}

/// The user's home directory (`$HOME`).
pub use crate::launch_tools::declared_tools;

pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Reads the process environment (not a `.env` file).
fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A workspace's settings and environment, read with its trust decided
/// first (Gemini CLI's order): an untrusted folder's workspace settings and
/// `.gemini/.env` are not read.
#[derive(Debug, Clone)]
pub struct WorkspaceSettings {
    pub trust: WorkspaceTrust,
    pub env: Env,
    pub loaded: LoadedSettings,
}

impl WorkspaceSettings {
    pub fn settings(&self) -> &Settings {
        &self.loaded.settings
    }
}

/// How a frontend wants trust decided.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TrustOverride {
    /// By `security.folderTrust.enabled`, the environment and
    /// `trustedFolders.json`.
    #[default]
    Decide,
    /// Trusted for this run (`--skip-trust`).
    Trust,
}

/// Decides `workspace`'s trust, then loads its `.env` and settings layers.
/// A broken settings or trusted folders file is a [`LaunchError::Config`]
/// naming the file and line.
pub fn load_workspace(
    workspace: &Path,
    home: Option<&Path>,
    trust: TrustOverride,
) -> Result<WorkspaceSettings, LaunchError> {
    let config = |e: gd_settings::SettingsError| LaunchError::Config(e.to_string());
    let trust = match trust {
        TrustOverride::Trust => WorkspaceTrust {
            source: Some(gd_settings::TrustSource::Env),
            enabled: true,
            ..WorkspaceTrust::assumed(workspace)
        },
        TrustOverride::Decide => workspace_trust(&LoadOptions {
            home: home.map(Path::to_path_buf),
            workspace: workspace.to_path_buf(),
            env: &process_env,
            workspace_trusted: false,
        })
        .map_err(config)?,
    };
    if !trust.is_trusted() {
        debug!(workspace = %workspace.display(), ?trust, "workspace not trusted: restricted mode");
    }
    let env = Env::load(workspace, home, trust.is_trusted());
    let getter = |name: &str| env.get(name);
    let loaded = load_layers(&LoadOptions {
        home: home.map(Path::to_path_buf),
        workspace: workspace.to_path_buf(),
        env: &getter,
        workspace_trusted: trust.is_trusted(),
    })
    .map_err(config)?;
    let env = apply_env_settings(env, &loaded.settings, workspace, home, trust.is_trusted());
    Ok(WorkspaceSettings { trust, env, loaded })
}

/// Gemini CLI's message for an untrusted folder in headless mode.
pub const UNTRUSTED_HEADLESS_MESSAGE: &str = "Gemini Desktop is not running in a trusted directory. To proceed, either use `--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in the app (or in Gemini CLI's interactive mode).";

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
    /// `--skip-trust`.
    pub trust: TrustOverride,
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
    /// Whether the workspace is trusted, and who decided.
    pub trust: WorkspaceTrust,
    /// Problems that did not stop the launch (e.g. a broken policy file).
    pub warnings: Vec<String>,
    /// The workspace's hooks not seen before; their warning is among
    /// `warnings`. Call [`UnseenHooks::remember`] once the warnings have
    /// reached the user, not before (see there why).
    pub unseen_hooks: Option<UnseenHooks>,
}

/// The context file names from `context.fileName` (`GEMINI.md` by default).
pub fn context_file_names(settings: &Settings) -> Vec<String> {
    let names: Vec<String> = settings
        .context
        .file_name
        .as_ref()
        .map(|n| n.to_vec())
        .unwrap_or_default()
        .into_iter()
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty() && !n.contains(['/', '\\']))
        .collect();
    if names.is_empty() {
        vec![crate::memory::DEFAULT_CONTEXT_FILE_NAME.to_owned()]
    } else {
        names
    }
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
    let WorkspaceSettings { trust, env, loaded } =
        load_workspace(&workspace, home.as_deref(), options.trust)?;
    // Headless, nobody can be asked to trust the folder: Gemini CLI stops
    // (exit code 55) unless the folder is trusted.
    if trust.enabled && !trust.is_trusted() && !options.interactive {
        return Err(LaunchError::Untrusted(
            UNTRUSTED_HEADLESS_MESSAGE.to_owned(),
        ));
    }
    let trusted = trust.is_trusted();
    let getter = |name: &str| env.get(name);
    // Keys of the wrong type that were ignored (not fatal, unlike the
    // older keys: see gd_settings::model::ignored_values).
    let ignored = gd_settings::model::ignored_values(&loaded.merged);
    let mut settings = loaded.settings;
    let (layers, merged, skipped_workspace) =
        (loaded.layers, loaded.merged, loaded.skipped_workspace);
    let server_command = crate::launch_settings::add_server_command(&mut settings).err();

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

    // The enabled extensions' servers and excluded tools join the settings
    // (settings.json wins on a name clash, as in 0.61).
    let mut extensions = crate::extensions::load(home.as_deref(), &workspace);
    // `experimental.extensionConfig: false`: the extensions get no values.
    let mut extension_notes = if settings.experimental.extension_config == Some(false) {
        Vec::new()
    } else {
        crate::extensions::with_setting_values(
            &mut extensions,
            home.as_deref(),
            &workspace,
            trusted,
        )
    };
    extension_notes.extend(crate::extensions::apply_to_settings(
        &mut settings,
        &extensions,
    ));

    // MCP servers are usually the slowest part of a start: start them before
    // anything else (they are stopped again if the launch fails below).
    // An untrusted folder starts no MCP server at all (Gemini CLI's rule:
    // a server's command could come from the repository).
    let (sandbox, sandbox_warnings) =
        crate::sandbox::read_settings(&layers, trusted, home_dir().as_deref());
    let mcp = StartedMcp(
        trusted
            .then(|| mcp_manager(&settings, &workspace_dirs, home_dir().as_deref(), &sandbox))
            .flatten(),
    );

    let model = resolve_model(options.model.as_deref(), &env, &settings);
    let backend = select_backend(&settings, &env)?;
    let (extra_headers, header_problems) =
        crate::launch_settings::vertex_headers(&settings, backend.kind());
    let client = GeminiClient::new(
        backend,
        ClientOptions {
            retry: retry_policy(&settings, &env),
            extra_headers,
            surface: options.surface.clone(),
            ..ClientOptions::default()
        },
    )
    .map_err(|e| LaunchError::Config(e.to_string()))?;

    let system_prompt = resolve_system_prompt(&workspace, env.get("GEMINI_SYSTEM_MD").as_deref())
        .map_err(|e| LaunchError::Config(e.to_string()))?;
    let mut approval_mode = options.approval_mode.unwrap_or_else(|| {
        let configured = settings.general.default_approval_mode.as_deref();
        let mode = configured.and_then(ApprovalMode::parse);
        if let (Some(name), None) = (configured, mode) {
            // An unknown mode: asking first is the safe reading.
            warn!(
                mode = name,
                "general.defaultApprovalMode not supported here; asking first"
            );
        }
        mode.filter(|m| *m != ApprovalMode::Yolo)
            .unwrap_or_default()
    });
    if approval_mode == ApprovalMode::Plan && settings.general.plan.enabled == Some(false) {
        warn!("Approval mode \"plan\" is disabled in your settings. Falling back to \"default\".");
        approval_mode = ApprovalMode::Default;
    }
    let yolo_disabled = settings.security.disable_yolo_mode == Some(true);
    if yolo_disabled && approval_mode == ApprovalMode::Yolo {
        // Gemini CLI 0.61 refuses to start (FatalConfigError, exit 52).
        return Err(LaunchError::Config(
            crate::policy::YOLO_DISABLED_MESSAGE.to_owned(),
        ));
    }
    // Plan mode is stricter than the default: an untrusted folder may plan.
    if !trusted && !matches!(approval_mode, ApprovalMode::Default | ApprovalMode::Plan) {
        warn!(
            mode = approval_mode.as_str(),
            "approval mode overridden to \"default\" because the folder is not trusted"
        );
        approval_mode = ApprovalMode::Default;
    }

    let mut config = SessionConfig::new(model.clone(), workspace, system_prompt);
    config.workspace_dirs = workspace_dirs;
    config.workspace_trusted = trusted;
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
    config.loop_detection = settings.model.disable_loop_detection != Some(true);
    config.tool_output_limit = tool_output_limit(&settings);
    config.shell = shell_settings(&settings);
    config.shell.sandbox = sandbox.clone();
    config.include_directory_tree = settings.context.include_directory_tree != Some(false);
    let (home, ws) = (home_dir(), config.workspace_dirs[0].clone());
    config.agents = Arc::new(crate::subagents::load::load(
        &settings,
        home.as_deref(),
        &ws,
        trusted,
    ));
    config.skills = Arc::new(crate::skills::load(
        &settings,
        home.as_deref(),
        &ws,
        trusted,
    ));
    // The enabled extensions' `hooks/hooks.json`, after the settings' hooks
    // as in 0.61.
    let extension_hooks = crate::extensions::hooks(&extensions);
    let (hooks, hook_errors) = crate::hooks::load(
        &layers,
        &merged,
        skipped_workspace.as_deref(),
        trusted,
        &extension_hooks,
        crate::hooks::load::hook_env(&config),
    );
    config.hooks = Arc::new(hooks);
    // No fixed generation config: each request takes its model's defaults
    // (a routed prompt may go to another family than the configured name).
    config.memory = Some(crate::memory::DiscoveryOptions {
        workspace: config.workspace_dirs[0].clone(),
        home: home_dir(),
        file_names: context_file_names(&settings),
        max_dirs: settings
            .context
            .discovery_max_dirs
            .unwrap_or(crate::memory::DEFAULT_MAX_DIRS),
        filtering: config.file_filtering,
        workspace_files: trusted,
        boundary_markers: settings.context.memory_boundary_markers.clone(),
        include_directories: settings.context.load_memory_from_include_directories == Some(true),
    });

    let mut warnings: Vec<String> = ignored
        .into_iter()
        .map(|problem| format!("Setting {problem}"))
        .chain(server_command)
        .chain(header_problems)
        .chain(extension_notes)
        .chain(sandbox_warnings)
        .collect();
    // Headless YOLO runs every command without asking; without the sandbox, say once what
    // that means (the app says it in its mode menu).
    if !options.interactive && approval_mode == ApprovalMode::Yolo && !config.shell.sandbox.enabled
    {
        warnings.push(crate::sandbox::state(&config.shell.sandbox).summary);
    }
    // 0.61: the user's `general.plan.directory`, else the first enabled
    // extension's `plan.directory` (already refused when absolute or with
    // `..`), both resolved in the project.
    let plan_directory = settings.general.plan.directory.as_deref().or_else(|| {
        extensions
            .enabled()
            .find_map(|e| e.contributions.plan_directory.as_deref())
    });
    if let Some(dir) = plan_directory {
        match crate::plan::custom_plans_dir(&config.workspace_dirs[0], dir) {
            Ok(dir) => config.plans_dir = Some(dir),
            Err(message) => {
                warn!("{message}");
                warnings.push(message);
            }
        }
    }
    let home = home_dir();
    config.checkpointing = checkpointing(&settings, options.interactive, &getter, home.as_deref());
    // Workspace policies only count in a trusted folder.
    let policy_workspace = trusted.then_some(config.workspace_dirs[0].as_path());
    let mut sources = PolicySources::standard(home.as_deref(), policy_workspace, &getter);
    sources.extensions = crate::extensions::policy_dirs(&extensions);
    let (mut engine, errors) = PolicyEngine::load(&sources);
    warnings.extend(errors.iter().map(|e| format!("Policy file skipped: {e}")));
    let mut settings_rules = mcp_settings_rules(&settings);
    settings_rules.extend(crate::tool_rules::tools_settings_rules(&settings));
    let (path_rules, path_problems) =
        crate::launch_settings::policy_path_rules(&settings, &config.workspace_dirs[0]);
    settings_rules.extend(path_rules);
    settings_rules.extend(crate::skills::consent::builtin_rule(&config.skills));
    warnings.extend(path_problems);
    engine.add_rules(settings_rules.clone());
    let policy = Arc::new(
        PolicyApproval::new(
            engine,
            approval_mode,
            options.interactive,
            sources
                .user_dir
                .as_ref()
                .map(|dir| dir.join(AUTO_SAVED_POLICY_FILE)),
        )
        .restricted(!trusted)
        .yolo_disabled(yolo_disabled)
        .reloadable(sources, settings_rules)
        .with_load_errors(&errors),
    );

    let mut tools = declared_tools(&settings, &policy, &config.workspace_dirs[0], &mut warnings);
    crate::subagents::invoke::keep_if_runnable(&mut tools, &config.agents);
    crate::skills::register(&mut tools, &config.skills, &settings, &policy);
    if config.system_prompt == crate::prompts::DEFAULT_SYSTEM_PROMPT {
        // Our own prompt says how to use the tools this session has (a
        // user's GEMINI_SYSTEM_MD is left as written).
        config.system_prompt = crate::prompts::default_prompt_for(&tools.names());
        crate::subagents::listing::add_prompt_section(&mut config, &tools.names());
    }
    warnings.extend(config.agents.launch_warnings());
    warnings.extend(crate::skills::launch_warnings(&config.skills));
    warnings.extend(
        hook_errors
            .iter()
            .map(|e| format!("Hook skipped: {}: {}", e.path, e.message)),
    );
    // A trusted workspace's hooks not seen before are named once (0.61).
    let project_hooks = layers
        .iter()
        .filter(|l| trusted && l.kind == gd_settings::layers::LayerKind::Workspace)
        .find_map(|l| l.value.get("hooks"));
    let unseen_hooks = match (project_hooks, home.as_deref()) {
        (Some(hooks), Some(home)) => {
            crate::hooks::trusted::check(&home.join(".gemini"), &config.workspace_dirs[0], hooks)
        }
        _ => None,
    };
    warnings.extend(unseen_hooks.as_ref().map(|u| u.message().to_owned()));
    for warning in &warnings {
        warn!("{warning}");
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
        trust,
        warnings,
        unseen_hooks,
    })
}

/// The session's MCP servers from `mcpServers` (none when there are none),
/// started at once when a Tokio runtime is running.
fn mcp_manager(
    settings: &Settings,
    workspace_dirs: &[PathBuf],
    home: Option<&Path>,
    sandbox: &crate::sandbox::SandboxSettings,
) -> Option<McpManager> {
    if settings.mcp_servers.is_empty() {
        return None;
    }
    let mut options = McpOptions::from_settings(settings, workspace_dirs.to_vec(), home);
    // Servers with `sandbox: true` get the rules commands get.
    options.sandbox = crate::sandbox::policy_for(workspace_dirs, sandbox, home);
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

/// `explicit`, else `GEMINI_MODEL`, else `model.name`, else the default
/// (`auto`). Aliases and `auto*` names are kept as the user wrote them:
/// the session resolves them per request (see [`crate::routing`]).
pub fn resolve_model(explicit: Option<&str>, env: &Env, settings: &Settings) -> String {
    explicit
        .map(str::to_owned)
        .or_else(|| env.get("GEMINI_MODEL"))
        .or_else(|| settings.model.name.clone())
        .map(|m| m.trim().to_owned())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned())
}

/// The sign-in manager for these settings and this environment: the same
/// object the desktop shell's sign-in screen and the CLI's `auth` commands
/// use, so a session finds what they stored.
pub fn auth_manager(settings: &Settings, env: &Env) -> Result<AuthManager, LaunchError> {
    let home = home_dir();
    let lookup = env.clone();
    let config = AuthConfig::from_settings(settings, &|name| lookup.get(name), home.as_deref())
        .map_err(|e| LaunchError::Auth(e.to_string()))?;
    let env = env.clone();
    AuthManager::new(config, Arc::new(move |name: &str| env.get(name)), home)
        .map_err(|e| LaunchError::Auth(e.to_string()))
}

/// [`auth_manager`] for a workspace folder: its `.env` and settings layers,
/// read the way [`prepare`] reads them (for `gemini-desktop-cli auth` and the
/// desktop shell's sign-in screen).
pub fn auth_manager_for_workspace(workspace: &Path) -> Result<AuthManager, LaunchError> {
    let loaded = load_workspace(workspace, home_dir().as_deref(), TrustOverride::Decide)?;
    auth_manager(loaded.settings(), &loaded.env)
}

/// Picks the backend (see [`gd_auth::manager`] for the order):
/// `security.auth.selectedType` when set, else credentials in the
/// environment (Vertex AI when `GOOGLE_GENAI_USE_VERTEXAI`, else
/// `GEMINI_API_KEY`), else what was stored with Sign in / `gemini-desktop-cli
/// auth` (API key, Vertex AI settings, or the Google sign-in → Code Assist).
/// No network is used; a Google token is refreshed on first use.
pub fn select_backend(settings: &Settings, env: &Env) -> Result<Backend, LaunchError> {
    let manager = auth_manager(settings, env)?;
    let resolved = manager
        .resolve_backend()
        .map_err(|e| LaunchError::Auth(e.to_string()))?;
    debug!(
        method = ?resolved.method,
        chosen_by = ?resolved.chosen_by,
        secret = %resolved.secret_location,
        "credentials selected"
    );
    crate::launch_settings::check_enforced_auth(settings, resolved.method)
        .map_err(LaunchError::Auth)?;
    Ok(resolved.backend)
}

fn resolve_dir(base: &Path, dir: &str) -> Option<PathBuf> {
    crate::tools::files::existing_dir(base, dir, home_dir().as_deref())
}

fn push_unique(dirs: &mut Vec<PathBuf>, dir: PathBuf) {
    if !dirs.contains(&dir) {
        dirs.push(dir);
    }
}

#[cfg(test)]
mod tests;
