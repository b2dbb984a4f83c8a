//! Runs the tool calls of one model response and turns their results into
//! the `functionResponse` parts of the next user message.
//!
//! Each call moves through validating → scheduled → (awaiting_approval) →
//! executing → success / error / cancelled, and every move is an event.
//! Calls that cannot work (unknown tool, arguments not matching the schema,
//! a `replace` whose text is not in the file, a path outside the workspace)
//! and calls the policy denies go back to the model as `{"error": ...}`
//! responses so it can correct itself; they never reach the user.
//!
//! Approvals are asked one at a time, in call order. Then the calls run in
//! call order, with consecutive read-only calls running concurrently. An
//! edit the user approved is checked again just before it runs: if the file
//! changed on disk in between, the user is asked again with the new diff.
//! An approval may carry per-hunk decisions: the edit is narrowed to the
//! accepted hunks first and the model hears what was left out (`partial`).
//! In review mode ([`crate::review`]) edits are not asked: they are staged.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use gd_gemini::Part;
use gd_protocol::{
    ConfirmationDetails, ConfirmationOutcome, Event, McpToolRef, PlanApproval, ToolCallState,
    ToolCallStatus,
};
use serde_json::Value;
use tracing::{Instrument, info_span, warn};

use crate::approval::{Answer, ApprovalPolicy, Confirmations, Verdict};
use crate::chat::ToolCallRequest;
use crate::checkpoint::SessionCheckpoints;
use crate::events::EventSink;
use crate::tools::{LiveTools, OutputSink, Tool, ToolContext, ToolRegistry, ToolResult, schema};

mod complete;
mod decided;
mod hooked;
mod partial;
mod response;
mod sandboxed;
mod tail;

pub use response::{error_response, function_response_parts};

/// The message sent to the model for a call that was cancelled.
pub const CANCELLED_MESSAGE: &str = "[Operation Cancelled] Reason: User cancelled the operation.";
/// The message sent to the model for a call the user declined.
pub const DECLINED_MESSAGE: &str = "[Operation Cancelled] Reason: User did not allow tool call";
/// Appended to the result of a call whose proposal the user edited.
pub const MODIFIED_NOTE: &str = "The user modified the proposed change before it was applied; the result reflects the user's version.";

/// A finished call.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletedCall {
    pub request: ToolCallRequest,
    pub status: ToolCallStatus,
    /// `functionResponse` first, then any extra parts (e.g. `inlineData`).
    pub parts: Vec<Part>,
    pub display: Option<String>,
    pub error: Option<String>,
    pub duration: Duration,
    /// What people see of the result beyond `display` (see
    /// `Event::ToolCallResponse`): the full output, a command's exit code,
    /// whether the user declined the call, the diff an edit applied.
    pub shown: ShownResult,
    /// A hook answered `continue: false` for this call, with this reason.
    pub hook_stop: Option<String>,
    /// An AfterTool hook's `tailToolCallRequest`: run this in the call's
    /// place (see `tail`). Taken by the batch.
    pub tail_call: Option<ToolCallRequest>,
}

/// The parts of a finished call that only people see (the card).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShownResult {
    pub output: Option<String>,
    pub exit_code: Option<i32>,
    pub declined: bool,
    pub diff: Option<ConfirmationDetails>,
    /// An MCP tool's server and name, so a reopened card is titled as live.
    pub mcp: Option<McpToolRef>,
    /// What decided the call (policy rule, mode, "always allow", the user).
    pub decided_by: Option<gd_protocol::DecidedBy>,
    /// An `invoke_agent` call's subagent run, for the history.
    pub subagent: Option<Box<gd_protocol::SubagentTranscript>>,
    /// A command's sandbox: whether it ran in it, what it was granted.
    pub sandbox: Option<gd_protocol::SandboxUse>,
}

