//! The turn's model: which concrete model its requests go to (the
//! configured one, or `auto`'s routing decision per prompt) and the quota
//! fallback the user may accept when that model runs out.

use gd_gemini::models::{self, CLASSIFIER_MODEL};
use gd_gemini::{Content, RequestMeta, UsageMetadata};
use gd_protocol::{Event, FallbackChoice, Usage};
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::Agent;
use crate::chat::{ChatError, Gate, ModelResponse};
use crate::events::EventSink;
use crate::routing::{self, fallback};
use crate::tools::ToolServices;
use crate::tools::services::ModelAccess;

/// A request's `usageMetadata` in the protocol's terms.
pub(crate) fn usage_from(usage: &UsageMetadata) -> Usage {
    Usage {
        prompt_tokens: usage.prompt_token_count,
        cached_tokens: usage.cached_content_token_count,
        output_tokens: usage.candidates_token_count,
        thoughts_tokens: usage.thoughts_token_count,
        tool_tokens: usage.tool_use_prompt_token_count,
        total_tokens: usage.total_token_count,
    }
}

impl Agent {
    /// Sends the next requests (and the tools that ask the model) to the
    /// concrete model `model`, with that model's generation settings.
    pub(super) fn use_model(&mut self, model: String) {
        if model == self.chat.model() {
            return;
        }
        self.chat
            .set_model(model.clone(), self.config.generation_config_for(&model));
        let services = &self.services;
        self.services = std::sync::Arc::new(ToolServices {
            temp_dir: services.temp_dir.clone(),
            home: services.home.clone(),
            model: services
                .model
                .clone()
                .map(|access| ModelAccess { model, ..access }),
            limits: services.limits,
            shell: services.shell.clone(),
            topic: services.topic.clone(),
            subagents: services.subagents.clone(),
            hooks: services.hooks.clone(),
            sandbox_grants: services.sandbox_grants.clone(),
        });
    }

    /// Routes a prompt when the session's model is `auto*`: the classifier
    /// request (its usage reported under the classifier model), then
    /// [`Event::ModelRouted`] and the chosen model for the prompt's
    /// requests. Tool-result follow-ups stay on that model.
    pub(super) async fn route_prompt(
        &mut self,
        message: &Content,
        prompt_id: &str,
        cancel: &CancellationToken,
        sink: &EventSink,
    ) {
        if !models::is_auto(&self.config.model) {
            return;
        }
        let meta = RequestMeta {
            session_id: self.chat.session_id().to_owned(),
            prompt_id: prompt_id.to_owned(),
        };
        let routed = if self.context.get().approval_mode == gd_protocol::ApprovalMode::Plan {
            routing::Routed {
                decision: routing::plan_mode_decision(&self.config.model, self.chat.client()),
                classifier_usage: None,
            }
        } else {
            routing::route(
                self.chat.client(),
                &self.config.model,
                self.chat.history(),
                message,
                &meta,
                cancel,
            )
            .await
        };
        if let Some((usage, latency)) = &routed.classifier_usage {
            sink.emit(Event::Usage {
                model: CLASSIFIER_MODEL.to_owned(),
                latency_ms: latency.as_millis() as u64,
                usage: usage_from(usage),
                role: gd_protocol::RequestRole::UtilityRouter,
            });
        }
        let decision = routed.decision;
        info!(
            model = decision.model,
            source = decision.source,
            reason = decision.reason,
            "prompt routed"
        );
        sink.emit(Event::ModelRouted {
            requested: self.config.model.clone(),
            model: decision.model.clone(),
            source: decision.source,
            reason: decision.reason,
            latency_ms: decision.latency_ms,
        });
        self.turn_usage.model = decision.model.clone();
        self.use_model(decision.model);
    }

    /// Whether a quota failure of the next request could be answered with
    /// a fallback prompt (so the prompt must be kept to send it again).
    pub(super) fn may_fall_back(&self) -> bool {
        self.config.interactive
            && models::fallback_model(&self.config.model, self.chat.model()).is_some()
    }

    /// After a request failed for quota: asks the user (interactive
    /// sessions only) whether to switch to the fallback model, keep trying,
    /// or stop, and sends the request again unless they stop. `prompt`: the
    /// prompt the failed request carried (the chat dropped it), `None` for
    /// tool results (still in the history). Returns the last outcome.
    pub(super) async fn retry_after_quota(
        &mut self,
        mut sent: Result<ModelResponse, ChatError>,
        prompt: Option<&Content>,
        prompt_id: &str,
        cancel: &CancellationToken,
        sink: &EventSink,
    ) -> Result<ModelResponse, ChatError> {
        loop {
            let Err(ChatError::Api(error)) = &sent else {
                return sent;
            };
            let Some(failure) = fallback::quota_failure(error) else {
                return sent;
            };
            let failed = self.chat.model().to_owned();
            let fallback_model = match models::fallback_model(&self.config.model, &failed) {
                Some(model) if self.config.interactive => model,
                _ => return sent,
            };
            if prompt.is_none()
                && self
                    .chat
                    .history()
                    .last()
                    .is_none_or(|m| !m.has_function_response())
            {
                return sent;
            }
            let answer = self.context.1.ask();
            sink.emit(Event::FallbackRequested {
                failed_model: failed.clone(),
                fallback_model: fallback_model.clone(),
                message: fallback::fallback_message(&failed, &failure),
                keep_trying: !failure.terminal,
            });
            let choice = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ChatError::Cancelled),
                choice = answer => choice.unwrap_or(FallbackChoice::Stop),
            };
            info!(?choice, failed, fallback_model, "quota fallback answered");
            match choice {
                FallbackChoice::Stop => return sent,
                FallbackChoice::KeepTrying => {}
                FallbackChoice::Switch => {
                    sink.emit(self.context.switch_model(&fallback_model));
                    self.config.model = fallback_model.clone();
                    self.turn_usage.model = fallback_model.clone();
                    self.use_model(fallback_model);
                }
            }
            if let Some(prompt) = prompt {
                self.chat.append(prompt.clone());
            }
            let model_hooks = self.model_hooks(sink);
            sent = self
                .chat
                .resend(
                    prompt_id,
                    cancel,
                    sink,
                    &mut self.loops,
                    Gate {
                        recorder: self.history.as_mut(),
                        sent: None,
                        model_hooks,
                    },
                )
                .await;
            if let Some(history) = self.history.as_mut() {
                history.settle(sink).await;
            }
        }
    }
}
