//! The scheduler's side of BeforeTool and AfterTool hooks (see
//! `crate::hooks::tool`): a call's hook state, from validation (before the
//! policy decides) to the result the model receives.

use crate::hooks::tool::{after_tool, before_tool, mcp_context, modified_note};
use crate::tools::{LlmContent, Tool, ToolContext, schema};

use super::response::append_note;
use super::{Call, Outcome, Stage};
use crate::events::EventSink;

/// What hooks did to one call.
#[derive(Debug, Default)]
pub(super) struct CallHooks {
    /// Argument keys a BeforeTool hook rewrote.
    modified: Vec<String>,
    /// A BeforeTool hook answered `ask`: confirm even if the policy allows.
    pub(super) ask: bool,
    /// AfterTool's `<hook_context>`, appended to the result.
    context: Option<String>,
    /// `continue: false` from either hook: the turn stops after the batch.
    pub(super) stop: Option<String>,
    /// AfterTool's `tailToolCallRequest` (see `super::tail`).
    pub(super) tail: Option<crate::chat::ToolCallRequest>,
}

/// BeforeTool for a call being validated; `Some(stage)` when a hook
/// settles it (blocked or stopped). Rewritten arguments replace the
/// model's before the policy sees them.
pub(super) async fn before(
    call: &mut Call,
    tool: &dyn Tool,
    ctx: &ToolContext,
    sink: &EventSink,
) -> Option<Stage> {
    let hooks = ctx.services.hooks.as_deref()?;
    let mcp = mcp_context(tool.mcp_server(), tool.mcp_tool());
    let out = before_tool(
        hooks,
        sink,
        &call.request.call_id,
        &call.request.name,
        &call.args,
        mcp,
    )
    .await;
    call.hooks.stop = out.stop;
    if let Some(message) = out.blocked {
        return Some(Stage::Failed(message));
    }
    if let Some(args) = out.args {
        if let Err(problem) = schema::validate(&args, tool.parameter_schema()) {
            return Some(Stage::Failed(format!(
                "Tool parameter modification by hook failed validation: {problem}"
            )));
        }
        call.args = args;
        call.hooks.modified = out.modified_keys;
    }
    call.hooks.ask = out.ask;
    None
}

/// AfterTool for a call that ran: may replace its result, add context, or
/// stop the turn.
pub(super) async fn after(
    call: &mut Call,
    outcome: Outcome,
    ctx: &ToolContext,
    sink: &EventSink,
) -> Outcome {
    let (Some(hooks), Outcome::Ran(result)) = (ctx.services.hooks.as_deref(), &outcome) else {
        return outcome;
    };
    let mcp = call
        .tool
        .as_deref()
        .and_then(|t| mcp_context(t.mcp_server(), t.mcp_tool()));
    let out = after_tool(
        hooks,
        sink,
        &call.request.call_id,
        &call.request.name,
        &call.args,
        result,
        mcp,
    )
    .await;
    if out.stop.is_some() {
        call.hooks.stop = out.stop;
    }
    call.hooks.context = out.context;
    call.hooks.tail = out.tail.map(|(name, args)| crate::chat::ToolCallRequest {
        call_id: call.request.call_id.clone(),
        name,
        args,
    });
    match out.replaced {
        Some(message) => Outcome::Failed(message),
        None => outcome,
    }
}

/// The notes hooks add to a successful result, in 0.61's order.
pub(super) fn notes(call: &Call, mut content: LlmContent) -> LlmContent {
    if !call.hooks.modified.is_empty() {
        content = append_note(content, &modified_note(&call.hooks.modified));
    }
    if let Some(context) = &call.hooks.context {
        content = append_note(content, context);
    }
    content
}

/// The Notification hook of a confirmation about to be shown (0.61's
/// `ToolPermission`): advisory, it cannot answer the confirmation.
pub(super) async fn notify(
    request: &crate::chat::ToolCallRequest,
    details: &gd_protocol::ConfirmationDetails,
    ctx: &ToolContext,
    sink: &EventSink,
) {
    use gd_protocol::ConfirmationDetails as D;
    let Some(hooks) = ctx.services.hooks.as_deref() else {
        return;
    };
    if !hooks.has(gd_hooks::HookEventName::Notification) {
        return;
    }
    let name = &request.name;
    let message = match details {
        D::Edit { .. } => format!("Tool {name} requires editing"),
        D::Execute { .. } => format!("Tool {name} requires execution"),
        D::Mcp { .. } => format!("Tool {name} requires MCP"),
        D::Info { .. } => format!("Tool {name} requires information"),
        _ => "Tool requires confirmation".to_owned(),
    };
    let mut details = serde_json::to_value(details).unwrap_or_default();
    if let Some(map) = details.as_object_mut() {
        map.insert("tool_name".into(), name.as_str().into());
    }
    crate::hooks::fire(
        hooks,
        sink,
        gd_hooks::HookEventName::Notification,
        Some("ToolPermission"),
        crate::hooks::fields([
            ("notification_type", "ToolPermission".into()),
            ("message", message.into()),
            ("details", details),
        ]),
        gd_hooks::registry::CallRef {
            call_id: Some(request.call_id.clone()),
            tool_name: Some(name.clone()),
        },
    )
    .await;
}
