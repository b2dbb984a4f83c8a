//! The agents the app ships (Gemini CLI 0.61's built-in agents that make
//! sense here): the codebase investigator (read-only tools, a structured
//! report) and the generalist (the parent's tools, for turn-heavy work).
//!
//! 0.61 also ships `cli_help`, which answers from the CLI's own bundled
//! documentation through an internal `get_internal_docs` tool; this app has
//! no such documentation to read, so the agent would only guess: left out.
//!
//! They are plain Rust values (no file is read or parsed at launch); their
//! prompts are our own words for what 0.61's agents are told.

use std::time::Duration;

use gd_protocol::{AgentKind, DefinitionSource};

use super::{AgentDefinition, AgentTools, ModelChoiceForAgent};

/// The codebase investigator's name (what the model passes as `agent_name`).
pub const INVESTIGATOR: &str = "codebase_investigator";
/// The generalist's name.
pub const GENERALIST: &str = "generalist";

/// 0.61's investigator model when the session's model is a Gemini 3 one
/// (`PREVIEW_GEMINI_FLASH_MODEL`), else `DEFAULT_GEMINI_MODEL`.
const INVESTIGATOR_MODEL_MODERN: &str = "gemini-3-flash-preview";
const INVESTIGATOR_MODEL_LEGACY: &str = "gemini-2.5-pro";

/// Every built-in agent, with 0.61's defaults (before `agents.overrides`):
/// all enabled.
pub fn agents() -> Vec<AgentDefinition> {
    vec![investigator(), generalist()]
}

fn investigator() -> AgentDefinition {
    AgentDefinition {
        name: INVESTIGATOR.to_owned(),
        display_name: Some("Codebase Investigator Agent".to_owned()),
        description: "The specialist for understanding a codebase: maps its architecture, traces dependencies across the system and finds the root cause of bugs. Call it for vague requests, root-cause analysis, refactorings that touch many places, large features, or any question about the code that needs real investigation. It answers with a structured report of the relevant files, their key symbols and what they imply for the task.".to_owned(),
        kind: AgentKind::Local,
        source: DefinitionSource::BuiltIn,
        path: None,
        system_prompt: INVESTIGATOR_PROMPT.to_owned(),
        tools: AgentTools::Listed(
            ["list_directory", "read_file", "glob", "grep_search"]
                .map(str::to_owned)
                .to_vec(),
        ),
        // Chosen per call from the session's model (see `model_for`).
        model: ModelChoiceForAgent::Named(INVESTIGATOR_MODEL_MODERN.to_owned()),
        // 0.61's definition says 0.1, but its requests carry the model's
        // defaults (temperature 1: tests/fixtures/gemini-cli-0.61/
        // subagent_investigator_req02_subagent.json); we send what it sends.
        temperature: None,
        max_turns: 50,
        timeout: Duration::from_secs(10 * 60),
        enabled: true,
        mcp_servers: Default::default(),
    }
}

fn generalist() -> AgentDefinition {
    AgentDefinition {
        name: GENERALIST.to_owned(),
        display_name: Some("Generalist Agent".to_owned()),
        description: "A general-purpose agent with every tool of this session. Best for work that takes many turns or reads a lot of data, so the main conversation stays short: batch refactoring or fixing errors across many files, commands with very long output, and speculative investigations.".to_owned(),
        kind: AgentKind::Local,
        source: DefinitionSource::BuiltIn,
        path: None,
        system_prompt: GENERALIST_PROMPT.to_owned(),
        tools: AgentTools::Inherit,
        model: ModelChoiceForAgent::Inherit,
        temperature: None,
        max_turns: 20,
        timeout: Duration::from_secs(10 * 60),
        enabled: true,
        mcp_servers: Default::default(),
    }
}

/// The model an agent's requests go to when the session's model is
/// `session_model`: the investigator as shipped follows 0.61 (a Gemini 3
/// session gets Gemini 3 Flash, an older one Gemini 2.5 Pro), any other
/// agent (or an overridden model) its definition's model or the session's.
pub fn model_for(agent: &AgentDefinition, session_model: &str) -> String {
    let as_shipped =
        agent.model == ModelChoiceForAgent::Named(INVESTIGATOR_MODEL_MODERN.to_owned());
    // An `agents.overrides` model is taken as it is.
    if agent.source == DefinitionSource::BuiltIn && agent.name == INVESTIGATOR && as_shipped {
        let modern =
            gd_gemini::models::is_gemini_3(session_model) || !session_model.starts_with("gemini-");
        return if modern {
            INVESTIGATOR_MODEL_MODERN
        } else {
            INVESTIGATOR_MODEL_LEGACY
        }
        .to_owned();
    }
    match &agent.model {
        ModelChoiceForAgent::Named(model) => model.clone(),
        ModelChoiceForAgent::Inherit => session_model.to_owned(),
    }
}

