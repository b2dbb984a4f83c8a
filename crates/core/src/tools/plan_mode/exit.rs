//! `exit_plan_mode`: the model presents its plan file for approval. The
//! user approves it with the mode to execute in, or sends feedback and the
//! model keeps planning (0.61's `ExitPlanModeInvocation`). The answer
//! reaches the tool as [`APPROVAL_ARG`], set by the scheduler from
//! `Op::AnswerPlan` (the model's own arguments never carry it: the
//! scheduler drops one the model wrote); without one (a policy allowed the
//! call, as headless runs do) the plan counts as approved as in 0.61
//! (`default` interactively, `yolo` headless) but only up to the mode the
//! session had before it planned (issue 33: see [`without_the_user`]).

use gd_protocol::{ApprovalMode, ConfirmationDetails, PlanApproval};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::plan::{self, PlanMode};
use crate::tools::typed::Prepared;
use crate::tools::{ToolContext, ToolError, ToolErrorKind, ToolResult};

/// The argument the scheduler adds with the user's answer (never declared,
/// never recorded: the history keeps the model's own arguments).
pub const APPROVAL_ARG: &str = "__plan_approval";

#[derive(Debug, Deserialize)]
pub struct Params {
    plan_filename: String,
    #[serde(default, rename = "__plan_approval")]
    approval: Option<PlanApproval>,
}

pub struct ExitPlanMode {
    schema: Value,
}

impl ExitPlanMode {
    pub const NAME: &'static str = super::EXIT;

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "required": ["plan_filename"],
                "properties": {
                    "plan_filename": {
                        "type": "string",
                        "description": "The filename of the finalized plan (e.g., \"feature-x.md\"). Do not provide an absolute path."
                    }
                }
            }),
        }
    }
}

crate::tools::tool_info! {
    default ExitPlanMode,
    display: "Exit Plan Mode",
    kind: Other,
    description: "Finalizes the planning phase and transitions to implementation by presenting the plan for formal user approval. You MUST reach an informal agreement with the user in the chat regarding the proposed strategy BEFORE calling this tool. This tool MUST be used to exit Plan Mode before any source code edits can be performed.",
    fn describe_call(&self, args: &Value) -> String {
        let name = args.get("plan_filename").and_then(Value::as_str).unwrap_or("");
        format!("Requesting plan approval for: {name}")
    }
}

/// 0.61's answer when the plan is approved into `mode`.
fn approved(mode: ApprovalMode, path: &str) -> ToolResult {
    ToolResult::success(
        format!(
            "Plan approved. Switching to {}.\n\nThe approved implementation plan is stored at: {path}\nRead and follow the plan strictly during implementation.",
            super::mode_description(mode)
        ),
        format!("Plan approved: {path}"),
    )
}

/// The call ran without the user's answer (a policy allowed it: headless,
/// where nobody can be asked, or a rule). 0.61 then approves the plan into
/// `default` interactively and `yolo` headless; we do too, but never into
/// a mode more permissive than the one the session had before it planned
/// ([`PlanMode::prior`]): that would let a model, presenting any plan file
/// (even one the repository ships), lift its own permissions. Such an exit
/// is refused and the session returns to the prior mode (stays in plan
/// mode when it started there).
fn without_the_user(plan: &PlanMode, path: &str) -> Result<ToolResult, ToolError> {
    let wanted = if plan.interactive() {
        ApprovalMode::Default
    } else {
        ApprovalMode::Yolo
    };
    let prior = plan.prior();
    if plan::permissiveness(wanted) <= plan::permissiveness(prior) {
        plan.switch_to(wanted)
            .map_err(|message| ToolError::new(ToolErrorKind::Execution, message))?;
        return Ok(approved(wanted, path));
    }
    let who = if plan.interactive() {
        "The user did not approve this plan (a rule let exit_plan_mode run without asking)"
    } else {
        "Nobody can approve a plan in this non-interactive session"
    };
    let next = if prior == ApprovalMode::Plan {
        "The session started in Plan mode, so it stays in Plan mode: present the plan in your answer."
            .to_owned()
    } else {
        plan.switch_to(prior)
            .map_err(|message| ToolError::new(ToolErrorKind::Execution, message))?;
        format!(
            "The session returns to the mode it had before planning: {}. Tools that need a confirmation will not run without one.",
            super::mode_description(prior)
        )
    };
    Err(ToolError::new(
        ToolErrorKind::PermissionDenied,
        format!(
            "Plan not approved. {who}, and leaving Plan mode for {} would allow more than the session allowed before it planned. {next}\n\nThe plan is stored at: {path}",
            super::mode_description(wanted)
        ),
    ))
}

fn failed(message: String) -> ToolError {
    ToolError::new(ToolErrorKind::InvalidParams, message)
}

/// The plan file and its text, or why it cannot be presented (0.61's
/// `validatePlanPath` / `validatePlanContent`).
async fn read_plan(plan: &PlanMode, name: &str) -> Result<(std::path::PathBuf, String), ToolError> {
    if name.trim().is_empty() {
        return Err(failed("plan_filename is required.".to_owned()));
    }
    let path = plan.resolve(name).map_err(failed)?;
    let text = match tokio::fs::read(&path).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(failed(plan::file_not_found(name)));
        }
        Err(error) => return Err(failed(format!("Failed to read plan file: {error}"))),
    };
    if text.trim().is_empty() {
        return Err(failed(plan::FILE_EMPTY.to_owned()));
    }
    Ok((path, text))
}

impl crate::tools::TypedTool for ExitPlanMode {
    type Args = Params;

    async fn prepare(&self, args: Params, ctx: &ToolContext) -> Prepared {
        // Outside plan mode the policy refuses the call with 0.61's message.
        let Some(plan) = ctx.plan.as_ref().filter(|p| p.is_planning()) else {
            return Ok(None);
        };
        let (path, text) = read_plan(plan, &args.plan_filename).await?;
        Ok(Some(ConfirmationDetails::ExitPlanMode {
            title: "Plan Approval".to_owned(),
            plan_path: path.display().to_string(),
            plan: text,
        }))
    }

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let Some(plan) = ctx.plan.as_ref() else {
            return Err(ToolError::new(
                ToolErrorKind::Execution,
                "Plan mode is not available in this session.",
            ));
        };
        let (path, _) = read_plan(plan, &args.plan_filename).await?;
        let path = path.display().to_string();
        let Some(approval) = args.approval else {
            return without_the_user(plan, &path);
        };
        if approval.approved {
            // The user's answer: their click is their consent to the mode
            // they picked, even one above the mode before planning.
            let mode = approval.approval_mode.unwrap_or_default();
            if mode == ApprovalMode::Plan {
                return Err(ToolError::new(
                    ToolErrorKind::InvalidParams,
                    "Unexpected approval mode: plan",
                ));
            }
            plan.switch_to(mode)
                .map_err(|message| ToolError::new(ToolErrorKind::Execution, message))?;
            return Ok(approved(mode, &path));
        }
        match approval
            .feedback
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty())
        {
            Some(feedback) => Ok(ToolResult::success(
                format!(
                    "Plan rejected. User feedback: {feedback}\n\nThe plan is stored at: {path}\nRevise the plan based on the feedback."
                ),
                format!("Feedback: {feedback}"),
            )),
            None => Ok(ToolResult::success(
                format!(
                    "Plan rejected. No feedback provided.\n\nThe plan is stored at: {path}\nAsk the user for specific feedback on how to improve the plan."
                ),
                "Rejected (no feedback)",
            )),
        }
    }
}
