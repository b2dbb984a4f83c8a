//! Token estimates for a selection, shown on the chips before sending.
//!
//! Like the core's `tokens::estimate_tokens` (and Gemini CLI): about four
//! characters per token for text. Images cost the API's flat ~258 tokens;
//! other binary files are not sent as text by `@path`, so they count 0 and
//! are flagged. A folder counts every file below it that the ignore rules
//! let through, as `@folder` would read it.

use std::path::Path;

use serde::Serialize;

use crate::listing::{file_looks_binary, resolve};
use crate::{Filtering, HUGE_FILE_BYTES};

/// The flat cost of an image part.
const IMAGE_TOKENS: u64 = 258;

/// A folder's estimate stops after this many files (and says so).
const MAX_FOLDER_FILES: usize = 5_000;

/// The estimate of one selected file or folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "camelCase")]
pub struct ItemEstimate {
    pub path: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub tokens: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    pub files: usize,
    /// Binary files that will not go as text.
    pub binary_files: usize,
    /// Files over [`HUGE_FILE_BYTES`].
    pub huge_files: usize,
    /// The folder had more files than were counted.
    pub truncated: bool,
    /// The path could not be read (missing, outside the roots...).
    pub error: Option<String>,
}

/// The estimate of a whole selection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "camelCase")]
pub struct SelectionEstimate {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub tokens: u64,
    pub items: Vec<ItemEstimate>,
}

/// Estimates each path of `paths` (keys as the index uses them: relative
/// to `roots[0]`, or absolute inside another root).
pub fn estimate_selection(
    roots: &[std::path::PathBuf],
    paths: &[String],
    filtering: Filtering,
) -> SelectionEstimate {
    let items: Vec<ItemEstimate> = paths
        .iter()
        .map(|p| estimate_path(roots, p, filtering))
        .collect();
    SelectionEstimate {
        tokens: items.iter().map(|i| i.tokens).sum(),
        items,
    }
}

fn estimate_path(roots: &[std::path::PathBuf], key: &str, filtering: Filtering) -> ItemEstimate {
    let mut item = ItemEstimate {
        path: key.to_owned(),
        tokens: 0,
        bytes: 0,
        files: 0,
        binary_files: 0,
        huge_files: 0,
        truncated: false,
        error: None,
    };
    let full = if Path::new(key).is_absolute() {
        let inside = roots.iter().skip(1).any(|r| Path::new(key).starts_with(r));
        if !inside {
            item.error = Some("not inside the workspace".into());
            return item;
        }
        Path::new(key).to_path_buf()
    } else {
        match roots.first().map(|r| resolve(r, key)) {
            Some(Ok(path)) => path,
            _ => {
                item.error = Some("not inside the workspace".into());
                return item;
            }
        }
    };
    let meta = match std::fs::metadata(&full) {
        Ok(meta) => meta,
        Err(error) => {
            item.error = Some(error.to_string());
            return item;
        }
    };
    if meta.is_file() {
        add_file(&mut item, &full, meta.len());
        return item;
    }
    for entry in filtering.walker(&full).build().filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if item.files >= MAX_FOLDER_FILES {
            item.truncated = true;
            break;
        }
        let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
        add_file(&mut item, entry.path(), len);
    }
    item
}

fn add_file(item: &mut ItemEstimate, path: &Path, len: u64) {
    item.files += 1;
    item.bytes += len;
    if len > HUGE_FILE_BYTES {
        item.huge_files += 1;
    }
    if file_looks_binary(path) {
        item.binary_files += 1;
        if is_image(path) {
            item.tokens += IMAGE_TOKENS;
        }
    } else {
        item.tokens += len.div_ceil(4);
    }
}

fn is_image(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e.to_ascii_lowercase().as_str(),
            "png" | "jpg" | "jpeg" | "gif" | "webp"
        )
    })
}
