//! MCP servers' tools as session tools: each tool of a connected server
//! (`mcp_<server>_<tool>`), plus `read_mcp_resource` / `list_mcp_resources`
//! while any server offers resources (from the moment it declares the
//! capability; using them waits for its resources/list).
//!
//! The servers themselves live in `gd-mcp`'s [`McpManager`]; [`McpTools`]
//! ties a manager to a session (see [`super::live::LiveTools`], which
//! rebuilds the declared tool set when the servers' tools change).

use std::sync::Arc;

use gd_mcp::content::{is_error, result_display, result_to_parts, tool_error_message};
use gd_mcp::{CallError, McpManager, McpTool};
use gd_protocol::ConfirmationDetails;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolErrorKind, ToolKind, ToolRegistry, ToolResult};

/// The title of an MCP tool's confirmation (Gemini CLI's).
pub const CONFIRM_TITLE: &str = "Confirm MCP Tool Execution";

/// Decides which tools the session declares (policy and `tools.exclude`).
pub type DeclareFilter = Arc<dyn Fn(&dyn Tool) -> bool + Send + Sync>;

/// A session's MCP servers and how their tools join the session's tools.
#[derive(Clone)]
pub struct McpTools {
    pub manager: McpManager,
    /// `tools.exclude` entries: an MCP tool is left out when its declared
    /// name or its own name is listed (as in Gemini CLI).
    pub exclude: Vec<String>,
    /// Tools this returns `false` for are not declared (the policy would
    /// never let them run here).
    pub declare: DeclareFilter,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("manager", &self.manager)
            .field("exclude", &self.exclude)
            .finish_non_exhaustive()
    }
}

impl McpTools {
    pub fn new(manager: McpManager) -> Self {
        Self {
            manager,
            exclude: Vec::new(),
            declare: Arc::new(|_| true),
        }
    }

    /// `base` plus the MCP tools of the moment: the resource tools after
    /// the built-in file and web tools (Gemini CLI's position), the
    /// servers' tools last, by server name.
    pub fn compose(&self, base: &ToolRegistry) -> ToolRegistry {
        let mut registry = base.clone();
        let manager = &self.manager;
        if manager.offers_resources() {
            let after = ["web_fetch", "write_file", "replace", "glob"]
                .iter()
                .find_map(|name| registry.position(name))
                .map_or(registry.len(), |i| i + 1);
            let resource_tools: [Arc<dyn Tool>; 2] = [
                Arc::new(ReadMcpResource::new(manager.clone())),
                Arc::new(ListMcpResources::new(manager.clone())),
            ];
            for (offset, tool) in resource_tools.into_iter().enumerate() {
                if (self.declare)(tool.as_ref()) && registry.get(tool.name()).is_none() {
                    registry.insert(after + offset, tool);
                }
            }
        }
        for info in manager.tools() {
            if self
                .exclude
                .iter()
                .any(|e| *e == info.declared_name || *e == info.name)
            {
                continue;
            }
            let tool = McpToolAdapter::new(info, manager.clone());
            if registry.get(&tool.info.declared_name).is_some() {
                tracing::warn!(
                    name = tool.info.declared_name,
                    "an MCP tool has the name of another tool; skipped"
                );
                continue;
            }
            if (self.declare)(&tool) {
                registry.register(Arc::new(tool));
            }
        }
        registry
    }
}

/// One tool of an MCP server.
pub struct McpToolAdapter {
    info: Arc<McpTool>,
    manager: McpManager,
    display_name: String,
}

impl McpToolAdapter {
    pub fn new(info: Arc<McpTool>, manager: McpManager) -> Self {
        let display_name = format!("{} ({} MCP Server)", info.name, info.server);
        Self {
            info,
            manager,
            display_name,
        }
    }

    pub fn info(&self) -> &McpTool {
        &self.info
    }
}

/// The arguments sent to the server: ours (`wait_for_previous`) removed.
fn server_args(args: &Value) -> Value {
    let mut args = args.clone();
    if let Value::Object(map) = &mut args {
        map.remove("wait_for_previous");
    }
    args
}

fn call_error(tool: &str, error: CallError) -> ToolError {
    match error {
        CallError::Cancelled => ToolError::new(
            ToolErrorKind::Cancelled,
            format!("MCP tool '{tool}' was cancelled."),
        ),
        CallError::Timeout(after) => ToolError::new(
            ToolErrorKind::Execution,
            format!(
                "MCP tool '{tool}' timed out after {} ms (the server's `timeout` setting).",
                after.as_millis()
            ),
        ),
        other => ToolError::new(
            ToolErrorKind::Execution,
            format!("MCP tool '{tool}' failed: {other}"),
        ),
    }
}

