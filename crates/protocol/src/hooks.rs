//! Hooks (Gemini CLI 0.61's `hooks` settings): programs run on agent
//! events that can block a tool call, rewrite it, or add context.
//!
//! The core runs them; a frontend is told each run as it happens
//! ([`crate::Event::HookRan`]), keyed by the tool call it affected when it
//! affected one, so the run can be marked on that call's card (or on the
//! turn), and can ask for the configured hooks with their last result
//! ([`crate::Op::ListHooks`] → [`crate::Event::Hooks`]).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The events a hook can be attached to, spelled as in `settings.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[ts(export)]
pub enum HookEventName {
    BeforeTool,
    AfterTool,
    BeforeAgent,
    AfterAgent,
    BeforeModel,
    AfterModel,
    BeforeToolSelection,
    SessionStart,
    SessionEnd,
    Notification,
    PreCompress,
}

/// Where a hook was configured (0.61's layers, highest precedence first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum HookSource {
    /// `<workspace>/.gemini/settings.json`; never run in an untrusted folder.
    Workspace,
    /// `~/.gemini/settings.json`.
    User,
    /// `/etc/gemini-cli/settings.json` (or the system settings override).
    System,
    /// An enabled extension's `hooks/hooks.json` ([`HookInfo::extension`]).
    Extension,
}

/// One configured hook, for the hooks view and `/hooks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct HookInfo {
    /// Stable within a session: source, event, group and position, so a
    /// run ([`HookRun::hook_id`]) can be matched to its row.
    pub id: String,
    pub event: HookEventName,
    /// The group's `matcher` (absent, `""` and `"*"` match everything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub matcher: Option<String>,
    /// The hook's `name`; absent when the settings give none (the command
    /// then names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[ts(type = "number")]
    pub timeout_ms: u64,
    /// The group runs its hooks one after another (`sequential: true`).
    pub sequential: bool,
    pub source: HookSource,
    /// The extension that contributed it (`source: extension`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub extension: Option<String>,
    /// `false` when `hooksConfig.disabled` names it, or hooks are turned
    /// off (`hooksConfig.enabled: false`), or its folder is untrusted.
    pub enabled: bool,
    /// Why it does not run, in words for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
    /// Its most recent run in this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_run: Option<HookRun>,
}

/// How one run of a hook ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum HookOutcome {
    /// Exit 0 (its JSON, if any, was applied).
    Success,
    /// It blocked the action: exit 2, or `decision: "deny"`/`"block"`, or
    /// `continue: false`.
    Blocked,
    /// Another exit code, or unreadable output: a warning, the action goes on.
    Warning,
    /// It ran past its `timeout`; its process group was killed. Counts as a
    /// failure (a warning): the action goes on.
    TimedOut,
    /// It could not be started.
    Failed,
}

/// One run of one hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct HookRun {
    /// [`HookInfo::id`] of the hook that ran.
    pub hook_id: String,
    pub event: HookEventName,
    /// The hook's name, or its command when it has none.
    pub label: String,
    pub outcome: HookOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exit_code: Option<i32>,
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// What it wrote (each capped; the cap is said in the text).
    pub stdout: String,
    pub stderr: String,
    /// `allow` / `deny` / `block` / `ask`, when its JSON said one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decision: Option<String>,
    /// The reason the model and the user are given (a block's reason, or
    /// `stopReason`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// `systemMessage`: shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub system_message: Option<String>,
    /// Context it added for the model (`hookSpecificOutput.additionalContext`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub additional_context: Option<String>,
    /// The tool call it ran for (BeforeTool, AfterTool, a ToolPermission
    /// Notification); absent for turn and session events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub call_id: Option<String>,
    /// The tool's name, for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_name: Option<String>,
}
