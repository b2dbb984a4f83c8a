//! Fault injection: python's `fail_first` / `fail_always` plus our `faults`
//! list (HTTP errors, cut or malformed streams, raw SSE text, hangs).
//!
//! Faults apply to MAIN requests only and are chosen by the main-request
//! counter since the last reset, so a test can say "the 2nd turn fails".

use crate::scenario::opt_millis;
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use std::time::Duration;

/// An HTTP error answer (`fail_first`, `fail_always`, or a `http_error` fault).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FailSpec {
    /// HTTP status; 500 when absent (python default).
    pub status: Option<u16>,
    /// `fail_first` only: how many main requests fail (default 1).
    pub times: Option<u64>,
    /// Adds a `google.rpc.RetryInfo` detail with this `retryDelay` (e.g. "1s").
    pub retry_delay: Option<String>,
    /// Sends a `Retry-After` header with this value.
    #[serde(deserialize_with = "opt_string_or_number")]
    pub retry_after: Option<String>,
    pub message: Option<String>,
    /// Overrides the `error.status` text (python's `status_text`).
    pub status_text: Option<String>,
    /// Raw response body replacing the JSON error object.
    pub body: Option<String>,
    #[serde(deserialize_with = "opt_millis")]
    pub delay_ms: Option<Duration>,
}

/// What a fault does to the answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    HttpError(Box<FailSpec>),
    /// Send `after_chunks` whole SSE events, then `partial_bytes` of the next
    /// one, then drop the connection without the final zero-length chunk.
    CutStream {
        after_chunks: usize,
        partial_bytes: usize,
    },
    /// After `after_chunks` events send `data: {"candidates": [<garbage>`, then end normally.
    MalformedChunk {
        after_chunks: usize,
        garbage: String,
    },
    /// 200 `text/event-stream` with exactly `body`, optionally written `split_every` bytes at a time.
    RawSse {
        body: String,
        split_every: Option<usize>,
    },
    /// Never answer (`after_chunks: None`) or stall after sending that many events.
    Hang {
        after_chunks: Option<usize>,
    },
}

/// One entry of the scenario's `faults` list.
#[derive(Debug, Clone)]
pub struct FaultRule {
    /// 1-based main-request numbers this rule applies to.
    pub requests: Vec<u64>,
    pub fault: Fault,
    pub delay: Option<Duration>,
    pub chunk_chars: Option<usize>,
}

/// The fault chosen for one main request.
#[derive(Debug, Clone)]
pub struct ActiveFault {
    pub fault: Fault,
    /// Where it came from: `fail_first`, `fail_always` or `faults[i]`.
    pub source: String,
    pub delay: Option<Duration>,
    pub chunk_chars: Option<usize>,
}

const COMMON_KEYS: &[&str] = &["request", "kind", "delay_ms", "comment"];

fn allowed_keys(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "http_error" => &[
            "status",
            "message",
            "status_text",
            "retry_delay",
            "retry_after",
            "body",
        ],
        "cut_stream" => &["after_chunks", "partial_bytes", "chunk_chars"],
        "malformed_chunk" => &["after_chunks", "garbage", "chunk_chars"],
        "raw_sse" => &["body", "split_every"],
        "hang" | "hang_after_chunks" => &["hang_after_chunks", "after_chunks", "chunk_chars"],
        _ => return None,
    })
}

#[derive(Deserialize)]
struct RawFault {
    request: RequestSel,
    #[serde(default)]
    after_chunks: Option<usize>,
    #[serde(default)]
    partial_bytes: Option<usize>,
    #[serde(default)]
    garbage: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    split_every: Option<usize>,
    #[serde(default)]
    hang_after_chunks: Option<usize>,
    #[serde(default)]
    chunk_chars: Option<usize>,
    #[serde(default, deserialize_with = "opt_millis")]
    delay_ms: Option<Duration>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RequestSel {
    One(u64),
    Many(Vec<u64>),
}

impl FaultRule {
    /// Parses one `faults` entry, rejecting unknown kinds and fields that the
    /// kind does not use (a typo would otherwise silently disable the fault).
    pub fn from_json(v: &Value) -> Result<FaultRule> {
        let obj = v
            .as_object()
            .ok_or_else(|| anyhow!("a fault must be an object"))?;
        let kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("a fault needs a string `kind`"))?;
        let allowed = allowed_keys(kind).ok_or_else(|| {
            anyhow!("unknown fault kind {kind:?} (http_error, cut_stream, malformed_chunk, raw_sse, hang)")
        })?;
        if let Some(bad) = obj
            .keys()
            .find(|k| !COMMON_KEYS.contains(&k.as_str()) && !allowed.contains(&k.as_str()))
        {
            bail!("field `{bad}` is not used by fault kind {kind:?}");
        }
        let raw = RawFault::deserialize(v).map_err(|e| anyhow!("{e}"))?;
        let requests = match raw.request {
            RequestSel::One(n) => vec![n],
            RequestSel::Many(ns) => ns,
        };
        if requests.contains(&0) {
            bail!("`request` numbers are 1-based");
        }
        let fault = match kind {
            "http_error" => Fault::HttpError(Box::new(
                FailSpec::deserialize(v).map_err(|e| anyhow!("{e}"))?,
            )),
            "cut_stream" => Fault::CutStream {
                after_chunks: raw.after_chunks.unwrap_or(0),
                partial_bytes: raw.partial_bytes.unwrap_or(20),
            },
            "malformed_chunk" => Fault::MalformedChunk {
                after_chunks: raw.after_chunks.unwrap_or(0),
                garbage: raw
                    .garbage
                    .unwrap_or_else(|| "{\"content\": not json at all".into()),
            },
            "raw_sse" => Fault::RawSse {
                body: raw
                    .body
                    .ok_or_else(|| anyhow!("raw_sse needs a string `body`"))?,
                split_every: raw.split_every.filter(|n| *n > 0),
            },
            _ => Fault::Hang {
                after_chunks: raw.hang_after_chunks.or(raw.after_chunks).or(match kind {
                    "hang_after_chunks" => Some(0),
                    _ => None,
                }),
            },
        };
        Ok(FaultRule {
            requests,
            fault,
            delay: raw.delay_ms,
            chunk_chars: raw.chunk_chars,
        })
    }
}

