//! Keeping secrets out of messages. Errors from servers and libraries are
//! passed through [`redact`] before they become an [`crate::AuthError`], so a
//! token echoed in a response body or a URL never reaches a log or the UI.

use std::sync::LazyLock;

use regex::Regex;

/// Shapes of Google credentials: access tokens (`ya29.`), refresh tokens
/// (`1//`), authorization codes (`4/0…`), API keys (`AIza…`), and
/// `access_token` / `refresh_token` / `code` / `key` values in JSON, form
/// bodies and query strings.
static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"ya29\.[0-9A-Za-z_\-\.]+",
        r"1//[0-9A-Za-z_\-]+",
        r"\b4/[0-9A-Za-z_\-]{10,}",
        r"AIza[0-9A-Za-z_\-]{20,}",
        // Short values (`"code": 400`) are not credentials.
        r#"(?i)("?(?:access_token|refresh_token|id_token|client_secret|code|key|token|assertion)"?\s*[:=]\s*"?)[^"&\s,}]{8,}"#,
        r"(?i)(bearer\s+)[0-9A-Za-z_\-\.~+/]+=*",
    ]
    .iter()
    .map(|p| Regex::new(p).expect("valid redaction pattern"))
    .collect()
});

const MASK: &str = "[redacted]";

/// Replaces anything that looks like a credential, and every `known` secret,
/// with `[redacted]`.
pub fn redact_with(text: &str, known: &[&str]) -> String {
    let mut out = text.to_owned();
    for secret in known.iter().filter(|s| s.len() >= 4) {
        out = out.replace(secret, MASK);
    }
    for (i, pattern) in PATTERNS.iter().enumerate() {
        out = if i >= 4 {
            // Keep the key name (group 1), drop the value.
            pattern
                .replace_all(&out, |c: &regex::Captures<'_>| format!("{}{MASK}", &c[1]))
                .into_owned()
        } else {
            pattern.replace_all(&out, MASK).into_owned()
        };
    }
    out
}

/// [`redact_with`] without known secrets.
pub fn redact(text: &str) -> String {
    redact_with(text, &[])
}

/// The full `Display` chain of an error (`a: b: c`), redacted.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    redact(&message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_token_shapes_and_known_values() {
        let text = r#"{"access_token": "ya29.a0AfB_x-y", "refresh_token":"1//0gAbc-d", "expires_in": 3599} key=AIzaSyA1234567890123456789012345 code=4/0AeanS0ZXyz12345 Bearer abc.def my-own-secret"#;
        let out = redact_with(text, &["my-own-secret"]);
        for secret in [
            "ya29",
            "1//0g",
            "AIzaSy",
            "4/0Aean",
            "abc.def",
            "my-own-secret",
        ] {
            assert!(!out.contains(secret), "{secret} leaked in {out}");
        }
        assert!(out.contains("expires_in"), "{out}");
        assert!(out.contains("\"access_token\": \"[redacted]"), "{out}");
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in [
            "Token has been expired or revoked. (invalid_grant)",
            r#"{"error": {"code": 403, "status": "PERMISSION_DENIED"}}"#,
        ] {
            assert_eq!(redact(text), text);
        }
    }
}
