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

    fn as_policy(&self) -> Option<&crate::policy::PolicyApproval> {
        self.inner.as_policy()
    }
}
