//! The policy editor: the effective rules of a session, a dry run of the
//! policy on a call, and the rule "always allow and save" would write.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a rule comes from, which decides how much it weighs (Gemini
/// CLI's tiers). Only `user` and `workspace` rules can be edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum PolicyTier {
    Default,
    /// An enabled extension's `policies/` (only `ask_user`/`deny` rules).
    Extension,
    Workspace,
    User,
    Admin,
}

/// A rule's fields as the editor's form shows and sends them (the TOML
/// keys of a `[[rule]]`). The values are not checked here: the policy
/// loader says what is wrong, naming the line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PolicyRuleFields {
    /// `toolName`; empty: any tool.
    pub tool_names: Vec<String>,
    /// `mcpName`.
    pub mcp_name: Option<String>,
    /// `argsPattern`, a regex searched in the arguments' JSON.
    pub args_pattern: Option<String>,
    /// `commandPrefix` (shell commands).
    pub command_prefixes: Vec<String>,
    /// `commandRegex` (shell commands).
    pub command_regex: Option<String>,
    /// `allow`, `deny` or `ask_user`.
    pub decision: String,
    /// 0 to 999 within the tier.
    #[ts(type = "number")]
    pub priority: i64,
    /// `default`, `autoEdit`, `yolo`, `plan`; empty: every mode.
    pub modes: Vec<String>,
    /// `allowRedirection`.
    pub allow_redirection: bool,
    /// `deny_message`.
    pub deny_message: Option<String>,
}

/// One rule of the effective policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct EffectiveRule {
    pub tier: PolicyTier,
    /// Added in this session ("always allow"); gone when it ends unless it
    /// was also saved.
    pub session: bool,
    /// The file it was read from (`<built-in>/…` for the defaults,
    /// `<settings>/…` for rules derived from settings, `<session>` for
    /// this session's rules).
    pub path: String,
    /// The line of its `[[rule]]` header (0 when not in a file).
    pub line: u32,
    /// `tier base * 1000 + priority`: the higher wins.
    pub effective_priority: u32,
    /// A rule of a user or (trusted) workspace policy file: the editor
    /// may change or delete it.
    pub editable: bool,
    pub fields: PolicyRuleFields,
    /// Its TOML text.
    pub text: String,
}

/// The rule "always allow and save" would write for a pending
/// confirmation: the file and the exact TOML appended to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SavedRulePreview {
    pub path: String,
    pub text: String,
}

/// What the policy decided in a dry run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum DryRunDecision {
    Allow,
    Deny,
    AskUser,
}

/// A rule written by the editor (`policy_save_rule`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SavedPolicyRule {
    pub path: String,
    pub line: u32,
    pub text: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{Event, Op};

    /// The names the UI sends and reads (ui/src/lib/policies.svelte.ts).
    #[test]
    fn policy_ops_and_events_on_the_wire() {
        let op: Op = serde_json::from_value(json!({
            "type": "policy_dry_run",
            "tool": "run_shell_command",
            "args": {"command": "git push"},
            "approval_mode": "auto_edit"
        }))
        .unwrap();
        assert_eq!(
            op,
            Op::PolicyDryRun {
                tool: "run_shell_command".into(),
                args: json!({"command": "git push"}),
                mcp_server: None,
                approval_mode: Some(crate::ApprovalMode::AutoEdit),
            }
        );
        let op: Op = serde_json::from_value(json!({"type": "reload_policies"})).unwrap();
        assert_eq!(op, Op::ReloadPolicies);
        let event = Event::SavedRulePreview {
            call_id: "c1".into(),
            preview: super::SavedRulePreview {
                path: "/h/.gemini/policies/auto-saved.toml".into(),
                text: "[[rule]]\n".into(),
            },
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({
                "type": "saved_rule_preview",
                "call_id": "c1",
                "path": "/h/.gemini/policies/auto-saved.toml",
                "text": "[[rule]]\n"
            })
        );
    }
}
