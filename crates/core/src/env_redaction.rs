//! `security.environmentVariableRedaction`: which variables of the app's
//! environment a shell command does not inherit, by Gemini CLI 0.61's rules
//! (`shouldRedactEnvironmentVariable`), so a setting means the same thing
//! in both programs. Off by default, as there.
//!
//! Order of the checks (first match decides): `GEMINI_CLI_*` kept; a value
//! that looks like a secret (private key, certificate, credentials in a URL,
//! GitHub / Google / AWS / Stripe / Slack tokens, JWTs) removed;
//! `GIT_CONFIG_*` kept; the `allowed` list kept; the `blocked` list removed;
//! basic variables (`PATH`, `HOME`, `LANG`, `TERM`, …) kept; well-known
//! secrets (`DATABASE_URL`, `CLIENT_ID`, …) removed; names containing
//! TOKEN, SECRET, PASSWORD, PASSWD, KEY, AUTH, CREDENTIAL, CREDS, PRIVATE or
//! CERT removed.

use std::sync::LazyLock;

use regex::Regex;

/// `security.environmentVariableRedaction` as the shell tool applies it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvRedaction {
    /// Names always kept (upper case).
    pub allowed: Vec<String>,
    /// Names always removed (upper case).
    pub blocked: Vec<String>,
}

const ALWAYS_ALLOWED: &[&str] = &[
    "PATH",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "SYSTEMDRIVE",
    "HOME",
    "LANG",
    "SHELL",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "TERM",
    "COLORTERM",
];

const NEVER_ALLOWED: &[&str] = &[
    "CLIENT_ID",
    "DB_URI",
    "CONNECTION_STRING",
    "AWS_DEFAULT_REGION",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
    "SLACK_WEBHOOK_URL",
    "TWILIO_ACCOUNT_SID",
    "DATABASE_URL",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_ACCOUNT",
    "FIREBASE_PROJECT_ID",
];

const SECRET_NAME_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "KEY",
    "AUTH",
    "CREDENTIAL",
    "CREDS",
    "PRIVATE",
    "CERT",
];

/// Gemini CLI 0.61's value patterns (matched case-insensitively).
static SECRET_VALUES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"-----BEGIN (RSA|OPENSSH|EC|PGP) PRIVATE KEY-----",
        r"-----BEGIN CERTIFICATE-----",
        r"(https?|ftp|smtp)://[^:\s]{1,1024}:[^@\s]{1,1024}@",
        r"(ghp|gho|ghu|ghs|ghr|github_pat)_[a-zA-Z0-9_]{36,}",
        r"AIzaSy[a-zA-Z0-9_\\-]{33}",
        r"AKIA[A-Z0-9]{16}",
        r"eyJ[a-zA-Z0-9_-]{0,10240}\.[a-zA-Z0-9_-]{0,10240}\.[a-zA-Z0-9_-]{0,10240}",
        r"(s|r)k_(live|test)_[0-9a-zA-Z]{24}",
        r"xox[abpr]-[a-zA-Z0-9-]+",
    ]
    .iter()
    .filter_map(|p| Regex::new(&format!("(?i){p}")).ok())
    .collect()
});

impl EnvRedaction {
    /// From the setting's lists (names compared in upper case).
    pub fn new(allowed: &[String], blocked: &[String]) -> Self {
        let upper = |names: &[String]| names.iter().map(|n| n.to_uppercase()).collect();
        Self {
            allowed: upper(allowed),
            blocked: upper(blocked),
        }
    }

    /// Whether a variable is kept from commands.
    pub fn redacts(&self, name: &str, value: &str) -> bool {
        let key = name.to_uppercase();
        if key.starts_with("GEMINI_CLI_") {
            return false;
        }
        if SECRET_VALUES.iter().any(|re| re.is_match(value)) {
            return true;
        }
        if key.starts_with("GIT_CONFIG_") || self.allowed.contains(&key) {
            return false;
        }
        if self.blocked.contains(&key) {
            return true;
        }
        if ALWAYS_ALLOWED.contains(&key.as_str()) {
            return false;
        }
        if NEVER_ALLOWED.contains(&key.as_str()) {
            return true;
        }
        SECRET_NAME_PARTS.iter().any(|part| key.contains(part))
    }

    /// The names of the app's environment variables to remove.
    pub fn redacted_names(&self) -> Vec<String> {
        std::env::vars_os()
            .filter_map(|(name, value)| {
                let name = name.into_string().ok()?;
                let value = value.to_string_lossy();
                self.redacts(&name, &value).then_some(name)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_in_0_61s_order() {
        let r = EnvRedaction::new(&["MY_API_KEY".into()], &["BUILD_ID".into()]);
        assert!(r.redacts("GITHUB_TOKEN", "x"));
        assert!(r.redacts("aws_secret_access_key", "x"));
        assert!(r.redacts("DATABASE_URL", "postgres://db"));
        assert!(r.redacts("NOTES", "https://me:hunter2@example.com"));
        assert!(r.redacts("ANYTHING", "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"));
        assert!(r.redacts("BUILD_ID", "42"), "blocked");
        assert!(!r.redacts("MY_API_KEY", "plain"), "allowed");
        assert!(
            r.redacts("MY_API_KEY", "AKIAABCDEFGHIJKLMNOP"),
            "a secret value beats allowed"
        );
        assert!(!r.redacts("PATH", "/usr/bin"));
        assert!(!r.redacts("GEMINI_CLI_TRUST_WORKSPACE", "true"));
        assert!(!r.redacts("GIT_CONFIG_COUNT", "1"));
        assert!(!r.redacts("EDITOR", "vim"));
    }
}
