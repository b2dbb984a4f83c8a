//! Memory: the context files (`GEMINI.md` and friends) loaded into the
//! system instruction, as the memory view and `/memory show` present them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One loaded context file and the files it imports, in import order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MemoryFileNode {
    /// Absolute path of the file.
    pub path: String,
    /// Size of the file on disk, in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// Files imported with `@path`, in the order they were imported.
    pub imports: Vec<MemoryFileNode>,
}