/// What a batch produced.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchOutcome {
    /// Results in call order.
    pub completed: Vec<CompletedCall>,
    /// The user declined a call: the results are recorded but the model is
    /// not asked to continue, so the user can say what to do instead.
    pub declined: bool,
}

impl BatchOutcome {
    /// A hook stopped the agent loop (`continue: false`), with its reason.
    pub fn stopped_by_hook(&self) -> Option<&str> {
        self.completed.iter().find_map(|c| c.hook_stop.as_deref())
    }
}

impl BatchOutcome {
    /// All `functionResponse` (and sibling) parts, in call order.
    pub fn parts(&self) -> Vec<Part> {
        self.completed
            .iter()
            .flat_map(|c| c.parts.iter().cloned())
            .collect()
    }
}

#[derive(Clone)]
pub struct Scheduler {
    tools: Arc<LiveTools>,
    policy: Arc<dyn ApprovalPolicy>,
    confirmations: Arc<Confirmations>,
    /// Snapshots the workspace before approved edits (when checkpointing is on).
    checkpoints: Option<Arc<SessionCheckpoints>>,
    /// What each applied edit wrote, for reverting it later.
    applied_edits: crate::revert::AppliedEdits,
}

/// Where a call stands between the phases of a batch.
enum Stage {
    /// Ready to run; `confirmed` when the user approved it explicitly.
    Approved {
        confirmed: bool,
    },
    NeedsApproval,
    /// Finished without running, with this result for the model (the user
    /// rejected every hunk of an edit).
    Answered(ToolResult),
    /// Finished without running: error for the model.
    Failed(String),
    Cancelled(&'static str),
}

struct Call {
    request: ToolCallRequest,
    tool: Option<Arc<dyn Tool>>,
    args: Value,
    details: Option<ConfirmationDetails>,
    stage: Stage,
    modified: bool,
    /// What the user's per-hunk decisions left of the proposal, told to the
    /// model after the tool's result (see `partial`).
    hunk_report: Option<String>,
    started: Instant,
    /// What decided the call so far (see `decided`).
    decided_by: Option<gd_protocol::DecidedBy>,
    /// What BeforeTool / AfterTool hooks did to it.
    hooks: hooked::CallHooks,
}

impl Scheduler {
    /// A scheduler for a fixed set of tools.
    pub fn new(
        registry: Arc<ToolRegistry>,
        policy: Arc<dyn ApprovalPolicy>,
        confirmations: Arc<Confirmations>,
    ) -> Self {
        let registry = Arc::try_unwrap(registry).unwrap_or_else(|shared| (*shared).clone());
        Self::with_tools(Arc::new(LiveTools::fixed(registry)), policy, confirmations)
    }

    /// A scheduler for tools that may change between batches (MCP).
    pub fn with_tools(
        tools: Arc<LiveTools>,
        policy: Arc<dyn ApprovalPolicy>,
        confirmations: Arc<Confirmations>,
    ) -> Self {
        Self {
            tools,
            policy,
            confirmations,
            checkpoints: None,
            applied_edits: Default::default(),
        }
    }

    /// Checkpoints the workspace before every approved `write_file` /
    /// `replace` runs.
    pub fn with_checkpoints(mut self, checkpoints: Option<Arc<SessionCheckpoints>>) -> Self {
        self.checkpoints = checkpoints;
        self
    }

    /// The edits applied in this session (see [`crate::revert`]).
    pub fn applied_edits(&self) -> &crate::revert::AppliedEdits {
        &self.applied_edits
    }

    pub fn checkpoints(&self) -> Option<&Arc<SessionCheckpoints>> {
        self.checkpoints.as_ref()
    }

    /// The policy deciding the calls (and holding the approval mode).
    pub(crate) fn policy(&self) -> &Arc<dyn ApprovalPolicy> {
        &self.policy
    }

