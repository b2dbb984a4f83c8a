//! Subagents (Gemini CLI 0.61's `invoke_agent`): specialists the model
//! hands a task to. Each runs its own turn loop inside the session, with its
//! own system prompt, tools, model and limits, and returns its answer as the
//! call's result.
//!
//! - [`definition`]: what an agent is (built-in, or a markdown file).
//! - [`builtin`]: the agents the app ships.
//! - [`load`]: the catalog a launch builds from the settings and the folders.
//! - [`catalog`]: the agents a session can run, and the files that failed.
//! - [`files`]: reading `.gemini/agents/*.md` definition files.
//! - [`overrides`]: `agents.overrides` from the settings.
//! - [`listing`]: `/agents`, the system prompt's section, `@agent` mentions.
//! - [`invoke`]: the `invoke_agent` tool.
//! - [`runner`]: a subagent's turn loop (`deadline`: its time limit).
//! - [`runtime`]: what the session lends its subagents; the running ones.
//! - [`tools`]: the tools a subagent gets.

pub(crate) mod approval;
pub mod builtin;
pub mod catalog;
mod deadline;
pub mod definition;
pub mod files;
pub mod inline_mcp;
pub mod invoke;
pub mod listing;
pub mod load;
pub mod overrides;
pub mod runner;
pub mod runtime;
pub mod tools;

pub use catalog::AgentCatalog;
pub use definition::{AgentDefinition, AgentTools, ModelChoiceForAgent};
pub use invoke::InvokeAgent;
pub use runtime::{RunningSubagents, SubagentRuntime};
