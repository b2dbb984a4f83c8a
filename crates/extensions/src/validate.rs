//! `extensions validate <path>`: 0.61's checks on an extension folder
//! before it is shared — the manifest reads, its context files are inside
//! the folder and exist, its version is semver — plus what we load from it
//! and 0.61 only finds later (a broken `hooks/hooks.json`, a context file
//! name that would be skipped).

use std::path::Path;

use crate::contributions::{context_file, read_hooks};
use crate::manifest::{ManifestError, Variables, read};

/// What validation found: errors fail it, warnings do not.
#[derive(Debug, Default, PartialEq)]
pub struct Validation {
    pub warnings: Vec<String>,
    pub errors: Vec<String>,
}

/// Validates the extension in `dir`. `Err` when its manifest cannot be
/// read at all.
pub fn validate(dir: &Path) -> Result<Validation, ManifestError> {
    let vars = Variables::new(dir, dir);
    let manifest = read(dir, &vars)?;
    let mut found = Validation::default();
    let mut missing = Vec::new();
    for name in manifest.context_file_name.iter().flatten() {
        match context_file(dir, name) {
            Err(problem) => found
                .errors
                .push(format!("Invalid context file path: \"{name}\". {problem}")),
            Ok(path) if !path.exists() => missing.push(name.clone()),
            Ok(_) => {}
        }
    }
    if !missing.is_empty() {
        // 0.61 joins the list as JavaScript prints an array.
        found.errors.push(format!(
            "The following context files referenced in gemini-extension.json are missing: {}",
            missing.join(",")
        ));
    }
    if let Err(problem) = read_hooks(dir, &vars) {
        found.errors.push(problem);
    }
    if !is_semver(&manifest.version) {
        found.warnings.push(format!(
            "Warning: Version '{}' does not appear to be standard semver (e.g., 1.0.0).",
            manifest.version
        ));
    }
    Ok(found)
}

/// `MAJOR.MINOR.PATCH`, optionally `-pre.release` and `+build` (semver 2).
fn is_semver(version: &str) -> bool {
    let version = version.strip_prefix('v').unwrap_or(version).trim();
    let (core, build) = match version.split_once('+') {
        Some((core, build)) => (core, Some(build)),
        None => (version, None),
    };
    let (core, pre) = match core.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (core, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    let number = |n: &&str| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (n.len() == 1 || !n.starts_with('0'))
    };
    let ident = |s: &str| {
        !s.is_empty()
            && s.split('.').all(|part| {
                !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
    };
    numbers.len() == 3
        && numbers.iter().all(number)
        && pre.is_none_or(ident)
        && build.is_none_or(ident)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_as_the_semver_package_reads_it() {
        for ok in [
            "1.0.0",
            "0.1.2-beta.1",
            "1.2.3+build.5",
            "v2.0.0",
            "10.20.30-rc.1+x",
        ] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in ["1.0", "1", "01.0.0", "1.0.0-", "latest", "1.0.0.0", ""] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn missing_and_escaping_context_files_fail_and_a_loose_version_warns() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("gemini-extension.json"),
            r#"{"name": "x", "version": "1.0", "contextFileName": ["GEMINI.md", "../secret.md", "NOTES.md"]}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("GEMINI.md"), "hi").unwrap();
        let found = validate(dir.path()).unwrap();
        assert_eq!(
            found.errors,
            vec![
                "Invalid context file path: \"../secret.md\". Relative parent directory references (\"..\") are not allowed.".to_owned(),
                "The following context files referenced in gemini-extension.json are missing: NOTES.md".to_owned(),
            ]
        );
        assert_eq!(
            found.warnings,
            vec![
                "Warning: Version '1.0' does not appear to be standard semver (e.g., 1.0.0)."
                    .to_owned()
            ]
        );
    }
}
