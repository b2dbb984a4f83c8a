//! Tools the model can call: the [`Tool`] trait, results, the registry and
//! the built-in tools.
//!
//! A tool declares its name and JSON-Schema parameters (sent to the model as
//! `parametersJsonSchema`), and executes with already validated arguments.
//! Confirmation and policy decisions live in the scheduler, not in tools.

pub mod files;
pub mod list_directory;
pub mod registry;
pub mod schema;

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use gd_gemini::{FunctionDeclaration, Part};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::FileFiltering;

pub use registry::ToolRegistry;

/// What a tool does, which decides whether it needs confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Read,
    Search,
    Fetch,
    Think,
    Edit,
    Delete,
    Move,
    Execute,
    Other,
}

impl ToolKind {
    /// Read-only tools never change the user's machine and run without asking.
    pub fn is_read_only(self) -> bool {
        matches!(self, Self::Read | Self::Search | Self::Fetch | Self::Think)
    }
}

/// What a tool sees of the session.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Workspace directories; paths outside them are refused.
    pub workspace_dirs: Arc<Vec<PathBuf>>,
    pub file_filtering: FileFiltering,
    pub cancel: CancellationToken,
}

impl ToolContext {
    pub fn primary_dir(&self) -> &std::path::Path {
        &self.workspace_dirs[0]
    }
}

/// Content for the model: plain text becomes `response.output`; parts (e.g.
/// an image as `inlineData`) are sent beside the `functionResponse`.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmContent {
    Text(String),
    Parts(Vec<Part>),
}

/// Why a tool failed, for the model and for statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub kind: ToolErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolErrorKind {
    InvalidParams,
    PathNotInWorkspace,
    NotFound,
    NotADirectory,
    Io,
    Cancelled,
    Execution,
}

/// The outcome of one execution.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub llm_content: LlmContent,
    /// A short summary for people (UI card, logs).
    pub display: String,
    pub error: Option<ToolError>,
}

impl ToolResult {
    pub fn success(llm_text: impl Into<String>, display: impl Into<String>) -> Self {
        Self {
            llm_content: LlmContent::Text(llm_text.into()),
            display: display.into(),
            error: None,
        }
    }

    pub fn error(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            llm_content: LlmContent::Text(message.clone()),
            display: message.clone(),
            error: Some(ToolError { kind, message }),
        }
    }
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// The function name the model uses, e.g. `list_directory`.
    fn name(&self) -> &str;
    /// A name for people, e.g. "ReadFolder".
    fn display_name(&self) -> &str;
    /// Our description, sent to the model.
    fn description(&self) -> &str;
    fn kind(&self) -> ToolKind;
    /// JSON Schema of the arguments.
    fn parameter_schema(&self) -> &Value;

    /// A one-line human description of a call, e.g. the path it reads.
    fn describe_call(&self, args: &Value) -> String {
        let _ = args;
        self.display_name().to_owned()
    }

    /// Runs the tool. `args` already passed [`schema::validate`].
    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult>;

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: self.name().to_owned(),
            description: Some(self.description().to_owned()),
            parameters_json_schema: Some(self.parameter_schema().clone()),
            parameters: None,
        }
    }
}
