//! What the store takes and gives back.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a session was recorded.
pub const SOURCE_DESKTOP: &str = "gemini-desktop";
/// A session imported from Gemini CLI's own recordings.
pub const SOURCE_GEMINI_CLI: &str = "gemini-cli";

/// A session to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSession {
    pub id: String,
    pub workspace: String,
    pub title: String,
    pub model: Option<String>,
    pub created_ms: i64,
    /// [`SOURCE_DESKTOP`] or [`SOURCE_GEMINI_CLI`].
    pub source: String,
    /// The file an imported session came from.
    pub origin: Option<String>,
}

/// Who a message is from, as in the Gemini API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub enum Role {
    User,
    Model,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Model => "model",
        }
    }

    pub fn parse(s: &str) -> Self {
        if s == "model" {
            Role::Model
        } else {
            Role::User
        }
    }
}

/// What a message is, beyond its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub enum MessageKind {
    /// What the user typed (role user).
    Prompt,
    /// A model answer: text and/or function calls (role model).
    Model,
    /// Tool results sent back to the model (role user, `functionResponse` parts).
    ToolResult,
    /// A compression summary that replaced the earlier history in the
    /// model's context (the earlier messages stay, out of context).
    Summary,
    /// How a turn ended, as the app showed it: its status, usage and notices
    /// (gd-protocol's `TurnEndRecord`, as JSON, in `parts`). Never in the
    /// model's context and not counted as a message; it is what lets a
    /// reopened conversation show the same footers, notices and usage meter.
    TurnEnd,
}

impl MessageKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::Prompt => "prompt",
            MessageKind::Model => "model",
            MessageKind::ToolResult => "tool_result",
            MessageKind::Summary => "summary",
            MessageKind::TurnEnd => "turn_end",
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "model" => MessageKind::Model,
            "tool_result" => MessageKind::ToolResult,
            "summary" => MessageKind::Summary,
            "turn_end" => MessageKind::TurnEnd,
            _ => MessageKind::Prompt,
        }
    }
}

/// Token counts of one model response (Gemini's `usageMetadata`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct TokenUsage {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub prompt: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub output: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub cached: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub thoughts: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub tool: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub total: u64,
}

/// A tool call as the history shows it: on the model message that made it
/// (`args`), and on the tool-result message that answered it (`status`,
/// `summary` of the output, and what the live tool card showed: `display`,
/// `error`, `duration_ms`, `output`, `exit_code`, `declined`, an edit's `diff`, an MCP
/// tool's `mcp` names).
/// Sessions recorded before those fields existed, and Gemini CLI imports, have
/// only the `summary` (the text the model was sent), which a reader must clean
/// before showing it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct ToolCallRecord {
    pub call_id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// `success`, `error` or `cancelled` once answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The start of the output (or error), for display and search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The result as the user saw it on the tool card (the tool's display
    /// text, not what the model was sent), cut to a bounded size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
    /// The error as the user saw it, for a failed or cancelled call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long the call ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub duration_ms: Option<u64>,
    /// The full result people see when it differs from the display (a
    /// command's output, a folder's entries), cut to a bounded size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// A shell command's exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Cancelled because the user rejected the call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub declined: bool,
    /// The change an applied edit made, as the live card got it (the
    /// protocol's `ConfirmationDetails` of the edit, as JSON), so a reopened
    /// card shows its diff again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub diff: Option<Value>,
    /// An MCP tool's server and its own name (the card reads "server › tool").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpToolName>,
    /// What decided the call (gd-protocol's `DecidedBy`, as JSON), so a
    /// reopened card still says why it ran or was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub decided_by: Option<Value>,
    /// For an `invoke_agent` call: the subagent's run (gd-protocol's
    /// `SubagentTranscript`, as JSON), so a reopened card nests it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub subagent: Option<Value>,
    /// A command's sandbox (gd-protocol's `SandboxUse`, as JSON), so a reopened card still says
    /// whether it ran sandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub sandbox: Option<Value>,
}

/// An MCP tool as its server names it (gd-protocol's `McpToolRef`, which the store does not
/// depend on).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct McpToolName {
    pub server: String,
    pub tool: String,
}

/// A thought summary the model showed while answering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct ThoughtRecord {
    pub subject: String,
    pub description: String,
}

/// One record of [`crate::Store::usage_records`].
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRecord {
    /// `Prompt`, `Model` or `TurnEnd`.
    pub kind: MessageKind,
    pub created_ms: i64,
    /// A model message's token counts.
    pub usage: Option<TokenUsage>,
    /// A model message's model.
    pub model: Option<String>,
    /// A turn end's record (gd-protocol's `TurnEndRecord`, as JSON).
    pub turn_end: Option<Value>,
}

