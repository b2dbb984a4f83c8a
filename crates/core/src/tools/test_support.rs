//! Helpers the tools' unit tests share: a temporary workspace and the text
//! a result sends the model.

use std::path::{Path, PathBuf};

use super::{LlmContent, ToolContext, ToolResult};

/// A temporary workspace folder (canonical, as tools report paths); it is
/// removed when the guard drops.
pub fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

/// [`workspace`] with a context whose only workspace folder it is.
pub fn setup() -> (tempfile::TempDir, PathBuf, ToolContext) {
    let (dir, root) = workspace();
    let ctx = ToolContext::new(vec![root.clone()]);
    (dir, root, ctx)
}

/// The model's text of a result that is text.
pub fn text(result: &ToolResult) -> &str {
    match &result.llm_content {
        LlmContent::Text(t) => t,
        LlmContent::Parts(_) => panic!("expected text"),
    }
}

/// Asserts that a call wrote `content` to `path`, telling the model
/// `message` and people `display`.
pub fn assert_wrote(result: &ToolResult, message: &str, display: &str, path: &Path, content: &str) {
    assert_eq!(result.error, None);
    assert_eq!(text(result), message);
    assert_eq!(result.display, display);
    assert_eq!(std::fs::read_to_string(path).unwrap(), content);
}
