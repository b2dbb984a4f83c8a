//! Memory: the context files (`GEMINI.md` and friends) loaded into the
//! system instruction, as the memory view and `/memory show` present them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::McpPromptArgument;

/// One loaded context file and the files it imports, in import order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MemoryFileNode {
    /// Absolute path of the file.
    pub path: String,
    /// Size of the file on disk, in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// Files imported with `@path`, in the order they were imported.
    pub imports: Vec<MemoryFileNode>,
}

/// A slash command offered when the user types `/`: a built-in one, an MCP
/// server's prompt or a custom command from a TOML file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SlashCommandInfo {
    /// The name without the slash; custom commands in subfolders are
    /// `folder:name`. A name two commands want is given to a built-in one;
    /// the others are prefixed as Gemini CLI does (`server.prompt`,
    /// `user.name`, `workspace.name`).
    pub name: String,
    pub description: String,
    pub source: SlashCommandSource,
    /// Other names that run it (`/new` for `/clear`).
    #[serde(default)]
    pub alt_names: Vec<String>,
    /// The MCP server of an MCP prompt.
    #[serde(default)]
    pub server: Option<String>,
    /// An MCP prompt's arguments: given as `--name="value"`, or by position
    /// in the order of the required ones.
    #[serde(default)]
    pub arguments: Vec<McpPromptArgument>,
}

/// Where a slash command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum SlashCommandSource {
    /// Handled by the frontend (`/clear`, `/memory`…).
    BuiltIn,
    /// `~/.gemini/commands/*.toml`.
    User,
    /// `<workspace>/.gemini/commands/*.toml` (wins over a user command of the
    /// same name).
    Project,
    /// A prompt of a connected MCP server: running it sends the prompt's
    /// text to the model.
    McpPrompt,
}
