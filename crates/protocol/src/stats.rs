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
}
