//! Session-wide services that tools share.

use std::path::PathBuf;

use gd_gemini::GeminiClient;

/// What tools can use beyond their arguments. One per session.
#[derive(Debug, Default)]
pub struct ToolServices {
    /// The project's temporary directory (full outputs of truncated results
    /// are saved here).
    pub temp_dir: PathBuf,
    /// The user's home (for `~/.gemini/GEMINI.md`).
    pub home: Option<PathBuf>,
    /// The model client, for tools that ask the model (web search, fetch).
    pub model: Option<ModelAccess>,
    /// Limits applied to tool output.
    pub limits: ToolLimits,
    /// The conversation's current topic (`update_topic`), shared by every
    /// copy of the services (a model switch makes a new one), and taken
    /// from the history when a conversation is resumed.
    pub topic: std::sync::Arc<std::sync::Mutex<super::topic::TopicState>>,
    /// How the shell tool runs commands (`tools.shell.*`).
    pub shell: ShellSettings,
    /// What `invoke_agent` runs subagents with (none outside a session).
    pub subagents: Option<std::sync::Arc<crate::subagents::SubagentRuntime>>,
    /// The session's hooks (none outside a session).
    pub hooks: Option<crate::hooks::Hooks>,
    /// What the user allowed commands beyond the sandbox for the rest of the session ("always
    /// for this command").
    pub sandbox_grants: std::sync::Arc<crate::sandbox::Grants>,
}

/// `tools.shell.*` as the shell tool applies them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellSettings {
    /// `PAGER` and `GIT_PAGER` of the commands (`tools.shell.pager`, `cat`):
    /// nothing may wait for a key press nobody can give.
    pub pager: String,
    /// A command with no output for this long is stopped
    /// (`tools.shell.inactivityTimeout`, 300 s); `None` waits forever.
    pub inactivity_timeout: Option<std::time::Duration>,
    /// `security.environmentVariableRedaction`: variables commands do not
    /// inherit; `None` (the default) passes the environment on.
    pub redaction: Option<crate::env_redaction::EnvRedaction>,
    /// `security.toolSandboxing` / `security.sandbox`: the sandbox commands run in.
    pub sandbox: crate::sandbox::SandboxSettings,
}

/// Gemini CLI 0.61's `tools.shell.inactivityTimeout` default, in seconds.
pub const DEFAULT_INACTIVITY_TIMEOUT_SECS: u64 = 300;

impl Default for ShellSettings {
    fn default() -> Self {
        Self {
            pager: "cat".to_owned(),
            inactivity_timeout: Some(std::time::Duration::from_secs(
                DEFAULT_INACTIVITY_TIMEOUT_SECS,
            )),
            redaction: None,
            sandbox: crate::sandbox::SandboxSettings::default(),
        }
    }
}

/// A client plus the model to use for tool-internal requests.
#[derive(Debug, Clone)]
pub struct ModelAccess {
    pub client: GeminiClient,
    pub model: String,
    pub session_id: String,
}

/// Output limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// Tool output sent to the model is cut to this many characters (head and
    /// tail kept, the full text saved to a temp file).
    pub max_output_chars: usize,
}

/// Characters of tool output sent to the model unless
/// `tools.truncateToolOutputThreshold` says otherwise (0.61's default).
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 40_000;

impl ToolLimits {
    /// The limits of a session: `None` sends whole outputs.
    pub fn with_max_output(max_output_chars: Option<usize>) -> Self {
        Self {
            max_output_chars: max_output_chars.unwrap_or(usize::MAX),
        }
    }
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            // Gemini CLI 0.61's `tools.truncateToolOutputThreshold` default.
            max_output_chars: DEFAULT_MAX_OUTPUT_CHARS,
        }
    }
}
