//! Tools the model can call: the [`Tool`] trait, results, the registry and
//! the built-in tools.
//!
//! A tool declares its name and JSON-Schema parameters (sent to the model as
//! `parametersJsonSchema`), can check a call and describe what the user
//! would approve ([`Tool::prepare`]), and executes with already validated
//! arguments. Whether a call needs approval is decided by the policy engine
//! in the scheduler, never by the tool.
//!
//! Adding a built-in tool: a struct with a `NAME` and a `schema`, its
//! identity stated with `tool_info!` (the [`ToolInfo`] the registry and
//! the policy read), and a [`TypedTool`] impl whose `Args` serde decodes;
//! decoding errors, `Result` → [`ToolResult`] and boxing the future are done
//! once in [`typed`], so a tool holds only its own logic. Shared set-ups:
//! [`search_start`] (where a search or listing starts, which ignore rules),
//! [`planned_edit`] (a whole-file change shown as a diff, then written).
//! Then register it in [`ToolRegistry::with_builtins`].

pub mod discovered;
pub mod files;
pub mod fs_write;
pub mod glob;
pub mod grep;
pub mod hunk_report;
pub mod hunks;
pub mod list_directory;
pub mod live;
pub mod mcp;
pub mod memory;
pub mod mtime;
pub mod plan_mode;
pub mod planned_edit;
pub mod read_file;
pub mod read_many_files;
pub mod registry;
pub mod replace;
pub mod schema;
pub mod search_start;
pub mod services;
#[cfg(unix)]
pub mod shell;
#[cfg(test)]
mod test_support;
pub mod text;
pub mod todos;
pub mod topic;
pub mod typed;
pub mod walk;
pub mod web_fetch;
pub mod web_search;
pub mod write_file;

/// The tools that edit files: what an edit confirmation proposes, what
/// checkpoints cover, and what "Always allow edits" allows for a session.
pub const EDIT_TOOLS: &[&str] = &["write_file", "replace"];

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use gd_gemini::{FunctionDeclaration, Part};
use gd_protocol::{ConfirmationDetails, Event};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::FileFiltering;
use crate::events::EventSink;

pub use live::{LiveTools, SessionTools};
pub use registry::ToolRegistry;
pub use services::{ShellSettings, ToolLimits, ToolServices};
pub use typed::TypedTool;

/// States what a built-in tool is, once: the name for people, its kind, its
/// description, then any further [`ToolInfo`] methods (`describe_call`,
/// `modified_args`...). The tool's `NAME` constant and `schema` field give
/// the rest; `default` also derives `Default` from `new()`. A macro because
/// the built-in tools would otherwise repeat the same getters and `Default`
/// impl word for word.
macro_rules! tool_info {
    (default $tool:ident, $($rest:tt)*) => {
        impl Default for $tool {
            fn default() -> Self {
                Self::new()
            }
        }
        $crate::tools::tool_info!($tool, $($rest)*);
    };
    ($tool:ident, display: $display:literal, kind: $kind:ident, description: $description:literal, $($item:tt)*) => {
        impl $crate::tools::ToolInfo for $tool {
            fn name(&self) -> &str {
                Self::NAME
            }

            fn display_name(&self) -> &str {
                $display
            }

            fn description(&self) -> &str {
                $description
            }

            fn kind(&self) -> $crate::tools::ToolKind {
                $crate::tools::ToolKind::$kind
            }

            fn parameter_schema(&self) -> &::serde_json::Value {
                &self.schema
            }

            $($item)*
        }
    };
}
pub(crate) use tool_info;

/// What a tool does, which decides its default policy.
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

    /// Tools that change files, which `auto_edit` approves automatically.
    pub fn is_edit(self) -> bool {
        matches!(self, Self::Edit | Self::Delete | Self::Move)
    }
}

