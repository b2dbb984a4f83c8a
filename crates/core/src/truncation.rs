//! Bounding what a tool sends to the model. Output over the limit is cut to
//! its beginning and end, and the whole text is saved to a file in the
//! project's temporary directory so the model can read the rest on demand.

use gd_gemini::Part;
use tracing::warn;

use crate::tools::{LlmContent, ToolContext};

/// Share of the kept characters taken from the beginning (the rest from the end).
const HEAD_SHARE: f64 = 0.2;

/// Applies the session's output limit to a tool's content.
pub fn limit_content(content: LlmContent, call_id: &str, ctx: &ToolContext) -> LlmContent {
    let max = ctx.services.limits.max_output_chars;
    match content {
        LlmContent::Text(text) => LlmContent::Text(limit_text(text, max, call_id, ctx)),
        LlmContent::Parts(parts) => LlmContent::Parts(
            parts
                .into_iter()
                .map(|mut part| {
                    if let Some(text) = part.text.take() {
                        part.text = Some(limit_text(text, max, call_id, ctx));
                    }
                    part
                })
                .collect::<Vec<Part>>(),
        ),
    }
}

fn limit_text(text: String, max: usize, call_id: &str, ctx: &ToolContext) -> String {
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    let saved = save_full_output(&text, call_id, ctx);
    let head_len = ((max as f64) * HEAD_SHARE) as usize;
    let tail_len = max.saturating_sub(head_len);
    let head: String = text.chars().take(head_len).collect();
    let tail: String = text.chars().skip(total - tail_len).collect();
    let location = match saved {
        Some(path) => format!(
            " The full output ({total} characters) was saved to {}; read parts of it with read_file (start_line/end_line) or search it with grep_search.",
            path.display()
        ),
        None => String::new(),
    };
    format!(
        "{head}\n\n[... output truncated: showing the first {head_len} and the last {tail_len} of {total} characters.{location} ...]\n\n{tail}"
    )
}

fn save_full_output(text: &str, call_id: &str, ctx: &ToolContext) -> Option<std::path::PathBuf> {
    let dir = ctx.services.temp_dir.join("tool-outputs");
    let safe_id: String = call_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{safe_id}.txt"));
    match std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, text)) {
        Ok(()) => Some(path),
        Err(error) => {
            warn!(%error, dir = %dir.display(), "could not save the full tool output");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolServices;
    use std::sync::Arc;

    #[test]
    fn long_output_keeps_head_and_tail_and_saves_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ToolContext::new(vec![dir.path().to_path_buf()]);
        let mut services = ToolServices {
            temp_dir: dir.path().join("tmp"),
            ..ToolServices::default()
        };
        services.limits.max_output_chars = 100;
        ctx.services = Arc::new(services);
        let text: String = (0..1000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let LlmContent::Text(out) = limit_content(LlmContent::Text(text.clone()), "call/1", &ctx)
        else {
            panic!("text expected");
        };
        assert!(out.starts_with(&text[..20]));
        assert!(out.ends_with(&text[920..]));
        assert!(out.contains("first 20 and the last 80 of 1000 characters"));
        let saved = dir.path().join("tmp/tool-outputs/call_1.txt");
        assert_eq!(std::fs::read_to_string(saved).unwrap(), text);
        let LlmContent::Text(short) = limit_content(LlmContent::Text("ok".into()), "c", &ctx)
        else {
            panic!()
        };
        assert_eq!(short, "ok");
    }
}
