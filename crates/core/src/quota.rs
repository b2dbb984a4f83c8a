//! The session's view of the account's quota ([`Event::Quota`]).
//!
//! Code Assist says what is left: `retrieveUserQuota` is asked when the
//! session starts and again after turns, at most once a minute (Gemini CLI
//! refreshes it when stale, too). The Gemini API and Vertex AI have no such
//! call, so the report says "unknown" until a rate-limit answer (429) tells
//! something, which is then reported as it came.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gd_gemini::{Backend, GeminiClient, QuotaBucketWire};
use gd_protocol::{Event, QuotaBucket, QuotaReport, QuotaSource};
use tracing::{Instrument, debug, info_span};

use crate::events::WeakEventSink;

/// How stale Code Assist's figures may get before a turn's end asks again.
pub const QUOTA_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// Watches a session's events and reports the quota when there is news.
#[derive(Clone)]
pub struct QuotaWatcher {
    client: GeminiClient,
    sink: WeakEventSink,
    /// When Code Assist was last asked (or is being asked).
    asked: Arc<Mutex<Option<Instant>>>,
    interval: Duration,
}

impl QuotaWatcher {
    /// `sink` is weak: a pending quota request must not keep the session's
    /// event stream open.
    pub fn new(client: GeminiClient, sink: WeakEventSink) -> Self {
        Self {
            client,
            sink,
            asked: Arc::new(Mutex::new(None)),
            interval: QUOTA_REFRESH_INTERVAL,
        }
    }

    /// The same watcher refreshing after every turn that ends `interval`
    /// after the last ask (tests use zero).
    pub fn with_interval(self, interval: Duration) -> Self {
        Self { interval, ..self }
    }

    fn source(&self) -> QuotaSource {
        match self.client.backend() {
            Backend::CodeAssist { .. } => QuotaSource::CodeAssist,
            Backend::GeminiApi { .. } => QuotaSource::GeminiApi,
            Backend::VertexAi { .. } => QuotaSource::VertexAi,
        }
    }

    /// The session started: Code Assist is asked; other backends get an
    /// honest "unknown".
    pub fn start(&self) {
        match self.source() {
            QuotaSource::CodeAssist => self.refresh(true),
            source => self.sink.emit(Event::Quota {
                quota: QuotaReport {
                    source,
                    buckets: Vec::new(),
                    note: Some(
                        "This backend does not report the remaining quota; a rate-limit answer (429) will show here."
                            .into(),
                    ),
                    fetched_ms: now_ms(),
                },
            }),
        }
    }

    /// Sees one of the session's events: a finished turn may refresh Code
    /// Assist's figures; a rate-limit answer is news on any backend.
    pub fn observe(&self, event: &Event) {
        match event {
            Event::TurnComplete { .. } if self.source() == QuotaSource::CodeAssist => {
                self.refresh(false);
            }
            Event::Error {
                status: Some(429),
                message,
                ..
            } => self.rate_limited(message),
            Event::Retrying { reason, .. } if is_rate_limit(reason) => self.rate_limited(reason),
            _ => {}
        }
    }

    /// A 429: what the server said, for backends without a quota endpoint
    /// (Code Assist's next refresh tells the figures).
    fn rate_limited(&self, message: &str) {
        let source = self.source();
        if source == QuotaSource::CodeAssist {
            return;
        }
        let message: String = message.chars().take(300).collect();
        self.sink.emit(Event::Quota {
            quota: QuotaReport {
                source,
                buckets: Vec::new(),
                note: Some(format!("Rate limit reached (429): {message}")),
                fetched_ms: now_ms(),
            },
        });
    }

    /// Asks Code Assist in the background, unless it was asked less than a
    /// minute ago (`force` asks anyway).
    fn refresh(&self, force: bool) {
        {
            let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
            if !force && asked.is_some_and(|at| at.elapsed() < self.interval) {
                return;
            }
            *asked = Some(Instant::now());
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let watcher = self.clone();
        runtime.spawn(
            async move {
                let quota = match watcher.client.retrieve_user_quota().await {
                    Ok(Some(buckets)) => QuotaReport {
                        source: QuotaSource::CodeAssist,
                        buckets: buckets.into_iter().filter_map(bucket).collect(),
                        note: None,
                        fetched_ms: now_ms(),
                    },
                    Ok(None) => QuotaReport {
                        source: QuotaSource::CodeAssist,
                        buckets: Vec::new(),
                        note: Some("No Code Assist project yet: the quota is unknown.".into()),
                        fetched_ms: now_ms(),
                    },
                    Err(error) => {
                        debug!(%error, "retrieveUserQuota failed");
                        QuotaReport {
                            source: QuotaSource::CodeAssist,
                            buckets: Vec::new(),
                            note: Some(format!("The quota could not be read: {error}")),
                            fetched_ms: now_ms(),
                        }
                    }
                };
                watcher.sink.emit(Event::Quota { quota });
            }
            .instrument(info_span!("quota")),
        );
    }
}

/// A wire bucket as reported (those without a model or fraction are
/// already dropped by `retrieve_user_quota`).
fn bucket(wire: QuotaBucketWire) -> Option<QuotaBucket> {
    Some(QuotaBucket {
        model: wire.model_id?,
        remaining_fraction: wire.remaining_fraction?.clamp(0.0, 1.0),
        remaining_amount: wire.remaining_amount.and_then(|a| a.trim().parse().ok()),
        reset_time: wire.reset_time,
        token_type: wire.token_type,
    })
}

/// A retry's reason that names a rate limit.
fn is_rate_limit(reason: &str) -> bool {
    reason.contains("429") || reason.contains("RESOURCE_EXHAUSTED")
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_parse_amounts_and_clamp_fractions() {
        let b = bucket(QuotaBucketWire {
            model_id: Some("m".into()),
            remaining_fraction: Some(1.5),
            remaining_amount: Some(" 42 ".into()),
            reset_time: None,
            token_type: None,
        })
        .unwrap();
        assert_eq!((b.remaining_fraction, b.remaining_amount), (1.0, Some(42)));
        assert!(is_rate_limit("HTTP 429 Too Many Requests"));
        assert!(!is_rate_limit("503"));
    }
}
