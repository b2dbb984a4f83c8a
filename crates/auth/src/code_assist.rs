//! Gemini Code Assist onboarding after Google sign-in, following Gemini
//! CLI's `setupUser`: `loadCodeAssist` → the user's tiers; if there is no
//! current tier, `onboardUser` with the default tier and polling of the
//! long-running operation; the project comes from the configuration or from
//! Code Assist.
//!
//! Rules kept from Gemini CLI:
//! * the **free tier** is onboarded *without* a project (it uses a managed
//!   project; sending one fails with a precondition error);
//! * other tiers (standard) need the user's project;
//! * a **numeric** `GOOGLE_CLOUD_PROJECT` is a project number, which the
//!   API refuses with a bare `INVALID_ARGUMENT`: rejected up front;
//! * `VALIDATION_REQUIRED` among the ineligible tiers (with no current tier)
//!   means Google wants the user to verify the account at a URL;
//! * no project in the end: the ineligible tiers' reasons, else "project
//!   required";
//! * `SECURITY_POLICY_VIOLATED` on `loadCodeAssist` (VPC Service Controls)
//!   means a standard-tier user.
//!
//! Added here: Gemini Code Assist for individuals (the consumer free tier
//! of "Sign in with Google") was retired in June 2026. When Google refuses
//! the free tier (it is listed as ineligible and no project is configured,
//! or onboarding to it fails), the user learns that and what to use instead.

use std::time::Duration;

use gd_http::SecretString;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use thiserror::Error;

use crate::config::ProjectSource;
use crate::error::SIGN_IN_HINT;
use crate::redact::{error_chain, redact_with};

pub const FREE_TIER: &str = "free-tier";
pub const LEGACY_TIER: &str = "legacy-tier";
pub const STANDARD_TIER: &str = "standard-tier";

/// Why Code Assist cannot be used, in words that say what to do.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum CodeAssistError {
    #[error(
        "'{project}' (from {}) is a Google Cloud project number, but Gemini Code Assist needs the project ID \
         (lowercase letters, digits and hyphens, e.g. my-project-123). Find the ID in the Google Cloud console's \
         project picker and set it instead.", origin.describe()
    )]
    NumericProjectId {
        project: String,
        origin: ProjectSource,
    },
    #[error(
        "Your account needs a Google Cloud project for Gemini Code Assist (Standard, Enterprise or Workspace). \
         Set GOOGLE_CLOUD_PROJECT (or security.auth.googleCloudProject in settings.json), or pick a project on \
         Gemini Desktop's sign-in screen, then sign in again. Without a Code Assist license, use a Gemini API key."
    )]
    ProjectRequired,
    #[error(
        "Google needs you to verify your account before Gemini Code Assist can be used{}. Open {url}, finish the \
         steps there, then retry.", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
    )]
    ValidationRequired {
        url: String,
        description: Option<String>,
    },
    #[error(
        "Your account cannot use Gemini Code Assist: {}. Ask your administrator for a Gemini Code Assist license \
         and set its Google Cloud project, or use a Gemini API key.", reasons.join("; ")
    )]
    Ineligible { reasons: Vec<String> },
    #[error(
        "Gemini Code Assist for individuals (the free \"Sign in with Google\" tier) was retired in June 2026. \
         Google sign-in now serves Gemini Code Assist Standard and Enterprise, and Workspace accounts, with a \
         Google Cloud project: set that project (GOOGLE_CLOUD_PROJECT, settings or the project picker) and sign in \
         again. Otherwise use a Gemini API key from Google AI Studio, or Vertex AI.{}",
        if reasons.is_empty() { String::new() } else { format!(" (Google said: {})", reasons.join("; ")) }
    )]
    ConsumerTierRetired { reasons: Vec<String> },
    #[error(
        "Google no longer accepts this sign-in for Gemini Code Assist (HTTP 401). {SIGN_IN_HINT}"
    )]
    Unauthorized,
    #[error(
        "The Gemini for Google Cloud API is not enabled in project {project}. Enable it at {url} (or ask the \
         project's owner), wait a minute, then retry."
    )]
    ServiceDisabled { project: String, url: String },
    #[error(
        "Gemini Code Assist refused access{}: {message}. Check that your account has a Gemini Code Assist license \
         and may use that project, or choose another project.",
        project.as_deref().map(|p| format!(" to project {p}")).unwrap_or_default()
    )]
    PermissionDenied {
        project: Option<String>,
        message: String,
    },
    #[error("Gemini Code Assist setup failed (HTTP {status}): {message}")]
    Api { status: u16, message: String },
    #[error("Cannot reach Gemini Code Assist: {0}")]
    Network(String),
    #[error("Gemini Code Assist onboarding failed: {0}")]
    Operation(String),
    #[error(
        "Gemini Code Assist onboarding did not finish within {0} minutes. Try again later; nothing needs to change on your side."
    )]
    OperationTimeout(u64),
}

