//! Memory: the context files (`GEMINI.md`, or the names in
//! `context.fileName`) that go into the system instruction.
//!
//! * [`discovery`] finds them (global, up to the project root, below the
//!   workspace);
//! * [`imports`] resolves their `@path` imports into one text and an import
//!   tree;
//! * [`load_memory`] puts the files together with Gemini CLI's file-boundary
//!   markers (`--- Context from: path ---` … `--- End of Context from: path
//!   ---`), and [`system_prompt_with_memory`] appends that to the system
//!   prompt after a `---` rule, as Gemini CLI does.

pub mod code_regions;
pub mod discovery;
pub mod imports;

use std::path::{Component, Path, PathBuf};

use tracing::{debug, warn};

pub use discovery::{DEFAULT_CONTEXT_FILE_NAME, DEFAULT_MAX_DIRS, DiscoveryOptions, discover};
pub use imports::{ImportNode, ImportRules, process_imports};

/// The memory as loaded for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadedMemory {
    /// The concatenated text with file-boundary markers ("" when no file
    /// has content).
    pub text: String,
    /// Every context file found, in load order, with its imports.
    pub files: Vec<ImportNode>,
}

impl LoadedMemory {
    /// The event that reports this memory to the frontend.
    pub fn event(&self) -> gd_protocol::Event {
        gd_protocol::Event::MemoryLoaded {
            files: self.files.iter().map(ImportNode::to_protocol).collect(),
            chars: self.text.chars().count() as u64,
        }
    }
}

/// Finds and reads the context files, resolving their imports. Imports may
/// come from the importing file's project root (or its directory when it is
/// in no git repository) and from the workspace directories.
pub fn load_memory(options: &DiscoveryOptions, workspace_dirs: &[PathBuf]) -> LoadedMemory {
    let started = std::time::Instant::now();
    let mut blocks = Vec::new();
    let mut files = Vec::new();
    for path in discover(options) {
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) => {
                warn!(path = %path.display(), %error, "context file unreadable; skipped");
                continue;
            }
        };
        let content = String::from_utf8_lossy(&bytes);
        let dir = path.parent().unwrap_or(Path::new("/"));
        let mut allowed =
            vec![discovery::find_project_root(dir).unwrap_or_else(|| dir.to_path_buf())];
        allowed.extend(workspace_dirs.iter().cloned());
        let processed = process_imports(&content, &path, &ImportRules::new(allowed));
        let trimmed = processed.content.trim();
        if !trimmed.is_empty() {
            let shown = display_path(&path, &options.workspace);
            blocks.push(format!(
                "--- Context from: {shown} ---\n{trimmed}\n--- End of Context from: {shown} ---"
            ));
        }
        files.push(ImportNode {
            path,
            bytes: bytes.len() as u64,
            imports: processed.imports,
        });
    }
    debug!(
        files = files.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "memory loaded"
    );
    LoadedMemory {
        text: blocks.join("\n\n"),
        files,
    }
}

/// The system prompt with the memory after it (unchanged without memory).
pub fn system_prompt_with_memory(base: &str, memory: &str) -> String {
    let memory = memory.trim();
    if memory.is_empty() {
        base.to_owned()
    } else {
        format!("{base}\n\n---\n\n{memory}")
    }
}

/// `path` relative to `from` (with `..` where needed), as Gemini CLI shows
/// context file paths; absolute when they share no prefix.
pub fn display_path(path: &Path, from: &Path) -> String {
    let path_parts: Vec<Component> = path.components().collect();
    let from_parts: Vec<Component> = from.components().collect();
    let common = path_parts
        .iter()
        .zip(&from_parts)
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return path.display().to_string();
    }
    let mut out = PathBuf::new();
    for _ in common..from_parts.len() {
        out.push("..");
    }
    for part in &path_parts[common..] {
        out.push(part.as_os_str());
    }
    out.display().to_string()
}

/// Remembers `fact` in the global memory file (`~/.gemini/GEMINI.md`, under
/// `## Gemini Added Memories`), as the `save_memory` tool does.
pub fn add_global_memory(home: &Path, fact: &str) -> Result<PathBuf, String> {
    let fact = crate::tools::memory::normalise_fact(fact);
    if fact.is_empty() {
        return Err("The memory to add is empty.".into());
    }
    let path = home.join(".gemini").join(DEFAULT_CONTEXT_FILE_NAME);
    let original = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("Cannot read {}: {e}", path.display())),
    };
    let updated = crate::tools::memory::add_memory(&original, &fact);
    crate::tools::fs_write::write_atomic(&path, updated.as_bytes())
        .map_err(|e| format!("Cannot save the memory to {}: {e}", path.display()))?;
    Ok(path)
}
