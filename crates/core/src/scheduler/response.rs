//! A tool's result as the model gets it: the `functionResponse` part (text
//! in `response.output`, or `response.error`), with images and documents as
//! sibling parts, and the notes the scheduler appends (the user modified the
//! proposal, the per-hunk report).

use gd_gemini::{FunctionResponse, Part};
use serde_json::json;

use crate::tools::LlmContent;

pub(super) fn append_note(content: LlmContent, note: &str) -> LlmContent {
    match content {
        LlmContent::Text(text) => LlmContent::Text(format!("{text}\n\n{note}")),
        LlmContent::Parts(mut parts) => {
            parts.push(Part::text(note));
            LlmContent::Parts(parts)
        }
    }
}

/// Converts a tool's content for the model into parts: text becomes
/// `response.output`; other parts (images, documents) follow the
/// `functionResponse` as siblings in the same user message.
pub fn function_response_parts(call_id: &str, name: &str, content: LlmContent) -> Vec<Part> {
    let (output, extra) = match content {
        LlmContent::Text(text) => (text, Vec::new()),
        LlmContent::Parts(parts) => {
            let (texts, others): (Vec<Part>, Vec<Part>) = parts.into_iter().partition(|p| {
                p.text.is_some() && p.inline_data.is_none() && p.file_data.is_none()
            });
            let text: Vec<String> = texts.into_iter().filter_map(|p| p.text).collect();
            let output = match (
                text.is_empty(),
                others.iter().find_map(|p| p.inline_data.as_ref()),
            ) {
                (false, _) => text.join("\n"),
                (true, Some(blob)) if others.len() == 1 => {
                    format!("Binary content of type {} was processed.", blob.mime_type)
                }
                (true, _) => "Tool execution succeeded.".to_owned(),
            };
            (output, others)
        }
    };
    let mut parts = vec![Part::function_response(FunctionResponse {
        id: Some(call_id.to_owned()),
        name: name.to_owned(),
        response: json!({ "output": output }),
        extra: Default::default(),
    })];
    parts.extend(extra);
    parts
}

/// A `functionResponse` carrying an error message for the model.
pub fn error_response(call_id: &str, name: &str, message: &str) -> Part {
    Part::function_response(FunctionResponse {
        id: Some(call_id.to_owned()),
        name: name.to_owned(),
        response: json!({ "error": message }),
        extra: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_parts_go_beside_a_status_response() {
        let parts = function_response_parts(
            "id",
            "read_file",
            LlmContent::Parts(vec![Part::inline_data("image/png", "AAAA")]),
        );
        assert_eq!(parts.len(), 2);
        let v = serde_json::to_value(&parts[0]).unwrap();
        assert_eq!(
            v["functionResponse"]["response"]["output"],
            "Binary content of type image/png was processed."
        );
        assert!(parts[1].inline_data.is_some());
        let text = function_response_parts("id", "x", LlmContent::Text("out".into()));
        assert_eq!(
            serde_json::to_value(&text[0]).unwrap()["functionResponse"]["response"],
            json!({"output": "out"})
        );
    }
}
