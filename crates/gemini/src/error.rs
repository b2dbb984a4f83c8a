//! Errors of the transport layer.

use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

use crate::sse::SseError;

/// An error answer from the API (`{"error": {"code", "message", "status", "details"}}`),
/// either as an HTTP status or as an error object inside the stream.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", self.describe())]
pub struct ApiError {
    /// HTTP status (or the `code` of an in-stream error object).
    pub status: u16,
    /// Google's canonical status name, e.g. `RESOURCE_EXHAUSTED`.
    pub status_text: Option<String>,
    pub message: String,
    /// How long the server asked us to wait: `Retry-After` or `RetryInfo`.
    pub retry_delay: Option<Duration>,
    /// `ErrorInfo.reason` when present, e.g. `API_KEY_INVALID`.
    pub reason: Option<String>,
}

impl ApiError {
    /// Builds an error from an HTTP status, a `Retry-After` header value and
    /// the response body (JSON or not).
    pub fn from_http(status: u16, retry_after: Option<&str>, body: &str) -> Self {
        let mut error = match serde_json::from_str::<ErrorEnvelope>(body.trim()) {
            Ok(envelope) => envelope.error.into_api_error(status),
            Err(_) => {
                let trimmed = body.trim();
                ApiError {
                    status,
                    status_text: None,
                    message: if trimmed.is_empty() {
                        format!("HTTP {status}")
                    } else {
                        truncate(trimmed, 500)
                    },
                    retry_delay: None,
                    reason: None,
                }
            }
        };
        if let Some(delay) = retry_after.and_then(parse_retry_after) {
            error.retry_delay = Some(delay);
        }
        error
    }

    /// Parses an in-stream `{"error": {...}}` object, if `json` is one.
    pub fn from_stream_event(json: &serde_json::Value) -> Option<Self> {
        let envelope = ErrorEnvelope::deserialize(json).ok()?;
        let status = envelope.error.code.unwrap_or(500);
        Some(envelope.error.into_api_error(status))
    }

    /// Rate limits and server-side failures are worth another attempt.
    pub fn is_retryable(&self) -> bool {
        matches!(self.status, 408 | 429 | 500..=599)
    }

    /// The credentials were rejected (as opposed to the request being bad).
    pub fn is_auth(&self) -> bool {
        matches!(self.status, 401 | 403)
            || self.reason.as_deref() == Some("API_KEY_INVALID")
            || (self.status == 400 && self.message.contains("API key not valid"))
    }

    fn describe(&self) -> String {
        match &self.status_text {
            Some(text) => format!("[{} {}] {}", self.status, text, self.message),
            None => format!("[{}] {}", self.status, self.message),
        }
    }
}

#[derive(Deserialize)]
struct ErrorEnvelope {
    error: ErrorBody,
}

#[derive(Deserialize)]
struct ErrorBody {
    code: Option<u16>,
    #[serde(default)]
    message: String,
    status: Option<String>,
    #[serde(default)]
    details: Vec<serde_json::Value>,
}

impl ErrorBody {
    fn into_api_error(self, status: u16) -> ApiError {
        let mut retry_delay = None;
        let mut reason = None;
        for detail in &self.details {
            match detail.get("@type").and_then(|t| t.as_str()) {
                Some(t) if t.ends_with("google.rpc.RetryInfo") => {
                    retry_delay = detail
                        .get("retryDelay")
                        .and_then(|d| d.as_str())
                        .and_then(parse_proto_duration);
                }
                Some(t) if t.ends_with("google.rpc.ErrorInfo") => {
                    reason = detail
                        .get("reason")
                        .and_then(|r| r.as_str())
                        .map(str::to_owned);
                }
                _ => {}
            }
        }
        ApiError {
            status,
            status_text: self.status,
            message: if self.message.is_empty() {
                format!("HTTP {status}")
            } else {
                self.message
            },
            retry_delay,
            reason,
        }
    }
}

