//! The account's remaining quota, as far as the backend tells it.
//!
//! Code Assist (Google sign-in) has an endpoint for it
//! (`v1internal:retrieveUserQuota`: per-model buckets with the remaining
//! fraction and the reset time). The Gemini API and Vertex AI have none:
//! all that is known there is what a `429` said, so a report can honestly be
//! "unknown".

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a [`QuotaReport`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum QuotaSource {
    /// `retrieveUserQuota` of Code Assist.
    CodeAssist,
    /// A Gemini API key: only rate-limit answers (429) say anything.
    #[default]
    GeminiApi,
    /// Vertex AI: only rate-limit answers (429) say anything.
    VertexAi,
}

/// One quota bucket: what is left of one model's allowance until it resets.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct QuotaBucket {
    /// The model the bucket limits (`modelId`).
    pub model: String,
    /// 0.0 (used up) to 1.0 (untouched).
    pub remaining_fraction: f64,
    /// Requests (or tokens, see `token_type`) left, when the backend says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub remaining_amount: Option<u64>,
    /// When the bucket refills (RFC 3339), when the backend says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reset_time: Option<String>,
    /// What the bucket counts (`REQUESTS`, `TOKENS`), when the backend says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub token_type: Option<String>,
}

/// The quota as last reported.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct QuotaReport {
    pub source: QuotaSource,
    /// Empty when nothing is known (see `note`).
    pub buckets: Vec<QuotaBucket>,
    /// Why nothing (or only this much) is known, or what the last rate-limit
    /// answer said, in words for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
    /// When this was learned, Unix ms.
    #[ts(type = "number")]
    pub fetched_ms: u64,
}