    /// The same scheduler (policy, confirmations, checkpoints, applied
    /// edits) over a subagent's own fixed set of tools; the policy is told
    /// that `agent` makes the calls (rules with `subagent`).
    pub(crate) fn for_subagent(&self, registry: ToolRegistry, agent: &str) -> Self {
        Self {
            tools: Arc::new(LiveTools::fixed(registry)),
            policy: Arc::new(crate::subagents::approval::SubagentApproval::new(
                self.policy.clone(),
                agent,
            )),
            ..self.clone()
        }
    }

    /// The tools as of now.
    pub fn registry(&self) -> Arc<ToolRegistry> {
        self.tools.current()
    }

    pub fn tools(&self) -> &Arc<LiveTools> {
        &self.tools
    }

    /// Executes `calls` and returns their results in call order.
    pub async fn run(
        &self,
        calls: &[ToolCallRequest],
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> BatchOutcome {
        let registry = self.tools.current();
        for call in calls {
            announce(&registry, call, None, sink);
        }
        let mut batch = Vec::with_capacity(calls.len());
        for request in calls {
            batch.push(self.validate(&registry, request, ctx, sink).await);
        }
        let declined = self.ask_approvals(&mut batch, ctx, sink).await;
        let completed = self.execute_all(batch, ctx, sink).await;
        let (completed, tail_declined) = self.tail_calls(&registry, completed, ctx, sink).await;
        BatchOutcome {
            completed,
            declined: declined || tail_declined,
        }
    }

    /// Phase 1: look up, check the arguments, prepare, ask the policy.
    async fn validate(
        &self,
        registry: &ToolRegistry,
        request: &ToolCallRequest,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Call {
        let tool = registry.get(&request.name).cloned();
        let mut args = request.args.clone();
        // Only the scheduler writes the user's plan answer (`confirm`); one
        // the model put in its own arguments would be it approving its own
        // plan, into any mode it likes (issue 33).
        if let Value::Object(fields) = &mut args {
            fields.remove(crate::tools::plan_mode::APPROVAL_ARG);
        }
        let mut call = Call {
            request: request.clone(),
            tool: tool.clone(),
            args,
            details: None,
            stage: Stage::NeedsApproval,
            modified: false,
            hunk_report: None,
            started: Instant::now(),
            decided_by: None,
            hooks: Default::default(),
        };
        call.stage = 'stage: {
            if ctx.cancel.is_cancelled() {
                break 'stage Stage::Cancelled(CANCELLED_MESSAGE);
            }
            let Some(tool) = tool else {
                break 'stage Stage::Failed(registry.not_found_message(&request.name));
            };
            if let Err(problem) = schema::validate(&call.args, tool.parameter_schema()) {
                break 'stage Stage::Failed(format!(
                    "Invalid parameters for {}: {problem}",
                    request.name
                ));
            }
            if let Some(stage) = hooked::before(&mut call, tool.as_ref(), ctx, sink).await {
                break 'stage stage;
            }
            match tool.prepare(&call.args, ctx).await {
                Ok(details) => call.details = details,
                Err(error) => {
                    // 0.61 answers such a call with the preparation's error (a plan path
                    // out of the plans directory); when the policy refuses it anyway, the
                    // card says who refused it rather than showing a bare failure.
                    let (verdict, why) = self.policy.decide_why(tool.as_ref(), &call.args);
                    if matches!(verdict, Verdict::Deny(_)) {
                        decided::note(&mut call, why, sink);
                    }
                    break 'stage Stage::Failed(error.message);
                }
            }
            let (verdict, why) = self.policy.decide_why(tool.as_ref(), &call.args);
            decided::note(&mut call, why, sink);
            match verdict {
                // A BeforeTool hook asked for a confirmation.
                Verdict::Allow if call.hooks.ask => Stage::NeedsApproval,
                // Review mode: an edit the policy does not deny is staged,
                // not asked (the user reviews the whole turn at its end).
                Verdict::Allow | Verdict::Ask
                    if ctx.staging.is_some() && crate::review::stages(&request.name) =>
                {
                    decided::note(&mut call, Some(gd_protocol::DecidedBy::ReviewMode), sink);
                    Stage::Approved { confirmed: false }
                }
                Verdict::Allow => Stage::Approved { confirmed: false },
                Verdict::Ask => Stage::NeedsApproval,
                Verdict::Deny(message) => Stage::Failed(match message {
                    Some(m) => format!("Tool execution denied by policy. {m}"),
                    None => "Tool execution denied by policy.".to_owned(),
                }),
            }
        };
        if matches!(call.stage, Stage::Approved { .. }) {
            emit_state(sink, &request.call_id, ToolCallState::Scheduled);
        }
        call
    }

