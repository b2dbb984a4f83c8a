//! What decided a tool call: a policy rule, the approval mode, this
//! session's "always allow", the user's click, or no rule at all. Every tool
//! card shows it ("Why was this allowed?").

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What the policy made of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum PolicyOutcome {
    Allow,
    Ask,
    Deny,
}

/// A policy rule as people need to see it: where it is and what it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PolicyRuleInfo {
    /// `default`, `workspace`, `user` or `admin`.
    pub tier: String,
    /// The `priority` written in the rule.
    pub priority: u16,
    /// `tier base * 1000 + priority`, what the engine compares.
    pub effective_priority: u32,
    /// The rule's own decision: `allow`, `ask_user` or `deny`.
    pub decision: String,
    /// The modes it applies in (`default`, `autoEdit`, `yolo`, `plan`);
    /// empty means all.
    pub modes: Vec<String>,
    /// The policy file (`<built-in>/…` for the defaults), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    /// The line of its `[[rule]]` header in `path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub line: Option<u32>,
    /// The `[[rule]]` table as written (or rendered, for rules without a
    /// file).
    pub text: String,
    /// Where the rule comes from, in words ("default policy (yolo.toml)",
    /// "settings.json mcp.allowed", "this session's Always allow", a path).
    pub origin: String,
    /// For a shell command decided command by command: the command whose
    /// rule decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub command: Option<String>,
}

/// The user's answer that decided a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum UserDecision {
    ProceedOnce,
    /// "Always allow" (this session; for MCP also "the whole server").
    Always,
    /// "Always allow and save" (also written to the user's policy file).
    AlwaysAndSave,
    /// Approved with the user's own edit of the proposal.
    Modified,
    /// Approved with some hunks rejected.
    PartialHunks,
    Rejected,
}

/// What decided a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum DecidedBy {
    /// A rule of a policy file (or a settings-derived or built-in rule
    /// that is not a mode's). `downgrade` says why the outcome is stricter
    /// than the rule (a redirection, an unprovable shell command).
    Policy {
        outcome: PolicyOutcome,
        rule: PolicyRuleInfo,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        downgrade: Option<String>,
    },
    /// A built-in rule of an approval mode (yolo, autoEdit, plan).
    ApprovalMode {
        outcome: PolicyOutcome,
        /// `yolo`, `autoEdit` or `plan`.
        mode: String,
        rule: PolicyRuleInfo,
    },
    /// An "always allow" the user gave earlier in this session.
    SessionAllow { rule: PolicyRuleInfo },
    /// The user's click on the confirmation.
    User { outcome: UserDecision },
    /// No rule matched (the default is to ask; a non-interactive session
    /// denies instead). `reason` says why when a downgrade applied.
    Default {
        outcome: PolicyOutcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
    /// "Review at end of turn": the edit was staged without asking (the
    /// policy did not deny it); the user decides at the end-of-turn review.
    ReviewMode,
}
