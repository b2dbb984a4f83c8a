//! Subagents and agent skills (Gemini CLI 0.61's `invoke_agent` and
//! `activate_skill`): what a frontend is told about them.
//!
//! A subagent runs its own turn loop inside the session. Its stream reaches
//! the frontend wrapped in [`crate::Event::Subagent`], between
//! [`crate::Event::SubagentStarted`] and [`crate::Event::SubagentFinished`],
//! all keyed by the parent's `invoke_agent` call, so a frontend can nest it
//! under that call's card. Its tool calls have their own call ids and are
//! confirmed with the ordinary `Op::ConfirmTool`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where an agent or a skill was read from (Gemini CLI 0.61's tiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum DefinitionSource {
    /// Shipped with the app.
    BuiltIn,
    /// The user's folder (`~/.gemini/agents`, `~/.gemini/skills`,
    /// `~/.agents/skills`).
    User,
    /// The workspace's folder (`.gemini/agents`, `.gemini/skills`,
    /// `.agents/skills`); never read in an untrusted folder.
    Workspace,
    /// An installed extension.
    Extension,
}

/// One agent `invoke_agent` can run, for `/agents` and
/// `gemini-desktop-cli agents list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AgentInfo {
    /// The name the model passes as `agent_name` (and `@name` in a prompt).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub display_name: Option<String>,
    pub description: String,
    /// `local`, or `remote` (A2A: recognised, not run).
    pub kind: AgentKind,
    pub source: DefinitionSource,
    /// The definition file, absolute (absent for built-in agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    /// The model the agent's requests go to (`inherit`: the session's).
    pub model: String,
    /// The tools it may call, as its definition names them (wildcards
    /// kept); absent means the parent session's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tools: Option<Vec<String>>,
    pub max_turns: u32,
    pub timeout_mins: u32,
    /// `false` when `agents.overrides.<name>.enabled` is false (or the
    /// agent cannot run here, such as a remote agent).
    pub enabled: bool,
    /// Why it is disabled or cannot run, in words for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

/// An agent definition's `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum AgentKind {
    Local,
    Remote,
}

/// A definition file that could not be read, with where and why
/// (`path:line: message`), so the user can fix it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct DefinitionError {
    pub path: String,
    /// 1-based; absent when the error is not tied to a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub line: Option<u32>,
    pub message: String,
}

/// How a subagent's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum SubagentStatus {
    /// It answered; the answer went to the parent as the call's result.
    Completed,
    /// The user stopped it (or the parent's turn).
    Cancelled,
    /// It ran out of turns (`max_turns`).
    TurnLimit,
    /// It ran out of time (`timeout_mins`).
    Timeout,
    /// An error ended it (the model request failed, …).
    Failed,
}

/// One agent skill (a `SKILL.md` folder), for `/skills` and
/// `gemini-desktop-cli skills list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SkillInfo {
    pub name: String,
    pub description: String,
    pub source: DefinitionSource,
    /// The skill's folder, absolute (absent for built-in skills).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub location: Option<String>,
    /// `false` when listed in `skills.disabled` (or `skills.enabled` is
    /// false): it is then not declared to the model.
    pub enabled: bool,
    /// Activated in this session (its instructions are in the context).
    #[serde(default)]
    pub active: bool,
    /// When another tier's skill of the same name hides this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub shadowed_by: Option<DefinitionSource>,
}

/// A subagent's run as the history keeps it, on the parent's `invoke_agent`
/// tool call (so a reopened conversation shows the nested card as it was
/// live): its own events, in order, as they were sent (text deltas joined).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SubagentTranscript {
    pub agent_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub display_name: Option<String>,
    pub model: String,
    pub prompt: String,
    pub status: SubagentStatus,
    pub usage: crate::TurnUsage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
    /// The subagent's own events (what `Event::Subagent` carried).
    pub events: Vec<crate::Event>,
}
