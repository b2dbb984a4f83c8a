//! "Why was this allowed?": the scheduler notes what decided each call (the
//! policy's verdict, then the user's answer if one was asked for) and tells
//! the frontends with `Event::ToolCallDecided`; the finished call carries it
//! into `Event::ToolCallResponse` and the history.

use gd_protocol::{ConfirmationOutcome, DecidedBy, Event, HunkChoice, UserDecision};
use tracing::debug;

use super::Call;
use crate::approval::Answer;
use crate::events::EventSink;

/// Records `why` as what decided `call` and announces it. Nothing is sent
/// for policies that cannot say (tests, the allow-all policy).
pub(super) fn note(call: &mut Call, why: Option<DecidedBy>, sink: &EventSink) {
    let Some(why) = why else { return };
    debug!(call_id = %call.request.call_id, decided_by = ?why, "tool call decided");
    sink.emit(Event::ToolCallDecided {
        call_id: call.request.call_id.clone(),
        decided_by: Box::new(why.clone()),
    });
    call.decided_by = Some(why);
}

/// The user's answer as what decided the call.
pub(super) fn by_user(answer: &Answer) -> DecidedBy {
    let partial = answer
        .hunks
        .as_deref()
        .is_some_and(|h| h.iter().any(|d| d.choice != HunkChoice::Accept));
    let outcome = match answer.outcome {
        ConfirmationOutcome::Cancel => UserDecision::Rejected,
        _ if partial => UserDecision::PartialHunks,
        ConfirmationOutcome::ModifyWithEditor => UserDecision::Modified,
        ConfirmationOutcome::ProceedOnce => UserDecision::ProceedOnce,
        ConfirmationOutcome::ProceedAlways | ConfirmationOutcome::ProceedAlwaysServer => {
            UserDecision::Always
        }
        ConfirmationOutcome::ProceedAlwaysAndSave => UserDecision::AlwaysAndSave,
    };
    DecidedBy::User { outcome }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_protocol::HunkDecision;

    fn answer(outcome: ConfirmationOutcome, hunks: Option<Vec<HunkChoice>>) -> Answer {
        Answer {
            outcome,
            content: None,
            hunks: hunks.map(|h| {
                h.into_iter()
                    .enumerate()
                    .map(|(i, choice)| HunkDecision {
                        hunk: i as u32,
                        choice,
                    })
                    .collect()
            }),
            plan: None,
        }
    }

    #[test]
    fn answers_map_to_user_decisions() {
        let user = |a| match by_user(&a) {
            DecidedBy::User { outcome } => outcome,
            other => panic!("{other:?}"),
        };
        use ConfirmationOutcome as O;
        assert_eq!(user(answer(O::Cancel, None)), UserDecision::Rejected);
        assert_eq!(
            user(answer(O::ProceedOnce, None)),
            UserDecision::ProceedOnce
        );
        assert_eq!(
            user(answer(O::ProceedAlwaysServer, None)),
            UserDecision::Always
        );
        assert_eq!(
            user(answer(O::ProceedAlwaysAndSave, None)),
            UserDecision::AlwaysAndSave
        );
        assert_eq!(
            user(answer(O::ModifyWithEditor, None)),
            UserDecision::Modified
        );
        let all = Some(vec![HunkChoice::Accept, HunkChoice::Accept]);
        assert_eq!(user(answer(O::ProceedOnce, all)), UserDecision::ProceedOnce);
        let some = Some(vec![HunkChoice::Accept, HunkChoice::Reject]);
        assert_eq!(
            user(answer(O::ProceedOnce, some)),
            UserDecision::PartialHunks
        );
    }
}
