//! Retention: which old sessions to delete. Off by default (keep
//! everything); configured with Gemini CLI's own setting,
//! `general.sessionRetention` (`enabled`, `maxAge` like `"30d"`, `"24h"`,
//! `"2w"`, and `maxCount`).

use rusqlite::params;
use serde::Deserialize;

use crate::{Result, Store, StoreError};

/// `general.sessionRetention`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Retention {
    pub enabled: bool,
    /// Delete sessions not updated for this long (`30d`, `24h`, `2w`, `90m`).
    pub max_age: Option<String>,
    /// Keep at most this many sessions (the newest).
    pub max_count: Option<u64>,
    /// `minRetention` (default `1d`): a `maxAge` below it is refused and
    /// nothing is deleted, as in Gemini CLI 0.61, so a slip such as `1h`
    /// cannot wipe the day's work.
    pub min_retention: Option<String>,
}

/// Gemini CLI 0.61's `maxAge` default.
pub const DEFAULT_MAX_AGE: &str = "30d";

/// Gemini CLI 0.61's `minRetention` default.
pub const DEFAULT_MIN_RETENTION: &str = "1d";

impl Retention {
    /// Reads `general.sessionRetention` from a merged settings document;
    /// an absent or malformed entry means "keep everything".
    pub fn from_settings(settings: &serde_json::Value) -> Result<Self> {
        match settings.pointer("/general/sessionRetention") {
            None | Some(serde_json::Value::Null) => Ok(Self::default()),
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
                StoreError::Invalid(format!("general.sessionRetention is invalid: {e}"))
            }),
        }
    }

    /// Reads the value of `general.sessionRetention` itself.
    pub fn from_value(value: &serde_json::Value) -> Result<Self> {
        Self::from_settings(&serde_json::json!({ "general": { "sessionRetention": value } }))
    }

    /// `maxAge` in milliseconds. Enabled with neither `maxAge` nor
    /// `maxCount`, Gemini CLI 0.61's default age applies (`30d`).
    pub fn max_age_ms(&self) -> Result<Option<i64>> {
        match (&self.max_age, self.max_count) {
            (Some(age), _) => parse_age(age).map(Some),
            (None, None) => parse_age(DEFAULT_MAX_AGE).map(Some),
            (None, Some(_)) => Ok(None),
        }
    }

    /// Gemini CLI 0.61's checks before anything is deleted: `maxAge` not
    /// below `minRetention` (an unreadable `minRetention` counts as `1d`),
    /// `maxCount` at least 1.
    pub fn check(&self) -> Result<()> {
        if let Some(age) = self.max_age_ms()? {
            let min_text = self
                .min_retention
                .as_deref()
                .unwrap_or(DEFAULT_MIN_RETENTION);
            let min = parse_age(min_text).or_else(|_| parse_age(DEFAULT_MIN_RETENTION))?;
            if age < min {
                return Err(StoreError::Invalid(format!(
                    "general.sessionRetention: maxAge cannot be less than minRetention ({min_text}); nothing was deleted"
                )));
            }
        }
        if self.max_count == Some(0) {
            return Err(StoreError::Invalid(
                "general.sessionRetention: maxCount must be at least 1; nothing was deleted".into(),
            ));
        }
        Ok(())
    }
}

/// Parses `24h`, `30d`, `2w`, `6m` (a number and one unit; `m` is a month
/// of 30 days, as in Gemini CLI 0.61, not a minute).
pub fn parse_age(text: &str) -> Result<i64> {
    let text = text.trim();
    let bad = || {
        StoreError::Invalid(format!(
            "cannot read the age {text:?}: use e.g. 30d, 24h, 2w, 6m (months)"
        ))
    };
    let unit = text.chars().last().ok_or_else(bad)?;
    let number: i64 = text[..text.len() - unit.len_utf8()]
        .trim()
        .parse()
        .map_err(|_| bad())?;
    let ms = match unit {
        'h' => 3_600_000,
        'd' => 86_400_000,
        'w' => 7 * 86_400_000,
        'm' => 30 * 86_400_000,
        _ => return Err(bad()),
    };
    if number <= 0 {
        return Err(bad());
    }
    number.checked_mul(ms).ok_or_else(bad)
}

