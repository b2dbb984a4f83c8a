//! Code Assist setup calls: `POST /v1internal:loadCodeAssist`,
//! `POST /v1internal:onboardUser` and `GET /v1internal/operations/{name}`,
//! answered from the scenario's `code_assist` object:
//!
//! ```json
//! "code_assist": {
//!   "load": {"currentTier": {"id": "standard-tier"}, "cloudaicompanionProject": "p"},
//!   "load_error": {"status": 403, "message": "...", "reason": "SERVICE_DISABLED", "activation_url": "..."},
//!   "onboard": {"polls": 2, "project": "managed-1"},
//!   "onboard_error": {"status": 400, "message": "..."},
//!   "operation_error": {"code": 9, "message": "..."},
//!   "tokens": ["ya29.fake-access-1"],
//!   "quota": {"buckets": [{"modelId": "gemini-2.5-pro", "remainingFraction": 0.25, "resetTime": "..."}]},
//!   "quota_error": {"status": 403, "message": "..."}
//! }
//! ```
//!
//! * `load`: the `loadCodeAssist` answer (default: a standard-tier user with
//!   the project the request names, else `fake-project`).
//! * `onboard.polls`: how many `GET operations/...` calls answer `done:
//!   false` before the operation completes with `onboard.project`.
//! * `quota`: the `retrieveUserQuota` answer (default: [`default_quota`]);
//!   `quota_error` answers it with an HTTP error instead.
//! * `tokens`: when set, every Code Assist call (setup and model calls)
//!   needs `Authorization: Bearer <one of them>`; anything else gets 401.

use serde::Deserialize;
use serde_json::{Value, json};

/// The scenario's `code_assist` object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeAssistFake {
    #[serde(default)]
    pub load: Option<Value>,
    #[serde(default)]
    pub load_error: Option<HttpErrorSpec>,
    #[serde(default)]
    pub onboard: Option<OnboardSpec>,
    #[serde(default)]
    pub onboard_error: Option<HttpErrorSpec>,
    #[serde(default)]
    pub operation_error: Option<Value>,
    #[serde(default)]
    pub tokens: Option<Vec<String>>,
    #[serde(default)]
    pub quota: Option<Value>,
    #[serde(default)]
    pub quota_error: Option<HttpErrorSpec>,
}

/// The default `retrieveUserQuota` answer: two request buckets, partly
/// used, with fixed reset times (so tests can compare them).
pub fn default_quota() -> Value {
    json!({"buckets": [
        {"modelId": "gemini-2.5-pro", "tokenType": "REQUESTS",
         "remainingFraction": 0.75, "remainingAmount": "75",
         "resetTime": "2030-01-01T00:00:00Z"},
        {"modelId": "gemini-2.5-flash", "tokenType": "REQUESTS",
         "remainingFraction": 0.5, "resetTime": "2030-01-01T12:00:00Z"}
    ]})
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnboardSpec {
    #[serde(default)]
    pub polls: u32,
    #[serde(default)]
    pub project: Option<String>,
}

/// An HTTP error answer in Google's format.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpErrorSpec {
    pub status: u16,
    #[serde(default)]
    pub message: Option<String>,
    /// `ErrorInfo.reason` (e.g. `SERVICE_DISABLED`, `SECURITY_POLICY_VIOLATED`).
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub activation_url: Option<String>,
}

impl HttpErrorSpec {
    pub fn body(&self) -> Value {
        let status_text = match self.status {
            400 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            404 => "NOT_FOUND",
            412 => "FAILED_PRECONDITION",
            429 => "RESOURCE_EXHAUSTED",
            _ => "INTERNAL",
        };
        let mut details = Vec::new();
        if let Some(reason) = &self.reason {
            let mut info = json!({
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
            });
            if let Some(url) = &self.activation_url {
                info["metadata"] = json!({"activationUrl": url});
            }
            details.push(info);
        }
        json!({"error": {
            "code": self.status,
            "message": self.message.clone().unwrap_or_else(|| format!("fake error {}", self.status)),
            "status": status_text,
            "details": details,
        }})
    }
}

/// The default `loadCodeAssist` answer.
pub fn default_load() -> Value {
    default_load_for(None)
}

/// The default `loadCodeAssist` answer to a request naming `requested`
/// (its `cloudaicompanionProject`): a Standard user keeps the project it
/// asked for, as Code Assist does; without one it gets `fake-project`.
pub fn default_load_for(requested: Option<&str>) -> Value {
    json!({
        "currentTier": {"id": "standard-tier", "name": "Gemini Code Assist Standard"},
        "allowedTiers": [{"id": "standard-tier", "name": "Gemini Code Assist Standard", "isDefault": true}],
        "cloudaicompanionProject": requested.unwrap_or("fake-project")
    })
}

/// The 401 answer for a missing or unknown bearer token.
pub fn unauthenticated() -> Value {
    json!({"error": {
        "code": 401,
        "message": "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
        "status": "UNAUTHENTICATED",
    }})
}

/// The long-running operation after `polls_seen` polls.
pub fn operation(name: &str, spec: &CodeAssistFake, polls_seen: u32) -> Value {
    let onboard = spec.onboard.clone().unwrap_or_default();
    if polls_seen < onboard.polls {
        return json!({"name": name, "done": false});
    }
    if let Some(error) = &spec.operation_error {
        return json!({"name": name, "done": true, "error": error});
    }
    let mut response = json!({"@type": "type.googleapis.com/google.internal.cloud.code.v1internal.OnboardUserResponse"});
    if let Some(project) = &onboard.project {
        response["cloudaicompanionProject"] = json!({"id": project, "name": project});
    }
    json!({"name": name, "done": true, "response": response})
}
