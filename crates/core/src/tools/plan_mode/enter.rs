//! `enter_plan_mode`: the model asks to plan first. Interactive sessions ask
//! the user (0.61's "Enter Plan Mode" dialog); headless ones allow it.

use gd_protocol::{ApprovalMode, ConfirmationDetails};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::tools::typed::Prepared;
use crate::tools::{ToolContext, ToolError, ToolErrorKind, ToolResult};

#[derive(Debug, Deserialize)]
pub struct Params {
    #[serde(default)]
    reason: Option<String>,
}

pub struct EnterPlanMode {
    schema: Value,
}

impl EnterPlanMode {
    pub const NAME: &'static str = super::ENTER;

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "reason": {
                        "type": "string",
                        "description": "Short reason explaining why you are entering plan mode."
                    }
                }
            }),
        }
    }
}

crate::tools::tool_info! {
    default EnterPlanMode,
    display: "Enter Plan Mode",
    kind: Other,
    description: "Switch to Plan Mode to safely research, design, and plan complex changes using read-only tools.",
    fn describe_call(&self, args: &Value) -> String {
        args.get("reason")
            .and_then(Value::as_str)
            .filter(|r| !r.trim().is_empty())
            .unwrap_or("Initiating Plan Mode")
            .to_owned()
    }
}

impl crate::tools::TypedTool for EnterPlanMode {
    type Args = Params;

    async fn prepare(&self, _args: Params, _ctx: &ToolContext) -> Prepared {
        Ok(Some(ConfirmationDetails::Info {
            title: "Enter Plan Mode".to_owned(),
            prompt: "This will restrict the agent to read-only tools to allow for safe planning."
                .to_owned(),
            urls: Vec::new(),
        }))
    }

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let Some(plan) = &ctx.plan else {
            return Err(ToolError::new(
                ToolErrorKind::Execution,
                "Plan mode is not available in this session.",
            ));
        };
        plan.switch_to(ApprovalMode::Plan)
            .map_err(|message| ToolError::new(ToolErrorKind::Execution, message))?;
        plan.ensure_dir();
        let reason = args.reason.filter(|r| !r.trim().is_empty());
        Ok(ToolResult::success(
            "Switching to Plan mode.",
            match reason {
                Some(reason) => format!("Switching to Plan mode: {reason}"),
                None => "Switching to Plan mode".to_owned(),
            },
        ))
    }
}