impl crate::tools::ToolInfo for McpToolAdapter {
    // The tool's name in the registry and to the model is the declared
    // `mcp_<server>_<tool>`, not the server's own name of it.
    #[allow(clippy::misnamed_getters)]
    fn name(&self) -> &str {
        &self.info.declared_name
    }

    fn display_name(&self) -> &str {
        &self.display_name
    }

    fn description(&self) -> &str {
        &self.info.description
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }

    fn parameter_schema(&self) -> &Value {
        &self.info.schema
    }

    fn describe_call(&self, args: &Value) -> String {
        server_args(args).to_string()
    }

    fn mcp_server(&self) -> Option<&str> {
        Some(&self.info.server)
    }

    fn mcp_tool(&self) -> Option<&str> {
        Some(&self.info.name)
    }

    fn runs_concurrently(&self) -> bool {
        true
    }
}

impl crate::tools::TypedTool for McpToolAdapter {
    /// Passed to the server as they are.
    type Args = Value;

    async fn prepare(&self, args: Value, _ctx: &ToolContext) -> crate::tools::typed::Prepared {
        Ok(Some(ConfirmationDetails::Mcp {
            title: CONFIRM_TITLE.into(),
            server_name: self.info.server.clone(),
            tool_name: self.info.name.clone(),
            tool_display_name: self.display_name.clone(),
            args: server_args(&args),
        }))
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let args = server_args(&args);
        let tool = &self.info.name;
        let result = self
            .manager
            .call_tool(&self.info.server, tool, args.clone(), &ctx.cancel)
            .await
            .map_err(|error| call_error(tool, error))?;
        if !is_error(&result) {
            return Ok(ToolResult::parts(
                result_to_parts(&result, tool),
                result_display(&result),
            ));
        }
        // The server's own error: the model reads it, people a summary.
        let message = tool_error_message(tool, &args, &result);
        Ok(ToolResult {
            llm_content: super::LlmContent::Text(message.clone()),
            display: format!("Error: MCP tool '{tool}' reported an error."),
            error: Some(ToolError::new(ToolErrorKind::Execution, message)),
            output: None,
            exit_code: None,
            sandbox: None,
        })
    }
}

/// The arguments of a `read_mcp_resource` call.
#[derive(Debug, Deserialize)]
pub struct ResourceArgs {
    #[serde(default)]
    uri: String,
}

/// `read_mcp_resource`: reads a resource a server lists.
pub struct ReadMcpResource {
    manager: McpManager,
    schema: Value,
}

impl ReadMcpResource {
    pub const NAME: &'static str = "read_mcp_resource";

    pub fn new(manager: McpManager) -> Self {
        Self {
            manager,
            schema: json!({
                "type": "object",
                "properties": {
                    "uri": {"description": "The resource's URI, as list_mcp_resources shows it.", "type": "string"},
                    "wait_for_previous": {"type": "boolean", "description": gd_mcp::names::WAIT_FOR_PREVIOUS_DESCRIPTION}
                },
                "required": ["uri"]
            }),
        }
    }

    /// The server and resource a URI refers to: an exact URI, or
    /// `server:uri` as `list_mcp_resources` prints it. Call after
    /// [`McpManager::wait_resources`] for the complete lists.
    fn find(&self, uri: &str) -> Option<gd_mcp::McpResource> {
        let resources = self.manager.resources();
        resources
            .iter()
            .find(|r| r.uri == uri)
            .or_else(|| {
                resources.iter().find(|r| {
                    uri.strip_prefix(r.server.as_str())
                        .and_then(|rest| rest.strip_prefix(':'))
                        == Some(r.uri.as_str())
                })
            })
            .cloned()
    }
}

crate::tools::tool_info! {
    ReadMcpResource,
    display: "Read MCP Resource",
    kind: Read,
    description: "Reads one resource of a connected MCP server by its URI.",
    fn describe_call(&self, args: &Value) -> String {
        let uri = args.get("uri").and_then(Value::as_str).unwrap_or("");
        match self.find(uri) {
            Some(r) => format!(
                "Read MCP resource \"{}\" from server \"{}\"",
                r.name, r.server
            ),
            None => format!("Read MCP resource: {uri}"),
        }
    }
}