/// The sampling an agent's requests use beyond its model's defaults: the
/// definition's temperature, and 0.61's `topP` 0.95 for the investigator.
pub fn tune(agent: &AgentDefinition, generation: &mut gd_gemini::GenerationConfig) {
    if let Some(t) = agent.temperature {
        // Through its shortest decimal form: 0.1 goes out as 0.1, not as
        // the f32's 0.10000000149011612.
        generation.temperature = Some(t.to_string().parse().unwrap_or(f64::from(t)));
    }
    if agent.source == DefinitionSource::BuiltIn && agent.name == INVESTIGATOR {
        generation.top_p = Some(0.95);
    }
}

/// The first message an agent receives for the parent's `prompt` (0.61's
/// `promptConfig.query`): the investigator gets it as its objective.
pub fn query(agent: &AgentDefinition, prompt: &str) -> String {
    if agent.source == DefinitionSource::BuiltIn && agent.name == INVESTIGATOR {
        return format!(
            "Investigate the codebase in depth: find every relevant file and code location, build a mental map of the architecture, and gather the insights needed for the following objective:\n<objective>\n{prompt}\n</objective>"
        );
    }
    prompt.to_owned()
}

/// How an agent hands back its answer through `complete_task`: the argument
/// name and its schema (0.61: the investigator returns a `report` object,
/// every other agent a `result` string).
pub fn output(agent: &AgentDefinition) -> (&'static str, serde_json::Value) {
    if agent.source == DefinitionSource::BuiltIn && agent.name == INVESTIGATOR {
        return ("report", investigator_report_schema());
    }
    (
        "result",
        serde_json::json!({
            "type": "string",
            "description": "Your final results or findings to return to the orchestrator. Ensure this is comprehensive and follows any formatting requested in your instructions."
        }),
    )
}

fn investigator_report_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "SummaryOfFindings": {
                "type": "string",
                "description": "A summary of the investigation's conclusions and insights for the main agent."
            },
            "ExplorationTrace": {
                "type": "array",
                "items": { "type": "string" },
                "description": "A step-by-step list of actions and tools used during the investigation."
            },
            "RelevantLocations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "FilePath": { "type": "string" },
                        "Reasoning": { "type": "string" },
                        "KeySymbols": { "type": "array", "items": { "type": "string" } }
                    },
                    "required": ["FilePath", "Reasoning", "KeySymbols"],
                    "additionalProperties": false
                },
                "description": "A list of relevant files and the key symbols within them."
            }
        },
        "required": ["SummaryOfFindings", "ExplorationTrace", "RelevantLocations"],
        // No "description" here: 0.61's definition has one, its request
        // does not (subagent_investigator_req02_subagent.json).
        "additionalProperties": false
    })
}

const INVESTIGATOR_PROMPT: &str = r#"You are the **Codebase Investigator**, a specialist sub-agent that reverse-engineers software projects for the agent that called you. Your one job is to build a complete, accurate mental model of the code that matters for the objective you are given: which files and symbols are involved, why they are written the way they are, and what a change to them would ripple into.

- **Do** find the modules, types and functions at the heart of the problem and of its solution.
- **Do** explain *why* the code is shaped as it is; question what looks odd.
- **Do** follow the consequences of a change: callers of a function, users of a type, tests that pin the behaviour.
- **Do** end with conclusions the caller can act on: the root cause of a bug and how to fix it, or where and how a feature belongs.
- **Do not** write the implementation yourself.
- **Do not** stop at the first relevant file: cover the whole subsystem involved.

You work in a non-interactive loop: reason from the objective and from what your tools return.

## How to work
1. Start from the strongest clues (names, error messages, paths) and widen the search as needed. When something is unclear, investigate it until it is clear.
2. Keep a `<scratchpad>` in your reasoning: a checklist of what to find out, open questions, key findings with file paths, and dead ends to skip. Update it after every observation.
3. You are done only when no question is open and every location a change would need is known.

## Finishing
Call the `complete_task` tool with a `report` object holding `SummaryOfFindings` (your conclusions for the caller), `ExplorationTrace` (the steps you took) and `RelevantLocations` (each file with its reasoning and key symbols)."#;

const GENERALIST_PROMPT: &str = "You are a general-purpose software engineering agent working for another agent, which handed you one self-contained task. Use the tools you have to do it thoroughly and efficiently: read before you change, keep edits minimal and in the style of the code around them, and check your work (build, tests) when you can. Report what you did and what you found, concisely, with the file paths and results that matter to the caller.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_investigators_model_follows_the_session_unless_overridden() {
        let mut agent = investigator();
        assert_eq!(model_for(&agent, "gemini-2.5-flash"), "gemini-2.5-pro");
        assert_eq!(
            model_for(&agent, "gemini-3-pro-preview"),
            "gemini-3-flash-preview"
        );
        agent.model = ModelChoiceForAgent::Named("gemini-2.5-flash-lite".into());
        assert_eq!(
            model_for(&agent, "gemini-3-pro-preview"),
            "gemini-2.5-flash-lite"
        );
        assert_eq!(
            model_for(&generalist(), "gemini-2.5-flash"),
            "gemini-2.5-flash"
        );
    }
}
