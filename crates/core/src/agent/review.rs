//! The agent's side of the whole-turn review (see [`crate::review`]): which
//! turns stage, the review shown when a turn ends or a session resumes, and
//! applying the user's decisions.

use std::sync::Arc;

use gd_protocol::{Event, ReviewDecision};
use tracing::warn;

use super::Agent;
use crate::checkpoint::SessionCheckpoints;
use crate::events::EventSink;
use crate::review::{self, Staging};

impl Agent {
    /// The staging a turn starting now uses: in review mode, and also while
    /// a review is pending (the model was told its staged edits were
    /// applied, so its reads must keep seeing them until the user decides).
    pub(crate) fn review_staging(&self) -> Option<Arc<Staging>> {
        (self.context.review_mode() || !self.staging.is_empty()).then(|| self.staging.clone())
    }

    /// Shows the pending review, if any (`restored`: found at the start of
    /// a resumed session).
    pub(crate) fn emit_review(&self, turn_id: &str, restored: bool, sink: &EventSink) {
        let files = self.staging.files();
        if files.is_empty() {
            return;
        }
        sink.emit(Event::TurnReview {
            turn_id: turn_id.to_owned(),
            files: review::review_files(&files, &self.config.workspace_dirs),
            restored,
        });
    }

    /// At the start of a session: a review this conversation left pending
    /// (the app quit or crashed before the user decided) is shown again.
    pub(crate) fn restore_review(&self, sink: &EventSink) {
        let path = review::review_store_path(&self.config.temp_dir, &self.config.session_id);
        match review::load_store(&path) {
            Ok(files) if files.is_empty() => {}
            Ok(files) => {
                self.staging.restore(files);
                self.emit_review("restored", true, sink);
            }
            Err(message) => {
                warn!(%message, "the pending review is lost");
                sink.emit(Event::Warning { message });
            }
        }
    }

    /// `Op::ApplyTurnReview`.
    pub(crate) async fn apply_review(
        &mut self,
        decisions: Vec<ReviewDecision>,
        checkpoints: Option<&Arc<SessionCheckpoints>>,
        sink: &EventSink,
    ) {
        review::apply(
            &self.staging,
            &self.config.workspace_dirs,
            decisions,
            self.notes(),
            checkpoints,
            sink,
        )
        .await;
    }
}