impl CodeAssistError {
    /// A page the user has to open.
    pub fn url(&self) -> Option<&str> {
        match self {
            Self::ValidationRequired { url, .. } | Self::ServiceDisabled { url, .. } => Some(url),
            _ => None,
        }
    }

    pub fn needs_sign_in(&self) -> bool {
        matches!(self, Self::Unauthorized)
    }
}

// ---------------------------------------------------------------------------
// Wire types

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tier {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub user_defined_cloudaicompanion_project: Option<bool>,
    #[serde(default)]
    pub is_default: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IneligibleTier {
    #[serde(default)]
    pub reason_code: Option<String>,
    #[serde(default)]
    pub reason_message: Option<String>,
    #[serde(default)]
    pub tier_id: Option<String>,
    #[serde(default)]
    pub tier_name: Option<String>,
    #[serde(default)]
    pub validation_url: Option<String>,
    #[serde(default)]
    pub validation_error_message: Option<String>,
}

/// `cloudaicompanionProject`: a string in `loadCodeAssist`, `{id, name}` in
/// the onboarding result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProjectRef {
    Id(String),
    Object {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        name: Option<String>,
    },
}

impl ProjectRef {
    pub fn id(&self) -> Option<&str> {
        match self {
            Self::Id(id) => Some(id.as_str()),
            Self::Object { id, .. } => id.as_deref(),
        }
        .filter(|id| !id.trim().is_empty())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadCodeAssistResponse {
    #[serde(default)]
    pub current_tier: Option<Tier>,
    #[serde(default)]
    pub allowed_tiers: Option<Vec<Tier>>,
    #[serde(default)]
    pub ineligible_tiers: Option<Vec<IneligibleTier>>,
    #[serde(default)]
    pub cloudaicompanion_project: Option<ProjectRef>,
    #[serde(default)]
    pub paid_tier: Option<Tier>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub done: Option<bool>,
    #[serde(default)]
    pub response: Option<OnboardResponse>,
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OnboardResponse {
    #[serde(default)]
    pub cloudaicompanion_project: Option<ProjectRef>,
}

/// What onboarding settled on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct CodeAssistSetup {
    pub project: String,
    pub project_source: ProjectSource,
    pub tier_id: String,
    pub tier_name: Option<String>,
}

// ---------------------------------------------------------------------------
// Client

/// The setup calls of the Code Assist API (`{endpoint}/{version}:method`).
#[derive(Debug, Clone)]
pub struct CodeAssistApi {
    http: reqwest::Client,
    endpoint: String,
    api_version: String,
}

/// How onboarding polls its operation.
#[derive(Debug, Clone, Copy)]
pub struct PollOptions {
    pub interval: Duration,
    pub max_wait: Duration,
}

impl Default for PollOptions {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(5),
            max_wait: Duration::from_secs(5 * 60),
        }
    }
}

/// An HTTP failure with what we need to map it.
#[derive(Debug)]
pub(crate) struct HttpFailure {
    status: u16,
    message: String,
    reasons: Vec<String>,
    activation_url: Option<String>,
}

impl CodeAssistApi {
    pub fn new(http: reqwest::Client, endpoint: &str, api_version: &str) -> Self {
        Self {
            http,
            endpoint: endpoint.trim_end_matches('/').to_owned(),
            api_version: api_version.to_owned(),
        }
    }

