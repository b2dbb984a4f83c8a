//! `save_memory`: remembers a fact across sessions by appending it under
//! `## Gemini Added Memories` in the user's global `~/.gemini/GEMINI.md`
//! (the same file and section Gemini CLI uses, so both share memories).

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolContext, ToolError, ToolErrorKind, ToolResult};

pub const MEMORY_SECTION: &str = "## Gemini Added Memories";
/// Internal argument carrying content the user edited in the confirmation.
const MODIFIED_CONTENT: &str = "__modified_content";

/// The arguments of a `save_memory` call.
#[derive(Debug, Deserialize)]
pub struct Params {
    fact: String,
    /// What the user made of the proposal in the confirmation.
    #[serde(default, rename = "__modified_content")]
    modified_content: Option<String>,
}

pub struct SaveMemory {
    schema: Value,
}

impl SaveMemory {
    pub const NAME: &'static str = "save_memory";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "fact": {
                        "type": "string",
                        "description": "One clear, self-contained statement to remember across sessions."
                    }
                },
                "required": ["fact"]
            }),
        }
    }

    fn memory_file(ctx: &ToolContext) -> Result<PathBuf, ToolError> {
        ctx.services
            .home
            .as_ref()
            .map(|home| home.join(".gemini").join("GEMINI.md"))
            .ok_or_else(|| {
                ToolError::new(
                    ToolErrorKind::Execution,
                    "Cannot find the home directory to save the memory.",
                )
            })
    }

    fn plan(
        args: &Params,
        ctx: &ToolContext,
    ) -> Result<(PathBuf, Option<String>, String, String), ToolError> {
        let fact = normalise_fact(&args.fact);
        if fact.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::InvalidParams,
                "The 'fact' must not be empty.",
            ));
        }
        let path = Self::memory_file(ctx)?;
        let original = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(ToolError::new(
                    ToolErrorKind::Io,
                    format!("Cannot read {}: {e}", path.display()),
                ));
            }
        };
        let proposed = match &args.modified_content {
            Some(content) => content.clone(),
            None => add_memory(original.as_deref().unwrap_or(""), &fact),
        };
        Ok((path, original, proposed, fact))
    }
}

/// One line, without a leading list marker.
pub fn normalise_fact(fact: &str) -> String {
    let one_line = fact.split_whitespace().collect::<Vec<_>>().join(" ");
    one_line
        .trim_start_matches(['-', '*', ' '])
        .trim()
        .to_owned()
}

/// Adds `- fact` at the end of the memories section, creating the section
/// at the end of the file when it does not exist.
pub fn add_memory(content: &str, fact: &str) -> String {
    let entry = format!("- {fact}");
    let Some(start) = content.find(MEMORY_SECTION) else {
        let mut out = content.trim_end().to_owned();
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&format!("{MEMORY_SECTION}\n{entry}\n"));
        return out;
    };
    let body_start = start + MEMORY_SECTION.len();
    let section_end = content[body_start..]
        .find("\n## ")
        .map(|i| body_start + i + 1)
        .unwrap_or(content.len());
    let section = content[..section_end].trim_end();
    let rest = &content[section_end..];
    let mut out = format!("{section}\n{entry}\n");
    if !rest.is_empty() {
        out.push('\n');
        out.push_str(rest);
    }
    out
}

crate::tools::tool_info! {
    default SaveMemory,
    display: "SaveMemory",
    kind: Edit,
    description: "Saves a short fact about the user or their preferences to long-term memory (~/.gemini/GEMINI.md), so it is known in future sessions. Use it only when the user asks you to remember something or states a lasting preference; not for project-specific or temporary details.",
    fn describe_call(&self, args: &Value) -> String {
        format!(
            "Remember: {}",
            normalise_fact(args["fact"].as_str().unwrap_or_default())
        )
    }

    fn modified_args(&self, args: &Value, content: &str) -> Option<Value> {
        let mut args = args.clone();
        args[MODIFIED_CONTENT] = Value::String(content.to_owned());
        Some(args)
    }
}

impl crate::tools::TypedTool for SaveMemory {
    type Args = Params;

    async fn prepare(&self, args: Params, ctx: &ToolContext) -> crate::tools::typed::Prepared {
        let (path, original, proposed, _) = Self::plan(&args, ctx)?;
        Ok(Some(super::fs_write::edit_confirmation(
            ctx,
            "Save to memory".into(),
            &path,
            original.as_deref(),
            &proposed,
        )))
    }

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let (path, _, proposed, fact) = Self::plan(&args, ctx)?;
        if let Err(e) = super::fs_write::write_atomic(&path, proposed.as_bytes()) {
            let message = json!({"success": false, "error": format!("Failed to save the memory to {}: {e}", path.display())});
            return Err(ToolError::new(ToolErrorKind::Io, message.to_string()));
        }
        let message = format!("Okay, I've remembered that: \"{fact}\"");
        Ok(ToolResult::success(
            json!({"success": true, "message": message}).to_string(),
            message,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Tool, ToolInfo};
    use gd_protocol::ConfirmationDetails;

    #[test]
    fn adds_to_the_section_or_creates_it() {
        assert_eq!(
            add_memory("", "likes tea"),
            "## Gemini Added Memories\n- likes tea\n"
        );
        assert_eq!(
            add_memory("# Me\n\nSome notes.\n", "likes tea"),
            "# Me\n\nSome notes.\n\n## Gemini Added Memories\n- likes tea\n"
        );
        assert_eq!(
            add_memory("## Gemini Added Memories\n- a\n\n## Other\nx\n", "b"),
            "## Gemini Added Memories\n- a\n- b\n\n## Other\nx\n"
        );
        assert_eq!(normalise_fact("  - multi\n line  fact "), "multi line fact");
    }

    #[tokio::test]
    async fn saves_into_the_home_memory_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ToolContext::new(vec![dir.path().to_path_buf()]);
        ctx.services = std::sync::Arc::new(crate::tools::ToolServices {
            home: Some(dir.path().to_path_buf()),
            ..Default::default()
        });
        let tool = SaveMemory::new();
        let args = json!({"fact": "prefers tabs"});
        let details = tool.prepare(&args, &ctx).await.unwrap().unwrap();
        assert!(matches!(
            details,
            ConfirmationDetails::Edit {
                is_new_file: true,
                ..
            }
        ));
        let result = tool.execute(args, &ctx).await;
        assert_eq!(result.error, None);
        let saved = std::fs::read_to_string(dir.path().join(".gemini/GEMINI.md")).unwrap();
        assert_eq!(saved, "## Gemini Added Memories\n- prefers tabs\n");
        let modified = tool
            .modified_args(&json!({"fact": "x"}), "edited\n")
            .unwrap();
        tool.execute(modified, &ctx).await;
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".gemini/GEMINI.md")).unwrap(),
            "edited\n"
        );
    }
}
