//! Response bodies: `GenerateContentResponse` and its parts.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::content::{Content, FunctionCall};

/// One response (non-streaming) or one SSE chunk (streaming).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentResponse {
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_feedback: Option<PromptFeedback>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_metadata: Option<UsageMetadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl GenerateContentResponse {
    /// The first candidate, which is the only one we request.
    pub fn candidate(&self) -> Option<&Candidate> {
        self.candidates.first()
    }

    pub fn content(&self) -> Option<&Content> {
        self.candidate().and_then(|c| c.content.as_ref())
    }

    pub fn finish_reason(&self) -> Option<&FinishReason> {
        self.candidate().and_then(|c| c.finish_reason.as_ref())
    }

    /// Non-thought text of the first candidate.
    pub fn text(&self) -> String {
        self.content().map(Content::text).unwrap_or_default()
    }

    pub fn function_calls(&self) -> Vec<&FunctionCall> {
        self.content()
            .map(|c| c.function_calls().collect())
            .unwrap_or_default()
    }

    /// True when this chunk carries any part (text, thought, call, data...).
    pub fn has_parts(&self) -> bool {
        self.content().is_some_and(|c| !c.parts.is_empty())
    }

    pub fn block_reason(&self) -> Option<&str> {
        self.prompt_feedback
            .as_ref()
            .and_then(|f| f.block_reason.as_deref())
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_ratings: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounding_metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_metadata: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Why the model stopped. Unknown values are kept verbatim in
/// [`FinishReason::Other`] so new server reasons never fail decoding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum FinishReason {
    Stop,
    MaxTokens,
    Safety,
    Recitation,
    Language,
    Blocklist,
    ProhibitedContent,
    Spii,
    MalformedFunctionCall,
    ImageSafety,
    UnexpectedToolCall,
    TooManyToolCalls,
    Unspecified,
    Other(String),
}

impl FinishReason {
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "STOP",
            Self::MaxTokens => "MAX_TOKENS",
            Self::Safety => "SAFETY",
            Self::Recitation => "RECITATION",
            Self::Language => "LANGUAGE",
            Self::Blocklist => "BLOCKLIST",
            Self::ProhibitedContent => "PROHIBITED_CONTENT",
            Self::Spii => "SPII",
            Self::MalformedFunctionCall => "MALFORMED_FUNCTION_CALL",
            Self::ImageSafety => "IMAGE_SAFETY",
            Self::UnexpectedToolCall => "UNEXPECTED_TOOL_CALL",
            Self::TooManyToolCalls => "TOO_MANY_TOOL_CALLS",
            Self::Unspecified => "FINISH_REASON_UNSPECIFIED",
            Self::Other(s) => s,
        }
    }

    /// A sentence for the user explaining an abnormal stop, or `None` for a
    /// normal end of turn.
    pub fn explanation(&self) -> Option<&'static str> {
        Some(match self {
            Self::Stop | Self::Unspecified => return None,
            Self::MaxTokens => "Response truncated due to token limits.",
            Self::Safety => "Response stopped due to safety reasons.",
            Self::Recitation => "Response stopped due to recitation policy.",
            Self::Language => "Response stopped due to an unsupported language.",
            Self::Blocklist => "Response stopped due to forbidden terms.",
            Self::ProhibitedContent => "Response stopped due to prohibited content.",
            Self::Spii => "Response stopped due to sensitive personally identifiable information.",
            Self::MalformedFunctionCall => "Response stopped due to a malformed function call.",
            Self::ImageSafety => "Response stopped due to image safety violations.",
            Self::UnexpectedToolCall => "Response stopped due to an unexpected tool call.",
            Self::TooManyToolCalls => {
                "Response stopped because the model made too many tool calls."
            }
            Self::Other(_) => "Response stopped for an unknown reason.",
        })
    }
}

impl From<String> for FinishReason {
    fn from(s: String) -> Self {
        match s.as_str() {
            "STOP" => Self::Stop,
            "MAX_TOKENS" => Self::MaxTokens,
            "SAFETY" => Self::Safety,
            "RECITATION" => Self::Recitation,
            "LANGUAGE" => Self::Language,
            "BLOCKLIST" => Self::Blocklist,
            "PROHIBITED_CONTENT" => Self::ProhibitedContent,
            "SPII" => Self::Spii,
            "MALFORMED_FUNCTION_CALL" => Self::MalformedFunctionCall,
            "IMAGE_SAFETY" => Self::ImageSafety,
            "UNEXPECTED_TOOL_CALL" => Self::UnexpectedToolCall,
            "TOO_MANY_TOOL_CALLS" => Self::TooManyToolCalls,
            "FINISH_REASON_UNSPECIFIED" => Self::Unspecified,
            _ => Self::Other(s),
        }
    }
}

impl From<FinishReason> for String {
    fn from(r: FinishReason) -> Self {
        r.as_str().to_owned()
    }
}

impl std::fmt::Display for FinishReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptFeedback {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_reason_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_ratings: Option<Value>,
}

/// Token accounting of one request. Streaming responses repeat it on every
/// chunk with running totals; the last chunk's figures are final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageMetadata {
    #[serde(default)]
    pub prompt_token_count: u64,
    #[serde(default)]
    pub candidates_token_count: u64,
    #[serde(default)]
    pub total_token_count: u64,
    #[serde(default)]
    pub cached_content_token_count: u64,
    #[serde(default)]
    pub thoughts_token_count: u64,
    #[serde(default)]
    pub tool_use_prompt_token_count: u64,
}

/// Body of a `countTokens` answer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CountTokensResponse {
    #[serde(default)]
    pub total_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_finish_reasons_feedback_and_usage() {
        let r: GenerateContentResponse = serde_json::from_value(json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "a"}, {"text": "b", "thought": true}]},
                            "finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}],
            "promptFeedback": {"blockReason": "SAFETY"},
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7,
                              "thoughtsTokenCount": 1, "promptTokensDetails": [{"modality": "TEXT"}]},
            "createTime": "2026-01-01T00:00:00Z"
        }))
        .unwrap();
        assert_eq!(
            r.finish_reason(),
            Some(&FinishReason::MalformedFunctionCall)
        );
        assert_eq!(r.text(), "a");
        assert_eq!(r.block_reason(), Some("SAFETY"));
        let usage = r.usage_metadata.unwrap();
        assert_eq!(
            (usage.prompt_token_count, usage.thoughts_token_count),
            (5, 1)
        );
        assert!(r.extra.contains_key("createTime"));
    }

    #[test]
    fn unknown_finish_reason_is_kept() {
        let r: FinishReason = serde_json::from_value(json!("NEW_REASON")).unwrap();
        assert_eq!(r, FinishReason::Other("NEW_REASON".into()));
        assert_eq!(serde_json::to_value(&r).unwrap(), json!("NEW_REASON"));
        assert!(r.explanation().is_some());
        assert!(FinishReason::Stop.explanation().is_none());
    }
}
