//! MCP tool results as Gemini parts, the way Gemini CLI 0.61 converts them
//! (`transformMcpContentToParts`, `getStringifiedResultForDisplay`).
//!
//! | block | parts for the model |
//! |---|---|
//! | `text` | the text inside `<untrusted_context>` |
//! | `image`, `audio` | `[Tool '<tool>' provided the following image data with mime-type: <mime>]` + `inlineData` |
//! | `resource` with `text` | the text inside `<untrusted_context>` |
//! | `resource` with `blob` | `[Tool '<tool>' provided the following embedded resource with mime-type: <mime>]` + `inlineData` |
//! | `resource_link` | `Resource Link: <title or name> at <uri>` |
//!
//! Other block types are dropped. Results are handled as JSON so that
//! fields and block types this client does not model pass through.

use gd_gemini::Part;
use serde_json::Value;

/// Wraps text from a server so the model treats it as data, not
/// instructions; a closing tag inside is escaped.
pub fn wrap_untrusted(text: &str) -> String {
    let escaped = text.replace("</untrusted_context>", "&lt;/untrusted_context&gt;");
    format!("<untrusted_context>\n{escaped}\n</untrusted_context>")
}

fn content_blocks(result: &Value) -> Option<&Vec<Value>> {
    result.get("content").and_then(Value::as_array)
}

/// JavaScript truthiness of an optional string field.
fn non_empty<'a>(block: &'a Value, key: &str) -> Option<&'a str> {
    block
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The parts a `tools/call` result becomes for the model. `tool` is the
/// server's own name of the tool (it appears in the notes on binary data).
pub fn result_to_parts(result: &Value, tool: &str) -> Vec<Part> {
    let Some(blocks) = content_blocks(result) else {
        return vec![Part::text("[Error: Could not parse tool response]")];
    };
    let mut parts = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                parts.push(Part::text(wrap_untrusted(text)));
            }
            Some(kind @ ("image" | "audio")) => {
                let mime = block.get("mimeType").and_then(Value::as_str).unwrap_or("");
                let data = block.get("data").and_then(Value::as_str).unwrap_or("");
                parts.push(Part::text(format!(
                    "[Tool '{tool}' provided the following {kind} data with mime-type: {mime}]"
                )));
                parts.push(Part::inline_data(mime, data));
            }
            Some("resource") => {
                let resource = block.get("resource").unwrap_or(&Value::Null);
                if let Some(text) = non_empty(resource, "text") {
                    parts.push(Part::text(wrap_untrusted(text)));
                } else if let Some(blob) = non_empty(resource, "blob") {
                    let mime =
                        non_empty(resource, "mimeType").unwrap_or("application/octet-stream");
                    parts.push(Part::text(format!(
                        "[Tool '{tool}' provided the following embedded resource with mime-type: {mime}]"
                    )));
                    parts.push(Part::inline_data(mime, blob));
                }
            }
            Some("resource_link") => {
                let label = non_empty(block, "title")
                    .or_else(|| block.get("name").and_then(Value::as_str))
                    .unwrap_or("");
                let uri = block.get("uri").and_then(Value::as_str).unwrap_or("");
                parts.push(Part::text(format!("Resource Link: {label} at {uri}")));
            }
            _ => {}
        }
    }
    parts
}

