//! Sign-in failures in words a person can act on. The errors of the HTTP
//! stack arrive as text chains (`error sending request for url (…): client
//! error (Connect): dns error: failed to lookup address information: …`);
//! [`classify`] reads such a chain once, here, and says what kind of
//! failure it is, and [`network_message`] turns that into one sentence
//! ("Can't reach generativelanguage.googleapis.com — check your connection.").
//! The chain itself stays available as the report's `detail`, behind a
//! toggle in the UI.

use serde::Serialize;

/// What went wrong, as far as the text of the error tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCause {
    /// No network at all (unreachable network, no route).
    Offline,
    /// The server's name could not be looked up (often: offline too).
    Dns,
    /// The server (or a proxy) refused the connection.
    Refused,
    /// No answer in time.
    Timeout,
    /// The secure connection could not be set up (certificates, proxies
    /// that intercept TLS, a wrong clock).
    Tls,
    /// The server answered with an error status.
    HttpStatus,
    /// Google refused the API key.
    InvalidKey,
    /// A network failure the text does not explain.
    Other,
}

/// Reads an error chain's text. Order matters: a timeout while resolving
/// a name is a timeout, a TLS failure mentions "connection" too.
pub fn classify(text: &str) -> ErrorCause {
    let t = text.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| t.contains(n));
    if has(&["timed out", "timeout", "deadline has elapsed"]) {
        ErrorCause::Timeout
    } else if has(&[
        "network is unreachable",
        "no route to host",
        "network unreachable",
    ]) {
        ErrorCause::Offline
    } else if has(&[
        "dns error",
        "failed to lookup address",
        "name or service not known",
        "temporary failure in name resolution",
        "no address associated with hostname",
        "nodename nor servname",
    ]) {
        ErrorCause::Dns
    } else if has(&["certificate", "tls", "ssl", "handshake"]) {
        ErrorCause::Tls
    } else if has(&["connection refused"]) {
        ErrorCause::Refused
    } else if http_status(&t).is_some() {
        ErrorCause::HttpStatus
    } else {
        ErrorCause::Other
    }
}

/// An HTTP status named in the text (`HTTP 503`, `status 503`, `API error 503`).
pub fn http_status(text: &str) -> Option<u16> {
    let t = text.to_ascii_lowercase();
    ["http ", "status ", "status: ", "api error "]
        .iter()
        .find_map(|prefix| {
            t.match_indices(prefix).find_map(|(i, _)| {
                let digits: String = t[i + prefix.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits
                    .parse::<u16>()
                    .ok()
                    .filter(|s| (400..600).contains(s))
            })
        })
}

/// The host of the first `http(s)://` address in the text.
pub fn host_of(text: &str) -> Option<String> {
    let start = text.find("https://").or_else(|| text.find("http://"))?;
    let rest = &text[start..];
    let rest = &rest[rest.find("//")? + 2..];
    let end = rest
        .find(['/', ':', '?', '#', ')', ' ', '"', '\''])
        .unwrap_or(rest.len());
    let host = &rest[..end];
    (!host.is_empty()).then(|| host.to_owned())
}

/// One sentence for a network failure reaching `host` (or "the server").
pub fn network_message(cause: ErrorCause, host: Option<&str>, status: Option<u16>) -> String {
    let host = host.unwrap_or("the server");
    match cause {
        ErrorCause::Offline => {
            format!(
                "Can't reach {host} — this computer seems to be offline. Check your connection."
            )
        }
        ErrorCause::Dns => format!("Can't reach {host} — check your connection."),
        ErrorCause::Refused => format!(
            "Can't reach {host} — the connection was refused. Check your connection and proxy settings."
        ),
        ErrorCause::Timeout => {
            format!("{host} did not answer in time — check your connection and try again.")
        }
        ErrorCause::Tls => format!(
            "Can't set up a secure connection to {host} — a proxy or the system clock may be in the way."
        ),
        ErrorCause::HttpStatus => match status {
            Some(s) if s >= 500 => {
                format!("{host} had a problem (HTTP {s}) — try again in a moment.")
            }
            Some(s) => format!("{host} refused the request (HTTP {s})."),
            None => format!("{host} answered with an error."),
        },
        ErrorCause::InvalidKey => API_KEY_REFUSED.to_owned(),
        ErrorCause::Other => format!("Can't reach {host} — check your connection."),
    }
}

/// What an API key Google refused means for the user.
pub const API_KEY_REFUSED: &str = "Google did not accept this API key. Check it in Google AI Studio (https://aistudio.google.com/apikey) and paste it again.";

#[cfg(test)]
mod tests {
    use super::*;

    const DNS: &str = "Cannot reach https://generativelanguage.googleapis.com to check the key: network error: error sending request for url (https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000): client error (Connect): dns error: failed to lookup address information: Temporary failure in name resolution";

    #[test]
    fn a_dns_chain_is_dns_and_names_the_host() {
        assert_eq!(classify(DNS), ErrorCause::Dns);
        assert_eq!(
            host_of(DNS).as_deref(),
            Some("generativelanguage.googleapis.com")
        );
        assert_eq!(
            network_message(ErrorCause::Dns, host_of(DNS).as_deref(), None),
            "Can't reach generativelanguage.googleapis.com — check your connection."
        );
    }

    #[test]
    fn the_other_causes() {
        let cases = [
            (
                "client error (Connect): tcp connect error: Network is unreachable (os error 101)",
                ErrorCause::Offline,
            ),
            (
                "tcp connect error: No route to host (os error 113)",
                ErrorCause::Offline,
            ),
            (
                "tcp connect error: Connection refused (os error 111)",
                ErrorCause::Refused,
            ),
            (
                "error sending request: operation timed out",
                ErrorCause::Timeout,
            ),
            ("invalid peer certificate: UnknownIssuer", ErrorCause::Tls),
            (
                "Could not revoke the Google sign-in (HTTP 503 Service Unavailable): busy",
                ErrorCause::HttpStatus,
            ),
            (
                "connection closed before message completed",
                ErrorCause::Other,
            ),
        ];
        for (text, cause) in cases {
            assert_eq!(classify(text), cause, "{text}");
        }
    }

    #[test]
    fn statuses_and_hosts_are_found_or_not() {
        assert_eq!(
            http_status("failed (HTTP 503 Service Unavailable)"),
            Some(503)
        );
        assert_eq!(http_status("API error 429: quota"), Some(429));
        assert_eq!(http_status("HTTP 2 framing"), None);
        assert_eq!(http_status("no numbers"), None);
        assert_eq!(
            host_of("http://127.0.0.1:8080/x").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(host_of("no address"), None);
        assert_eq!(host_of("https://"), None);
    }

    #[test]
    fn messages_never_panic_and_fall_back_to_the_server() {
        assert_eq!(
            network_message(ErrorCause::HttpStatus, None, Some(503)),
            "the server had a problem (HTTP 503) — try again in a moment."
        );
        assert!(network_message(ErrorCause::Timeout, Some("h"), None).starts_with("h did not"));
    }
}
