//! Quota fallback, as Gemini CLI 0.61 offers it: when a request fails for
//! quota (HTTP 429 after the client's own retries), the interactive app
//! asks whether to switch to another model for the rest of the
//! conversation; nothing switches without that answer. Headless, 0.61 has
//! no one to ask (its non-interactive mode sets no fallback handler), so
//! the run ends with the error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gd_gemini::GeminiError;
use gd_protocol::FallbackChoice;
use tokio::sync::oneshot;

/// A server-requested delay longer than this marks a quota that will not
/// reset soon: 0.61's terminal quota, where "Keep trying" is not offered.
const TERMINAL_DELAY: Duration = Duration::from_secs(120);

/// Where a turn waits for the answer to its fallback prompt; shared by the
/// turn and the op loop (which delivers `Op::AnswerFallback` at once, even
/// while the turn runs).
#[derive(Debug, Clone, Default)]
pub struct FallbackGate(Arc<Mutex<Option<oneshot::Sender<FallbackChoice>>>>);

impl FallbackGate {
    /// Opens the gate for one answer (a question nobody answered before is
    /// withdrawn: its receiver sees the sender dropped).
    pub fn ask(&self) -> oneshot::Receiver<FallbackChoice> {
        let (tx, rx) = oneshot::channel();
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        rx
    }

    /// Delivers an answer; `false` when no prompt waits for one.
    pub fn answer(&self, choice: FallbackChoice) -> bool {
        let sender = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        sender.is_some_and(|tx| tx.send(choice).is_ok())
    }
}

/// A quota failure of a model request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaFailure {
    /// The quota will not reset within minutes (a daily limit).
    pub terminal: bool,
    pub retry_delay: Option<Duration>,
}

/// Whether `error` is a quota (or capacity) exhaustion that another model
/// may not share: 429 `RESOURCE_EXHAUSTED`.
pub fn quota_failure(error: &GeminiError) -> Option<QuotaFailure> {
    let GeminiError::Api(api) = error.root() else {
        return None;
    };
    if api.status != 429 {
        return None;
    }
    let daily = [api.message.as_str(), api.reason.as_deref().unwrap_or("")]
        .iter()
        .any(|text| {
            let lower = text.to_ascii_lowercase();
            lower.contains("perday") || lower.contains("per day") || lower.contains("daily")
        });
    Some(QuotaFailure {
        terminal: daily || api.retry_delay.is_some_and(|d| d > TERMINAL_DELAY),
        retry_delay: api.retry_delay,
    })
}

/// The prompt's text, in 0.61's words where they apply to the app.
pub fn fallback_message(failed_model: &str, failure: &QuotaFailure) -> String {
    let limited = if failed_model.contains("pro") {
        "all Pro models".to_owned()
    } else {
        failed_model.to_owned()
    };
    let mut message = if failure.terminal {
        format!("Usage limit reached for {limited}.")
    } else {
        format!("{failed_model} is experiencing high demand or its rate limit was reached.")
    };
    if let Some(delay) = failure.retry_delay {
        message.push_str(&format!(" Access resets in {}.", human(delay)));
    }
    message
}

fn human(delay: Duration) -> String {
    // The client caps a server's wait there (a proxy may ask for any number
    // of seconds): saying "24 h 0 min" would state what it did not say.
    if delay >= gd_gemini::MAX_RETRY_DELAY {
        return "a day or more".to_owned();
    }
    let secs = delay.as_secs();
    match secs {
        0..=59 => format!("{secs} s"),
        60..=3599 => format!("{} min", secs.div_ceil(60)),
        _ => format!("{} h {} min", secs / 3600, (secs % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_gemini::ApiError;

    fn api(status: u16, message: &str, delay: Option<u64>) -> GeminiError {
        GeminiError::Exhausted {
            attempts: 3,
            source: Box::new(GeminiError::Api(ApiError {
                status,
                status_text: Some("RESOURCE_EXHAUSTED".into()),
                message: message.into(),
                retry_delay: delay.map(Duration::from_secs),
                reason: None,
            })),
        }
    }

    #[test]
    fn classifies_quota_errors() {
        assert_eq!(quota_failure(&api(500, "x", None)), None);
        let short = quota_failure(&api(429, "Quota exceeded", Some(10))).unwrap();
        assert!(!short.terminal);
        let daily = quota_failure(&api(429, "Quota exceeded for ...PerDay", None)).unwrap();
        assert!(daily.terminal);
        assert!(quota_failure(&api(429, "x", Some(3600))).unwrap().terminal);
        assert_eq!(
            fallback_message("gemini-3.1-pro-preview", &daily),
            "Usage limit reached for all Pro models."
        );
    }

    #[test]
    fn a_capped_delay_is_not_shown_as_a_number() {
        let error = api(429, "x", Some(gd_gemini::MAX_RETRY_DELAY.as_secs()));
        let failure = quota_failure(&error).unwrap();
        assert!(failure.terminal);
        assert_eq!(
            fallback_message("gemini-3-flash-preview", &failure),
            "Usage limit reached for gemini-3-flash-preview. Access resets in a day or more."
        );
        let hours = api(429, "x", Some(5 * 3600 + 120));
        assert!(
            fallback_message("m", &quota_failure(&hours).unwrap())
                .ends_with("Access resets in 5 h 2 min.")
        );
    }

    #[test]
    fn gate_delivers_one_answer() {
        let gate = FallbackGate::default();
        assert!(!gate.answer(FallbackChoice::Stop), "nobody asked");
        let mut rx = gate.ask();
        assert!(gate.answer(FallbackChoice::Switch));
        assert_eq!(rx.try_recv().unwrap(), FallbackChoice::Switch);
        assert!(!gate.answer(FallbackChoice::Stop));
    }
}
