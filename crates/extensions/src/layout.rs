//! Where extensions live, as Gemini CLI 0.61 lays them out:
//! `~/.gemini/extensions/<name>/` holds an installed copy (or, for a link,
//! only the install metadata naming the linked folder), with
//! `.gemini-extension-install.json` saying where it came from.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The install metadata file inside an extension's folder.
pub const INSTALL_METADATA_FILE: &str = ".gemini-extension-install.json";

/// `~/.gemini/extensions`.
pub fn extensions_dir(home: &Path) -> PathBuf {
    home.join(".gemini").join("extensions")
}

/// 0.61's install types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InstallType {
    #[serde(rename = "local")]
    Local,
    #[serde(rename = "git")]
    Git,
    #[serde(rename = "link")]
    Link,
    #[serde(rename = "github-release")]
    GithubRelease,
}

impl InstallType {
    pub fn as_str(self) -> &'static str {
        match self {
            InstallType::Local => "local",
            InstallType::Git => "git",
            InstallType::Link => "link",
            InstallType::GithubRelease => "github-release",
        }
    }
}

/// `.gemini-extension-install.json`, field for field as 0.61 writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallMetadata {
    pub source: String,
    #[serde(rename = "type")]
    pub kind: InstallType,
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_update: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_pre_release: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_tag: Option<String>,
}

impl InstallMetadata {
    /// For the protocol.
    pub fn to_protocol(&self) -> gd_protocol::ExtensionInstall {
        use gd_protocol::ExtensionInstallKind as K;
        gd_protocol::ExtensionInstall {
            kind: match self.kind {
                InstallType::Local => K::Local,
                InstallType::Git => K::Git,
                InstallType::Link => K::Link,
                InstallType::GithubRelease => K::GithubRelease,
            },
            source: self.source.clone(),
            git_ref: self.git_ref.clone(),
            auto_update: self.auto_update.unwrap_or(false),
        }
    }
}

/// Reads an extension folder's install metadata; `None` when missing or
/// unreadable (0.61 then treats the folder as installed by hand).
pub fn read_metadata(dir: &Path) -> Option<InstallMetadata> {
    let text = std::fs::read_to_string(dir.join(INSTALL_METADATA_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes the install metadata (2-space JSON as 0.61, mode 0600).
pub fn write_metadata(dir: &Path, metadata: &InstallMetadata) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(metadata).map_err(std::io::Error::other)?;
    write_private(&dir.join(INSTALL_METADATA_FILE), text.as_bytes())
}

/// Writes a user data file readable by the user only.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Creates a folder (and its parents) with mode 0700 for the new ones.
pub fn create_private_dir(path: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path)
}

/// The folder an extension is read from: for a link, the linked folder.
pub fn effective_path(dir: &Path, metadata: Option<&InstallMetadata>) -> PathBuf {
    match metadata {
        Some(m) if m.kind == InstallType::Link => PathBuf::from(&m.source),
        _ => dir.to_path_buf(),
    }
}