/// A message to append.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    /// Stable id (a UUID); other parts of the app (checkpoints, rewind) name messages by it.
    pub id: String,
    pub role: Role,
    pub kind: MessageKind,
    pub created_ms: i64,
    /// Part of what the model sees on the next request.
    pub in_context: bool,
    /// The Gemini API `parts` array exactly as sent or received.
    pub parts: Value,
    /// The searchable text: the user's words, the model's text, tool output
    /// summaries. Not the session context the first prompt carries.
    pub text: String,
    pub tool_calls: Vec<ToolCallRecord>,
    pub thoughts: Vec<ThoughtRecord>,
    pub usage: Option<TokenUsage>,
    pub model: Option<String>,
}

impl NewMessage {
    /// A message with a fresh id, in context, created now.
    pub fn new(role: Role, kind: MessageKind, parts: Value, text: impl Into<String>) -> Self {
        Self {
            id: uuid::Uuid::new_v4().to_string(),
            role,
            kind,
            created_ms: crate::now_ms(),
            in_context: true,
            parts,
            text: text.into(),
            tool_calls: Vec::new(),
            thoughts: Vec::new(),
            usage: None,
            model: None,
        }
    }
}

/// Where an appended message landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageRef {
    pub id: String,
    pub seq: i64,
}

/// One row of the session list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct SessionSummary {
    pub id: String,
    pub workspace: String,
    pub title: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub created_ms: i64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub updated_ms: i64,
    pub model: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub message_count: i64,
    pub tokens: TokenUsage,
    pub source: String,
    pub origin: Option<String>,
}

/// Which sessions to list: newest first, `limit` at a time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListQuery {
    /// Only this workspace.
    pub workspace: Option<String>,
    /// Continue after this row (the last one of the previous page).
    pub after: Option<ListCursor>,
    /// Page size; 0 means 50.
    pub limit: u32,
}

/// Keyset cursor of the session list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct ListCursor {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub updated_ms: i64,
    pub id: String,
}

impl From<&SessionSummary> for ListCursor {
    fn from(s: &SessionSummary) -> Self {
        Self {
            updated_ms: s.updated_ms,
            id: s.id.clone(),
        }
    }
}

/// Which slice of a transcript to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", content = "seq", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub enum PageFrom {
    /// The first messages.
    Start,
    /// The last messages (where a resumed chat continues).
    End,
    /// Messages after this `seq`.
    After(#[cfg_attr(feature = "ts", ts(type = "number"))] i64),
    /// Messages before this `seq`.
    Before(#[cfg_attr(feature = "ts", ts(type = "number"))] i64),
    /// A page with this `seq` near its start (a search hit).
    Around(#[cfg_attr(feature = "ts", ts(type = "number"))] i64),
}

/// A transcript page request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageQuery {
    pub from: PageFrom,
    /// Messages per page; 0 means 50.
    pub limit: u32,
    /// Messages whose `parts` JSON is longer than this come back with
    /// `parts: None` and `truncated: true` (fetch them whole with
    /// [`crate::Store::message`]); the text preview is cut to this size too.
    pub max_bytes: u32,
}

impl Default for PageQuery {
    fn default() -> Self {
        Self {
            from: PageFrom::Start,
            limit: 50,
            max_bytes: 64 * 1024,
        }
    }
}

/// One message as the transcript shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct StoredMessage {
    pub id: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seq: i64,
    pub role: Role,
    pub kind: MessageKind,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub created_ms: i64,
    pub in_context: bool,
    /// `None` when cut (see [`PageQuery::max_bytes`]).
    pub parts: Option<Value>,
    pub text: String,
    pub truncated: bool,
    /// Size of the stored `parts` JSON in bytes.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub size: i64,
    pub tool_calls: Vec<ToolCallRecord>,
    pub thoughts: Vec<ThoughtRecord>,
    pub usage: Option<TokenUsage>,
    pub model: Option<String>,
}

/// A page of a transcript, in message order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct Page {
    pub messages: Vec<StoredMessage>,
    /// More messages exist before the first / after the last of this page.
    pub has_before: bool,
    pub has_after: bool,
}

/// One message of the model's context, for resuming.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextMessage {
    pub id: String,
    pub seq: i64,
    pub role: Role,
    pub kind: MessageKind,
    pub parts: Value,
}
