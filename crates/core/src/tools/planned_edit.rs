//! [`PlannedEdit`]: the one path of a whole-file change shared by `replace`
//! and `write_file`. Both plan from the disk twice, once to show the user
//! the diff (`prepare`) and once more when the approved call runs (the file
//! may have changed in between), then write the plan confined to the
//! workspace; only how they compute the new text differs.

use std::path::PathBuf;

use gd_protocol::ConfirmationDetails;

use super::fs_write::{self, TextFile};
use super::{ToolContext, ToolError, text};

/// What a call would write, computed from the disk.
#[derive(Debug)]
pub struct PlannedEdit {
    pub path: PathBuf,
    /// The file as it is now; `None` when the call creates it.
    pub existing: Option<TextFile>,
    /// The new content as the edit tools see text (LF when the file uses
    /// CRLF; writing restores the file's line endings and encoding).
    pub new_text: String,
}

/// What [`PlannedEdit::write`] did.
#[derive(Debug)]
pub struct Written {
    /// "Created src/a.rs (+12)" or "Updated src/a.rs (+3 −1)", for people.
    pub summary: String,
    /// The file did not exist before.
    pub created: bool,
}

impl PlannedEdit {
    /// The diff the user approves, titled `Create <path>` for a new file
    /// and `<verb> <path>` otherwise.
    pub fn confirmation(&self, ctx: &ToolContext, verb: &str) -> ConfirmationDetails {
        let shown = text::display_path(&self.path, &ctx.workspace_dirs);
        let original = self.existing.as_ref().map(|f| f.text.as_str());
        let title = match original {
            None => format!("Create {shown}"),
            Some(_) => format!("{verb} {shown}"),
        };
        fs_write::edit_confirmation(ctx, title, &self.path, original, &self.new_text)
    }

    /// Writes the plan in the style of the existing file, off the async
    /// threads; in review mode, stages it instead (`ctx.staging`).
    pub async fn write(self, ctx: &ToolContext) -> Result<Written, ToolError> {
        let shown = text::display_path(&self.path, &ctx.workspace_dirs);
        let original = self.existing.as_ref().map(|f| f.text.as_str());
        let summary = fs_write::change_summary(&shown, original, &self.new_text);
        let created = self.existing.is_none();
        let roots = crate::plan::edit_roots(ctx);
        // A plan (plan mode) is written at once, never staged for review.
        if let Some(staging) = ctx.staging.as_ref().filter(|_| !crate::plan::planning(ctx)) {
            // Review mode: nothing is written before the end-of-turn review.
            staging.stage(&self.path, original, &self.new_text);
            return Ok(Written {
                summary: format!("Staged for review: {summary}"),
                created,
            });
        }
        fs_write::blocking(move || {
            fs_write::write_text(&roots, &self.path, &self.new_text, self.existing.as_ref())
        })
        .await?;
        Ok(Written { summary, created })
    }
}
