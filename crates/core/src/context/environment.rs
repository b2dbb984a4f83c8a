//! The `<session_context>` block sent with the first user message.

use std::path::PathBuf;

use chrono::{DateTime, Local};

use super::folder_structure::{FolderStructureOptions, folder_structure};
use crate::config::FileFiltering;

/// Builds the session context text: today's date, the OS, the project's
/// temporary directory, the workspace directories and a folder-structure
/// listing of each (at most 200 entries, ignore files respected).
pub fn session_context(
    workspace_dirs: &[PathBuf],
    temp_dir: &std::path::Path,
    filtering: FileFiltering,
    now: DateTime<Local>,
) -> String {
    session_context_with(workspace_dirs, temp_dir, filtering, true, now)
}

/// The session context of a session's configuration
/// (`context.includeDirectoryTree` included).
pub fn session_context_for(config: &crate::config::SessionConfig, now: DateTime<Local>) -> String {
    session_context_with(
        &config.workspace_dirs,
        &config.temp_dir,
        config.file_filtering,
        config.include_directory_tree,
        now,
    )
}

/// [`session_context`]; without `include_tree` the workspace folders and
/// their listing are left out.
pub fn session_context_with(
    workspace_dirs: &[PathBuf],
    temp_dir: &std::path::Path,
    filtering: FileFiltering,
    include_tree: bool,
    now: DateTime<Local>,
) -> String {
    let date = now.format("%A, %B %-d, %Y");
    let mut text = String::with_capacity(1024);
    text.push_str("<session_context>\n");
    text.push_str("This is Gemini Desktop. We are setting up the context for our chat.\n");
    text.push_str(&format!(
        "Today's date is {date} (formatted according to the user's locale).\n"
    ));
    text.push_str(&format!(
        "My operating system is: {}\n",
        std::env::consts::OS
    ));
    text.push_str(&format!(
        "The project's temporary directory is: {}\n",
        temp_dir.display()
    ));
    if !include_tree {
        // `context.includeDirectoryTree: false`: no folders, no listing
        // (Gemini CLI 0.61 leaves out its whole directory context).
        text.push('\n');
        text.push_str("</session_context>");
        return text;
    }
    text.push_str("- **Workspace Directories:**\n");
    for dir in workspace_dirs {
        text.push_str(&format!("  - {}\n", dir.display()));
    }
    text.push_str("- **Directory Structure:**\n\n");
    let options = FolderStructureOptions {
        filtering,
        ..FolderStructureOptions::default()
    };
    let structures: Vec<String> = workspace_dirs
        .iter()
        .map(|dir| folder_structure(dir, &options))
        .collect();
    text.push_str(&structures.join("\n"));
    text.push_str("\n\n\n</session_context>");
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use std::fs;

    #[test]
    fn without_the_directory_tree_no_folders_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        fs::write(ws.join("hello.txt"), "hello\n").unwrap();
        let now = Local.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap();
        let text = session_context_with(
            std::slice::from_ref(&ws),
            std::path::Path::new("/tmp/gd"),
            FileFiltering::default(),
            false,
            now,
        );
        assert_eq!(
            text,
            "<session_context>\nThis is Gemini Desktop. We are setting up the context for our chat.\n\
             Today's date is Saturday, November 21, 2026 (formatted according to the user's locale).\n\
             My operating system is: linux\nThe project's temporary directory is: /tmp/gd\n\n</session_context>"
        );
    }

    #[test]
    fn matches_the_gemini_cli_layout() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        fs::write(ws.join("hello.txt"), "hello\n").unwrap();
        fs::write(ws.join("README.md"), "x").unwrap();
        fs::create_dir(ws.join("src")).unwrap();
        fs::write(ws.join("src/main.rs"), "fn main() {}").unwrap();
        let now = Local.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap();
        let text = session_context(
            std::slice::from_ref(&ws),
            std::path::Path::new("/tmp/gd"),
            FileFiltering::default(),
            now,
        );
        let w = ws.display();
        assert_eq!(
            text,
            format!(
                "<session_context>\nThis is Gemini Desktop. We are setting up the context for our chat.\n\
                 Today's date is Saturday, November 21, 2026 (formatted according to the user's locale).\n\
                 My operating system is: linux\nThe project's temporary directory is: /tmp/gd\n\
                 - **Workspace Directories:**\n  - {w}\n- **Directory Structure:**\n\n\
                 Showing up to 200 items (files + folders).\n\n{w}/\n├───hello.txt\n├───README.md\n└───src/\n    └───main.rs\n\n\n</session_context>"
            )
        );
    }
}
