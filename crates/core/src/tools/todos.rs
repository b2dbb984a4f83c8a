//! `write_todos`: the agent's plan for the session as a list of tasks with
//! statuses; the whole list is replaced on every call and returned.

use std::sync::Mutex;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolContext, ToolError, ToolErrorKind, ToolResult};

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Todo {
    pub description: String,
    pub status: String,
}

/// The arguments of a `write_todos` call: the whole new list.
#[derive(Debug, Deserialize)]
pub struct Params {
    todos: Vec<Todo>,
}

pub struct WriteTodos {
    schema: Value,
    todos: Mutex<Vec<Todo>>,
}

impl WriteTodos {
    pub const NAME: &'static str = "write_todos";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "description": "The complete, updated list of tasks (it replaces the previous list).",
                        "items": {
                            "type": "object",
                            "description": "One task.",
                            "properties": {
                                "description": {"type": "string", "description": "What the task is."},
                                "status": {
                                    "type": "string",
                                    "description": "Where the task stands.",
                                    "enum": ["pending", "in_progress", "completed", "cancelled", "blocked"]
                                }
                            },
                            "required": ["description", "status"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["todos"],
                "additionalProperties": false
            }),
            todos: Mutex::new(Vec::new()),
        }
    }

    /// The current list.
    pub fn todos(&self) -> Vec<Todo> {
        self.todos.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn render(todos: &[Todo]) -> String {
    todos
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}. [{}] {}", i + 1, t.status, t.description))
        .collect::<Vec<_>>()
        .join("\n")
}

crate::tools::tool_info! {
    default WriteTodos,
    display: "WriteTodos",
    kind: Think,
    description: "Records your plan for a multi-step task as a todo list and shows it to the user. Send the complete list each time; keep exactly one task in_progress while working, and update statuses as you go.",
}

impl crate::tools::TypedTool for WriteTodos {
    type Args = Params;

    async fn run(&self, args: Params, _ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let todos = args.todos;
        let invalid = |message| Err(ToolError::new(ToolErrorKind::InvalidParams, message));
        if todos.iter().any(|t| t.description.trim().is_empty()) {
            return invalid("Every todo needs a non-empty description.");
        }
        if todos.iter().filter(|t| t.status == "in_progress").count() > 1 {
            return invalid("Only one task can be \"in_progress\" at a time.");
        }
        let rendered = render(&todos);
        *self.todos.lock().unwrap_or_else(|e| e.into_inner()) = todos.clone();
        if todos.is_empty() {
            return Ok(ToolResult::success(
                "Successfully cleared the todo list.",
                "Todo list cleared.",
            ));
        }
        Ok(ToolResult::success(
            format!("Successfully updated the todo list. The current list is now:\n{rendered}"),
            rendered,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;

    #[tokio::test]
    async fn replaces_and_renders_the_list() {
        let tool = WriteTodos::new();
        let ctx = ToolContext::new(vec![std::env::temp_dir()]);
        let result = tool
            .execute(
                json!({"todos": [{"description": "Read code", "status": "completed"}, {"description": "Fix bug", "status": "in_progress"}]}),
                &ctx,
            )
            .await;
        assert_eq!(
            result.display,
            "1. [completed] Read code\n2. [in_progress] Fix bug"
        );
        assert_eq!(tool.todos().len(), 2);
        let two_active = tool
            .execute(
                json!({"todos": [{"description": "a", "status": "in_progress"}, {"description": "b", "status": "in_progress"}]}),
                &ctx,
            )
            .await;
        assert!(two_active.error.is_some());
        assert_eq!(
            tool.todos().len(),
            2,
            "a rejected list does not replace the current one"
        );
        let cleared = tool.execute(json!({"todos": []}), &ctx).await;
        assert_eq!(cleared.display, "Todo list cleared.");
    }
}
