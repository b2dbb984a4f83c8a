//! `auto` model routing, as Gemini CLI 0.61's model router does it: before
//! each user prompt (not before the requests that carry tool results, which
//! stay on the prompt's model), a small utility `generateContent` asks a
//! Flash-Lite model to score the prompt's complexity from 1 to 100; a score
//! at or above [`CLASSIFIER_THRESHOLD`] goes to Pro, anything lower to
//! Flash. A classifier that fails or answers nonsense never fails the turn:
//! the prompt goes to the default model for the configured name (0.61's
//! `default` strategy).

mod classifier;
pub mod fallback;

use std::time::{Duration, Instant};

use gd_gemini::models::{self, Tier};
use gd_gemini::{Content, GeminiClient, RequestMeta, UsageMetadata};
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

pub use classifier::{
    CLASSIFIER_SYSTEM_PROMPT, ClassifierAnswer, classifier_contents, classifier_request,
    parse_answer,
};

/// Scores at or above this go to Pro (0.61's default threshold, used when
/// no remote experiment sets one).
pub const CLASSIFIER_THRESHOLD: f64 = 90.0;

/// What routing decided for one prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The model the prompt's requests go to.
    pub model: String,
    /// The strategy, named as 0.61 names it in its routing telemetry.
    pub source: String,
    pub reason: String,
    pub latency_ms: u64,
}

/// A decision and what the classifier request used (for the usage events).
#[derive(Debug, Clone)]
pub struct Routed {
    pub decision: Decision,
    /// The classifier's usage and latency, when it answered.
    pub classifier_usage: Option<(UsageMetadata, Duration)>,
}

/// The decision of 0.61's terminal `default` strategy.
pub fn default_decision(configured: &str) -> Decision {
    let model = models::resolve_model(configured);
    Decision {
        reason: format!("Routing to default model: {model}"),
        model,
        source: "agent-router/default".into(),
        latency_ms: 0,
    }
}

/// 0.61's `approval-mode` strategy, which runs before the classifier:
/// while planning, an `auto*` session's prompts go to the Pro model (the
/// plan deserves the strongest model; no classifier request is made).
pub fn plan_mode_decision(configured: &str, client: &GeminiClient) -> Decision {
    let custom_tools = matches!(client.backend(), gd_gemini::Backend::GeminiApi { .. });
    Decision {
        model: models::routed_model(configured, Tier::Pro, custom_tools),
        source: "agent-router/approval-mode".into(),
        reason: "Routing to Pro model because ApprovalMode is PLAN.".into(),
        latency_ms: 0,
    }
}

/// Routes the prompt `message` for a session configured with the `auto*`
/// name `configured`, given the chat history before it.
pub async fn route(
    client: &GeminiClient,
    configured: &str,
    history: &[Content],
    message: &Content,
    meta: &RequestMeta,
    cancel: &CancellationToken,
) -> Routed {
    let started = Instant::now();
    let request = classifier_request(history, message);
    let answer = tokio::select! {
        biased;
        _ = cancel.cancelled() => {
            debug!("routing cancelled; the turn ends with the prompt");
            return Routed { decision: default_decision(configured), classifier_usage: None };
        }
        answer = client.generate(models::CLASSIFIER_MODEL, &request, meta) => answer,
    };
    let latency = started.elapsed();
    let response = match answer {
        Ok(response) => response,
        Err(error) => {
            warn!(%error, "the routing classifier failed; using the default model");
            return Routed {
                decision: default_decision(configured),
                classifier_usage: None,
            };
        }
    };
    let usage = response.usage_metadata.map(|u| (u, latency));
    let decision = match parse_answer(&response.text()) {
        Ok(answer) => {
            let tier = if answer.score >= CLASSIFIER_THRESHOLD {
                Tier::Pro
            } else {
                Tier::Flash
            };
            let custom_tools = matches!(client.backend(), gd_gemini::Backend::GeminiApi { .. });
            Decision {
                model: models::routed_model(configured, tier, custom_tools),
                source: "agent-router/NumericalClassifier (Default)".into(),
                reason: format!(
                    "[Score: {} / Threshold: {}] {}",
                    answer.score, CLASSIFIER_THRESHOLD, answer.reasoning
                ),
                latency_ms: latency.as_millis() as u64,
            }
        }
        Err(problem) => {
            warn!(
                problem,
                "the routing classifier's answer is unusable; using the default model"
            );
            default_decision(configured)
        }
    };
    Routed {
        decision,
        classifier_usage: usage,
    }
}