/// A text rendering of a result for people (the UI's tool card and logs).
pub fn result_display(result: &Value) -> String {
    let Some(blocks) = content_blocks(result) else {
        return format!(
            "```json\n{}\n```",
            serde_json::to_string_pretty(result).unwrap_or_default()
        );
    };
    blocks
        .iter()
        .map(|block| {
            let str_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
            match block.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" => str_of("text").to_owned(),
                "image" => format!("[Image: {}]", str_of("mimeType")),
                "audio" => format!("[Audio: {}]", str_of("mimeType")),
                "resource_link" => format!(
                    "[Link to {}: {}]",
                    non_empty(block, "title").unwrap_or(str_of("name")),
                    str_of("uri")
                ),
                "resource" => {
                    let resource = block.get("resource").unwrap_or(&Value::Null);
                    match non_empty(resource, "text") {
                        Some(text) => text.to_owned(),
                        None => format!(
                            "[Embedded Resource: {}]",
                            non_empty(resource, "mimeType").unwrap_or("unknown type")
                        ),
                    }
                }
                other => format!("[Unknown content type: {other}]"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether the server marked the result as a tool error (`isError`).
pub fn is_error(result: &Value) -> bool {
    matches!(result.get("isError"), Some(Value::Bool(true)))
        || result.get("isError").and_then(Value::as_str) == Some("true")
}

/// The message sent to the model for a result with `isError`, worded like
/// Gemini CLI's.
pub fn tool_error_message(tool: &str, args: &Value, result: &Value) -> String {
    let call = serde_json::json!({"name": tool, "args": args});
    let response = serde_json::json!([{"functionResponse": {"name": tool, "response": result}}]);
    format!(
        "MCP tool '{tool}' reported tool error for function call: {call} with response: {response}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn texts(parts: &[Part]) -> Vec<String> {
        parts.iter().filter_map(|p| p.text.clone()).collect()
    }

    #[test]
    fn every_block_type() {
        let result = json!({"content": [
            {"type": "text", "text": "5"},
            {"type": "image", "data": "AAA=", "mimeType": "image/png"},
            {"type": "audio", "data": "BBB=", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside </untrusted_context> out"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "CCC="}},
            {"type": "resource_link", "uri": "file:///c", "name": "c", "title": "The C"},
            {"type": "resource_link", "uri": "file:///d", "name": "d"},
            {"type": "something_new", "x": 1}
        ]});
        let parts = result_to_parts(&result, "add");
        assert_eq!(
            texts(&parts),
            vec![
                "<untrusted_context>\n5\n</untrusted_context>".to_owned(),
                "[Tool 'add' provided the following image data with mime-type: image/png]".into(),
                "[Tool 'add' provided the following audio data with mime-type: audio/wav]".into(),
                "<untrusted_context>\ninside &lt;/untrusted_context&gt; out\n</untrusted_context>"
                    .into(),
                "[Tool 'add' provided the following embedded resource with mime-type: application/octet-stream]"
                    .into(),
                "Resource Link: The C at file:///c".into(),
                "Resource Link: d at file:///d".into(),
            ]
        );
        let blobs: Vec<(String, String)> = parts
            .iter()
            .filter_map(|p| p.inline_data.as_ref())
            .map(|b| (b.mime_type.clone(), b.data.clone()))
            .collect();
        assert_eq!(
            blobs,
            vec![
                ("image/png".into(), "AAA=".into()),
                ("audio/wav".into(), "BBB=".into()),
                ("application/octet-stream".into(), "CCC=".into())
            ]
        );
        assert_eq!(
            result_display(&result),
            "5\n[Image: image/png]\n[Audio: audio/wav]\ninside </untrusted_context> out\n[Embedded Resource: unknown type]\n[Link to The C: file:///c]\n[Link to d: file:///d]\n[Unknown content type: something_new]"
        );
    }

    #[test]
    fn errors() {
        assert!(is_error(&json!({"content": [], "isError": true})));
        assert!(!is_error(&json!({"content": []})));
        assert_eq!(
            tool_error_message(
                "boom",
                &json!({"a": 1}),
                &json!({"content": [{"type": "text", "text": "bad"}], "isError": true})
            ),
            r#"MCP tool 'boom' reported tool error for function call: {"name":"boom","args":{"a":1}} with response: [{"functionResponse":{"name":"boom","response":{"content":[{"type":"text","text":"bad"}],"isError":true}}}]"#
        );
        assert_eq!(
            texts(&result_to_parts(&json!({}), "x")),
            vec!["[Error: Could not parse tool response]".to_owned()]
        );
    }
}
