//! The memory import processor (Gemini CLI's "Memory Import Processor"):
//! `@path` in a context file is replaced by that file's content, recursively.
//!
//! Rules, as the seed specifies them:
//! * `@./x.md`, `@../x.md`, `@sub/x.md` are relative to the importing file's
//!   directory, `@/abs/x.md` is absolute; an import starts at the start of
//!   the text or after whitespace and runs to the next whitespace.
//! * `@` inside fenced code blocks and inline code spans is left alone.
//! * Imports resolving outside the allowed directories are refused, and so
//!   are URLs (`file://`, `http(s)://`).
//! * A file already on the current import chain is not imported again
//!   (circular imports), which also stops `a → b → a`.
//! * Beyond Gemini CLI, whose trees grow as a power of the fan-out: a file
//!   is included at most [`super::budget::MAX_INCLUDES_PER_FILE`] times per
//!   context file, read at most once per load, and the whole memory stops
//!   at [`super::budget::MAX_MEMORY_BYTES`] (see [`super::budget`]).
//! * Nesting stops at [`DEFAULT_MAX_DEPTH`] levels: a file at that depth is
//!   included as it is, its `@` lines unprocessed.
//! * A missing or unreadable file becomes an HTML comment saying why, so the
//!   rest of the memory still loads.
//! * Every imported file is recorded in the returned import tree, in order.

use std::path::{Path, PathBuf};

use tracing::debug;

use super::budget::ImportBudget;
use super::code_regions::{code_regions, in_regions};
use crate::tools::files::{is_within, normalize};

/// How many levels of nested imports are followed (as in Gemini CLI).
pub const DEFAULT_MAX_DEPTH: usize = 5;

/// A file in the import tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportNode {
    pub path: PathBuf,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// Direct imports, in the order they were imported.
    pub imports: Vec<ImportNode>,
}

impl ImportNode {
    pub fn to_protocol(&self) -> gd_protocol::MemoryFileNode {
        gd_protocol::MemoryFileNode {
            path: self.path.display().to_string(),
            bytes: self.bytes,
            imports: self.imports.iter().map(Self::to_protocol).collect(),
        }
    }
}

/// The result of processing one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    /// The text with every import resolved.
    pub content: String,
    /// The imports found, as a forest under the processed file.
    pub imports: Vec<ImportNode>,
}

/// Where imports may come from and how deep they nest.
#[derive(Debug, Clone)]
pub struct ImportRules {
    pub allowed_dirs: Vec<PathBuf>,
    pub max_depth: usize,
}

impl ImportRules {
    pub fn new(allowed_dirs: Vec<PathBuf>) -> Self {
        Self {
            allowed_dirs,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// Resolves the imports in `content`, the text of the file at `file`, on
/// a budget of its own (see [`process_imports_with`]).
pub fn process_imports(content: &str, file: &Path, rules: &ImportRules) -> Processed {
    process_imports_with(content, file, rules, &mut ImportBudget::default())
}

/// Resolves the imports in `content`, the text of the file at `file`,
/// charging `budget`: each file is read at most once, included at most
/// [`super::budget::MAX_INCLUDES_PER_FILE`] times, and the text stops where
/// the budget's byte cap is reached (the budget then holds a warning naming
/// the file).
pub fn process_imports_with(
    content: &str,
    file: &Path,
    rules: &ImportRules,
    budget: &mut ImportBudget,
) -> Processed {
    let mut chain = vec![normalize(file)];
    process(content, rules, &mut chain, budget)
}

/// `chain` is the import chain down to the file whose `content` this is
/// (its last entry); imports are relative to that file's directory.
fn process(
    content: &str,
    rules: &ImportRules,
    chain: &mut Vec<PathBuf>,
    budget: &mut ImportBudget,
) -> Processed {
    let file = chain.last().cloned().unwrap_or_default();
    let base = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut out = String::new();
    let mut imports = Vec::new();
    // `chain` holds the root file too, so the depth of this file is len - 1.
    if chain.len() > rules.max_depth {
        debug!(max_depth = rules.max_depth, "maximum import depth reached");
        budget.push(&mut out, content, &file);
        return Processed {
            content: out,
            imports,
        };
    }
    let regions = code_regions(content);
    let mut last = 0;
    for (start, end, raw) in find_imports(content) {
        if in_regions(&regions, start) {
            continue;
        }
        if !budget.push(&mut out, &content[last..start], &file) {
            break;
        }
        last = end;
        let note = match validate_import_path(raw, &base, &rules.allowed_dirs) {
            None => {
                format!("<!-- Import failed: {raw} - Path is outside the allowed directories -->")
            }
            Some(path) if chain.contains(&path) => {
                format!("<!-- File already processed: {raw} -->")
            }
            Some(path) => match budget.read(&path) {
                Err(message) => {
                    debug!(import = raw, %message, "memory import failed");
                    format!("<!-- Import failed: {raw} - {message} -->")
                }
                Ok(_) if !budget.admit(&path, &file) => {
                    format!("<!-- File already included often enough: {raw} -->")
                }
                Ok((text, bytes)) => {
                    if !budget.push(&mut out, &format!("<!-- Imported from: {raw} -->\n"), &file) {
                        break;
                    }
                    chain.push(path.clone());
                    let nested = process(&text, rules, chain, budget);
                    chain.pop();
                    out.push_str(&nested.content);
                    imports.push(ImportNode {
                        path,
                        bytes,
                        imports: nested.imports,
                    });
                    format!("\n<!-- End of import from: {raw} -->")
                }
            },
        };
        if !budget.push(&mut out, &note, &file) {
            break;
        }
    }
    if !budget.exhausted() {
        budget.push(&mut out, &content[last..], &file);
    }
    Processed {
        content: out,
        imports,
    }
}

/// `(start, end, path)` of every `@path` candidate: `@` at the start or
/// after whitespace, followed by a path starting with `.`, `/` or an ASCII
/// letter, up to the next whitespace.
pub fn find_imports(content: &str) -> Vec<(usize, usize, &str)> {
    let bytes = content.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(offset) = content[i..].find('@') {
        let at = i + offset;
        i = at + 1;
        if at > 0 && !bytes[at - 1].is_ascii_whitespace() {
            continue;
        }
        let end = content[at + 1..]
            .find(|c: char| c.is_whitespace())
            .map_or(content.len(), |e| at + 1 + e);
        let path = &content[at + 1..end];
        if path
            .bytes()
            .next()
            .is_some_and(|b| b == b'.' || b == b'/' || b.is_ascii_alphabetic())
        {
            found.push((at, end, path));
            i = end;
        }
    }
    found
}

/// The absolute, normalised path `import` names from `base`, if it lies in
/// one of `allowed`. URLs are never allowed.
pub fn validate_import_path(import: &str, base: &Path, allowed: &[PathBuf]) -> Option<PathBuf> {
    let lower = import.to_ascii_lowercase();
    if ["file://", "http://", "https://"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
    {
        return None;
    }
    let path = normalize(&base.join(import));
    is_within(&path, allowed).then_some(path)
}
