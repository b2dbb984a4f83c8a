//! The account's remaining quota: Code Assist's `retrieveUserQuota`.
//!
//! Gemini CLI 0.61 asks it for `{"project"}` and gets per-model buckets
//! (`modelId`, `remainingFraction`, optional `remainingAmount` as a decimal
//! string, `resetTime`, `tokenType`). The Gemini API and Vertex AI have no
//! such call: there [`GeminiClient::retrieve_user_quota`] answers `None`.

use serde::Deserialize;
use serde_json::json;

use crate::client::GeminiClient;
use crate::endpoint::Backend;
use crate::error::{GeminiError, truncate};

/// One bucket of `retrieveUserQuota`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaBucketWire {
    #[serde(default)]
    pub model_id: Option<String>,
    #[serde(default)]
    pub remaining_fraction: Option<f64>,
    /// A decimal string on the wire (an int64 in JSON).
    #[serde(default)]
    pub remaining_amount: Option<String>,
    #[serde(default)]
    pub reset_time: Option<String>,
    #[serde(default)]
    pub token_type: Option<String>,
}

#[derive(Debug, Deserialize)]
struct QuotaResponse {
    #[serde(default)]
    buckets: Vec<QuotaBucketWire>,
}

impl GeminiClient {
    /// `POST v1internal:retrieveUserQuota` for the backend's project:
    /// `Ok(None)` when the backend is not Code Assist or has no project yet
    /// (nothing to ask), else the buckets as the server sent them (buckets
    /// without a model or fraction dropped, as Gemini CLI drops them). Not
    /// retried: it is asked again after the next turn anyway.
    pub async fn retrieve_user_quota(&self) -> Result<Option<Vec<QuotaBucketWire>>, GeminiError> {
        let Backend::CodeAssist {
            project: Some(project),
            ..
        } = self.backend()
        else {
            return Ok(None);
        };
        let body = json!({ "project": project });
        let bytes = self
            .post_code_assist("retrieveUserQuota", body.to_string())
            .await?;
        let parsed: QuotaResponse =
            serde_json::from_slice(&bytes).map_err(|e| GeminiError::Decode {
                message: e.to_string(),
                snippet: truncate(&String::from_utf8_lossy(&bytes), 200),
            })?;
        Ok(Some(
            parsed
                .buckets
                .into_iter()
                .filter(|b| b.model_id.is_some() && b.remaining_fraction.is_some())
                .collect(),
        ))
    }
}
