//! Which extensions may be installed and loaded at all: 0.61's
//! `security.allowedExtensions` (regular expressions the extension's
//! source must match) and `security.blockGitExtensions` (nothing from a
//! git repository or a GitHub release), with 0.61's messages.
//!
//! Read from the system and the user settings only: a workspace (even a
//! trusted one) does not decide which of the user's extensions may run.
//! Where both set a list, an extension must match each (0.61 takes one
//! merged list); `blockGitExtensions` from either holds, and holds even
//! with a list (0.61 ignores it then). An invalid pattern refuses rather
//! than lets through. Each of these is at least as strict as 0.61.

use std::path::Path;

use regex::Regex;
use serde_json::Value;

use crate::layout::{INSTALL_METADATA_FILE, InstallMetadata, InstallType};

/// The extension security settings in force.
#[derive(Debug, Clone, Default)]
pub struct Security {
    /// Each settings file's non-empty `allowedExtensions`.
    allowed: Vec<Vec<String>>,
    block_git: bool,
    /// A settings file that could not be read: what it allows is unknown,
    /// so nothing is allowed (the reason says which file).
    unreadable: Option<String>,
}

impl Security {
    /// From settings files' values (system, system defaults, user).
    pub fn from_settings<'a>(values: impl IntoIterator<Item = &'a Value>) -> Security {
        let mut security = Security::default();
        for value in values {
            let section = value.get("security");
            let list: Vec<String> = section
                .and_then(|s| s.get("allowedExtensions"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            if !list.is_empty() {
                security.allowed.push(list);
            }
            if section.and_then(|s| s.get("blockGitExtensions")) == Some(&Value::Bool(true)) {
                security.block_git = true;
            }
        }
        security
    }

    /// Nothing is allowed: `reason` (a settings file that cannot be read)
    /// says why.
    pub fn refuse_all(reason: String) -> Security {
        Security {
            unreadable: Some(reason),
            ..Security::default()
        }
    }

    /// Whether any restriction is set.
    pub fn restricts(&self) -> bool {
        self.block_git || !self.allowed.is_empty() || self.unreadable.is_some()
    }

    /// Whether `source` matches every list (`Err`: an invalid pattern).
    fn matches(&self, source: &str) -> Result<bool, String> {
        let source = std::fs::canonicalize(source)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| source.to_owned());
        for list in &self.allowed {
            let mut any = false;
            for pattern in list {
                let re = Regex::new(pattern).map_err(|e| {
                    format!("Invalid regex pattern in allowedExtensions setting: \"{pattern}. Error: {e}")
                })?;
                any |= re.is_match(&source);
            }
            if !any {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// May an extension be installed from `source` (`kind` as it will be
    /// recorded)?
    pub fn check_install(&self, source: &str, kind: InstallType) -> Result<(), String> {
        if let Some(reason) = &self.unreadable {
            return Err(format!("Installing extensions is not possible: {reason}"));
        }
        if !self.matches(source)? {
            return Err(format!(
                "Installing extension from source \"{source}\" is not allowed by the \"allowedExtensions\" security setting."
            ));
        }
        if self.block_git && matches!(kind, InstallType::Git | InstallType::GithubRelease) {
            return Err(
                "Installing extensions from remote sources is disallowed by your current settings."
                    .into(),
            );
        }
        Ok(())
    }

    /// May the installed extension in `dir` load?
    pub fn check_load(&self, dir: &Path, install: Option<&InstallMetadata>) -> Result<(), String> {
        let shown = dir.display();
        if let Some(reason) = &self.unreadable {
            return Err(format!("Failed to load extension {shown}. {reason}"));
        }
        if !self.allowed.is_empty() {
            let Some(install) = install else {
                return Err(format!(
                    "Failed to load extension {shown}. The {INSTALL_METADATA_FILE} file is missing or misconfigured."
                ));
            };
            if !self.matches(&install.source)? {
                return Err(format!(
                    "Failed to load extension {shown}. This extension is not allowed by the \"allowedExtensions\" security setting."
                ));
            }
        }
        if self.block_git
            && install
                .is_some_and(|i| matches!(i.kind, InstallType::Git | InstallType::GithubRelease))
        {
            return Err(format!(
                "Failed to load extension {shown}. Extensions from remote sources is disallowed by your current settings."
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metadata(source: &str, kind: InstallType) -> InstallMetadata {
        InstallMetadata {
            source: source.into(),
            kind,
            git_ref: None,
            auto_update: None,
            allow_pre_release: None,
            release_tag: None,
        }
    }

    #[test]
    fn every_list_must_match_and_git_can_be_blocked() {
        let none = Security::from_settings([&json!({})]);
        assert!(!none.restricts());
        assert!(
            none.check_install("https://example.com/x.git", InstallType::Git)
                .is_ok()
        );

        let system = json!({"security": {"allowedExtensions": ["^https://github\\.com/acme/"]}});
        let user = json!({"security": {"allowedExtensions": ["-tools$", "/work/"], "blockGitExtensions": false}});
        let s = Security::from_settings([&system, &user]);
        assert!(
            s.check_install("https://github.com/acme/lint-tools", InstallType::Git)
                .is_ok()
        );
        let refused = s
            .check_install("https://github.com/acme/other", InstallType::Git)
            .unwrap_err();
        assert_eq!(
            refused,
            "Installing extension from source \"https://github.com/acme/other\" is not allowed by the \"allowedExtensions\" security setting."
        );
        // A user's list cannot widen the system's.
        assert!(s.check_install("/work/mine", InstallType::Local).is_err());

        let blocked = Security::from_settings([&json!({"security": {"blockGitExtensions": true}})]);
        assert_eq!(
            blocked
                .check_install("https://x/y.git", InstallType::Git)
                .unwrap_err(),
            "Installing extensions from remote sources is disallowed by your current settings."
        );
        assert!(
            blocked
                .check_install("/work/mine", InstallType::Link)
                .is_ok()
        );
        let dir = Path::new("/h/.gemini/extensions/y");
        assert!(
            blocked
                .check_load(dir, Some(&metadata("https://x/y.git", InstallType::Git)))
                .unwrap_err()
                .ends_with(
                    "Extensions from remote sources is disallowed by your current settings."
                )
        );
        assert!(blocked.check_load(dir, None).is_ok());
    }

    #[test]
    fn a_list_needs_install_metadata_and_a_bad_pattern_refuses() {
        let s = Security::from_settings([&json!({"security": {"allowedExtensions": ["acme"]}})]);
        let dir = Path::new("/h/.gemini/extensions/z");
        assert!(
            s.check_load(dir, None)
                .unwrap_err()
                .contains(".gemini-extension-install.json file is missing")
        );
        assert!(
            s.check_load(dir, Some(&metadata("/src/acme-z", InstallType::Local)))
                .is_ok()
        );
        let bad = Security::from_settings([&json!({"security": {"allowedExtensions": ["("]}})]);
        assert!(
            bad.check_install("/src/acme", InstallType::Local)
                .unwrap_err()
                .starts_with("Invalid regex pattern in allowedExtensions setting: \"(. Error: ")
        );
    }
}
