//! BeforeTool and AfterTool: what the scheduler does with their answers.
//!
//! BeforeTool fires while a call is validated, before the policy decides
//! (as in 0.61's scheduler): arguments a hook rewrites are what the policy
//! then judges and the user then approves, so a rewrite can never slip past
//! an approval. A hook's `ask` forces a confirmation even where the policy
//! would allow; it cannot turn a `deny` into anything else.

use gd_hooks::registry::CallRef;
use gd_hooks::{Fired, HookEventName, HookRegistry};
use serde_json::{Value, json};

use super::{fields, fire};
use crate::events::EventSink;
use crate::tools::ToolResult;

/// What BeforeTool decided for one call.
#[derive(Debug, Default)]
pub struct BeforeTool {
    /// Run it with these arguments (the model's, with a hook's changes).
    pub args: Option<Value>,
    /// The argument keys a hook changed (told to the model afterwards).
    pub modified_keys: Vec<String>,
    /// A hook asked for a confirmation.
    pub ask: bool,
    /// Not run: the error the model receives.
    pub blocked: Option<String>,
    /// `continue: false`: the turn stops after this batch, with this reason.
    pub stop: Option<String>,
}

/// The `mcp_context` of an MCP tool's input.
pub fn mcp_context(server: Option<&str>, tool: Option<&str>) -> Option<Value> {
    Some(json!({ "server_name": server?, "tool_name": tool? }))
}

pub async fn before_tool(
    hooks: &HookRegistry,
    sink: &EventSink,
    call_id: &str,
    name: &str,
    args: &Value,
    mcp: Option<Value>,
) -> BeforeTool {
    if !hooks.has(HookEventName::BeforeTool) {
        return BeforeTool::default();
    }
    let mut input = fields([("tool_name", name.into()), ("tool_input", args.clone())]);
    if let Some(mcp) = mcp {
        input.insert("mcp_context".into(), mcp);
    }
    let fired = fire(
        hooks,
        sink,
        HookEventName::BeforeTool,
        Some(name),
        input,
        call_ref(call_id, name),
    )
    .await;
    let mut out = BeforeTool::default();
    if let Some(reason) = fired.stopped() {
        out.blocked = Some(format!("Agent execution stopped by hook: {reason}"));
        out.stop = Some(reason);
        return out;
    }
    if let Some(reason) = fired.blocked() {
        out.blocked = Some(format!("Tool execution blocked: {reason}"));
        return out;
    }
    let merged = fired.merged.as_ref();
    out.ask = merged.is_some_and(|m| m.is_ask());
    if let (Some(Value::Object(changes)), Value::Object(original)) =
        (merged.and_then(|m| m.specific("tool_input")), args)
        && !changes.is_empty()
    {
        let mut new = original.clone();
        for (k, v) in changes {
            new.insert(k.clone(), v.clone());
        }
        out.modified_keys = changes.keys().cloned().collect();
        out.args = Some(Value::Object(new));
    }
    out
}

/// The note 0.61 appends to a result whose arguments a hook changed.
pub fn modified_note(keys: &[String]) -> String {
    format!(
        "[System] Tool input parameters ({}) were modified by a hook before execution.",
        keys.join(", ")
    )
}

/// What AfterTool decided about one result.
#[derive(Debug, Default)]
pub struct AfterTool {
    /// Replace the result with this error for the model.
    pub replaced: Option<String>,
    /// Append `<hook_context>…</hook_context>` to the result.
    pub context: Option<String>,
    /// `continue: false`.
    pub stop: Option<String>,
    /// `tailToolCallRequest`: the tool (name, arguments) to run in this
    /// call's place.
    pub tail: Option<(String, Value)>,
}

pub async fn after_tool(
    hooks: &HookRegistry,
    sink: &EventSink,
    call_id: &str,
    name: &str,
    args: &Value,
    result: &ToolResult,
    mcp: Option<Value>,
) -> AfterTool {
    if !hooks.has(HookEventName::AfterTool) {
        return AfterTool::default();
    }
    let mut response = json!({
        "llmContent": result.llm_content.text(),
        "returnDisplay": result.display,
    });
    if let Some(error) = &result.error {
        response["error"] = json!({ "message": error.message });
    }
    let mut input = fields([
        ("tool_name", name.into()),
        ("tool_input", args.clone()),
        ("tool_response", response),
    ]);
    if let Some(mcp) = mcp {
        input.insert("mcp_context".into(), mcp);
    }
    let fired: Fired = fire(
        hooks,
        sink,
        HookEventName::AfterTool,
        Some(name),
        input,
        call_ref(call_id, name),
    )
    .await;
    let mut out = AfterTool::default();
    if let Some(reason) = fired.stopped() {
        out.replaced = Some(format!("Agent execution stopped by hook: {reason}"));
        out.stop = Some(reason);
    } else if let Some(reason) = fired.blocked() {
        out.replaced = Some(format!("Tool result blocked: {reason}"));
    } else {
        out.context = fired
            .additional_context()
            .map(|c| format!("<hook_context>{c}</hook_context>"));
        out.tail = fired
            .merged
            .as_ref()
            .and_then(|m| m.specific("tailToolCallRequest"))
            .and_then(tail_request);
    }
    out
}

/// A `tailToolCallRequest` object: a tool name and its arguments (an
/// object; absent means none).
fn tail_request(value: &Value) -> Option<(String, Value)> {
    let name = value.get("name")?.as_str()?.to_owned();
    let args = match value.get("args") {
        None | Some(Value::Null) => json!({}),
        Some(args @ Value::Object(_)) => args.clone(),
        Some(_) => return None,
    };
    Some((name, args))
}

fn call_ref(call_id: &str, name: &str) -> CallRef {
    CallRef {
        call_id: Some(call_id.to_owned()),
        tool_name: Some(name.to_owned()),
    }
}
