//! The workspace file index behind the desktop's context picker.
//!
//! Four pieces, all without Tauri so they can be tested and benchmarked on
//! their own:
//! - [`listing`]: one directory level at a time (the tree is lazy), sorted
//!   directories first, honouring `.gitignore`/`.geminiignore` like the
//!   core's tools do, with a toggle to show ignored entries (flagged);
//! - [`index`]: the full list of files of every root, built in the
//!   background with the `ignore` crate's parallel walker and searched with
//!   nucleo while it is still building (results stream in);
//! - [`watch`]: live updates from the file system (notify +
//!   notify-debouncer-full) applied to the index and reported as events;
//! - [`tokens`]: the token estimate of a selection, with binary and huge
//!   files flagged before they are sent.

pub mod index;
pub mod listing;
pub mod tokens;
pub mod watch;

mod filter;

pub use filter::Filtering;
pub use index::{FileIndex, IndexEvent, SearchMatch, SearchUpdate};
pub use listing::{Entry, EntryKind, ListError, list_dir};
pub use tokens::{ItemEstimate, SelectionEstimate, estimate_selection};
pub use watch::{WatchError, Watcher};

/// Files larger than this are flagged `huge`: about 260k tokens, a quarter
/// of a Gemini context window, worth a second look before sending.
pub const HUGE_FILE_BYTES: u64 = 1024 * 1024;

/// The name of Gemini's own ignore file, as in the core.
pub const GEMINI_IGNORE_FILE: &str = ".geminiignore";