    /// Phase 2: ask the user, one call at a time, in call order. Returns
    /// whether the user declined a call.
    async fn ask_approvals(&self, batch: &mut [Call], ctx: &ToolContext, sink: &EventSink) -> bool {
        let mut declined = false;
        for call in batch.iter_mut() {
            if !matches!(call.stage, Stage::NeedsApproval) {
                continue;
            }
            let tool = call
                .tool
                .clone()
                .expect("calls needing approval have a tool");
            if declined {
                call.stage = Stage::Cancelled(DECLINED_MESSAGE);
                continue;
            }
            if ctx.cancel.is_cancelled() {
                call.stage = Stage::Cancelled(CANCELLED_MESSAGE);
                continue;
            }
            // An "always allow" given for an earlier call may cover this one.
            let (verdict, why) = self.policy.decide_why(tool.as_ref(), &call.args);
            if verdict == Verdict::Allow && !call.hooks.ask {
                decided::note(call, why, sink);
                call.stage = Stage::Approved { confirmed: false };
                emit_state(sink, &call.request.call_id, ToolCallState::Scheduled);
                continue;
            }
            call.stage = self.confirm(call, tool.as_ref(), ctx, sink).await;
            if matches!(call.stage, Stage::Cancelled(DECLINED_MESSAGE)) {
                declined = true;
            }
        }
        declined
    }

