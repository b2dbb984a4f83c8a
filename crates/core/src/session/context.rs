//! The turn context: how the session runs right now (approval mode,
//! model), changed by `Op::OverrideTurnContext` at any time, even while a
//! turn runs, and read by the turn at each model request.

use std::sync::{Arc, Mutex};

use gd_protocol::{ApprovalMode, Event};
use tracing::info;

use crate::approval::ApprovalPolicy;

/// What `Op::OverrideTurnContext` changes. Shared by the op loop (which
/// writes it) and the running turn (which reads it before each request),
/// so a change never waits for the turn to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TurnContext {
    pub approval_mode: ApprovalMode,
    pub model: String,
    /// "Review at end of turn" (see [`crate::review`]); read when a turn
    /// starts.
    pub review_mode: bool,
    /// While the session plans: the mode it had before it entered plan
    /// mode (`None` when it started in plan mode). `exit_plan_mode` may go
    /// back to at most this mode without the user's answer, so entering
    /// and leaving plan mode is never a way to more permissions
    /// (issue 33; see [`crate::plan::PlanMode::prior`]).
    pub before_plan: Option<ApprovalMode>,
    /// Whether commands run in the sandbox (fixed for the session: the settings are read at
    /// launch).
    pub sandbox: gd_protocol::SandboxState,
}

/// The session's current [`TurnContext`], and the slot where a turn waits
/// for the answer to a quota-fallback prompt (`Op::AnswerFallback`).
#[derive(Debug, Clone)]
pub(crate) struct SharedContext(
    Arc<Mutex<TurnContext>>,
    pub(crate) crate::routing::fallback::FallbackGate,
);

impl SharedContext {
    pub fn new(
        approval_mode: ApprovalMode,
        model: &str,
        sandbox: gd_protocol::SandboxState,
    ) -> Self {
        Self(
            Arc::new(Mutex::new(TurnContext {
                approval_mode,
                model: model.to_owned(),
                review_mode: false,
                before_plan: None,
                sandbox,
            })),
            Default::default(),
        )
    }

    /// Switches the session's model (the user accepted a quota fallback)
    /// and returns the [`Event::TurnContext`] that reports it.
    pub fn switch_model(&self, model: &str) -> Event {
        let mut context = self.0.lock().unwrap_or_else(|e| e.into_inner());
        info!(model, "model switched after a quota error");
        context.model = model.to_owned();
        context.event()
    }

    pub fn get(&self) -> TurnContext {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The model of the next request.
    pub fn model(&self) -> String {
        self.get().model
    }

    /// Whether the next turn stages its edits for review.
    pub fn review_mode(&self) -> bool {
        self.get().review_mode
    }

    /// Applies an override. The approval mode goes to `policy` first (it
    /// takes effect at the next tool call's decision); a refusal is
    /// reported as a warning and leaves the mode as it was. An empty model
    /// name is refused the same way. Returns the events to emit: the
    /// warnings, then the [`Event::TurnContext`] as it now is.
    pub fn apply(
        &self,
        policy: &dyn ApprovalPolicy,
        approval_mode: Option<ApprovalMode>,
        model: Option<String>,
        review_mode: Option<bool>,
    ) -> Vec<Event> {
        let mut events = Vec::new();
        let mut context = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mode) = approval_mode {
            match policy.set_approval_mode(mode) {
                Ok(()) => {
                    info!(mode = mode.as_str(), "approval mode changed");
                    context.before_plan = match (context.approval_mode, mode) {
                        (ApprovalMode::Plan, ApprovalMode::Plan) => context.before_plan,
                        (before, ApprovalMode::Plan) => Some(before),
                        _ => None,
                    };
                    // Turning YOLO on with commands unconfined: say once what that means.
                    if mode == ApprovalMode::Yolo
                        && context.approval_mode != ApprovalMode::Yolo
                        && !context.sandbox.enabled
                    {
                        events.push(Event::Warning {
                            message: context.sandbox.summary.clone(),
                        });
                    }
                    context.approval_mode = mode;
                }
                Err(refused) => events.push(Event::Warning {
                    message: refused.to_string(),
                }),
            }
        }
        if let Some(model) = model {
            let model = model.trim();
            if model.is_empty() {
                events.push(Event::Warning {
                    message: "The model name is empty; the model was not changed.".to_owned(),
                });
            } else {
                info!(model, "model changed");
                context.model = model.to_owned();
            }
        }
        if let Some(on) = review_mode {
            info!(on, "review at end of turn");
            context.review_mode = on;
        }
        events.push(context.event());
        events
    }
}

impl TurnContext {
    pub fn event(&self) -> Event {
        Event::TurnContext {
            approval_mode: self.approval_mode,
            model: self.model.clone(),
            review_mode: self.review_mode,
            sandbox: self.sandbox.clone(),
        }
    }
}
