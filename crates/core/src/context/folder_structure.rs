//! A bounded, breadth-first tree of a directory, in the format Gemini CLI
//! gives the model:
//!
//! ```text
//! Showing up to 200 items (files + folders).
//!
//! /work/
//! ├───hello.txt
//! └───src/
//!     └───main.rs
//! ```
//!
//! Breadth-first so that the top of a large repository is always shown;
//! ignored folders appear with `...` and are not entered.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::super::tools::files::{locale_order, read_dir_classified};
use crate::config::FileFiltering;

const TRUNCATION: &str = "...";

/// Folder names never entered, whatever the ignore files say.
const ALWAYS_SKIPPED: &[&str] = &["node_modules", ".git", "dist"];

#[derive(Debug, Clone)]
pub struct FolderStructureOptions {
    pub max_items: usize,
    pub filtering: FileFiltering,
}

impl Default for FolderStructureOptions {
    fn default() -> Self {
        Self {
            max_items: 200,
            filtering: FileFiltering::default(),
        }
    }
}

#[derive(Debug, Default)]
struct Node {
    name: String,
    path: PathBuf,
    files: Vec<String>,
    folders: Vec<usize>,
    more_files: bool,
    more_folders: bool,
    ignored: bool,
}

/// Renders the tree of `root`. Unreadable directories are shown empty.
pub fn folder_structure(root: &Path, options: &FolderStructureOptions) -> String {
    let mut nodes = vec![Node {
        name: root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        path: root.to_path_buf(),
        ..Node::default()
    }];
    let mut queue = VecDeque::from([0usize]);
    let mut count = 0usize;
    while let Some(index) = queue.pop_front() {
        if count >= options.max_items {
            continue;
        }
        let Ok(mut entries) = read_dir_classified(&nodes[index].path, options.filtering, false)
        else {
            continue;
        };
        entries.sort_by(|a, b| locale_order(&a.name, &b.name));
        for entry in entries.iter().filter(|e| e.is_file) {
            if count >= options.max_items {
                nodes[index].more_files = true;
                break;
            }
            if entry.ignored {
                continue;
            }
            nodes[index].files.push(entry.name.clone());
            count += 1;
        }
        for entry in entries.iter().filter(|e| e.is_dir) {
            if count >= options.max_items {
                nodes[index].more_folders = true;
                break;
            }
            let ignored = entry.ignored || ALWAYS_SKIPPED.contains(&entry.name.as_str());
            let child = nodes.len();
            nodes.push(Node {
                name: entry.name.clone(),
                path: entry.path.clone(),
                ignored,
                ..Node::default()
            });
            nodes[index].folders.push(child);
            count += 1;
            if !ignored {
                queue.push_back(child);
            }
        }
    }
    let truncated = nodes
        .iter()
        .any(|n| n.more_files || n.more_folders || n.ignored);
    let mut lines = Vec::new();
    render(&nodes, 0, "", true, true, &mut lines);
    let mut summary = format!(
        "Showing up to {} items (files + folders).",
        options.max_items
    );
    if truncated {
        summary.push_str(&format!(
            " Folders or files indicated with {TRUNCATION} contain more items not shown, were ignored, or the display limit ({} items) was reached.",
            options.max_items
        ));
    }
    format!("{summary}\n\n{}/\n{}", root.display(), lines.join("\n"))
}

fn render(
    nodes: &[Node],
    index: usize,
    indent: &str,
    is_last: bool,
    is_root: bool,
    lines: &mut Vec<String>,
) {
    let node = &nodes[index];
    let connector = if is_last {
        "└───"
    } else {
        "├───"
    };
    if !is_root || node.ignored {
        let marker = if node.ignored { TRUNCATION } else { "" };
        lines.push(format!("{indent}{connector}{}/{marker}", node.name));
    }
    let child_indent = if is_root {
        String::new()
    } else {
        format!("{indent}{}", if is_last { "    " } else { "│   " })
    };
    let no_folders_after = node.folders.is_empty() && !node.more_folders;
    for (i, file) in node.files.iter().enumerate() {
        let last = i + 1 == node.files.len() && no_folders_after && !node.more_files;
        lines.push(format!(
            "{child_indent}{}{file}",
            if last { "└───" } else { "├───" }
        ));
    }
    if node.more_files {
        lines.push(format!(
            "{child_indent}{}{TRUNCATION}",
            if no_folders_after {
                "└───"
            } else {
                "├───"
            }
        ));
    }
    for (i, &child) in node.folders.iter().enumerate() {
        let last = i + 1 == node.folders.len() && !node.more_folders;
        render(nodes, child, &child_indent, last, false, lines);
    }
    if node.more_folders {
        lines.push(format!("{child_indent}└───{TRUNCATION}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn nested_tree_with_ignored_folder_and_limit() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/deep.txt"), "").unwrap();
        fs::write(root.join("a/one.txt"), "").unwrap();
        fs::create_dir_all(root.join("node_modules/x")).unwrap();
        fs::write(root.join("top.txt"), "").unwrap();
        let full = folder_structure(root, &FolderStructureOptions::default());
        let r = root.display();
        assert_eq!(
            full,
            format!(
                "Showing up to 200 items (files + folders). Folders or files indicated with ... contain more items not shown, were ignored, or the display limit (200 items) was reached.\n\n\
                 {r}/\n├───top.txt\n├───a/\n│   ├───one.txt\n│   └───b/\n│       └───deep.txt\n└───node_modules/..."
            )
        );
        let limited = folder_structure(
            root,
            &FolderStructureOptions {
                max_items: 2,
                ..Default::default()
            },
        );
        assert!(
            limited.ends_with(&format!("{r}/\n├───top.txt\n├───a/\n└───...")),
            "{limited}"
        );
    }
}
