//! What the user reads when an update check or install fails, and the version comparison the
//! check applies itself.
//!
//! The updater plugin's errors name its internals (`platforms` object, minisign, base64); the
//! person in front of the app needs what happened, what it means for them and that nothing
//! changed. Every message here ends by saying so, because that is the question after a failed
//! update.

use std::cmp::Ordering;

use tauri_plugin_updater::Error;

/// Said after every refusal: a failed check or install leaves the app as it was.
const NOTHING_CHANGED: &str = "Nothing was changed.";

/// How an offered version compares with the running one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    Newer,
    Same,
    Older,
}

/// Compares versions as semver (a leading `v` allowed); a version that is not semver is
/// reported as the message to show.
pub fn compare(current: &str, offered: &str) -> Result<Offered, String> {
    let parse = |v: &str| semver::Version::parse(v.trim().trim_start_matches('v'));
    let current = parse(current).map_err(|e| format!("This app's version is not valid: {e}"))?;
    let offered = parse(offered).map_err(|e| {
        format!("The update manifest's version `{offered}` is not a valid version: {e}. {NOTHING_CHANGED}")
    })?;
    Ok(match offered.cmp(&current) {
        Ordering::Greater => Offered::Newer,
        Ordering::Equal => Offered::Same,
        Ordering::Less => Offered::Older,
    })
}

/// A manifest offering an older version than the running one: refused, never installed (a
/// downgrade would bring back what a newer release fixed).
pub fn downgrade(offered: &str, current: &str) -> String {
    format!(
        "The update manifest offers version {offered}, which is older than this one \
         ({current}): it is not installed. {NOTHING_CHANGED}"
    )
}

/// What a failed check says, for the manifest at `url`.
pub fn check_failed(error: &Error, url: &str) -> String {
    match error {
        Error::Reqwest(e) => format!(
            "Could not reach the update server at {url}: {}. {NOTHING_CHANGED}",
            chain(e)
        ),
        Error::ReleaseNotFound => format!(
            "The update server at {url} did not answer with an update manifest (an error \
             status or no answer). {NOTHING_CHANGED}"
        ),
        Error::Serialization(e) => {
            format!("The update manifest at {url} is not valid: {e}. {NOTHING_CHANGED}")
        }
        Error::TargetNotFound(target) => format!(
            "The update manifest at {url} has no package for this system ({target}). \
             {NOTHING_CHANGED}"
        ),
        Error::TargetsNotFound(targets) => format!(
            "The update manifest at {url} has no package for this system ({}). \
             {NOTHING_CHANGED}",
            targets.join(", ")
        ),
        Error::InsecureTransportProtocol => {
            format!("The update manifest URL must use https ({url} does not). {NOTHING_CHANGED}")
        }
        other => format!(
            "The update check at {url} failed: {}. {NOTHING_CHANGED}",
            chain(other)
        ),
    }
}

/// What a failed download, verification or install says.
pub fn install_failed(error: &Error) -> String {
    match error {
        Error::Minisign(_) | Error::Base64(_) | Error::SignatureUtf8(_) => format!(
            "The downloaded update's signature does not match Gemini Desktop's update key, so it \
             was not installed: it may have been tampered with, or the manifest points at the \
             wrong file. {NOTHING_CHANGED}"
        ),
        Error::SignedVersionMismatch { signed, announced } => format!(
            "The update's signature is for version {signed}, but the manifest announces \
             {announced}: a manifest pairing a version with another release's package is \
             refused. {NOTHING_CHANGED}"
        ),
        Error::MissingSignedVersion => format!(
            "The update's signature does not say which version it is for (it was signed by an \
             older Tauri CLI without --app-version), so it is refused. {NOTHING_CHANGED}"
        ),
        Error::Reqwest(e) => format!(
            "The update could not be downloaded: {}. {NOTHING_CHANGED}",
            chain(e)
        ),
        Error::Network(message) => {
            format!("The update could not be downloaded: {message}. {NOTHING_CHANGED}")
        }
        Error::AuthenticationFailed => format!(
            "Installing the update needs an administrator's approval, which was not given. \
             {NOTHING_CHANGED}"
        ),
        Error::DebInstallFailed | Error::PackageInstallFailed | Error::InvalidUpdaterFormat => {
            format!("The package manager could not install the update ({error}). {NOTHING_CHANGED}")
        }
        other => format!("The update failed: {}. {NOTHING_CHANGED}", chain(other)),
    }
}

/// `error` and its sources, `: `-separated (reqwest's own message hides the cause, such as
/// "Connection refused", in its sources), with anything secret-looking redacted (a manifest URL
/// may carry a token).
fn chain(error: &dyn std::error::Error) -> String {
    gd_auth::redact::error_chain(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_semver() {
        assert_eq!(compare("0.1.0", "0.2.0"), Ok(Offered::Newer));
        assert_eq!(compare("0.10.0", "0.9.9"), Ok(Offered::Older));
        assert_eq!(compare("1.0.0", "v1.0.0"), Ok(Offered::Same));
        assert_eq!(compare("1.0.0", "1.0.0-rc.1"), Ok(Offered::Older));
        let bad = compare("1.0.0", "next").unwrap_err();
        assert!(bad.contains("`next` is not a valid version"), "{bad}");
        assert!(bad.ends_with(NOTHING_CHANGED), "{bad}");
    }

    #[test]
    fn every_refusal_says_what_happened_and_that_nothing_changed() {
        let signature = install_failed(&Error::SignedVersionMismatch {
            signed: "0.1.1".into(),
            announced: "9.0.0".into(),
        });
        assert!(signature.contains("is for version 0.1.1"), "{signature}");
        let missing = check_failed(
            &Error::TargetsNotFound(vec!["linux-x86_64-deb".into()]),
            "u",
        );
        assert!(
            missing.contains("no package for this system (linux-x86_64-deb)"),
            "{missing}"
        );
        for message in [
            signature,
            missing,
            downgrade("0.0.1", "0.1.0"),
            check_failed(&Error::InsecureTransportProtocol, "http://x"),
            install_failed(&Error::AuthenticationFailed),
        ] {
            assert!(message.ends_with(NOTHING_CHANGED), "{message}");
        }
    }

    #[test]
    fn the_cause_of_a_wrapped_error_is_shown_once() {
        let io = std::io::Error::other("Connection refused");
        let wrapped = Error::Io(io);
        let text = install_failed(&wrapped);
        assert_eq!(text.matches("Connection refused").count(), 1, "{text}");
    }
}