impl Store {
    /// Deletes the sessions `retention` no longer keeps (none when it is
    /// disabled). `keep` (e.g. the session being resumed) is never deleted.
    /// Returns how many were deleted.
    pub fn apply_retention(
        &self,
        retention: &Retention,
        now_ms: i64,
        keep: Option<&str>,
    ) -> Result<usize> {
        if !retention.enabled {
            return Ok(0);
        }
        retention.check()?;
        let max_age = retention.max_age_ms()?;
        let mut doomed: Vec<String> = Vec::new();
        {
            let conn = self.reader();
            if let Some(age) = max_age {
                let mut stmt = conn.prepare("SELECT id FROM sessions WHERE updated_ms < ?1")?;
                doomed.extend(
                    stmt.query_map(params![now_ms - age], |r| r.get::<_, String>(0))?
                        .collect::<rusqlite::Result<Vec<_>>>()?,
                );
            }
            if let Some(count) = retention.max_count {
                let mut stmt = conn.prepare(
                    "SELECT id FROM sessions ORDER BY updated_ms DESC, id LIMIT -1 OFFSET ?1",
                )?;
                doomed.extend(
                    stmt.query_map(params![count as i64], |r| r.get::<_, String>(0))?
                        .collect::<rusqlite::Result<Vec<_>>>()?,
                );
            }
        }
        doomed.sort();
        doomed.dedup();
        doomed.retain(|id| Some(id.as_str()) != keep);
        if doomed.is_empty() {
            return Ok(0);
        }
        let deleted = self.delete_sessions(&doomed)?;
        tracing::info!(deleted, "session retention deleted old sessions");
        Ok(deleted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(parse_age("30d").unwrap(), 30 * 86_400_000);
        assert_eq!(parse_age("24h").unwrap(), 86_400_000);
        assert_eq!(parse_age("2w").unwrap(), 14 * 86_400_000);
        assert!(parse_age("").is_err());
        assert!(parse_age("d").is_err());
        assert!(parse_age("-3d").is_err());
        assert!(parse_age("3y").is_err());
        // Gemini CLI 0.61: `m` is a month of 30 days.
        assert_eq!(parse_age("6m").unwrap(), 180 * 86_400_000);
    }

    #[test]
    fn max_age_below_min_retention_deletes_nothing() {
        let short = Retention {
            enabled: true,
            max_age: Some("12h".into()),
            ..Retention::default()
        };
        let err = short.check().unwrap_err().to_string();
        assert!(
            err.contains("maxAge cannot be less than minRetention (1d)"),
            "{err}"
        );
        let allowed = Retention {
            min_retention: Some("6h".into()),
            ..short.clone()
        };
        assert!(allowed.check().is_ok());
        let unreadable_min = Retention {
            min_retention: Some("soon".into()),
            ..short
        };
        assert!(
            unreadable_min.check().is_err(),
            "an unreadable minRetention is 1d"
        );
        let zero = Retention {
            enabled: true,
            max_count: Some(0),
            ..Retention::default()
        };
        assert!(
            zero.check()
                .unwrap_err()
                .to_string()
                .contains("maxCount must be at least 1")
        );
    }

    #[test]
    fn settings_entry() {
        let s = serde_json::json!({"general": {"sessionRetention": {"enabled": true, "maxAge": "7d", "maxCount": 3}}});
        let r = Retention::from_settings(&s).unwrap();
        assert!(r.enabled);
        assert_eq!(r.max_count, Some(3));
        assert_eq!(
            Retention::from_settings(&serde_json::json!({})).unwrap(),
            Retention::default()
        );
        assert!(
            Retention::from_settings(
                &serde_json::json!({"general": {"sessionRetention": {"maxCount": "x"}}})
            )
            .is_err()
        );
    }
}
