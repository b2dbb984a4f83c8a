//! Where the turn loop fires hooks (see `crate::hooks::turn` for what each
//! answer means). Kept out of the loop itself so it reads as before: each
//! method is one event, and says whether the turn ends there.

use gd_gemini::Part;
use gd_hooks::HookEventName;
use gd_protocol::{Event, TurnStatus};

use super::Agent;
use crate::events::EventSink;
use crate::hooks::model::ModelHooks;
use crate::hooks::turn::{self, AfterAgent, BeforeAgent};

/// How many times AfterAgent may send the model back to work in one turn
/// (0.61 has no bound; a hook that always denies must not loop forever).
pub(super) const MAX_AFTER_AGENT_RETRIES: u32 = 5;

impl Agent {
    fn hooks(&self) -> Option<crate::hooks::Hooks> {
        self.services.hooks.clone()
    }

    /// BeforeAgent: may add context to the prompt, or end the turn (0.61's
    /// "Agent execution blocked/stopped"). `Some` ends the turn.
    pub(super) async fn before_agent_hook(
        &mut self,
        typed: &str,
        parts: &mut Vec<Part>,
        sink: &EventSink,
    ) -> Option<TurnStatus> {
        let hooks = self.hooks()?;
        if !hooks.has(HookEventName::BeforeAgent) {
            return None;
        }
        match turn::before_agent(&hooks, sink, typed).await {
            BeforeAgent::Proceed(context) => {
                parts.extend(context.map(Part::text));
                None
            }
            BeforeAgent::Blocked(reason) => {
                // The prompt is dropped: the model never hears of it.
                sink.emit(Event::Warning {
                    message: format!("Agent execution blocked: {reason}"),
                });
                Some(TurnStatus::Completed)
            }
            BeforeAgent::Stopped(reason) => {
                // Kept in the conversation, not answered.
                let message = self.user_message(std::mem::take(parts));
                self.record(&message, &super::Pending::Prompt(typed.to_owned()), sink)
                    .await;
                self.chat.append(message);
                sink.emit(Event::Warning {
                    message: format!("Agent execution stopped: {reason}"),
                });
                Some(TurnStatus::Completed)
            }
        }
    }

    /// The model events' hooks for the next request (`None` when there
    /// are none: the request path builds nothing for them).
    pub(super) fn model_hooks(&self, sink: &EventSink) -> Option<ModelHooks> {
        ModelHooks::new(self.services.hooks.as_ref()?, sink)
    }

    /// AfterAgent on the turn's final answer: `Some(prompt)` sends the
    /// model back to work with the hook's reason as the next prompt.
    pub(super) async fn after_agent_hook(
        &mut self,
        prompt: &str,
        answer: &str,
        retries: u32,
        sink: &EventSink,
    ) -> Option<String> {
        let hooks = self.hooks()?;
        if !hooks.has(HookEventName::AfterAgent) {
            return None;
        }
        let warn = |message: String| sink.emit(Event::Warning { message });
        match turn::after_agent(&hooks, sink, prompt, answer, retries > 0).await {
            AfterAgent::Accept => None,
            AfterAgent::Retry { reason, clear } => {
                self.clear_context_for_hook(clear);
                if retries < MAX_AFTER_AGENT_RETRIES {
                    warn(format!("Agent execution blocked: {reason}"));
                    Some(reason)
                } else {
                    warn(format!(
                        "An AfterAgent hook rejected the answer {MAX_AFTER_AGENT_RETRIES} times; the turn ends here: {reason}"
                    ));
                    None
                }
            }
            AfterAgent::Stop { reason, clear } => {
                self.clear_context_for_hook(clear);
                warn(format!("Agent execution stopped: {reason}"));
                None
            }
        }
    }

    /// `clearContext`: the model starts from an empty conversation (0.61's
    /// `resetChat`); what the user sees and the saved session stay.
    fn clear_context_for_hook(&mut self, clear: bool) {
        if clear {
            self.chat.forget();
            self.loops.reset();
        }
    }

    /// PreCompress (advisory): runs before the history is summarised.
    pub(super) async fn pre_compress_hook(&self, trigger: &str, sink: &EventSink) {
        let Some(hooks) = self.hooks() else {
            return;
        };
        crate::hooks::fire(
            &hooks,
            sink,
            HookEventName::PreCompress,
            Some(trigger),
            crate::hooks::fields([("trigger", trigger.into())]),
            Default::default(),
        )
        .await;
    }

    /// SessionStart (`startup`, `resume`, `clear`): its context reaches the
    /// model with the next user message.
    pub async fn session_start_hook(&mut self, source: &str, sink: &EventSink) {
        let Some(hooks) = self.hooks() else {
            return;
        };
        let fired = crate::hooks::fire(
            &hooks,
            sink,
            HookEventName::SessionStart,
            Some(source),
            crate::hooks::fields([("source", source.into())]),
            Default::default(),
        )
        .await;
        if let Some(context) = fired.additional_context() {
            self.start_context = Some(format!("<hook_context>{context}</hook_context>"));
        }
    }

    /// SessionEnd (`exit`, `clear`): advisory; waited for (bounded by the
    /// hooks' own time-outs) so a logging hook is not cut off.
    pub async fn session_end_hook(&self, reason: &str, sink: &EventSink) {
        let Some(hooks) = self.hooks() else {
            return;
        };
        crate::hooks::fire(
            &hooks,
            sink,
            HookEventName::SessionEnd,
            Some(reason),
            crate::hooks::fields([("reason", reason.into())]),
            Default::default(),
        )
        .await;
    }
}
