//! The request record: what tests and the JSONL log see of every request.
//!
//! Field names follow the reference fake's log lines so its tools
//! (`inspect_log.py`, `bench.py`) read our logs too. Credentials are never
//! stored, only their kind and a short SHA-256 fingerprint.

use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// One recorded request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// 1-based, in arrival order since the last reset.
    pub seq: u64,
    /// Seconds since the Unix epoch when the request was recorded.
    #[serde(default)]
    pub ts: f64,
    pub method: String,
    /// URL path without the query string.
    pub path: String,
    /// Query parameters like Python's `parse_qs` (blank values dropped); `key` is never stored.
    #[serde(default)]
    pub query: BTreeMap<String, Vec<String>>,
    /// Lower-cased header names; `x-goog-api-key` / `authorization` are never stored.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// `main`, `utility`, `countTokens`, `embed`, `list_models`,
    /// `code_assist_setup` or `unhandled`.
    pub kind: String,
    /// `gemini`, `vertex` or `code_assist`.
    #[serde(default)]
    pub api_style: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_method: Option<String>,
    /// Main requests: the step index k.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// What produced the answer: `step[k]`, `after_steps`, `fault`, `rule:...`, `schema-fill`...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The parts the fake answered with (before chunking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_parts: Option<Value>,
    /// Label of the injected fault (`http_error:429`, `cut_stream`, `hang`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// HTTP status of an injected error (reference log field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_status: Option<u16>,
    /// Script sanity warnings (`match_tool` mismatch, unresolved MCP name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// `api-key` (x-goog-api-key header), `api-key-query` (`?key=`) or `bearer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_kind: Option<String>,
    /// First 12 hex digits of SHA-256 of the credential header value (see [`credential_fingerprint`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_sha256_12: Option<String>,
    /// Number of SSE events sent for a streamed answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse_chunks: Option<usize>,
    /// Seconds since the Unix epoch when the last event of a streamed answer was handed to the
    /// connection (set when the stream ends; only in [`crate::FakeGemini::requests`] and
    /// `/__admin/requests`, not in the JSONL log, which is written when the request arrives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_end_ts: Option<f64>,
    /// The body as text when it was not JSON (first 20,000 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

impl RecordedRequest {
    /// A header value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// The fingerprint stored in `credential_sha256_12`: the first 12 hex digits
/// of SHA-256 over the exact header value (for bearer tokens that includes the
/// `Bearer ` prefix, as in the reference fake), or over the `key` query value.
pub fn credential_fingerprint(value: &str) -> String {
    let digest = Sha256::digest(value.as_bytes());
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// Headers that carry secrets and are never recorded.
const SECRET_HEADERS: &[&str] = &["x-goog-api-key", "authorization", "proxy-authorization"];

/// Fills `headers`, `query`, `credential_kind` and `credential_sha256_12` of a record.
pub fn capture_request_meta(
    rec: &mut RecordedRequest,
    headers: &HeaderMap,
    raw_query: Option<&str>,
) {
    for (name, value) in headers {
        let name = name.as_str();
        if SECRET_HEADERS.contains(&name) {
            continue;
        }
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        rec.headers
            .entry(name.to_string())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let mut query = parse_qs(raw_query.unwrap_or(""));
    let query_key = query.remove("key").and_then(|v| v.into_iter().next());
    let header = |n: &str| {
        headers
            .get(n)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    let credential = if let Some(key) = header("x-goog-api-key") {
        Some(("api-key", key))
    } else if let Some(auth) = header("authorization") {
        Some(("bearer", auth))
    } else {
        query_key.map(|k| ("api-key-query", k))
    };
    if let Some((kind, secret)) = credential.filter(|(_, s)| !s.is_empty()) {
        rec.credential_kind = Some(kind.into());
        rec.credential_sha256_12 = Some(credential_fingerprint(&secret));
    }
    rec.query = query;
}

/// The API key a request presents, from the header or the `key` query parameter.
pub fn api_key(headers: &HeaderMap, raw_query: Option<&str>) -> Option<String> {
    if let Some(v) = headers.get("x-goog-api-key") {
        return Some(String::from_utf8_lossy(v.as_bytes()).into_owned());
    }
    parse_qs(raw_query.unwrap_or(""))
        .remove("key")
        .and_then(|v| v.into_iter().next())
}

/// Python's `urllib.parse.parse_qs`: `+` is a space, `%XX` decoded, blank values dropped.
pub fn parse_qs(query: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if v.is_empty() {
            continue;
        }
        out.entry(percent_decode(k))
            .or_default()
            .push(percent_decode(v));
    }
    out
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                (Some(hi), Some(lo)) => {
                    out.push((hi * 16 + lo) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn parse_qs_like_python() {
        let q = parse_qs("alt=sse&x=a+b%21&x=2&blank=&key=s3cret");
        assert_eq!(q["alt"], vec!["sse"]);
        assert_eq!(q["x"], vec!["a b!", "2"]);
        assert!(!q.contains_key("blank"));
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    #[test]
    fn secrets_are_fingerprinted_not_stored() {
        let mut headers = HeaderMap::new();
        headers.insert("x-goog-api-key", HeaderValue::from_static("s3cret"));
        headers.insert("User-Agent", HeaderValue::from_static("ua"));
        let mut rec = RecordedRequest::default();
        capture_request_meta(&mut rec, &headers, Some("alt=sse&key=other"));
        assert_eq!(rec.header("user-agent"), Some("ua"));
        assert!(rec.header("x-goog-api-key").is_none());
        assert!(!rec.query.contains_key("key"));
        assert_eq!(rec.credential_kind.as_deref(), Some("api-key"));
        // sha256("s3cret")
        assert_eq!(
            rec.credential_sha256_12.as_deref(),
            Some(&credential_fingerprint("s3cret")[..])
        );
        assert_eq!(credential_fingerprint("abc"), "ba7816bf8f01");
        assert!(!serde_json::to_string(&rec).unwrap().contains("s3cret"));
    }
}
