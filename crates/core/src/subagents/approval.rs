//! The policy as a subagent's scheduler sees it: the session's own (same
//! rules, same mode, same "always allow" answers), told which agent makes
//! each call, so rules with `subagent = "<name>"` (0.61's field) apply to
//! that agent's calls and to no one else's.

use std::sync::Arc;

use gd_protocol::{ApprovalMode, ConfirmationDetails, ConfirmationOutcome, DecidedBy};
use serde_json::Value;

use crate::approval::{ApprovalPolicy, ModeRefused, Verdict};
use crate::tools::Tool;

pub(crate) struct SubagentApproval {
    inner: Arc<dyn ApprovalPolicy>,
    agent: String,
}

impl SubagentApproval {
    pub(crate) fn new(inner: Arc<dyn ApprovalPolicy>, agent: &str) -> Self {
        Self {
            inner,
            agent: agent.to_owned(),
        }
    }
}

/// The rule `trust: true` on one of `agent`'s own MCP servers stands for:
/// that agent's calls of that server's tools are allowed, where the
/// session's trusted servers are (User tier, the same priority), so a
/// deny rule above it still wins. Added as a session rule when the
/// server starts.
pub(crate) fn trusted_server_rule(agent: &str, server: &str) -> gd_policy::Rule {
    let mut rule = gd_policy::Rule::any_tool(gd_policy::RuleDecision::Allow);
    rule.mcp_name = Some(server.to_owned());
    rule.subagent = Some(agent.to_owned());
    rule.tier = gd_policy::Tier::User;
    rule.priority = crate::policy::TRUSTED_MCP_SERVER_PRIORITY;
    rule.source = Some(gd_policy::RuleSource {
        path: format!("<agent {agent}>/mcp_servers.{server}.trust").into(),
        line: 0,
    });
    rule
}

impl ApprovalPolicy for SubagentApproval {
    fn decide(&self, tool: &dyn Tool, args: &Value) -> Verdict {
        self.decide_why(tool, args).0
    }

    fn decide_why(&self, tool: &dyn Tool, args: &Value) -> (Verdict, Option<DecidedBy>) {
        self.inner.decide_why_as(tool, args, Some(&self.agent))
    }

    /// A subagent this one started is `this/that`, as 0.61 names it.
    fn decide_why_as(
        &self,
        tool: &dyn Tool,
        args: &Value,
        subagent: Option<&str>,
    ) -> (Verdict, Option<DecidedBy>) {
        match subagent {
            Some(child) => {
                let path = format!("{}/{child}", self.agent);
                self.inner.decide_why_as(tool, args, Some(&path))
            }
            None => self.decide_why(tool, args),
        }
    }

    /// "Always allow" from a subagent's confirmation is the session's
    /// answer, as for any call (the rule it adds names no agent).
    fn remember(
        &self,
        tool: &dyn Tool,
        args: &Value,
        details: Option<&ConfirmationDetails>,
        outcome: ConfirmationOutcome,
    ) -> Result<(), String> {
        self.inner.remember(tool, args, details, outcome)
    }

    fn set_approval_mode(&self, mode: ApprovalMode) -> Result<(), ModeRefused> {
        self.inner.set_approval_mode(mode)
    }

    fn can_ask(&self) -> bool {
        self.inner.can_ask()
    }

    fn as_policy(&self) -> Option<&crate::policy::PolicyApproval> {
        self.inner.as_policy()
    }
}
