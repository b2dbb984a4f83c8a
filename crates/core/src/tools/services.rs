//! Session-wide services that tools share.

use std::path::PathBuf;

use gd_gemini::GeminiClient;

/// What tools can use beyond their arguments. One per session.
#[derive(Debug, Default)]
pub struct ToolServices {
    /// The project's temporary directory (full outputs of truncated results
    /// are saved here).
    pub temp_dir: PathBuf,
    /// The user's home (for `~/.gemini/GEMINI.md`).
    pub home: Option<PathBuf>,
    /// The model client, for tools that ask the model (web search, fetch).
    pub model: Option<ModelAccess>,
    /// Limits applied to tool output.
    pub limits: ToolLimits,
    /// The conversation's current topic (`update_topic`), shared by every
    /// copy of the services (a model switch makes a new one), and taken
    /// from the history when a conversation is resumed.
    pub topic: std::sync::Arc<std::sync::Mutex<super::topic::TopicState>>,
}

/// A client plus the model to use for tool-internal requests.
#[derive(Debug, Clone)]
pub struct ModelAccess {
    pub client: GeminiClient,
    pub model: String,
    pub session_id: String,
}

/// Output limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// Tool output sent to the model is cut to this many characters (head and
    /// tail kept, the full text saved to a temp file).
    pub max_output_chars: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            max_output_chars: 100_000,
        }
    }
}
