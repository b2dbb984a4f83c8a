//! `google_web_search`: asks the model to answer with Google Search
//! grounding, then adds numbered citation markers and a Sources list from
//! the grounding metadata.

use gd_gemini::{Content, GenerateContentRequest, RequestMeta, Tool as WireTool};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolContext, ToolError, ToolErrorKind, ToolResult};

/// The arguments of a `google_web_search` call.
#[derive(Debug, Deserialize)]
pub struct Params {
    query: String,
}

pub struct GoogleWebSearch {
    schema: Value,
}

impl GoogleWebSearch {
    pub const NAME: &'static str = "google_web_search";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search the web for."}
                },
                "required": ["query"]
            }),
        }
    }
}

crate::tools::tool_info! {
    default GoogleWebSearch,
    display: "GoogleSearch",
    kind: Search,
    description: "Searches the web with Google and returns a grounded summary with numbered citations and the list of sources. Use it for current information, documentation and facts that may have changed since training.",
    fn describe_call(&self, args: &Value) -> String {
        format!(
            "Searching the web for \"{}\"",
            args["query"].as_str().unwrap_or_default()
        )
    }
}

impl crate::tools::TypedTool for GoogleWebSearch {
    type Args = Params;

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let query = args.query.trim().to_owned();
        if query.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::InvalidParams,
                "The 'query' must not be empty.",
            ));
        }
        let Some(model) = &ctx.services.model else {
            return Err(ToolError::new(
                ToolErrorKind::Execution,
                "Web search needs a model connection.",
            ));
        };
        let request = GenerateContentRequest {
            contents: vec![Content::user_text(&query)],
            tools: Some(vec![WireTool {
                google_search: Some(json!({})),
                ..WireTool::default()
            }]),
            ..GenerateContentRequest::default()
        };
        let meta = RequestMeta {
            session_id: model.session_id.clone(),
            prompt_id: format!("{}########web-search", model.session_id),
        };
        let response = match model.client.generate(&model.model, &request, &meta).await {
            Ok(r) => r,
            Err(e) => {
                return Err(ToolError::new(
                    ToolErrorKind::Network,
                    format!("Error during web search for \"{query}\": {e}"),
                ));
            }
        };
        let text = response.text();
        if text.trim().is_empty() {
            let message = format!("No search results or information found for query: \"{query}\"");
            return Ok(ToolResult::success(message.clone(), message));
        }
        let grounding = response
            .candidate()
            .and_then(|c| c.grounding_metadata.clone())
            .unwrap_or(Value::Null);
        let answer = cite(&text, &grounding);
        Ok(ToolResult::success(
            format!("Web search results for \"{query}\":\n\n{answer}"),
            format!("Search results for \"{query}\" returned."),
        ))
    }
}

/// Inserts `[n]` markers after each grounded segment (the API gives UTF-8
/// byte offsets) and appends a numbered Sources list.
pub fn cite(text: &str, grounding: &Value) -> String {
    let chunks = grounding["groundingChunks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut inserts: Vec<(usize, String)> = grounding["groundingSupports"]
        .as_array()
        .map(|supports| {
            supports
                .iter()
                .filter_map(|support| {
                    let end = support["segment"]["endIndex"].as_u64()? as usize;
                    let markers: String = support["groundingChunkIndices"]
                        .as_array()?
                        .iter()
                        .filter_map(Value::as_u64)
                        .map(|i| format!("[{}]", i + 1))
                        .collect();
                    (!markers.is_empty()).then_some((end, markers))
                })
                .collect()
        })
        .unwrap_or_default();
    // Insert from the end so earlier offsets stay valid.
    inserts.sort_by_key(|(end, _)| std::cmp::Reverse(*end));
    let mut cited = text.to_owned();
    for (end, markers) in inserts {
        let mut at = end.min(cited.len());
        while !cited.is_char_boundary(at) {
            at -= 1;
        }
        cited.insert_str(at, &markers);
    }
    let sources: Vec<String> = chunks
        .iter()
        .enumerate()
        .filter_map(|(i, chunk)| {
            let web = chunk.get("web")?;
            let uri = web["uri"].as_str().unwrap_or_default();
            let title = web["title"].as_str().unwrap_or("Untitled");
            Some(format!("[{}] {title} ({uri})", i + 1))
        })
        .collect();
    if !sources.is_empty() {
        cited.push_str("\n\nSources:\n");
        cited.push_str(&sources.join("\n"));
    }
    cited
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_land_after_segments_even_with_multibyte_text() {
        let text = "Rust é rápido. Tokio is async.";
        let first_end = "Rust é rápido.".len();
        let grounding = json!({
            "groundingChunks": [
                {"web": {"uri": "https://a.example", "title": "A"}},
                {"web": {"uri": "https://b.example", "title": "B"}}
            ],
            "groundingSupports": [
                {"segment": {"startIndex": 0, "endIndex": first_end}, "groundingChunkIndices": [0]},
                {"segment": {"startIndex": first_end + 1, "endIndex": text.len()}, "groundingChunkIndices": [0, 1]}
            ]
        });
        assert_eq!(
            cite(text, &grounding),
            "Rust é rápido.[1] Tokio is async.[1][2]\n\nSources:\n[1] A (https://a.example)\n[2] B (https://b.example)"
        );
        assert_eq!(cite("plain", &Value::Null), "plain");
    }
}
