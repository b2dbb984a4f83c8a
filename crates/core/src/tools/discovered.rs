//! Tools discovered from the user's own commands (Gemini CLI's
//! `tools.discoveryCommand` / `tools.callCommand` settings): the discovery
//! command prints function declarations as JSON; each call runs
//! `<callCommand> <tool name>` with the arguments as JSON on stdin.

use std::process::Stdio;
use std::time::Duration;

use gd_gemini::FunctionDeclaration;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tracing::warn;

use super::{ToolContext, ToolError, ToolErrorKind, ToolKind, ToolResult};

/// Prefix of the names discovered tools are declared under, so they cannot
/// shadow built-in tools.
pub const DISCOVERED_TOOL_PREFIX: &str = "discovered_tool_";
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct DiscoveredTool {
    /// The name the model uses.
    name: String,
    /// The name the call command receives.
    original_name: String,
    description: String,
    schema: Value,
    call_command: String,
}

/// Runs `discovery_command` (through `bash -c`) in `cwd` and builds the
/// tools it declares. Output may be an array of declarations or of
/// `{"functionDeclarations": [...]}` objects.
pub fn discover(
    discovery_command: &str,
    call_command: &str,
    cwd: &std::path::Path,
) -> Result<Vec<DiscoveredTool>, String> {
    let mut child = std::process::Command::new("bash")
        .arg("-c")
        .arg(discovery_command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run the tool discovery command: {e}"))?;
    let deadline = std::time::Instant::now() + DISCOVERY_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() >= deadline => {
                let _ = child.kill();
                return Err(format!(
                    "the tool discovery command did not finish within {DISCOVERY_TIMEOUT:?}"
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "the tool discovery command failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let value: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("the tool discovery command did not print JSON: {e}"))?;
    let items = value.as_array().cloned().unwrap_or_else(|| vec![value]);
    let mut declarations = Vec::new();
    for item in items {
        match item.get("functionDeclarations").and_then(Value::as_array) {
            Some(list) => declarations.extend(list.iter().cloned()),
            None => declarations.push(item),
        }
    }
    let mut tools = Vec::new();
    for declaration in declarations {
        match serde_json::from_value::<FunctionDeclaration>(declaration) {
            Ok(d) if !d.name.trim().is_empty() => tools.push(DiscoveredTool::new(d, call_command)),
            Ok(_) => warn!("a discovered tool has no name; skipped"),
            Err(e) => warn!(%e, "a discovered tool declaration is invalid; skipped"),
        }
    }
    Ok(tools)
}

impl DiscoveredTool {
    fn new(declaration: FunctionDeclaration, call_command: &str) -> Self {
        let safe: String = declaration
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let schema = declaration
            .parameters_json_schema
            .or(declaration.parameters)
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
        Self {
            name: format!("{DISCOVERED_TOOL_PREFIX}{safe}"),
            original_name: declaration.name,
            description: declaration.description.unwrap_or_default(),
            schema,
            call_command: call_command.to_owned(),
        }
    }
}

impl crate::tools::ToolInfo for DiscoveredTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn display_name(&self) -> &str {
        &self.original_name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }

    fn parameter_schema(&self) -> &Value {
        &self.schema
    }

    fn describe_call(&self, args: &Value) -> String {
        format!("{} {}", self.original_name, args)
    }
}

impl crate::tools::TypedTool for DiscoveredTool {
    /// Written to the command's stdin as they are.
    type Args = Value;

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let mut child = match tokio::process::Command::new("bash")
            .arg("-c")
            .arg(format!("{} \"$0\"", self.call_command))
            .arg(&self.original_name)
            .current_dir(ctx.primary_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
        {
            Ok(child) => child,
            Err(e) => {
                return Err(ToolError::new(
                    ToolErrorKind::Execution,
                    format!("Cannot run the tool call command: {e}"),
                ));
            }
        };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(args.to_string().as_bytes()).await;
        }
        let output = match child.wait_with_output().await {
            Ok(output) => output,
            Err(e) => return Err(ToolError::new(ToolErrorKind::Execution, e.to_string())),
        };
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if output.status.success() && stderr.trim().is_empty() {
            return Ok(ToolResult::success(stdout.clone(), stdout));
        }
        let mut text = format!(
            "Stdout: {}\nStderr: {}",
            or_empty(&stdout),
            or_empty(&stderr)
        );
        if let Some(code) = output.status.code() {
            text.push_str(&format!("\nExit Code: {code}"));
        }
        if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&output.status) {
            text.push_str(&format!("\nSignal: {signal}"));
        }
        if output.status.success() {
            Ok(ToolResult::success(text.clone(), text))
        } else {
            Err(ToolError::new(ToolErrorKind::Execution, text))
        }
    }
}

fn or_empty(text: &str) -> &str {
    if text.trim().is_empty() {
        "(empty)"
    } else {
        text.trim_end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Tool, ToolInfo};
    use serde_json::json;

    #[tokio::test]
    async fn discovers_and_calls_user_tools() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::write(
            ws.join("discover.sh"),
            r#"echo '[{"functionDeclarations": [{"name": "add numbers", "description": "adds", "parametersJsonSchema": {"type": "object", "properties": {"a": {"type": "integer"}}}}]}, {"name": "fail"}]'"#,
        )
        .unwrap();
        std::fs::write(
            ws.join("call.sh"),
            "read args; if [ \"$1\" = fail ]; then echo oops >&2; exit 3; fi; echo \"called $1 with $args\"",
        )
        .unwrap();
        let tools = discover("bash discover.sh", "bash call.sh", ws).unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            vec!["discovered_tool_add_numbers", "discovered_tool_fail"]
        );
        let ctx = ToolContext::new(vec![ws.to_path_buf()]);
        let ok = tools[0].execute(json!({"a": 1}), &ctx).await;
        assert_eq!(ok.display, "called add numbers with {\"a\":1}\n");
        let failed = tools[1].execute(json!({}), &ctx).await;
        let error = failed.error.unwrap();
        assert!(
            error.message.contains("Stderr: oops") && error.message.contains("Exit Code: 3"),
            "{}",
            error.message
        );
        assert!(
            discover("echo not json", "x", ws)
                .unwrap_err()
                .contains("JSON")
        );
        assert!(discover("exit 2", "x", ws).unwrap_err().contains("failed"));
    }
}