impl crate::tools::TypedTool for ReadMcpResource {
    type Args = ResourceArgs;

    async fn run(&self, args: ResourceArgs, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let uri = args.uri.as_str();
        if uri.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::InvalidParams,
                "No URI provided.",
            ));
        }
        if self.manager.wait_resources(&ctx.cancel).await.is_err() {
            return Err(ToolError::new(
                ToolErrorKind::Cancelled,
                "Reading the resource was cancelled.",
            ));
        }
        let Some(resource) = self.find(uri) else {
            return Err(ToolError::new(
                ToolErrorKind::NotFound,
                format!("Resource not found for URI: {uri}"),
            ));
        };
        match self
            .manager
            .read_resource(&resource.server, &resource.uri, &ctx.cancel)
            .await
        {
            Ok(result) => {
                let mut text = String::new();
                for content in result
                    .get("contents")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(t) = content
                        .get("text")
                        .and_then(Value::as_str)
                        .filter(|t| !t.is_empty())
                    {
                        text.push_str(t);
                        text.push('\n');
                    } else if content.get("blob").is_some() {
                        let mime = content
                            .get("mimeType")
                            .and_then(Value::as_str)
                            .unwrap_or("unknown type");
                        text.push_str(&format!("[Binary Data ({mime})]\n"));
                    }
                }
                if text.is_empty() {
                    text = "No content returned from resource.".into();
                }
                Ok(ToolResult::success(
                    text,
                    format!(
                        "Successfully read resource \"{}\" from server \"{}\"",
                        resource.name, resource.server
                    ),
                ))
            }
            Err(CallError::Cancelled) => Err(ToolError::new(
                ToolErrorKind::Cancelled,
                "Reading the resource was cancelled.",
            )),
            Err(e) => Err(ToolError::new(
                ToolErrorKind::Execution,
                format!("Failed to read resource: {e}"),
            )),
        }
    }
}

/// The arguments of a `list_mcp_resources` call.
#[derive(Debug, Deserialize)]
pub struct ListArgs {
    #[serde(default, rename = "serverName")]
    server_name: Option<String>,
}

/// `list_mcp_resources`: the resources connected servers list.
pub struct ListMcpResources {
    manager: McpManager,
    schema: Value,
}

impl ListMcpResources {
    pub const NAME: &'static str = "list_mcp_resources";

    pub fn new(manager: McpManager) -> Self {
        Self {
            manager,
            schema: json!({
                "type": "object",
                "properties": {
                    "serverName": {"description": "Only list the resources of this MCP server.", "type": "string"},
                    "wait_for_previous": {"type": "boolean", "description": gd_mcp::names::WAIT_FOR_PREVIOUS_DESCRIPTION}
                },
                "required": []
            }),
        }
    }
}

crate::tools::tool_info! {
    ListMcpResources,
    display: "List MCP Resources",
    kind: Search,
    description: "Lists the resources that connected MCP servers offer, with their URIs.",
    fn describe_call(&self, _args: &Value) -> String {
        "List MCP resources".into()
    }
}

impl crate::tools::TypedTool for ListMcpResources {
    type Args = ListArgs;

    async fn run(&self, args: ListArgs, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        if self.manager.wait_resources(&ctx.cancel).await.is_err() {
            return Err(ToolError::new(
                ToolErrorKind::Cancelled,
                "Listing the resources was cancelled.",
            ));
        }
        let server = args.server_name.as_deref().filter(|s| !s.is_empty());
        let resources: Vec<_> = self
            .manager
            .resources()
            .into_iter()
            .filter(|r| server.is_none_or(|s| r.server == s))
            .collect();
        if resources.is_empty() {
            let message = match server {
                Some(s) => format!("No resources found for server: {s}"),
                None => "No MCP resources found.".into(),
            };
            return Ok(ToolResult::success(message.clone(), message));
        }
        let mut text = "Available MCP Resources:\n".to_owned();
        for r in &resources {
            text.push_str(&format!("- {}:{}", r.server, r.uri));
            if !r.name.is_empty() {
                text.push_str(&format!(" | {}", r.name));
            }
            if let Some(d) = r.description.as_deref().filter(|d| !d.is_empty()) {
                text.push_str(&format!(" | {d}"));
            }
            text.push('\n');
        }
        Ok(ToolResult::success(
            text,
            format!("Listed {} resources.", resources.len()),
        ))
    }
}
