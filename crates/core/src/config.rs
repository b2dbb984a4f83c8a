//! What a session is configured with.

use std::path::PathBuf;

use gd_gemini::{GenerationConfig, ThinkingConfig};

pub use gd_protocol::ApprovalMode;

/// Which ignore files tools and the folder listing respect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileFiltering {
    pub respect_git_ignore: bool,
    pub respect_gemini_ignore: bool,
}

impl Default for FileFiltering {
    fn default() -> Self {
        Self {
            respect_git_ignore: true,
            respect_gemini_ignore: true,
        }
    }
}

/// Everything a session needs besides the model client and the tools.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub session_id: String,
    pub model: String,
    /// Workspace directories; the first is the primary one (the current
    /// directory of the CLI, the opened folder of the app).
    pub workspace_dirs: Vec<PathBuf>,
    /// Where the agent may keep temporary files for this project.
    pub temp_dir: PathBuf,
    pub approval_mode: ApprovalMode,
    /// `false` for the headless CLI: nobody can answer a confirmation, so
    /// tools that would need one are not offered to the model.
    pub interactive: bool,
    /// Model requests allowed in this session; `None` = unlimited.
    pub max_session_turns: Option<u32>,
    /// Fraction of the model's context window at which history is compressed.
    pub compression_threshold: f64,
    /// The system prompt without memory; the session appends the memory.
    pub system_prompt: String,
    /// Where to look for context files (`GEMINI.md`); `None` loads none.
    pub memory: Option<crate::memory::DiscoveryOptions>,
    pub file_filtering: FileFiltering,
    pub loop_detection: bool,
    /// Generation settings; `None` picks the defaults for the model.
    pub generation_config: Option<GenerationConfig>,
    /// Label of the frontend (`cli`, `desktop`), for ids and logs.
    pub surface: String,
    /// Checkpoints before edits (`general.checkpointing.enabled`); `None` = off.
    pub checkpointing: Option<gd_checkpoint::CheckpointConfig>,
    /// Whether the workspace is a trusted folder. Untrusted, its custom
    /// commands are not offered (its settings, `.env`, MCP servers and
    /// context files were already left out when the launch read them).
    pub workspace_trusted: bool,
    /// Where plan mode writes plans (`general.plan.directory`, inside the
    /// project); `None`: 0.61's `<temp dir>/<session id>/plans`.
    pub plans_dir: Option<PathBuf>,
    /// Characters of a tool's output sent to the model
    /// (`tools.truncateToolOutputThreshold`); `None` = no limit.
    pub tool_output_limit: Option<usize>,
    /// `tools.shell.*`: the pager and the inactivity timeout of commands.
    pub shell: crate::tools::ShellSettings,
    /// `context.includeDirectoryTree`: the first message lists the
    /// workspace folders and their files (on by default).
    pub include_directory_tree: bool,
    /// The agents `invoke_agent` can run (built-in, user, workspace), read
    /// at launch; empty: no subagents (`invoke_agent` is not declared).
    pub agents: std::sync::Arc<crate::subagents::AgentCatalog>,
    /// The agent skills (`activate_skill`), read at launch; their enabled
    /// and active state changes during the session.
    pub skills: std::sync::Arc<crate::skills::SkillCatalog>,
    /// The hooks (settings and enabled extensions), read at launch.
    pub hooks: crate::hooks::Hooks,
}

impl SessionConfig {
    /// A configuration with defaults for everything but the essentials.
    pub fn new(model: impl Into<String>, workspace: PathBuf, system_prompt: String) -> Self {
        let temp_dir = crate::context::project_temp_dir(&workspace);
        Self {
            session_id: uuid::Uuid::new_v4().to_string(),
            model: model.into(),
            workspace_dirs: vec![workspace],
            temp_dir,
            approval_mode: ApprovalMode::Default,
            interactive: false,
            max_session_turns: None,
            compression_threshold: crate::compression::DEFAULT_THRESHOLD,
            system_prompt,
            memory: None,
            file_filtering: FileFiltering::default(),
            loop_detection: true,
            generation_config: None,
            surface: "cli".into(),
            checkpointing: None,
            workspace_trusted: true,
            plans_dir: None,
            tool_output_limit: Some(crate::tools::ToolLimits::default().max_output_chars),
            shell: crate::tools::ShellSettings::default(),
            include_directory_tree: true,
            agents: Default::default(),
            skills: Default::default(),
            hooks: std::sync::Arc::new(gd_hooks::HookRegistry::empty()),
        }
    }

    pub fn primary_workspace(&self) -> &std::path::Path {
        &self.workspace_dirs[0]
    }

    /// The generation config to send: the explicit one, or the defaults for
    /// this model family (Gemini 3 takes a thinking level, 2.5 a budget).
    pub fn effective_generation_config(&self) -> GenerationConfig {
        if let Some(config) = &self.generation_config {
            return config.clone();
        }
        default_generation_config(&self.model)
    }

    /// The generation config for requests to `model` (a routed or
    /// fallback model): the explicit one, or that model's defaults.
    pub fn generation_config_for(&self, model: &str) -> GenerationConfig {
        self.generation_config
            .clone()
            .unwrap_or_else(|| default_generation_config(model))
    }
}

/// Sampling defaults per model family.
pub fn default_generation_config(model: &str) -> GenerationConfig {
    // Aliases (`auto`, `flash`, …) take the settings of the model they
    // stand for until a request is routed.
    let model = &gd_gemini::models::resolve_model(model);
    let thinking = if gd_gemini::models::is_gemini_3(model) {
        ThinkingConfig {
            include_thoughts: Some(true),
            thinking_budget: None,
            thinking_level: Some("HIGH".into()),
        }
    } else {
        ThinkingConfig {
            include_thoughts: Some(true),
            thinking_budget: Some(8192),
            thinking_level: None,
        }
    };
    let supports_thinking = model.contains("gemini-2.5") || model.contains("gemini-3");
    GenerationConfig {
        temperature: Some(1.0),
        top_p: Some(0.95),
        top_k: Some(64),
        thinking_config: supports_thinking.then_some(thinking),
        ..GenerationConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_mode_names() {
        assert_eq!(
            ApprovalMode::parse("auto-edit"),
            Some(ApprovalMode::AutoEdit)
        );
        assert_eq!(ApprovalMode::parse("YOLO"), Some(ApprovalMode::Yolo));
        assert_eq!(ApprovalMode::parse("plan"), Some(ApprovalMode::Plan));
    }

    #[test]
    fn thinking_defaults_per_family() {
        let g25 = default_generation_config("gemini-2.5-flash");
        assert_eq!(g25.thinking_config.unwrap().thinking_budget, Some(8192));
        let g3 = default_generation_config("gemini-3-pro-preview");
        assert_eq!(
            g3.thinking_config.unwrap().thinking_level.as_deref(),
            Some("HIGH")
        );
        assert!(
            default_generation_config("gemini-2.0-flash")
                .thinking_config
                .is_none()
        );
    }
}