/// Everything that can go wrong talking to the model.
#[derive(Debug, Error)]
pub enum GeminiError {
    #[error("API error {0}")]
    Api(#[from] ApiError),
    /// The connection failed or broke (connect refused, reset, timeout).
    #[error("network error: {0}")]
    Network(String),
    /// The stream broke after the model had already sent content. Retrying
    /// would duplicate what the user saw, so this is reported instead.
    #[error("the response stream was interrupted after partial output: {0}")]
    StreamInterrupted(String),
    #[error("malformed stream: {0}")]
    Sse(#[from] SseError),
    #[error("could not decode the server's response: {message} (in: {snippet})")]
    Decode { message: String, snippet: String },
    #[error("credentials unavailable: {0}")]
    Credentials(String),
    #[error("configuration error: {0}")]
    Config(String),
    /// The last error after all attempts were used.
    #[error("giving up after {attempts} attempts: {source}")]
    Exhausted {
        attempts: u32,
        #[source]
        source: Box<GeminiError>,
    },
}

impl GeminiError {
    /// Whether a fresh attempt may succeed where this one failed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Api(e) => e.is_retryable(),
            Self::Network(_) | Self::Sse(_) | Self::Decode { .. } => true,
            _ => false,
        }
    }

    /// The innermost error (through [`GeminiError::Exhausted`]).
    pub fn root(&self) -> &GeminiError {
        match self {
            Self::Exhausted { source, .. } => source.root(),
            other => other,
        }
    }

    pub fn is_auth(&self) -> bool {
        match self.root() {
            Self::Api(e) => e.is_auth(),
            Self::Credentials(_) => true,
            _ => false,
        }
    }

    pub fn api_status(&self) -> Option<u16> {
        match self.root() {
            Self::Api(e) => Some(e.status),
            _ => None,
        }
    }

    pub(crate) fn network(error: &reqwest::Error) -> Self {
        // reqwest's Display hides the cause ("error sending request"); walk
        // the chain so the user sees e.g. "Connection refused".
        let mut message = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        Self::Network(message)
    }
}

/// The longest wait a server can ask for, as we read it. `Retry-After` and
/// `RetryInfo` come from the server (or a proxy in between), so any number
/// of digits may arrive: `99999999999999999999` seconds does not fit a
/// `Duration` and panicked its conversion. Every wait this long means the
/// same thing to us, far beyond [`crate::RetryPolicy::max_server_delay`],
/// so the request is not retried and the error is reported; capping keeps
/// what is done with the value later (deadlines, "resets in ..." texts)
/// within range.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(24 * 60 * 60);

/// `Retry-After` is either delta-seconds or an HTTP date. Anything else
/// (negative, `NaN`, `inf`, exponents) is not a wait: `None`, as for an
/// unreadable header. Capped at [`MAX_RETRY_DELAY`].
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Some(delay) = parse_seconds(value) {
        return Some(delay);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_DELAY),
    )
}

/// A protobuf JSON duration such as `"1s"`, `"0.5s"` or `"32.123456s"`;
/// negative ones are not a wait. Capped at [`MAX_RETRY_DELAY`].
pub fn parse_proto_duration(value: &str) -> Option<Duration> {
    parse_seconds(value.trim().strip_suffix('s')?)
}

/// Decimal seconds, `digits[.digits]` (at least one digit), read digit by
/// digit rather than through `f64`: a float accepts `inf`, `NaN` and
/// `1e400`, and converting a big one to a `Duration` panics. Digits past
/// nanoseconds are dropped; the result is at most [`MAX_RETRY_DELAY`].
fn parse_seconds(text: &str) -> Option<Duration> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !digits(whole) || !digits(fraction) {
        return None;
    }
    let cap = MAX_RETRY_DELAY.as_secs();
    let mut seconds: u64 = 0;
    for digit in whole.bytes() {
        // Stops at the cap, long before a u64 could overflow.
        seconds = seconds * 10 + u64::from(digit - b'0');
        if seconds >= cap {
            return Some(MAX_RETRY_DELAY);
        }
    }
    let mut nanos: u32 = 0;
    let mut scale: u32 = 100_000_000;
    for digit in fraction.bytes().take(9) {
        nanos += u32::from(digit - b'0') * scale;
        scale /= 10;
    }
    Some(Duration::new(seconds, nanos).min(MAX_RETRY_DELAY))
}

pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_google_error_with_retry_info_and_reason() {
        let body = r#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED",
            "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED"},
                       {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}"#;
        let e = ApiError::from_http(429, None, body);
        assert_eq!(e.retry_delay, Some(Duration::from_millis(1500)));
        assert_eq!(e.reason.as_deref(), Some("RATE_LIMIT_EXCEEDED"));
        assert!(e.is_retryable());
        assert_eq!(e.to_string(), "[429 RESOURCE_EXHAUSTED] Quota exceeded");
    }

    #[test]
    fn retry_after_header_wins_and_non_json_bodies_are_kept() {
        let e = ApiError::from_http(503, Some("3"), "<html>upstream down</html>");
        assert_eq!(e.retry_delay, Some(Duration::from_secs(3)));
        assert!(e.message.contains("upstream down"));
        let past = httpdate::fmt_http_date(std::time::SystemTime::UNIX_EPOCH);
        assert_eq!(parse_retry_after(&past), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn invalid_key_is_an_auth_error() {
        let body = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",
            "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}"#;
        let e = ApiError::from_http(400, None, body);
        assert!(e.is_auth());
        assert!(!e.is_retryable());
    }

    #[test]
    fn proto_durations() {
        assert_eq!(
            parse_proto_duration("0.25s"),
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_proto_duration("-1s"), None);
        assert_eq!(parse_proto_duration("12"), None);
    }

    /// A server's wait, however absurd, is a bounded `Duration`: never a
    /// panic (`99999999999999999999` seconds does not fit one), never a
    /// wait of centuries.
    #[test]
    fn absurd_delays_are_capped_and_malformed_ones_ignored() {
        let huge = "99999999999999999999";
        assert_eq!(parse_retry_after(huge), Some(MAX_RETRY_DELAY));
        assert_eq!(
            parse_proto_duration(&format!("{huge}s")),
            Some(MAX_RETRY_DELAY)
        );
        assert_eq!(
            parse_proto_duration(&format!("{huge}.5s")),
            Some(MAX_RETRY_DELAY)
        );
        assert_eq!(
            parse_retry_after(&"9".repeat(10_000)),
            Some(MAX_RETRY_DELAY)
        );
        assert_eq!(parse_retry_after("86401"), Some(MAX_RETRY_DELAY));
        let far = std::time::UNIX_EPOCH + Duration::from_secs(253_402_300_000);
        assert_eq!(
            parse_retry_after(&httpdate::fmt_http_date(far)),
            Some(MAX_RETRY_DELAY)
        );
        let e = ApiError::from_http(429, Some(huge), "");
        assert_eq!(e.retry_delay, Some(MAX_RETRY_DELAY));
        let body = format!(
            r#"{{"error":{{"code":503,"message":"busy","details":[
                {{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"{huge}s"}}]}}}}"#
        );
        assert_eq!(
            ApiError::from_http(503, None, &body).retry_delay,
            Some(MAX_RETRY_DELAY)
        );

        // Not a number of seconds: ignored, as an unreadable header is.
        for bad in [
            "-1", "-0.5", "NaN", "nan", "inf", "-inf", "infinity", "+5", "1e3", "1e400", "", " ",
            ".", "1.2.3", "0x10", "1 5", "5s", "٣",
        ] {
            assert_eq!(parse_retry_after(bad), None, "Retry-After {bad:?}");
            assert_eq!(
                parse_proto_duration(&format!("{bad}s")),
                None,
                "retryDelay {bad:?}s"
            );
        }

        // Ordinary values keep their exact value, fractions included.
        assert_eq!(parse_retry_after(" 120 "), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after("0.15"), Some(Duration::from_millis(150)));
        assert_eq!(parse_retry_after("0"), Some(Duration::ZERO));
        assert_eq!(
            parse_proto_duration("0.000000001s"),
            Some(Duration::from_nanos(1))
        );
        // Beyond nanoseconds the digits are dropped.
        assert_eq!(
            parse_proto_duration("1.1234567899s"),
            Some(Duration::new(1, 123_456_789))
        );
        assert_eq!(parse_proto_duration("3.s"), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_proto_duration(".5s"),
            Some(Duration::from_millis(500))
        );
    }
}