    fn method_url(&self, method: &str) -> String {
        format!("{}/{}:{method}", self.endpoint, self.api_version)
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        token: &SecretString,
    ) -> Result<Value, Result<HttpFailure, CodeAssistError>> {
        let response = request
            .bearer_auth(token.expose())
            .header("content-type", "application/json")
            .send()
            .await
            .map_err(|e| Err(CodeAssistError::Network(error_chain(&e))))?;
        let status = response.status().as_u16();
        let text = response
            .text()
            .await
            .map_err(|e| Err(CodeAssistError::Network(error_chain(&e))))?;
        if (200..300).contains(&status) {
            return serde_json::from_str(&text).map_err(|e| {
                Err(CodeAssistError::Api {
                    status,
                    message: format!("unreadable answer: {e}"),
                })
            });
        }
        Err(Ok(parse_failure(status, &text, token)))
    }

    pub async fn load(
        &self,
        token: &SecretString,
        project: Option<&str>,
    ) -> Result<LoadCodeAssistResponse, CodeAssistError> {
        let body = json!({
            "cloudaicompanionProject": project,
            "metadata": metadata(project),
        });
        let request = self
            .http
            .post(self.method_url("loadCodeAssist"))
            .json(&body);
        match self.send(request, token).await {
            Ok(value) => decode(value),
            // VPC Service Controls block the call for standard-tier users.
            Err(Ok(f)) if f.reasons.iter().any(|r| r == "SECURITY_POLICY_VIOLATED") => {
                Ok(LoadCodeAssistResponse {
                    current_tier: Some(Tier {
                        id: STANDARD_TIER.into(),
                        ..Tier::default()
                    }),
                    ..LoadCodeAssistResponse::default()
                })
            }
            Err(e) => Err(map_failure(e, project)),
        }
    }

    pub(crate) async fn onboard(
        &self,
        token: &SecretString,
        tier_id: &str,
        project: Option<&str>,
    ) -> Result<Operation, Result<HttpFailure, CodeAssistError>> {
        let body = json!({
            "tierId": tier_id,
            "cloudaicompanionProject": project,
            "metadata": metadata(project),
        });
        let request = self.http.post(self.method_url("onboardUser")).json(&body);
        let value = self.send(request, token).await?;
        decode(value).map_err(Err)
    }

    pub async fn operation(
        &self,
        token: &SecretString,
        name: &str,
        project: Option<&str>,
    ) -> Result<Operation, CodeAssistError> {
        let url = format!(
            "{}/{}/{}",
            self.endpoint,
            self.api_version,
            name.trim_start_matches('/')
        );
        match self.send(self.http.get(url), token).await {
            Ok(value) => decode(value),
            Err(e) => Err(map_failure(e, project)),
        }
    }
}

fn metadata(project: Option<&str>) -> Value {
    let mut meta = json!({
        "ideType": "IDE_UNSPECIFIED",
        "platform": "PLATFORM_UNSPECIFIED",
        "pluginType": "GEMINI",
    });
    if let Some(project) = project {
        meta["duetProject"] = json!(project);
    }
    meta
}

fn decode<T: for<'de> Deserialize<'de>>(value: Value) -> Result<T, CodeAssistError> {
    serde_json::from_value(value).map_err(|e| CodeAssistError::Api {
        status: 200,
        message: format!("unexpected answer: {e}"),
    })
}

fn parse_failure(status: u16, body: &str, token: &SecretString) -> HttpFailure {
    let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let error = &json["error"];
    let message = error["message"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| body.chars().take(300).collect());
    let mut reasons = Vec::new();
    let mut activation_url = None;
    for detail in error["details"].as_array().into_iter().flatten() {
        if let Some(reason) = detail["reason"].as_str() {
            reasons.push(reason.to_owned());
        }
        if let Some(url) = detail["metadata"]["activationUrl"].as_str() {
            activation_url = Some(url.to_owned());
        }
    }
    HttpFailure {
        status,
        message: redact_with(message.trim(), &[token.expose()]),
        reasons,
        activation_url,
    }
}

fn map_failure(
    failure: Result<HttpFailure, CodeAssistError>,
    project: Option<&str>,
) -> CodeAssistError {
    let f = match failure {
        Ok(f) => f,
        Err(e) => return e,
    };
    match f.status {
        401 => CodeAssistError::Unauthorized,
        403 if f.reasons.iter().any(|r| r == "SERVICE_DISABLED") => {
            CodeAssistError::ServiceDisabled {
                project: project.unwrap_or("(unknown)").to_owned(),
                url: f.activation_url.unwrap_or_else(|| {
                    format!(
                        "https://console.cloud.google.com/apis/library/cloudaicompanion.googleapis.com?project={}",
                        project.unwrap_or_default()
                    )
                }),
            }
        }
        403 => CodeAssistError::PermissionDenied {
            project: project.map(str::to_owned),
            message: f.message,
        },
        status => CodeAssistError::Api {
            status,
            message: f.message,
        },
    }
}

