//! `invoke_agent` (Gemini CLI 0.61's `AgentTool`): the model hands a task to
//! one of the session's agents. The call's result is the agent's answer;
//! its own stream reaches the frontend wrapped in `Event::Subagent`.
//!
//! Starting an agent is allowed by the default policy (`agents.toml`): each
//! of the agent's own calls goes through the policy and asks when a rule
//! says so. Calls run alongside the other concurrent calls of the same
//! response unless `wait_for_previous` is true (the scheduler's rule).

use serde::Deserialize;
use serde_json::{Value, json};

use crate::tools::{ToolContext, ToolError, ToolErrorKind, ToolResult, typed::Prepared};

/// The tool's name, as 0.61 declares it.
pub const NAME: &str = "invoke_agent";

/// The arguments of an `invoke_agent` call.
#[derive(Debug, Deserialize)]
pub struct Params {
    pub agent_name: String,
    pub prompt: String,
}

pub struct InvokeAgent {
    schema: Value,
}

impl InvokeAgent {
    pub const NAME: &'static str = NAME;

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "agent_name": {
                        "type": "string",
                        "description": "The name of the agent to run."
                    },
                    "prompt": {
                        "type": "string",
                        "description": "Everything the agent needs to know, in full: the task, its background and context, the questions to answer and the form the answer should take. The agent sees nothing else of this conversation."
                    },
                    "wait_for_previous": crate::tools::schema::wait_for_previous()
                },
                "required": ["agent_name", "prompt"]
            }),
        }
    }
}

crate::tools::tool_info! {
    default InvokeAgent,
    display: "Invoke Subagent",
    kind: Other,
    description: "Hands a task or an investigation to a specialised subagent.",
    fn describe_call(&self, args: &Value) -> String {
        match args.get("agent_name").and_then(Value::as_str) {
            Some(name) => format!("Delegating to agent '{name}'"),
            None => "Delegating to an agent".to_owned(),
        }
    }

    // Several agents may work at once (0.61 runs agent calls in parallel
    // unless `wait_for_previous` says otherwise).
    fn runs_concurrently(&self) -> bool {
        true
    }
}

impl crate::tools::TypedTool for InvokeAgent {
    type Args = Params;

    /// An agent that cannot run fails before anything is asked or sent.
    async fn prepare(&self, args: Params, ctx: &ToolContext) -> Prepared {
        let runtime = ctx.services.subagents.as_ref().ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::Execution,
                "Subagents are not available in this session.",
            )
        })?;
        runnable(&runtime.catalog, &args.agent_name)?;
        Ok(None)
    }

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let runtime = ctx.services.subagents.clone().ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::Execution,
                "Subagents are not available in this session.",
            )
        })?;
        let agent = runnable(&runtime.catalog, &args.agent_name)?.clone();
        Ok(super::runner::run(&runtime, &agent, &args.prompt, ctx).await)
    }
}

/// The agent `name`, if the model may run it; else an error that names the
/// agents it may run.
fn runnable<'a>(
    catalog: &'a super::AgentCatalog,
    name: &str,
) -> Result<&'a super::AgentDefinition, ToolError> {
    let known = || {
        let names: Vec<&str> = catalog.runnable().map(|a| a.name.as_str()).collect();
        if names.is_empty() {
            "No agent is available.".to_owned()
        } else {
            format!("Available agents: {}.", names.join(", "))
        }
    };
    let problem = match catalog.get(name) {
        None => format!("Subagent '{name}' not found. {}", known()),
        Some(agent) if agent.kind == gd_protocol::AgentKind::Remote => format!(
            "Subagent '{name}' is a remote (A2A) agent, which this app does not run yet. {}",
            known()
        ),
        Some(agent) if !agent.enabled => format!(
            "Subagent '{name}' is disabled (agents.overrides.{name}.enabled). {}",
            known()
        ),
        Some(agent) => return Ok(agent),
    };
    Err(ToolError::new(ToolErrorKind::InvalidParams, problem))
}

/// Adds `invoke_agent` after the built-in tools (0.61's declaration
/// order), unless `experimental.enableAgents` is false.
pub fn declare(tools: &mut crate::tools::ToolRegistry, settings: &gd_settings::Settings) {
    if settings.experimental.enable_agents != Some(false) {
        tools.register(std::sync::Arc::new(InvokeAgent::new()));
    }
}

/// Takes `invoke_agent` back out when no agent of the session can run
/// (all disabled): the model is not offered a tool that can only fail.
pub fn keep_if_runnable(tools: &mut crate::tools::ToolRegistry, catalog: &super::AgentCatalog) {
    if catalog.runnable().next().is_none() {
        tools.exclude(&[NAME.to_owned()]);
    }
}
