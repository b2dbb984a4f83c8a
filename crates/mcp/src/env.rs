//! The environment of stdio servers, built like Gemini CLI builds it: the
//! process environment without variables that look like secrets, plus
//! `GEMINI_CLI=1`, plus the entry's `env` (minus variables that would let
//! it inject code into the interpreter, such as `LD_PRELOAD`).

use std::collections::BTreeMap;

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
    "ADDITIONAL_CONTEXT",
    "AVAILABLE_LABELS",
    "BRANCH_NAME",
    "DESCRIPTION",
    "EVENT_NAME",
    "GITHUB_ENV",
    "IS_PULL_REQUEST",
    "ISSUES_TO_TRIAGE",
    "ISSUE_BODY",
    "ISSUE_NUMBER",
    "ISSUE_TITLE",
    "PULL_REQUEST_NUMBER",
    "REPOSITORY",
    "TITLE",
    "TRIGGERING_ACTOR",
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

/// Variables an `env` entry may not set.
const BLOCKED_EXECUTION_ENVS: &[&str] = &[
    "NODE_OPTIONS",
    "NODE_CLI_FLAGS",
    "_FORCE_NODE_OPTIONS",
    "NODE_PATH",
    "ELECTRON_RUN_AS_NODE",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "RUBYOPT",
    "RUBYLIB",
    "PERL5OPT",
    "PERL5LIB",
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_DEBUG",
    "LD_PROFILE",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_FORCE_FLAT_NAMESPACE",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "DYLD_FALLBACK_LIBRARY_PATH",
    "DYLD_FALLBACK_FRAMEWORK_PATH",
    "BASH_ENV",
    "ENV",
    "PERL5DB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "CLASSPATH",
    "DOTNET_STARTUP_HOOKS",
    "CORECLR_PROFILER_PATH",
    "CORECLR_ENABLE_PROFILING",
];

/// Whether an `env` entry may set `key`.
pub fn is_blocked_override(key: &str) -> bool {
    BLOCKED_EXECUTION_ENVS.contains(&key.to_ascii_uppercase().as_str())
}

fn looks_secret_value(value: &str) -> bool {
    let v = value.to_ascii_uppercase();
    v.contains("-----BEGIN RSA PRIVATE KEY-----")
        || v.contains("-----BEGIN OPENSSH PRIVATE KEY-----")
        || v.contains("-----BEGIN EC PRIVATE KEY-----")
        || v.contains("-----BEGIN PGP PRIVATE KEY-----")
        || v.contains("-----BEGIN CERTIFICATE-----")
        || url_with_credentials(&v)
        || ["GHP_", "GHO_", "GHU_", "GHS_", "GHR_", "GITHUB_PAT_"]
            .iter()
            .any(|p| token_after(&v, p, 36))
        || token_after(&v, "AIZASY", 33)
        || token_after(&v, "AKIA", 16)
        || v.contains("XOXB-")
        || v.contains("XOXA-")
        || v.contains("XOXP-")
        || v.contains("XOXR-")
        || ["SK_LIVE_", "SK_TEST_", "RK_LIVE_", "RK_TEST_"]
            .iter()
            .any(|p| token_after(&v, p, 24))
        || jwt_like(&v)
}

/// `prefix` followed by at least `min` token characters.
fn token_after(value: &str, prefix: &str, min: usize) -> bool {
    value.match_indices(prefix).any(|(i, _)| {
        value[i + prefix.len()..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .count()
            >= min
    })
}

fn url_with_credentials(value: &str) -> bool {
    ["HTTP://", "HTTPS://", "FTP://", "SMTP://"]
        .iter()
        .any(|scheme| {
            value.match_indices(scheme).any(|(i, _)| {
                let rest = &value[i + scheme.len()..];
                let authority = rest.split(['/', ' ']).next().unwrap_or("");
                authority
                    .split_once('@')
                    .is_some_and(|(creds, _)| creds.contains(':'))
            })
        })
}

fn jwt_like(value: &str) -> bool {
    value.match_indices("EYJ").any(|(i, _)| {
        let token: String = value[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            .collect();
        token.split('.').count() >= 3
    })
}

/// Gemini CLI's `shouldRedactEnvironmentVariable`.
fn should_redact(key: &str, value: &str, strict: bool) -> bool {
    let key = key.to_ascii_uppercase();
    if key.starts_with("GEMINI_CLI_") {
        return false;
    }
    if looks_secret_value(value) {
        return true;
    }
    if key.starts_with("GIT_CONFIG_") || ALWAYS_ALLOWED.contains(&key.as_str()) {
        return false;
    }
    if NEVER_ALLOWED.contains(&key.as_str()) || strict {
        return true;
    }
    SECRET_NAME_PARTS.iter().any(|p| key.contains(p))
}

/// The environment for a stdio server started from `process_env` with the
/// entry's `extra` variables.
pub fn server_environment(
    process_env: impl IntoIterator<Item = (String, String)>,
    extra: &[(String, String)],
) -> (BTreeMap<String, String>, Vec<String>) {
    let process: Vec<(String, String)> = process_env.into_iter().collect();
    let strict = process
        .iter()
        .any(|(k, v)| k == "GITHUB_SHA" || (k == "SURFACE" && v == "Github"));
    let mut env = BTreeMap::new();
    env.insert("GEMINI_CLI".to_owned(), "1".to_owned());
    for (key, value) in process {
        if !should_redact(&key, &value, strict) {
            env.insert(key, value);
        }
    }
    let mut blocked = Vec::new();
    for (key, value) in extra {
        if is_blocked_override(key) {
            blocked.push(key.clone());
        } else {
            env.insert(key.clone(), value.clone());
        }
    }
    (env, blocked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn secrets_are_removed_and_entries_added() {
        let (env, blocked) = server_environment(
            vars(&[
                ("PATH", "/bin"),
                ("HOME", "/h"),
                ("GEMINI_API_KEY", "k"),
                ("MY_TOKEN", "t"),
                ("EDITOR", "vi"),
                ("DATABASE_URL", "x"),
                ("PROXY", "http://user:pw@proxy:8080"),
                ("GEMINI_CLI_X", "keep"),
            ]),
            &vars(&[("API_KEY", "explicit"), ("LD_PRELOAD", "/evil.so")]),
        );
        let keys: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "API_KEY",
                "EDITOR",
                "GEMINI_CLI",
                "GEMINI_CLI_X",
                "HOME",
                "PATH"
            ]
        );
        assert_eq!(env["GEMINI_CLI"], "1");
        assert_eq!(env["API_KEY"], "explicit");
        assert_eq!(blocked, ["LD_PRELOAD"]);
    }

    #[test]
    fn strict_mode_on_ci() {
        let (env, _) = server_environment(
            vars(&[("GITHUB_SHA", "abc"), ("PATH", "/bin"), ("EDITOR", "vi")]),
            &[],
        );
        assert!(env.contains_key("PATH") && !env.contains_key("EDITOR"));
    }

    #[test]
    fn secret_values() {
        assert!(looks_secret_value(
            "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
        ));
        assert!(looks_secret_value(
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc"
        ));
        assert!(!looks_secret_value("/usr/local/bin:/usr/bin"));
        assert!(!looks_secret_value("http://proxy:8080"));
    }
}
