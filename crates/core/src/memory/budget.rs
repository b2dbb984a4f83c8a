//! What one memory load may cost: how often a file's content is included,
//! how many bytes the whole memory may hold, and one read per file.
//!
//! Without these bounds, imports multiply: six files under 1 KB, each
//! importing the next sixteen times, expand to over a million inclusions
//! (16⁵) — tens of seconds and hundreds of MB at start-up for a request the
//! server then refuses. Gemini CLI only stops a file that is already on the
//! current import chain (a cycle), so it expands such trees in full; we keep
//! its output for ordinary trees (a file imported from two branches appears
//! twice) and add two limits that only such trees reach.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use tracing::warn;

/// How many times one file's content is included into one context file
/// (counting every branch of its import tree). Gemini CLI includes a file
/// once per branch that imports it: a diamond (`a` imports `b` and `c`,
/// both import `d`) includes `d` twice, two stacked diamonds four times.
/// Beyond that a repeat adds no instruction the model has not already read,
/// only tokens; and bounding it bounds the work to
/// `files × MAX_INCLUDES_PER_FILE` inclusions instead of a power of the
/// fan-out.
pub const MAX_INCLUDES_PER_FILE: usize = 4;

/// The most bytes the whole memory (every context file with its imports
/// and markers) may hold: 256 KiB, about 64 000 tokens. The memory is
/// resent in the system instruction of every request, so this is already a
/// large share of each request's cost and of the context window; real
/// context files are a few KB. Past it, the rest is left out with a
/// warning rather than sending a request the server refuses.
pub const MAX_MEMORY_BYTES: usize = 256 * 1024;

/// A file read once for the whole load: its text and size, or why it
/// could not be read.
type Cached = Result<(Rc<str>, u64), String>;

/// The shared state of one memory load: the byte budget, the include
/// counts of the current context file, a cache so every file is read at
/// most once, and the warnings for the user.
#[derive(Debug)]
pub struct ImportBudget {
    cap: usize,
    used: usize,
    /// Where the cap was reached, once it was.
    exhausted_in: Option<PathBuf>,
    max_includes: usize,
    includes: HashMap<PathBuf, usize>,
    /// Files whose include bound was reported for the current context file.
    bound_reported: HashSet<PathBuf>,
    cache: HashMap<PathBuf, Cached>,
    reads: usize,
    total_includes: usize,
    warnings: Vec<String>,
}

impl Default for ImportBudget {
    fn default() -> Self {
        Self::new(MAX_MEMORY_BYTES, MAX_INCLUDES_PER_FILE)
    }
}

impl ImportBudget {
    pub fn new(cap: usize, max_includes: usize) -> Self {
        Self {
            cap,
            used: 0,
            exhausted_in: None,
            max_includes,
            includes: HashMap::new(),
            bound_reported: HashSet::new(),
            cache: HashMap::new(),
            reads: 0,
            total_includes: 0,
            warnings: Vec::new(),
        }
    }

    /// Starts a new context file: its imports are counted afresh (a shared
    /// file imported by several context files appears in each).
    pub fn begin_context_file(&mut self) {
        self.includes.clear();
        self.bound_reported.clear();
    }

    /// Bytes still free.
    pub fn remaining(&self) -> usize {
        self.cap - self.used
    }

    /// Whether the cap was reached; nothing more is added then.
    pub fn exhausted(&self) -> bool {
        self.exhausted_in.is_some()
    }

    /// The file in which the cap was reached.
    pub fn exhausted_in(&self) -> Option<&Path> {
        self.exhausted_in.as_deref()
    }

    /// How many files were read from disk (each at most once).
    pub fn reads(&self) -> usize {
        self.reads
    }

    /// How many imports were included, over all context files.
    pub fn includes(&self) -> usize {
        self.total_includes
    }

