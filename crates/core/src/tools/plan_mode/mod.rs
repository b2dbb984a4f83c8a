//! `enter_plan_mode` and `exit_plan_mode`, Gemini CLI 0.61's tools for plan
//! mode (see [`crate::plan`]). Their declarations are 0.61's word for word
//! (the model was trained on them); what they answer the model is 0.61's
//! text too.

mod enter;
mod exit;

pub use enter::EnterPlanMode;
pub use exit::{APPROVAL_ARG, ExitPlanMode};

/// The names, for the policy and the per-mode declarations.
pub const ENTER: &str = "enter_plan_mode";
pub const EXIT: &str = "exit_plan_mode";

/// Whether `name` is one of the plan-mode transition tools, which are
/// declared by mode (enter outside plan mode, exit inside it) rather than
/// once at launch.
pub fn is_transition(name: &str) -> bool {
    name == ENTER || name == EXIT
}

/// Whether the tool named `name` is offered to the model in `mode`
/// (0.61 hides `enter_plan_mode` while planning and `exit_plan_mode`
/// otherwise).
pub fn declared_in(name: &str, mode: gd_protocol::ApprovalMode) -> bool {
    let planning = mode == gd_protocol::ApprovalMode::Plan;
    match name {
        ENTER => !planning,
        EXIT => planning,
        _ => true,
    }
}

/// 0.61's `getApprovalModeDescription`.
pub fn mode_description(mode: gd_protocol::ApprovalMode) -> &'static str {
    use gd_protocol::ApprovalMode::*;
    match mode {
        AutoEdit => "Auto-Edit mode (edits will be applied automatically)",
        Default => "Default mode (edits will require confirmation)",
        Plan => "Plan mode (read-only planning)",
        Yolo => "YOLO mode (all tool calls auto-approved)",
    }
}