    /// Shows one confirmation and applies the answer.
    async fn confirm(
        &self,
        call: &mut Call,
        tool: &dyn Tool,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Stage {
        let details = call
            .details
            .clone()
            .unwrap_or_else(|| generic_details(tool, &call.args));
        crate::policy_editor::emit_saved_rule_preview(
            self.policy.as_ref(),
            tool,
            &call.request.call_id,
            &details,
            sink,
        );
        let Some(answer) = self.ask(&call.request, details.clone(), ctx, sink).await else {
            return Stage::Cancelled(CANCELLED_MESSAGE);
        };
        decided::note(call, Some(decided::by_user(&answer)), sink);
        // A plan approval: the tool hears the user's answer (approve with a
        // mode, or feedback) as an argument only it reads. A plain "Approve"
        // (`Op::ConfirmTool`, the approval inbox's button) is the user's
        // approval too, into `default` as that card says: without it the
        // tool would treat the call as unanswered (see `without_the_user`).
        if let ConfirmationDetails::ExitPlanMode { .. } = &details
            && answer.outcome != ConfirmationOutcome::Cancel
            && let Value::Object(args) = &mut call.args
            && let Ok(value) = serde_json::to_value(answer.plan.clone().unwrap_or(PlanApproval {
                approved: true,
                approval_mode: Some(gd_protocol::ApprovalMode::Default),
                feedback: None,
            }))
        {
            args.insert(crate::tools::plan_mode::APPROVAL_ARG.to_owned(), value);
        }
        match answer.outcome {
            ConfirmationOutcome::Cancel => Stage::Cancelled(DECLINED_MESSAGE),
            ConfirmationOutcome::ProceedOnce => {
                self.approve(call, tool, ctx, sink, answer.hunks.as_deref(), None)
                    .await
            }
            ConfirmationOutcome::ProceedAlways
            | ConfirmationOutcome::ProceedAlwaysAndSave
            | ConfirmationOutcome::ProceedAlwaysServer => {
                if let Err(error) =
                    self.policy
                        .remember(tool, &call.args, Some(&details), answer.outcome)
                {
                    warn!(%error, "could not remember the approval");
                    sink.emit(Event::Warning {
                        message: format!("Could not save the approval: {error}"),
                    });
                }
                self.approve(call, tool, ctx, sink, answer.hunks.as_deref(), None)
                    .await
            }
            ConfirmationOutcome::ModifyWithEditor => {
                let Some(content) = answer.content else {
                    return Stage::Failed(
                        "The user chose to modify the change but sent no content.".into(),
                    );
                };
                // What the user changed, worded before the call's details become theirs.
                let hand = partial::hand_edits(call, &content, ctx);
                let stage = if let Some(decisions) = answer.hunks.as_deref() {
                    self.approve(call, tool, ctx, sink, Some(decisions), Some(&content))
                        .await
                } else {
                    self.modified(call, tool, ctx, sink, &content).await
                };
                if matches!(stage, Stage::Approved { .. }) {
                    partial::add_report(call, hand);
                }
                stage
            }
        }
    }

    fn scheduled(&self, call: &Call, sink: &EventSink) -> Stage {
        emit_state(sink, &call.request.call_id, ToolCallState::Scheduled);
        Stage::Approved { confirmed: true }
    }

    /// Emits a confirmation request and waits for the answer (`None` when
    /// the turn was cancelled first).
    async fn ask(
        &self,
        request: &ToolCallRequest,
        details: ConfirmationDetails,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Option<Answer> {
        let answer = self.confirmations.register(&request.call_id);
        emit_state(sink, &request.call_id, ToolCallState::AwaitingApproval);
        hooked::notify(request, &details, ctx, sink).await;
        sink.emit(Event::ToolConfirmationRequest {
            call_id: request.call_id.clone(),
            name: request.name.clone(),
            details,
        });
        tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => {
                self.confirmations.withdraw(&request.call_id);
                None
            }
            answer = answer => answer.ok(),
        }
    }

    /// Phase 3: run what was approved, in call order; consecutive read-only
    /// calls run concurrently.
    async fn execute_all(
        &self,
        batch: Vec<Call>,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Vec<CompletedCall> {
        let mut completed = Vec::with_capacity(batch.len());
        let mut group: Vec<Call> = Vec::new();
        for call in batch {
            let concurrent = matches!(call.stage, Stage::Approved { .. })
                && call.tool.as_ref().is_some_and(|t| t.runs_concurrently())
                && call.args.get("wait_for_previous") != Some(&Value::Bool(true));
            if !concurrent && !group.is_empty() {
                completed.extend(
                    self.execute_group(std::mem::take(&mut group), ctx, sink)
                        .await,
                );
            }
            if concurrent {
                group.push(call);
            } else {
                completed.push(self.execute(call, ctx, sink).await);
            }
        }
        if !group.is_empty() {
            completed.extend(self.execute_group(group, ctx, sink).await);
        }
        completed
    }

    async fn execute_group(
        &self,
        group: Vec<Call>,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Vec<CompletedCall> {
        join_all(group.into_iter().map(|call| self.execute(call, ctx, sink))).await
    }

    async fn execute(&self, mut call: Call, ctx: &ToolContext, sink: &EventSink) -> CompletedCall {
        let span =
            info_span!("tool_call", name = %call.request.name, call_id = %call.request.call_id);
        let outcome = async {
            let confirmed = match call.stage {
                Stage::Approved { confirmed } => confirmed,
                Stage::Answered(ref result) => return Outcome::Ran(result.clone()),
                Stage::Failed(ref message) => return Outcome::Failed(message.clone()),
                Stage::Cancelled(message) => return Outcome::Cancelled(message),
                Stage::NeedsApproval => unreachable!("approvals are settled before execution"),
            };
            let tool = call.tool.clone().expect("approved calls have a tool");
            if confirmed
                && let Err(outcome) = self.recheck(&mut call, tool.as_ref(), ctx, sink).await
            {
                return outcome;
            }
            if ctx.cancel.is_cancelled() {
                return Outcome::Cancelled(CANCELLED_MESSAGE);
            }
            if ctx.staging.is_none() {
                // A staged edit writes nothing; the review checkpoints
                // before it writes.
                self.checkpoint(&call, sink).await;
            }
            emit_state(sink, &call.request.call_id, ToolCallState::Executing);
            let mut call_ctx = ctx.clone();
            call_ctx.output = Some(OutputSink::new(sink.clone(), call.request.call_id.clone()));
            call_ctx.confirmed = confirmed;
            self.run_approved(&call, tool.as_ref(), &mut call_ctx, sink)
                .await
        }
        .instrument(span)
        .await;
        let outcome = hooked::after(&mut call, outcome, ctx, sink).await;
        let completed = self.complete(&call, outcome, ctx);
        // A staged edit (review mode) wrote nothing: not revertable.
        if let Some(diff) = &completed.shown.diff
            && ctx.staging.is_none()
        {
            self.applied_edits.record(&call.request.call_id, diff);
        }
        emit_state(
            sink,
            &call.request.call_id,
            match completed.status {
                ToolCallStatus::Success => ToolCallState::Success,
                ToolCallStatus::Error => ToolCallState::Error,
                ToolCallStatus::Cancelled => ToolCallState::Cancelled,
            },
        );
        sink.emit(Event::ToolCallResponse {
            call_id: call.request.call_id.clone(),
            name: call.request.name.clone(),
            status: completed.status,
            display: completed.display.clone(),
            error: completed.error.clone(),
            duration_ms: completed.duration.as_millis() as u64,
            output: completed.shown.output.clone(),
            exit_code: completed.shown.exit_code,
            declined: completed.shown.declined,
            modified: call.modified,
            diff: completed.shown.diff.clone(),
            decided_by: completed.shown.decided_by.clone().map(Box::new),
            sandbox: completed.shown.sandbox.clone(),
        });
        completed
    }

    /// Right before an approved edit runs (after any confirmation and the
    /// re-check): snapshot the workspace, within the checkpoint time budget.
    /// A failed checkpoint is a warning; the edit still runs.
    async fn checkpoint(&self, call: &Call, sink: &EventSink) {
        let Some(checkpoints) = &self.checkpoints else {
            return;
        };
        if !SessionCheckpoints::covers(&call.request.name) {
            return;
        }
        let created = checkpoints
            .before_edit(&call.request.call_id, &call.request.name, &call.args)
            .await;
        match created {
            Some(Ok(checkpoint)) => sink.emit(Event::CheckpointCreated {
                call_id: call.request.call_id.clone(),
                checkpoint_id: checkpoint.id,
                scope: crate::checkpoint::scope(checkpoint.kind),
                files: checkpoint.meta.files,
            }),
            Some(Err(error)) => {
                warn!(%error, "checkpoint failed");
                sink.emit(Event::Warning {
                    message: format!("Could not save a checkpoint before this edit: {error}"),
                });
            }
            None => {}
        }
    }

    /// Before an approved edit runs: if what the user saw is no longer what
    /// is on disk, ask again with the current diff. Never overwrite silently.
    async fn recheck(
        &self,
        call: &mut Call,
        tool: &dyn Tool,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Result<(), Outcome> {
        loop {
            let Some(ConfirmationDetails::Edit { original: seen, .. }) = &call.details else {
                return Ok(());
            };
            let current = match tool.prepare(&call.args, ctx).await {
                Ok(details) => details,
                Err(error) => return Err(Outcome::Failed(error.message)),
            };
            let unchanged = matches!(&current, Some(ConfirmationDetails::Edit { original, .. }) if original == seen);
            if unchanged {
                return Ok(());
            }
            let Some(details) = current else {
                return Ok(());
            };
            sink.emit(Event::Warning {
                message: format!(
                    "{} changed on disk after you approved the change; please review it again.",
                    tool.describe_call(&call.args)
                ),
            });
            call.details = Some(details.clone());
            let Some(answer) = self.ask(&call.request, details, ctx, sink).await else {
                return Err(Outcome::Cancelled(CANCELLED_MESSAGE));
            };
            decided::note(call, Some(decided::by_user(&answer)), sink);
            match answer.outcome {
                ConfirmationOutcome::Cancel => return Err(Outcome::Cancelled(DECLINED_MESSAGE)),
                outcome if answer.hunks.is_some() => {
                    let edited = match outcome {
                        ConfirmationOutcome::ModifyWithEditor => answer.content.as_deref(),
                        _ => None,
                    };
                    let decisions = answer.hunks.as_deref().unwrap_or_default();
                    let hand = edited.and_then(|e| partial::hand_edits(call, e, ctx));
                    match partial::narrow(call, tool, ctx, decisions, edited).await {
                        Ok(None) => partial::add_report(call, hand),
                        Ok(Some(Stage::Answered(result))) => return Err(Outcome::Ran(result)),
                        Ok(Some(_)) => {}
                        Err(message) => return Err(Outcome::Failed(message)),
                    }
                }
                ConfirmationOutcome::ModifyWithEditor => {
                    let content = answer.content.unwrap_or_default();
                    let hand = partial::hand_edits(call, &content, ctx);
                    match tool.modified_args(&partial::resolved_args(call), &content) {
                        Some(args) => {
                            call.args = args;
                            call.modified = true;
                            call.details = tool
                                .prepare(&call.args, ctx)
                                .await
                                .map_err(|e| Outcome::Failed(e.message))?;
                            partial::add_report(call, hand);
                        }
                        None => {
                            return Err(Outcome::Failed(format!(
                                "The proposal of {} cannot be modified.",
                                tool.name()
                            )));
                        }
                    }
                }
                _ => {}
            }
            emit_state(sink, &call.request.call_id, ToolCallState::Scheduled);
        }
    }
}

/// Tells the frontend a call is coming (its card appears, validating).
/// `in_place_of`: a tail call's original call (see `tail`).
fn announce(
    registry: &ToolRegistry,
    call: &ToolCallRequest,
    in_place_of: Option<&str>,
    sink: &EventSink,
) {
    let mcp = registry.get(&call.name).and_then(|t| mcp_ref(t.as_ref()));
    sink.emit(Event::ToolCallRequest {
        call_id: call.call_id.clone(),
        name: call.name.clone(),
        args: call.args.clone(),
        mcp,
        in_place_of: in_place_of.map(str::to_owned),
    });
    emit_state(sink, &call.call_id, ToolCallState::Validating);
}

/// The server and tool an MCP tool's card is titled with ("tiny › add").
fn mcp_ref(tool: &dyn Tool) -> Option<McpToolRef> {
    Some(McpToolRef {
        server: tool.mcp_server()?.to_owned(),
        tool: tool.mcp_tool()?.to_owned(),
    })
}

enum Outcome {
    Ran(ToolResult),
    Failed(String),
    Cancelled(&'static str),
}

fn emit_state(sink: &EventSink, call_id: &str, state: ToolCallState) {
    sink.emit(Event::ToolCallState {
        call_id: call_id.to_owned(),
        state,
    });
}

/// The confirmation shown for a tool that has nothing specific to show.
fn generic_details(tool: &dyn Tool, args: &Value) -> ConfirmationDetails {
    ConfirmationDetails::Info {
        title: format!("Allow {}?", tool.display_name()),
        prompt: format!("{}: {}", tool.name(), tool.describe_call(args)),
        urls: Vec::new(),
    }
}