/// What a tool sees of the session while it runs.
#[derive(Clone)]
pub struct ToolContext {
    /// Workspace directories; paths outside them are refused.
    pub workspace_dirs: Arc<Vec<PathBuf>>,
    /// Folders outside the workspace that the read tools (`read_file`,
    /// `list_directory`, `glob`, `grep_search`) may read and nothing may
    /// write: the folders of the skills activated in the session. See
    /// [`files::resolve_readable`].
    pub read_only_dirs: Arc<Vec<PathBuf>>,
    pub file_filtering: FileFiltering,
    /// Cancelled when the user interrupts the turn; long-running tools must
    /// stop (and clean up) promptly.
    pub cancel: CancellationToken,
    /// Session-wide services: temp dir, background processes, todos, the
    /// model client for web tools.
    pub services: Arc<ToolServices>,
    /// Live output of this call, set by the scheduler.
    pub output: Option<OutputSink>,
    /// The user explicitly approved this call in a confirmation (as opposed
    /// to a policy allowing it). Tools may require this for risky targets,
    /// e.g. web_fetch of a private address.
    pub confirmed: bool,
    /// The session's review staging, while the turn runs in review mode:
    /// edits are staged there instead of written, and reads see them (see
    /// [`crate::review`]).
    pub staging: Option<Arc<crate::review::Staging>>,
    /// The session's plan mode (mode switches, the plans directory), set
    /// for a running turn; `None` in tests and simple callers.
    pub plan: Option<Arc<crate::plan::PlanMode>>,
    /// What the user allowed this call beyond the sandbox, once (after the sandbox refused
    /// its first run); set by the scheduler.
    pub sandbox_grant: Option<crate::sandbox::Grant>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("workspace_dirs", &self.workspace_dirs)
            .field("file_filtering", &self.file_filtering)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A context for tests and simple callers: no services beyond defaults.
    pub fn new(workspace_dirs: Vec<PathBuf>) -> Self {
        Self {
            workspace_dirs: Arc::new(workspace_dirs),
            read_only_dirs: Arc::new(Vec::new()),
            file_filtering: FileFiltering::default(),
            cancel: CancellationToken::new(),
            services: Arc::new(ToolServices::default()),
            output: None,
            confirmed: false,
            staging: None,
            plan: None,
            sandbox_grant: None,
        }
    }

    pub fn primary_dir(&self) -> &std::path::Path {
        &self.workspace_dirs[0]
    }

    /// Sends live output (e.g. shell output so far) to the frontend.
    pub fn emit_output(&self, output: impl Into<String>) {
        if let Some(sink) = &self.output {
            sink.emit(output.into());
        }
    }
}

/// Where a running call's live output goes.
#[derive(Debug, Clone)]
pub struct OutputSink {
    sink: EventSink,
    call_id: String,
}

impl OutputSink {
    pub fn new(sink: EventSink, call_id: String) -> Self {
        Self { sink, call_id }
    }

    pub fn emit(&self, output: String) {
        self.sink.emit(Event::ToolCallOutput {
            call_id: self.call_id.clone(),
            output,
        });
    }

    /// The call this sink reports for.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Reports something other than output that this call caused (e.g.
    /// `update_topic`'s `Event::TopicChanged`), in order with its output.
    pub fn emit_event(&self, event: Event) {
        self.sink.emit(event);
    }
}

/// Content for the model: plain text becomes `response.output`; parts (e.g.
/// an image as `inlineData`) are sent beside the `functionResponse`.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmContent {
    Text(String),
    Parts(Vec<Part>),
}

