//! Reading the files a `read_many_files` call found into one text part
//! each (media as inline data), within the session's output budget, with
//! a summary of what was read and what was skipped.

use std::path::Path;

use gd_gemini::Part;

use super::select::{Found, media_requested, relative};
use super::{Job, MAX_LINES_PER_FILE, MAX_LISTED, MAX_WALK_ENTRIES};
use crate::tools::read_file::{self, Loaded};
use crate::tools::{ToolErrorKind, ToolResult, text};

pub(super) fn read_found(job: &Job, mut found: Found) -> ToolResult {
    let mut parts: Vec<Part> = Vec::new();
    let mut read: Vec<String> = Vec::new();
    let mut remaining = job.budget;
    let mut out_of_budget = 0usize;
    let files = std::mem::take(&mut found.files);
    for (path, explicit) in files {
        if job.cancel.is_cancelled() {
            return ToolResult::error(ToolErrorKind::Cancelled, "Reading files was cancelled.");
        }
        let shown = text::display_path(&path, &job.roots);
        if explicit
            && let Some(rel) = relative(&path, &job.roots)
            && job.excludes.by_user(rel)
        {
            found.skip(shown, "excluded by a pattern");
            continue;
        }
        let media = text::media_type(&path);
        if media.is_some() && !media_requested(&path, explicit, &job.patterns) {
            found.skip(
                shown,
                "media file not asked for; name it or its extension to include it",
            );
            continue;
        }
        if remaining == 0 {
            out_of_budget += 1;
            continue;
        }
        let header = format!("--- {} ---\n\n", path.display());
        let staged = job.staging.as_ref().and_then(|s| s.staged_text(&path));
        match read_file::load_staged(&path, staged.as_deref(), None, None, MAX_LINES_PER_FILE) {
            Ok(Loaded::Media(m)) => {
                parts.push(Part::text(format!("{header}[Attached: {}]\n\n", m.mime)));
                parts.push(Part::inline_data(m.mime, m.data_base64));
                read.push(shown);
            }
            Ok(Loaded::Text(window)) => {
                let mut body = window.with_notice(&path);
                let full = header.len() + body.chars().count() + 2;
                if full > remaining {
                    body =
                        cut_to_budget(&path, &window, remaining.saturating_sub(header.len() + 200));
                    remaining = 0;
                } else {
                    remaining -= full;
                }
                parts.push(Part::text(format!("{header}{body}\n\n")));
                read.push(shown);
            }
            Err(error) => {
                let why = match error.kind {
                    ToolErrorKind::BinaryFile => "binary file".to_owned(),
                    ToolErrorKind::FileTooLarge => {
                        format!("larger than {}", text::human_size(text::MAX_FILE_SIZE))
                    }
                    _ => error.message,
                };
                found.skip(shown, why);
            }
        }
    }
    if out_of_budget > 0 {
        found.skip(
            format!("{out_of_budget} more file(s)"),
            "output limit reached; read them in another call",
        );
    }
    if found.walk_limit_hit {
        found.skip(
            "the rest of the search",
            format!("stopped after {MAX_WALK_ENTRIES} directory entries; use narrower patterns"),
        );
    }
    let skipped_summary = summarize_skipped(&found.skipped);
    if read.is_empty() {
        let mut message = "No files were read: nothing matched the paths and patterns, or every match was skipped.".to_owned();
        if !skipped_summary.is_empty() {
            message.push('\n');
            message.push_str(&skipped_summary);
        }
        let display = if skipped_summary.is_empty() {
            "No files read".to_owned()
        } else {
            format!("No files read\n{skipped_summary}")
        };
        return ToolResult::success(message, display);
    }
    parts.push(Part::text("--- End of content ---"));
    let mut display = format!("Read {} file(s): {}", read.len(), list(&read));
    if !skipped_summary.is_empty() {
        display.push('\n');
        display.push_str(&skipped_summary);
    }
    ToolResult::parts(parts, display)
}

/// A text file cut to about `budget` characters, whole lines only.
fn cut_to_budget(path: &Path, window: &read_file::TextWindow, budget: usize) -> String {
    let mut used = 0usize;
    let mut lines = Vec::new();
    for line in window.content.split('\n') {
        let len = line.chars().count() + 1;
        if used + len > budget {
            break;
        }
        used += len;
        lines.push(line);
    }
    let shown = lines.len();
    let last = window.first.max(1) + shown.saturating_sub(1);
    let note = if shown == 0 {
        format!(
            "[Not shown: the output limit was reached. Use read_file on {} to read it.]",
            path.display()
        )
    } else {
        format!(
            "[Cut to fit the output limit: lines {}-{last} of {} shown. To read more, call read_file on {} with start_line: {}.]",
            window.first.max(1),
            window.total,
            path.display(),
            last + 1
        )
    };
    format!("{note}\n\n{}", lines.join("\n"))
}

fn list(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(MAX_LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > MAX_LISTED {
        text.push_str(&format!(" and {} more", items.len() - MAX_LISTED));
    }
    text
}

fn summarize_skipped(skipped: &[(String, String)]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = skipped
        .iter()
        .map(|(what, why)| format!("{what} ({why})"))
        .collect();
    format!("Skipped {}: {}", skipped.len(), list(&shown))
}
