//! Request bodies: `generateContent` / `streamGenerateContent` / `countTokens`.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::content::Content;

/// The body of `generateContent` and `streamGenerateContent` (Gemini API and
/// Vertex AI). Code Assist wraps the same fields, see
/// [`crate::endpoint::Backend`].
///
/// Field order follows what Gemini CLI sends so captured bodies diff cleanly.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentRequest {
    pub contents: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_config: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_settings: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_config: Option<GenerationConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Value>,
}

/// One entry of `tools`. Gemini CLI sends a single entry holding all
/// function declarations; built-in server tools (`googleSearch`,
/// `urlContext`) are separate entries.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_declarations: Option<Vec<FunctionDeclaration>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub google_search: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_context: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_execution: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Tool {
    pub fn functions(declarations: Vec<FunctionDeclaration>) -> Self {
        Self {
            function_declarations: Some(declarations),
            ..Self::default()
        }
    }
}

/// A function the model may call. Parameters are plain JSON Schema
/// (`parametersJsonSchema`), as Gemini CLI sends them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionDeclaration {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters_json_schema: Option<Value>,
    /// OpenAPI-subset schema (older API field); kept for pass-through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

/// Sampling and output settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationConfig {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "compact_float"
    )]
    pub temperature: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "compact_float"
    )]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_json_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_config: Option<ThinkingConfig>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Thinking controls: Gemini 2.5 takes a token budget, Gemini 3 a level.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_thoughts: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
}

/// Body of `countTokens` (Gemini API / Vertex AI).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CountTokensRequest {
    pub contents: Vec<Content>,
}

/// Writes whole floats as integers (`1` rather than `1.0`), the way the
/// JavaScript SDK serialises them, so captured bodies compare equal.
fn compact_float<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => serializer.serialize_i64(*v as i64),
        Some(v) => serializer.serialize_f64(*v),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generation_config_serialises_like_the_js_sdk() {
        let config = GenerationConfig {
            temperature: Some(1.0),
            top_p: Some(0.95),
            top_k: Some(64),
            thinking_config: Some(ThinkingConfig {
                include_thoughts: Some(true),
                thinking_budget: Some(8192),
                thinking_level: None,
            }),
            ..GenerationConfig::default()
        };
        assert_eq!(
            serde_json::to_value(&config).unwrap(),
            json!({"temperature": 1, "topP": 0.95, "topK": 64,
                   "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}})
        );
    }
}