impl LlmContent {
    /// The text of the content (text parts one after another, a line apart).
    pub fn text(&self) -> String {
        match self {
            LlmContent::Text(text) => text.clone(),
            LlmContent::Parts(parts) => parts
                .iter()
                .filter_map(|p| p.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// Why a tool failed, for the model and for statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub kind: ToolErrorKind,
    /// What the model is sent.
    pub message: String,
    /// What people read on the card, when the model's text is not for them
    /// (a command's failure arrives wrapped in `<untrusted_context>`).
    pub for_people: Option<String>,
}

impl ToolError {
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            for_people: None,
        }
    }

    /// The same error, read by people as `text`.
    pub fn for_people(mut self, text: impl Into<String>) -> Self {
        self.for_people = Some(text.into());
        self
    }

    /// The text the card shows.
    pub fn people_text(&self) -> &str {
        self.for_people.as_deref().unwrap_or(&self.message)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolErrorKind {
    InvalidParams,
    PathNotInWorkspace,
    NotFound,
    NotADirectory,
    IsADirectory,
    FileTooLarge,
    BinaryFile,
    /// replace: `old_string` was not found.
    NoOccurrence,
    /// replace: more occurrences than allowed.
    TooManyOccurrences,
    /// replace/write_file: nothing would change.
    NoChange,
    /// write/replace: the file already exists (or, for a new file, appeared).
    FileExists,
    /// The file changed on disk after the user approved the change.
    FileChanged,
    PermissionDenied,
    Io,
    Network,
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
    /// The full result for people when it is not the model's text as is
    /// (a command's plain output, a folder's entries); see
    /// `Event::ToolCallResponse::output`.
    pub output: Option<String>,
    /// A shell command's exit code.
    pub exit_code: Option<i32>,
    /// A shell command's sandbox: what it ran with, what it was refused.
    pub sandbox: Option<Box<crate::sandbox::ShellSandbox>>,
}

impl ToolResult {
    pub fn success(llm_text: impl Into<String>, display: impl Into<String>) -> Self {
        Self {
            llm_content: LlmContent::Text(llm_text.into()),
            display: display.into(),
            error: None,
            output: None,
            exit_code: None,
            sandbox: None,
        }
    }

    pub fn parts(parts: Vec<Part>, display: impl Into<String>) -> Self {
        Self {
            llm_content: LlmContent::Parts(parts),
            display: display.into(),
            error: None,
            output: None,
            exit_code: None,
            sandbox: None,
        }
    }

    pub fn error(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            llm_content: LlmContent::Text(message.clone()),
            display: message.clone(),
            error: Some(ToolError::new(kind, message)),
            output: None,
            exit_code: None,
            sandbox: None,
        }
    }

    /// The full result people see, when it differs from the model's text.
    pub fn with_output(mut self, output: impl Into<String>) -> Self {
        self.output = Some(output.into());
        self
    }

    pub fn from_error(error: ToolError) -> Self {
        Self {
            error: Some(error.clone()),
            ..Self::error(error.kind, error.message)
        }
    }
}

/// What the registry, the policy and the cards know of a tool without
/// running it: its names, description, kind and parameters. Apart from
/// [`Tool`] so that a [`TypedTool`] states it once, in the same words as
/// any other tool.
pub trait ToolInfo: Send + Sync {
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

    /// The MCP server a tool belongs to (for policies), if any.
    fn mcp_server(&self) -> Option<&str> {
        None
    }

    /// For an MCP tool: the server's own name of it (`add` of `mcp_tiny_add`).
    fn mcp_tool(&self) -> Option<&str> {
        None
    }

    /// Whether calls of this tool may run alongside the calls next to them
    /// in the same model response (unless a call sets `wait_for_previous`).
    /// Read-only tools by default; MCP tools too, as in Gemini CLI.
    fn runs_concurrently(&self) -> bool {
        self.kind().is_read_only()
    }

    /// Arguments that make this call produce `content` instead of its
    /// proposal, when the user edited the proposal (`ModifyWithEditor`).
    /// `None` when the tool's proposals cannot be edited.
    fn modified_args(&self, args: &Value, content: &str) -> Option<Value> {
        let _ = (args, content);
        None
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: self.name().to_owned(),
            description: Some(self.description().to_owned()),
            parameters_json_schema: Some(self.parameter_schema().clone()),
            parameters: None,
        }
    }
}

/// A tool the model can call. Built-in tools implement [`TypedTool`]
/// instead, which implements this.
pub trait Tool: ToolInfo {
    /// Checks a call beyond its schema and describes what the user would
    /// approve. Runs before the policy decision is acted on, so a call that
    /// cannot work (e.g. `replace` with an `old_string` that is not in the
    /// file) fails without asking the user. `Ok(None)` means nothing
    /// specific to show; the scheduler then shows a generic confirmation.
    /// It must not touch the network (DNS included): a denied or declined
    /// call would still leak what it names (issue 12).
    fn prepare<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Option<ConfirmationDetails>, ToolError>> {
        let _ = (args, ctx);
        Box::pin(async { Ok(None) })
    }

    /// Runs the tool. `args` already passed [`schema::validate`] and
    /// [`Tool::prepare`].
    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult>;
}