/// Picks the fault for the `n`-th (1-based) main request since the reset:
/// an explicit `faults` entry first, then `fail_always`, then `fail_first`.
pub fn select(scenario: &crate::scenario::Scenario, n: u64) -> Option<ActiveFault> {
    if let Some((i, rule)) = scenario
        .faults
        .iter()
        .enumerate()
        .find(|(_, r)| r.requests.contains(&n))
    {
        return Some(ActiveFault {
            fault: rule.fault.clone(),
            source: format!("faults[{i}]"),
            delay: rule.delay,
            chunk_chars: rule.chunk_chars,
        });
    }
    let from_spec = |spec: &FailSpec, source: &str| ActiveFault {
        fault: Fault::HttpError(Box::new(spec.clone())),
        source: source.to_string(),
        delay: spec.delay_ms,
        chunk_chars: None,
    };
    if let Some(spec) = &scenario.fail_always {
        return Some(from_spec(spec, "fail_always"));
    }
    match &scenario.fail_first {
        Some(spec) if n <= spec.times.unwrap_or(1) => Some(from_spec(spec, "fail_first")),
        _ => None,
    }
}

impl Fault {
    /// Short label stored in the request record's `fault` field.
    pub fn label(&self) -> String {
        match self {
            Fault::HttpError(spec) => format!("http_error:{}", spec.status()),
            Fault::CutStream { .. } => "cut_stream".into(),
            Fault::MalformedChunk { .. } => "malformed_chunk".into(),
            Fault::RawSse { .. } => "raw_sse".into(),
            Fault::Hang { after_chunks: None } => "hang".into(),
            Fault::Hang {
                after_chunks: Some(n),
            } => format!("hang_after_chunks:{n}"),
        }
    }
}

impl FailSpec {
    pub fn status(&self) -> u16 {
        self.status.unwrap_or(500)
    }

    /// The Google API error object, same shape as the reference fake.
    pub fn error_json(&self) -> Value {
        let code = self.status();
        let status = self
            .status_text
            .clone()
            .unwrap_or_else(|| status_name(code).to_string());
        let mut err = json!({
            "code": code,
            "message": self.message.clone().unwrap_or_else(|| format!("fake error {code}")),
            "status": status,
        });
        if let Some(delay) = self.retry_delay.as_deref().filter(|d| !d.is_empty()) {
            err["details"] =
                json!([{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]);
        }
        json!({"error": err})
    }
}

/// The canonical `google.rpc.Code` name for an HTTP status.
pub fn status_name(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        500 => "INTERNAL",
        501 => "NOT_IMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

/// The real API's answer to a wrong API key (used with the scenario's `api_keys`).
pub fn invalid_api_key_json() -> Value {
    json!({"error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"}
        }]
    }})
}

fn opt_string_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected a string or number, got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    #[test]
    fn explicit_fault_beats_fail_first() {
        let s = Scenario::from_value(json!({
            "fail_first": {"status": 429, "times": 2},
            "faults": [{"request": 2, "kind": "cut_stream"}]
        }))
        .unwrap();
        assert_eq!(select(&s, 1).unwrap().source, "fail_first");
        assert_eq!(
            select(&s, 2).unwrap().fault,
            Fault::CutStream {
                after_chunks: 0,
                partial_bytes: 20
            }
        );
        assert!(select(&s, 3).is_none());
    }

    #[test]
    fn request_may_be_a_list() {
        let r = FaultRule::from_json(
            &json!({"request": [1, 3], "kind": "hang", "hang_after_chunks": 2}),
        )
        .unwrap();
        assert_eq!(r.requests, vec![1, 3]);
        assert_eq!(
            r.fault,
            Fault::Hang {
                after_chunks: Some(2)
            }
        );
    }

    #[test]
    fn rejects_fields_the_kind_does_not_use() {
        let err =
            FaultRule::from_json(&json!({"request": 1, "kind": "http_error", "partial_bytes": 3}))
                .unwrap_err();
        assert!(err.to_string().contains("partial_bytes"), "{err}");
        assert!(FaultRule::from_json(&json!({"request": 0, "kind": "hang"})).is_err());
        assert!(FaultRule::from_json(&json!({"request": 1, "kind": "raw_sse"})).is_err());
    }

    #[test]
    fn error_json_matches_python_shape() {
        let spec = FailSpec {
            status: Some(429),
            retry_delay: Some("1s".into()),
            ..FailSpec::default()
        };
        assert_eq!(
            spec.error_json(),
            json!({"error": {"code": 429, "message": "fake error 429", "status": "RESOURCE_EXHAUSTED",
                "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}]}})
        );
        let plain = FailSpec {
            retry_after: Some("2".into()),
            ..FailSpec::default()
        };
        assert!(plain.error_json()["error"].get("details").is_none());
    }
}