    /// The warnings so far, for the user.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Adds a warning of the load's own (a context file skipped, ...).
    pub fn add_warning(&mut self, message: String) {
        self.warnings.push(message);
    }

    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Reserves `bytes` that will be added outside [`Self::push`] (markers
    /// around a context file); false, and the cap is marked reached in
    /// `file`, when they do not fit.
    pub fn reserve(&mut self, bytes: usize, file: &Path) -> bool {
        if self.exhausted() {
            return false;
        }
        if bytes > self.remaining() {
            self.hit_cap(file);
            return false;
        }
        self.used += bytes;
        true
    }

    /// Appends as much of `text` as fits (cut at a character boundary);
    /// false when it did not all fit, and the cap is then marked reached in
    /// `file`.
    pub fn push(&mut self, out: &mut String, text: &str, file: &Path) -> bool {
        if self.exhausted() {
            return false;
        }
        if text.len() <= self.remaining() {
            self.used += text.len();
            out.push_str(text);
            return true;
        }
        let mut end = self.remaining();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.used += end;
        out.push_str(&text[..end]);
        self.hit_cap(file);
        false
    }

    fn hit_cap(&mut self, file: &Path) {
        if self.exhausted_in.is_none() {
            let message = format!(
                "Memory is limited to {} KiB; the limit was reached in {}, and the rest of the memory was left out.",
                self.cap / 1024,
                file.display()
            );
            warn!(file = %file.display(), cap = self.cap, "memory limit reached");
            self.warnings.push(message);
            self.exhausted_in = Some(file.to_path_buf());
        }
    }

    /// Counts one more inclusion of `path` into the current context file;
    /// false (with a warning naming both files, once per file) when it was
    /// already included [`MAX_INCLUDES_PER_FILE`] times.
    pub fn admit(&mut self, path: &Path, importer: &Path) -> bool {
        let count = self.includes.entry(path.to_path_buf()).or_default();
        if *count >= self.max_includes {
            if self.bound_reported.insert(path.to_path_buf()) {
                warn!(file = %path.display(), importer = %importer.display(), "memory import repeated too often");
                self.warnings.push(format!(
                    "Memory import {} is included at most {} times; further imports of it (first in {}) were left out.",
                    path.display(),
                    self.max_includes,
                    importer.display()
                ));
            }
            return false;
        }
        *count += 1;
        self.total_includes += 1;
        true
    }

    /// The text of `path`, read once per load and no larger than the bytes
    /// still free (a larger file is not read at all). Only regular files
    /// are read: a FIFO or device would block or never end.
    pub fn read(&mut self, path: &Path) -> Cached {
        if let Some(cached) = self.cache.get(path) {
            return cached.clone();
        }
        self.reads += 1;
        let read = read_regular(path, self.cap);
        if let Err(message) = &read
            && message.starts_with(TOO_LARGE)
        {
            warn!(file = %path.display(), cap = self.cap, "memory file too large");
            self.warnings.push(format!(
                "Memory file {} was left out: it is larger than the memory limit of {} KiB.",
                path.display(),
                self.cap / 1024
            ));
        }
        self.cache.insert(path.to_path_buf(), read.clone());
        read
    }
}

/// How a file over the cap is described (in the import comment).
pub(crate) const TOO_LARGE: &str = "File is larger than the memory limit";

/// Reads a regular file of at most `limit` bytes.
pub fn read_regular(path: &Path, limit: usize) -> Cached {
    let describe = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => "File not found".to_owned(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".to_owned(),
        _ => e.to_string(),
    };
    let metadata = std::fs::metadata(path).map_err(describe)?;
    if metadata.is_dir() {
        return Err("Is a directory".to_owned());
    }
    if !metadata.is_file() {
        return Err("Not a regular file".to_owned());
    }
    if metadata.len() > limit as u64 {
        return Err(format!("{TOO_LARGE} of {} KiB", limit / 1024));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(limit as u64 + 1).read_to_end(&mut bytes))
        .map_err(describe)?;
    if bytes.len() > limit {
        return Err(format!("{TOO_LARGE} of {} KiB", limit / 1024));
    }
    let size = bytes.len() as u64;
    Ok((String::from_utf8_lossy(&bytes).into(), size))
}
