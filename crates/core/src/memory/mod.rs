//! Memory: the context files (`GEMINI.md`, or the names in
//! `context.fileName`) that go into the system instruction.
//!
//! * [`discovery`] finds them (global, up to the project root, below the
//!   workspace);
//! * [`imports`] resolves their `@path` imports into one text and an import
//!   tree, on a [`budget`] that bounds repeats and the total size;
//! * [`load_memory`] puts the files together with Gemini CLI's file-boundary
//!   markers (`--- Context from: path ---` … `--- End of Context from: path
//!   ---`), and [`system_prompt_with_memory`] appends that to the system
//!   prompt after a `---` rule, as Gemini CLI does.

pub mod budget;
pub mod code_regions;
pub mod discovery;
pub mod imports;
mod scope;

use std::path::{Component, Path, PathBuf};

use tracing::{debug, warn};

pub use budget::{ImportBudget, MAX_INCLUDES_PER_FILE, MAX_MEMORY_BYTES};
pub use discovery::{
    ContextFile, DEFAULT_CONTEXT_FILE_NAME, DEFAULT_MAX_DIRS, DiscoveryOptions, Scope, discover,
};
pub use imports::{ImportNode, ImportRules, process_imports, process_imports_with};

/// The memory as loaded for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadedMemory {
    /// The concatenated text with file-boundary markers ("" when no file
    /// has content).
    pub text: String,
    /// Every context file loaded, in load order, with its imports.
    pub files: Vec<ImportNode>,
    /// What the user should know: files skipped, limits reached (each
    /// names the file). The session reports them as warnings.
    pub warnings: Vec<String>,
    /// Files read from disk (context files and imports, each at most once).
    pub file_reads: usize,
    /// Imports included, counting repeats.
    pub includes: usize,
}

impl LoadedMemory {
    /// The event that reports this memory to the frontend.
    pub fn event(&self) -> gd_protocol::Event {
        gd_protocol::Event::MemoryLoaded {
            files: self.files.iter().map(ImportNode::to_protocol).collect(),
            chars: self.text.chars().count() as u64,
        }
    }

    /// The events for the session: the warnings, then the memory itself.
    pub fn events(&self) -> Vec<gd_protocol::Event> {
        let mut events: Vec<gd_protocol::Event> = self
            .warnings
            .iter()
            .map(|message| gd_protocol::Event::Warning {
                message: message.clone(),
            })
            .collect();
        events.push(self.event());
        events
    }
}

/// Finds and reads the context files, resolving their imports. Where a
/// file may lead through links and import from depends on where it was
/// found (see the `scope` module): a file that leads elsewhere is skipped
/// with a warning, an import from elsewhere is left out with a comment. The
/// whole text stays within [`MAX_MEMORY_BYTES`] (plus one short marker
/// saying where it was cut).
pub fn load_memory(options: &DiscoveryOptions, workspace_dirs: &[PathBuf]) -> LoadedMemory {
    load_memory_with(options, workspace_dirs, ImportBudget::default())
}

/// [`load_memory`] on a given budget (tests use small ones).
pub fn load_memory_with(
    options: &DiscoveryOptions,
    workspace_dirs: &[PathBuf],
    mut budget: ImportBudget,
) -> LoadedMemory {
    let started = std::time::Instant::now();
    let mut blocks = Vec::new();
    let mut files = Vec::new();
    let mut left_out = Vec::new();
    for file in discovery::discover_all_files(options, workspace_dirs) {
        let path = file.path.clone();
        let shown = display_path(&path, &options.workspace);
        if budget.exhausted() {
            left_out.push(shown);
            continue;
        }
        let allowed = scope::import_roots(&file, options, workspace_dirs);
        let real = match scope::check(&file, &shown, &allowed) {
            Ok(real) => real,
            Err(warning) => {
                warn!(path = %path.display(), "context file leads outside its scope; skipped");
                budget.add_warning(warning);
                continue;
            }
        };
        let (content, bytes) = match budget.read(&real) {
            Ok(read) => read,
            Err(error) => {
                warn!(path = %path.display(), %error, "context file unreadable; skipped");
                // The budget already reported a file over the limit.
                if !error.starts_with(budget::TOO_LARGE) {
                    budget.add_warning(format!("Context file {shown} skipped: {error}."));
                }
                continue;
            }
        };
        let header = format!("--- Context from: {shown} ---\n");
        let footer = format!("\n--- End of Context from: {shown} ---");
        // The separator between blocks ("\n\n") is reserved with the markers.
        if !budget.reserve(header.len() + footer.len() + 2, &path) {
            left_out.push(shown);
            continue;
        }
        budget.begin_context_file();
        let processed =
            process_imports_with(&content, &path, &ImportRules::new(allowed), &mut budget);
        let mut body = processed.content.trim().to_owned();
        if budget.exhausted() {
            body.push_str("\n<!-- Memory limit reached: the rest of the memory was left out -->");
        }
        if !body.trim().is_empty() {
            blocks.push(format!("{header}{body}{footer}"));
        }
        files.push(ImportNode {
            path,
            bytes,
            imports: processed.imports,
        });
    }
    if !left_out.is_empty() {
        budget.add_warning(format!(
            "Memory limit reached; these context files were not loaded: {}.",
            left_out.join(", ")
        ));
    }
    debug!(
        files = files.len(),
        reads = budget.reads(),
        includes = budget.includes(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "memory loaded"
    );
    LoadedMemory {
        text: blocks.join("\n\n"),
        files,
        file_reads: budget.reads(),
        includes: budget.includes(),
        warnings: budget.take_warnings(),
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
