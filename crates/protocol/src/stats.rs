//! Session statistics (`/stats`): what a session used so far, per model and
//! per tool, in the categories Gemini CLI's `/stats` shows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What a session used since it started or was last cleared.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SessionStats {
    /// The id the conversation is recorded under (changes with `/clear`).
    pub session_id: String,
    /// When the statistics started (session start or `/clear`), Unix ms.
    #[ts(type = "number")]
    pub started_ms: u64,
    /// Wall time since then.
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// User turns (prompts, commands and MCP prompts sent to the model).
    pub turns: u32,
    /// Time spent waiting for model responses.
    #[ts(type = "number")]
    pub api_time_ms: u64,
    /// Time tools spent running.
    #[ts(type = "number")]
    pub tool_time_ms: u64,
    /// Per model, in the order they were first used.
    pub models: Vec<ModelStats>,
    pub tools: ToolStats,
    /// Lines the agent's edits added and removed (Gemini CLI's `files`).
    #[serde(default)]
    pub files: FileStats,
    /// Each turn's status and usage, oldest first (the usage panel's rows):
    /// a reopened conversation's stored turns, then this session's.
    #[serde(default)]
    pub turn_rows: Vec<crate::TurnRow>,
}

/// Lines changed by the session's edits, counted from each applied edit's
/// diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct FileStats {
    pub lines_added: u32,
    pub lines_removed: u32,
}

/// What a model request was for: Gemini CLI 0.61's `LlmRole` names, which
/// its `/stats` and json `stats.models.*.roles` group requests by.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize, TS,
)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum RequestRole {
    /// The agent's own turn (the conversation with the user).
    #[default]
    Main,
    Subagent,
    UtilityTool,
    UtilityCompressor,
    UtilitySummarizer,
    UtilityRouter,
    UtilityLoopDetector,
    UtilityNextSpeaker,
    UtilityEditCorrector,
    UtilityAutocomplete,
    UtilityFastAckHelper,
    UtilityStateSnapshotProcessor,
}

impl RequestRole {
    /// The wire name (`main`, `utility_router`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Subagent => "subagent",
            Self::UtilityTool => "utility_tool",
            Self::UtilityCompressor => "utility_compressor",
            Self::UtilitySummarizer => "utility_summarizer",
            Self::UtilityRouter => "utility_router",
            Self::UtilityLoopDetector => "utility_loop_detector",
            Self::UtilityNextSpeaker => "utility_next_speaker",
            Self::UtilityEditCorrector => "utility_edit_corrector",
            Self::UtilityAutocomplete => "utility_autocomplete",
            Self::UtilityFastAckHelper => "utility_fast_ack_helper",
            Self::UtilityStateSnapshotProcessor => "utility_state_snapshot_processor",
        }
    }
}

/// Requests and tokens of one model for one [`RequestRole`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct RoleStats {
    pub role: RequestRole,
    pub requests: u32,
    pub errors: u32,
    #[ts(type = "number")]
    pub latency_ms: u64,
    #[ts(type = "number")]
    pub prompt_tokens: u64,
    #[ts(type = "number")]
    pub cached_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub thoughts_tokens: u64,
    #[ts(type = "number")]
    pub tool_tokens: u64,
    #[ts(type = "number")]
    pub total_tokens: u64,
}

/// Requests and tokens of one model.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ModelStats {
    pub model: String,
    pub requests: u32,
    /// Failed requests (including ones retried).
    pub errors: u32,
    /// `errors` by kind: the HTTP status, or the retry's reason (at most
    /// 80 characters), as Gemini CLI's `errorsByType`.
    pub errors_by_type: BTreeMap<String, u32>,
    #[ts(type = "number")]
    pub latency_ms: u64,
    /// Prompt tokens, cached ones included (`promptTokenCount`).
    #[ts(type = "number")]
    pub prompt_tokens: u64,
    /// Prompt tokens that were read from the cache.
    #[ts(type = "number")]
    pub cached_tokens: u64,
    /// Answer tokens (`candidatesTokenCount`).
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub thoughts_tokens: u64,
    /// Prompt tokens of tool-use (`toolUsePromptTokenCount`).
    #[ts(type = "number")]
    pub tool_tokens: u64,
    #[ts(type = "number")]
    pub total_tokens: u64,
    /// The same figures by request role (`main` first, then as first used).
    #[serde(default)]
    pub roles: Vec<RoleStats>,
}

/// Tool calls of the session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolStats {
    pub calls: u32,
    pub success: u32,
    /// Calls that failed or were cancelled.
    pub failed: u32,
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// How the calls that needed approval were decided.
    pub decisions: ToolDecisions,
    /// Per tool name, most used first.
    pub by_name: Vec<ToolNameStats>,
}

/// The user's answers to tool confirmations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolDecisions {
    /// Approved when asked.
    pub accept: u32,
    /// Declined when asked.
    pub reject: u32,
    /// Approved with the user's own edit.
    pub modify: u32,
    /// Run without asking (policy, trusted server, approval mode).
    pub auto_accept: u32,
}

/// Calls of one tool.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolNameStats {
    pub name: String,
    pub calls: u32,
    pub success: u32,
    pub failed: u32,
    /// Of the failed calls, the ones cancelled (declined or stopped).
    pub cancelled: u32,
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// How this tool's calls were decided.
    #[serde(default)]
    pub decisions: ToolDecisions,
}
