//! The policy engine (`gd-policy`) as the scheduler's [`ApprovalPolicy`],
//! with the session's approval mode, which a frontend may change at runtime.

use std::path::PathBuf;
use std::sync::RwLock;

use gd_policy::{Decision, Mode, PolicyEngine, Rule, RuleDecision, Tier, ToolCall};
use gd_protocol::ConfirmationDetails;
use serde_json::Value;
use tracing::info;

use crate::approval::{ApprovalPolicy, Verdict};
use crate::config::ApprovalMode;
use crate::tools::Tool;

/// Priority of "always allow" rules within their tier: above every
/// workspace rule a project would usually ship, below the user's and
/// admin's own rules (higher tiers), so a user's `deny` still holds.
const SESSION_RULE_PRIORITY: u16 = 950;
/// Priority of rules saved with "always allow and save".
const SAVED_RULE_PRIORITY: u16 = 100;

pub struct PolicyApproval {
    engine: PolicyEngine,
    mode: RwLock<ApprovalMode>,
    interactive: bool,
    /// Where "always allow and save" writes (`~/.gemini/policies/auto-saved.toml`).
    saved_rules: Option<PathBuf>,
}

impl PolicyApproval {
    pub fn new(
        engine: PolicyEngine,
        mode: ApprovalMode,
        interactive: bool,
        saved_rules: Option<PathBuf>,
    ) -> Self {
        Self {
            engine,
            mode: RwLock::new(mode),
            interactive,
            saved_rules,
        }
    }

    pub fn engine(&self) -> &PolicyEngine {
        &self.engine
    }

    pub fn mode(&self) -> ApprovalMode {
        *self.mode.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Switches the approval mode for the following calls.
    pub fn set_mode(&self, mode: ApprovalMode) {
        *self.mode.write().unwrap_or_else(|e| e.into_inner()) = mode;
    }

    /// Whether a tool should be offered to the model at all in this mode.
    pub fn would_declare(&self, tool: &dyn Tool) -> bool {
        self.engine.would_declare(
            tool.name(),
            tool.mcp_server(),
            policy_mode(self.mode()),
            self.interactive,
        )
    }

    /// The rules "always allow" adds for a call like this one: the root
    /// commands of a shell command, the server of an MCP tool, else the tool.
    fn rules_for(tool: &dyn Tool, details: Option<&ConfirmationDetails>) -> Vec<Rule> {
        match details {
            Some(ConfirmationDetails::Execute { root_commands, .. })
                if !root_commands.is_empty() =>
            {
                root_commands
                    .iter()
                    .map(|root| Rule::for_command_prefix(root.clone(), RuleDecision::Allow))
                    .collect()
            }
            _ => {
                let mut rule = Rule::for_tool(tool.name(), RuleDecision::Allow);
                if let Some(server) = tool.mcp_server() {
                    rule.mcp_name = Some(server.to_owned());
                }
                vec![rule]
            }
        }
    }
}

/// Our approval modes as the policy engine names them.
pub fn policy_mode(mode: ApprovalMode) -> Mode {
    match mode {
        ApprovalMode::Default => Mode::Default,
        ApprovalMode::AutoEdit => Mode::AutoEdit,
        ApprovalMode::Yolo => Mode::Yolo,
    }
}

impl ApprovalPolicy for PolicyApproval {
    fn decide(&self, tool: &dyn Tool, args: &Value) -> Verdict {
        let call = ToolCall {
            name: tool.name(),
            args,
            mcp_server: tool.mcp_server(),
        };
        match self
            .engine
            .decide(&call, policy_mode(self.mode()), self.interactive)
        {
            Decision::Allow => Verdict::Allow,
            Decision::AskUser => Verdict::Ask,
            Decision::Deny { message } => Verdict::Deny(message),
        }
    }

    fn remember(
        &self,
        tool: &dyn Tool,
        _args: &Value,
        details: Option<&ConfirmationDetails>,
        save: bool,
    ) -> Result<(), String> {
        for mut rule in Self::rules_for(tool, details) {
            if save {
                let Some(file) = &self.saved_rules else {
                    return Err("no home directory to save policies in".into());
                };
                let mut saved = rule.clone();
                saved.tier = Tier::User;
                saved.priority = SAVED_RULE_PRIORITY;
                self.engine
                    .save_rule(&saved, file)
                    .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
                info!(file = %file.display(), tool = tool.name(), "saved an allow rule");
            }
            rule.tier = Tier::Workspace;
            rule.priority = SESSION_RULE_PRIORITY;
            self.engine.add_session_rule(rule);
        }
        Ok(())
    }
}
