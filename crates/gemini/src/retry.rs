//! Exponential backoff with jitter for retryable failures.

use std::time::Duration;

use rand::Rng;

/// How many times to try a request and how long to wait in between.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts, including the first (1 disables retries).
    pub max_attempts: u32,
    /// Delay before the first retry; doubled for each further retry.
    pub initial_delay: Duration,
    /// Cap for the computed backoff.
    pub max_delay: Duration,
    /// Fraction of random spread around the computed delay (0.3 = ±30%), so
    /// many clients hitting the same limit do not retry in lockstep.
    pub jitter: f64,
    /// A server-requested delay longer than this is not waited out: the
    /// error is reported instead (a daily quota will not reset in minutes).
    pub max_server_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 6,
            initial_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(30),
            jitter: 0.3,
            max_server_delay: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The default policy adjusted by `GEMINI_DESKTOP_MAX_ATTEMPTS`,
    /// `GEMINI_DESKTOP_RETRY_INITIAL_MS` and `GEMINI_DESKTOP_RETRY_MAX_MS`.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Self {
        let mut policy = Self::default();
        let number = |name: &str| get(name).and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(n) = number("GEMINI_DESKTOP_MAX_ATTEMPTS") {
            policy.max_attempts = n.clamp(1, 100) as u32;
        }
        if let Some(ms) = number("GEMINI_DESKTOP_RETRY_INITIAL_MS") {
            policy.initial_delay = Duration::from_millis(ms);
        }
        if let Some(ms) = number("GEMINI_DESKTOP_RETRY_MAX_MS") {
            policy.max_delay = Duration::from_millis(ms);
        }
        policy
    }

    /// A policy that never retries.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Delay before attempt `attempt + 1`, given that `attempt` (1-based)
    /// just failed. A server-provided delay is honoured as is.
    pub fn delay(&self, attempt: u32, server_delay: Option<Duration>) -> Duration {
        if let Some(delay) = server_delay {
            return delay;
        }
        let exponent = attempt.saturating_sub(1).min(20);
        let base = self
            .initial_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay);
        if self.jitter <= 0.0 || base.is_zero() {
            return base;
        }
        let spread = rand::rng().random_range(-self.jitter..=self.jitter);
        base.mul_f64((1.0 + spread).max(0.0)).min(self.max_delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_within_bounds_and_caps() {
        let policy = RetryPolicy::default();
        for attempt in 1..=3u32 {
            let base = 1000.0 * f64::from(1u32 << (attempt - 1));
            for _ in 0..50 {
                let d = policy.delay(attempt, None).as_millis() as f64;
                assert!(
                    d >= base * 0.7 - 1.0 && d <= base * 1.3 + 1.0,
                    "{attempt}: {d}"
                );
            }
        }
        assert!(policy.delay(30, None) <= policy.max_delay);
    }

    #[test]
    fn server_delay_is_honoured() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
    }

    #[test]
    fn env_overrides() {
        let p = RetryPolicy::from_env(|k| match k {
            "GEMINI_DESKTOP_MAX_ATTEMPTS" => Some("2".into()),
            "GEMINI_DESKTOP_RETRY_INITIAL_MS" => Some("5".into()),
            _ => None,
        });
        assert_eq!(p.max_attempts, 2);
        assert_eq!(p.initial_delay, Duration::from_millis(5));
    }
}
