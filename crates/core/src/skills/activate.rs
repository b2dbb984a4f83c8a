//! `activate_skill` (0.61's `ActivateSkillTool`): the model loads a skill's
//! instructions. A skill that is not built in asks the user first (0.61's
//! "Activate Skill" consent, listing the folder it shares); the result is
//! 0.61's `<activated_skill>` block with the instructions and the folder's
//! structure, and the folder becomes readable (read only) for the rest of
//! the session ([`crate::tools::files::resolve_readable`]). Whether the call
//! is asked at all is the policy's ([`super::consent`]).
//!
//! The declaration is built from the catalog at each request (the enabled
//! skills' names as the enum, as 0.61), so `/skills disable` takes effect
//! at the next request (and a reload, its new skills). Calls are checked
//! against a schema that takes any name: the run refuses an unknown or
//! disabled one with the names the model may use (0.61's message).

use std::sync::Arc;

use gd_gemini::FunctionDeclaration;
use gd_protocol::ConfirmationDetails;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::folder_structure::{FolderStructureOptions, folder_structure};
use crate::tools::typed::Prepared;
use crate::tools::{ToolContext, ToolError, ToolErrorKind, ToolResult};

use super::{Skill, SkillCatalog};

#[derive(Debug, Deserialize)]
pub struct Params {
    name: String,
}

pub struct ActivateSkill {
    catalog: Arc<SkillCatalog>,
    /// For validation: a `name` string (which names exist can change).
    schema: Value,
}

impl ActivateSkill {
    pub const NAME: &'static str = "activate_skill";

    pub fn new(catalog: Arc<SkillCatalog>) -> Self {
        Self {
            catalog,
            schema: schema(&[]),
        }
    }
}

/// 0.61's schema (zod's JSON Schema of `{name: enum}`): an enum of names,
/// or a free string described as "no skills" when there are none.
fn schema(names: &[&str]) -> Value {
    let name = if names.is_empty() {
        json!({"type": "string", "description": "No skill is available now."})
    } else {
        json!({"type": "string", "enum": names, "description": "Which skill to activate, by name."})
    };
    json!({
        "type": "object",
        "properties": {"name": name},
        "required": ["name"],
        "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#"
    })
}

crate::tools::tool_info! {
    ActivateSkill,
    display: "Activate Skill",
    kind: Other,
    description: "Loads a specialised agent skill by name.",
    fn describe_call(&self, args: &Value) -> String {
        let name = args.get("name").and_then(Value::as_str).unwrap_or("?");
        match self.catalog.get_enabled(name) {
            Some(skill) => format!("\"{name}\": {}", skill.description),
            None => format!("\"{name}\" (?) unknown skill"),
        }
    }

    fn declaration(&self) -> FunctionDeclaration {
        let enabled = self.catalog.enabled();
        let names: Vec<&str> = enabled.iter().map(|s| s.name.as_str()).collect();
        let hint = if names.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
            format!(" (available: {})", quoted.join(", "))
        };
        FunctionDeclaration {
            name: Self::NAME.to_owned(),
            description: Some(format!(
                "Activates one of the specialised agent skills by its name{hint}. The result holds the skill's instructions inside `<activated_skill>` tags, with the files the skill provides; follow them for the task at hand. Call it when a task matches a skill's description, and only with a name exactly as listed in `<available_skills>`."
            )),
            parameters_json_schema: Some(schema(&names)),
            parameters: None,
        }
    }
}

/// The folder's structure, as the consent and the result show it.
fn resources(skill: &Skill) -> String {
    match skill.folder() {
        Some(folder) => folder_structure(folder, &FolderStructureOptions::default()),
        None => "(built-in skill: no files)".to_owned(),
    }
}

impl ActivateSkill {
    fn enabled_skill(&self, name: &str) -> Result<Arc<Skill>, ToolError> {
        self.catalog.get_enabled(name).ok_or_else(|| {
            let names: Vec<String> = self
                .catalog
                .enabled()
                .iter()
                .map(|s| s.name.clone())
                .collect();
            ToolError::new(
                ToolErrorKind::InvalidParams,
                format!(
                    "Skill \"{name}\" not found. Available skills are: {}",
                    names.join(", ")
                ),
            )
        })
    }
}

impl crate::tools::TypedTool for ActivateSkill {
    type Args = Params;

    /// A skill from a folder shows the consent card (what asking means
    /// here): its instructions enter the context and its files become
    /// readable. A built-in skill has no card; the policy's generated rule
    /// lets it run unasked, as 0.61 ([`super::consent`]).
    async fn prepare(&self, args: Params, _ctx: &ToolContext) -> Prepared {
        let skill = self.enabled_skill(&args.name)?;
        let Some(folder) = skill.folder() else {
            return Ok(None);
        };
        Ok(Some(ConfirmationDetails::ActivateSkill {
            title: format!("Activate Skill: {}", skill.name),
            name: skill.name.clone(),
            description: skill.description.clone(),
            location: folder.display().to_string(),
        }))
    }

    async fn run(&self, args: Params, _ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let skill = self.enabled_skill(&args.name)?;
        self.catalog.activate(&skill.name);
        let structure = resources(&skill);
        let llm = format!(
            "<activated_skill name=\"{}\">\n  <instructions>\n    {}\n  </instructions>\n\n  <available_resources>\n    {}\n  </available_resources>\n</activated_skill>",
            skill.name,
            skill.instructions(),
            structure
        );
        let display = match skill.folder() {
            // Plain text: the tool card shows it as it is (0.61's is
            // markdown for its terminal renderer).
            Some(folder) => format!(
                "Skill {} activated. Resources loaded from {}:\n\n{}",
                skill.name,
                folder.display(),
                structure
            ),
            None => format!("Skill {} activated.", skill.name),
        };
        tracing::info!(skill = %skill.name, "skill activated");
        Ok(ToolResult::success(llm, display))
    }
}