// ---------------------------------------------------------------------------
// Setup

/// Rejects a project number where a project ID is needed.
pub fn check_project_id(project: &str, origin: ProjectSource) -> Result<(), CodeAssistError> {
    let trimmed = project.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CodeAssistError::NumericProjectId {
            project: trimmed.to_owned(),
            origin,
        });
    }
    Ok(())
}

/// Runs `loadCodeAssist` and, when needed, `onboardUser` to completion.
/// `progress` hears short descriptions of the steps.
pub async fn setup_user(
    api: &CodeAssistApi,
    token: &SecretString,
    configured: Option<(String, ProjectSource)>,
    poll: PollOptions,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<CodeAssistSetup, CodeAssistError> {
    if let Some((project, source)) = &configured {
        check_project_id(project, *source)?;
    }
    let project = configured.as_ref().map(|(p, _)| p.as_str());
    progress("Checking your Gemini Code Assist access");
    let load = api.load(token, project).await?;
    check_validation(&load)?;

    let resolved = |assigned: Option<&str>, tier: &Tier| -> Option<CodeAssistSetup> {
        let (project, source) = match (assigned, &configured) {
            (Some(a), Some((c, source))) if a == c => (a.to_owned(), *source),
            (Some(a), _) => (a.to_owned(), ProjectSource::CodeAssist),
            (None, Some((c, source))) => (c.clone(), *source),
            (None, None) => return None,
        };
        Some(CodeAssistSetup {
            project,
            project_source: source,
            tier_id: tier.id.clone(),
            tier_name: tier.name.clone(),
        })
    };

    if let Some(current) = &load.current_tier {
        let tier = load.paid_tier.as_ref().unwrap_or(current);
        let assigned = load
            .cloudaicompanion_project
            .as_ref()
            .and_then(ProjectRef::id);
        return resolved(assigned, tier)
            .ok_or_else(|| ineligible_or_project_required(&load, configured.is_some()));
    }

    let tier = onboard_tier(&load);
    let free = tier.id == FREE_TIER;
    // The free tier uses a managed project; sending one fails.
    let onboard_project = if free { None } else { project };
    progress(&format!(
        "Setting up Gemini Code Assist ({})",
        tier.name.as_deref().unwrap_or(&tier.id)
    ));
    let retired = |message: String| CodeAssistError::ConsumerTierRetired {
        reasons: vec![message],
    };
    let mut operation = match api.onboard(token, &tier.id, onboard_project).await {
        Ok(op) => op,
        Err(Ok(f)) if free && f.status != 401 && (400..500).contains(&f.status) => {
            return Err(retired(f.message));
        }
        Err(e) => return Err(map_failure(e, project)),
    };
    let started = tokio::time::Instant::now();
    let mut polls = 0u32;
    while operation.done != Some(true) {
        if started.elapsed() >= poll.max_wait {
            return Err(CodeAssistError::OperationTimeout(
                poll.max_wait.as_secs().div_ceil(60).max(1),
            ));
        }
        tokio::time::sleep(poll.interval).await;
        polls += 1;
        progress(&format!(
            "Waiting for Gemini Code Assist onboarding ({polls})"
        ));
        operation = match operation.name.as_deref() {
            Some(name) => api.operation(token, name, project).await?,
            // No operation name: ask again, as older servers expect.
            None => api
                .onboard(token, &tier.id, onboard_project)
                .await
                .map_err(|e| map_failure(e, project))?,
        };
    }
    if let Some(error) = &operation.error {
        let message = error["message"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| error.to_string());
        let message = redact_with(&message, &[token.expose()]);
        return Err(if free {
            retired(message)
        } else {
            CodeAssistError::Operation(message)
        });
    }
    let assigned = operation
        .response
        .as_ref()
        .and_then(|r| r.cloudaicompanion_project.as_ref())
        .and_then(ProjectRef::id);
    resolved(assigned, &tier)
        .ok_or_else(|| ineligible_or_project_required(&load, configured.is_some()))
}

fn check_validation(load: &LoadCodeAssistResponse) -> Result<(), CodeAssistError> {
    if load.current_tier.is_some() {
        return Ok(());
    }
    let validation = load.ineligible_tiers.iter().flatten().find(|t| {
        t.reason_code.as_deref() == Some("VALIDATION_REQUIRED") && t.validation_url.is_some()
    });
    match validation {
        Some(t) => Err(CodeAssistError::ValidationRequired {
            url: t.validation_url.clone().unwrap_or_default(),
            description: t.reason_message.clone().filter(|m| !m.trim().is_empty()),
        }),
        None => Ok(()),
    }
}

fn onboard_tier(load: &LoadCodeAssistResponse) -> Tier {
    load.allowed_tiers
        .iter()
        .flatten()
        .find(|t| t.is_default == Some(true))
        .cloned()
        .unwrap_or_else(|| Tier {
            id: LEGACY_TIER.into(),
            name: Some(String::new()),
            user_defined_cloudaicompanion_project: Some(true),
            ..Tier::default()
        })
}

fn ineligible_or_project_required(
    load: &LoadCodeAssistResponse,
    project_configured: bool,
) -> CodeAssistError {
    let ineligible: Vec<&IneligibleTier> = load.ineligible_tiers.iter().flatten().collect();
    if ineligible.is_empty() {
        return CodeAssistError::ProjectRequired;
    }
    let reasons: Vec<String> = ineligible
        .iter()
        .map(|t| {
            let tier = t
                .tier_name
                .clone()
                .or_else(|| t.tier_id.clone())
                .unwrap_or_else(|| "a tier".into());
            match (&t.reason_message, &t.reason_code) {
                (Some(m), _) if !m.trim().is_empty() => format!("{tier}: {}", m.trim()),
                (_, Some(code)) => format!("{tier}: {code}"),
                _ => tier,
            }
        })
        .collect();
    let free_refused = ineligible
        .iter()
        .any(|t| t.tier_id.as_deref() == Some(FREE_TIER));
    if free_refused && !project_configured {
        CodeAssistError::ConsumerTierRetired { reasons }
    } else {
        CodeAssistError::Ineligible { reasons }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_project_ids_are_rejected() {
        assert!(check_project_id("my-project-1", ProjectSource::Settings).is_ok());
        let err =
            check_project_id("123456789012", ProjectSource::EnvGoogleCloudProject).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("project number"), "{text}");
        assert!(text.contains("GOOGLE_CLOUD_PROJECT"), "{text}");
    }

    #[test]
    fn load_response_parses_both_project_shapes() {
        let load: LoadCodeAssistResponse = serde_json::from_value(json!({
            "currentTier": {"id": "standard-tier", "name": "Gemini Code Assist Standard"},
            "cloudaicompanionProject": "proj-1"
        }))
        .unwrap();
        assert_eq!(
            load.cloudaicompanion_project
                .as_ref()
                .and_then(ProjectRef::id),
            Some("proj-1")
        );
        let op: Operation = serde_json::from_value(json!({
            "name": "operations/x", "done": true,
            "response": {"cloudaicompanionProject": {"id": "managed-1", "name": "n"}}
        }))
        .unwrap();
        assert_eq!(
            op.response.unwrap().cloudaicompanion_project.unwrap().id(),
            Some("managed-1")
        );
    }

    #[test]
    fn ineligibility_messages() {
        let load: LoadCodeAssistResponse = serde_json::from_value(json!({
            "ineligibleTiers": [{"reasonCode": "INELIGIBLE_ACCOUNT", "reasonMessage": "Not available in your country", "tierId": "standard-tier", "tierName": "Standard"}]
        }))
        .unwrap();
        let err = ineligible_or_project_required(&load, true);
        assert!(
            err.to_string()
                .contains("Standard: Not available in your country"),
            "{err}"
        );
        let free: LoadCodeAssistResponse = serde_json::from_value(json!({
            "ineligibleTiers": [{"reasonCode": "INELIGIBLE_ACCOUNT", "reasonMessage": "Retired", "tierId": "free-tier", "tierName": "Gemini Code Assist for individuals"}]
        }))
        .unwrap();
        assert!(matches!(
            ineligible_or_project_required(&free, false),
            CodeAssistError::ConsumerTierRetired { .. }
        ));
        assert_eq!(
            ineligible_or_project_required(&LoadCodeAssistResponse::default(), false),
            CodeAssistError::ProjectRequired
        );
    }
}
