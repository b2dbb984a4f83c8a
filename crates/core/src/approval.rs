//! How the scheduler learns whether a call may run, and how the user's
//! answers reach a waiting turn.
//!
//! The decision itself belongs to the policy engine (`gd-policy`), adapted
//! to [`ApprovalPolicy`]; keeping the trait here lets the scheduler be
//! tested with simple policies and lets frontends swap the engine's mode at
//! runtime without the scheduler knowing.

use std::collections::HashMap;
use std::sync::Mutex;

use gd_protocol::{ApprovalMode, ConfirmationDetails, ConfirmationOutcome, DecidedBy};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::tools::Tool;

/// What the policy says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refused; the optional message is told to the model.
    Deny(Option<String>),
    /// The user must confirm. Policies of non-interactive sessions never
    /// answer this (they deny instead).
    Ask,
}

/// The policy as the scheduler sees it.
pub trait ApprovalPolicy: Send + Sync {
    fn decide(&self, tool: &dyn Tool, args: &Value) -> Verdict;

    /// The verdict and what made it, for the tool card's "decided by"
    /// line. Policies that cannot say (tests, the allow-all policy) answer
    /// `None` and the card shows nothing.
    fn decide_why(&self, tool: &dyn Tool, args: &Value) -> (Verdict, Option<DecidedBy>) {
        (self.decide(tool, args), None)
    }

    /// [`Self::decide_why`] for a call a subagent makes (`subagent`: its
    /// name, `parent/child` when nested), so that rules written for that
    /// agent (`subagent = "…"`, 0.61) can match. Policies without rules do
    /// not care who asks.
    fn decide_why_as(
        &self,
        tool: &dyn Tool,
        args: &Value,
        subagent: Option<&str>,
    ) -> (Verdict, Option<DecidedBy>) {
        let _ = subagent;
        self.decide_why(tool, args)
    }

    /// The user chose an "always allow" outcome for a call like this one:
    /// `ProceedAlways` (similar calls, for the rest of the session),
    /// `ProceedAlwaysAndSave` (also in the user's policy files) or
    /// `ProceedAlwaysServer` (every tool of the call's MCP server).
    /// Policies that keep nothing (tests, the allow-all policy) ignore it:
    /// forgetting only means the user is asked again, never that more is
    /// allowed.
    fn remember(
        &self,
        tool: &dyn Tool,
        args: &Value,
        details: Option<&ConfirmationDetails>,
        outcome: ConfirmationOutcome,
    ) -> Result<(), String> {
        let _ = (tool, args, details, outcome);
        Ok(())
    }

    /// Whether a question can reach someone (false in headless runs: their policy turns every
    /// ask into a denial). Questions the policy does not make itself (the sandbox's "allow this
    /// command the network?") are answered no without asking when this is false.
    fn can_ask(&self) -> bool {
        true
    }

    /// Switches the approval mode for the following decisions
    /// (`Op::OverrideTurnContext`). Policies without modes (tests, the
    /// allow-all policy) decide the same way in every mode, so they accept
    /// any.
    fn set_approval_mode(&self, mode: ApprovalMode) -> Result<(), ModeRefused> {
        let _ = mode;
        Ok(())
    }

    /// The policy engine behind this policy, for the policy editor's
    /// operations (list, reload, dry run); `None` for policies without
    /// rules (tests, the allow-all policy).
    fn as_policy(&self) -> Option<&crate::policy::PolicyApproval> {
        None
    }
}

/// Why a policy refused an approval mode (e.g. a privileged one in an
/// untrusted folder); the message is for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ModeRefused(pub String);

/// A policy that allows every call (tests, and callers without policies).
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

impl ApprovalPolicy for AllowAll {
    fn decide(&self, _tool: &dyn Tool, _args: &Value) -> Verdict {
        Verdict::Allow
    }
}

/// The user's answer to one confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub outcome: ConfirmationOutcome,
    /// Edited content, with `ModifyWithEditor`.
    pub content: Option<String>,
    /// Per-hunk decisions on an edit (see `Op::ConfirmTool`).
    pub hunks: Option<Vec<gd_protocol::HunkDecision>>,
    /// The answer to a plan approval (`Op::AnswerPlan`).
    pub plan: Option<gd_protocol::PlanApproval>,
}

/// Confirmations waiting for an answer, by call id. Shared between the
/// session handle (which receives `Op::ConfirmTool` at any time) and the
/// scheduler (which waits).
#[derive(Debug, Default)]
pub struct Confirmations {
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
}

impl Confirmations {
    /// Registers a pending confirmation and returns where its answer arrives.
    pub fn register(&self, call_id: &str) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(call_id.to_owned(), tx);
        rx
    }

    /// Whether a confirmation waits for this call.
    pub fn is_waiting(&self, call_id: &str) -> bool {
        self.lock().contains_key(call_id)
    }

    /// Delivers an answer; `false` when no confirmation waits for this call.
    pub fn answer(&self, call_id: &str, answer: Answer) -> bool {
        match self.lock().remove(call_id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    /// Forgets a confirmation nobody answered (the turn was cancelled).
    pub fn withdraw(&self, call_id: &str) {
        self.lock().remove(call_id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Answer>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}
