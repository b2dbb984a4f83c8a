//! Writing one setting back into a settings file (or any JSONC file the
//! app shares with Gemini CLI, such as `trustedFolders.json`).
//!
//! The file is edited in place ([`crate::edit`]), so comments, unknown keys
//! and formatting survive; it is replaced atomically (a temporary file in
//! the same folder, then a rename) so a crash never leaves half a file; and a
//! file that does not parse is never overwritten: the error names its line.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;
use tracing::debug;

use crate::edit;
use crate::layers::{SettingsError, parse_file};

/// Why a setting could not be written. Nothing was changed on disk.
#[derive(Debug, Error)]
pub enum WriteError {
    /// The file exists but is not valid JSONC: fix it by hand first.
    #[error("{path}:{line}:{column}: {message}; fix the file first, it was not changed")]
    Broken {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// The value has the wrong type for the key.
    #[error("{0}")]
    Invalid(SettingsError),
    #[error("cannot write {path}: {message}")]
    Io { path: PathBuf, message: String },
}

impl WriteError {
    fn io(path: &Path, e: std::io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            message: e.to_string(),
        }
    }
}

/// Splits `general.checkpointing.enabled` into its keys.
pub fn key_path(key: &str) -> Vec<&str> {
    key.split('.').filter(|k| !k.is_empty()).collect()
}

/// Checks `value` for `key` against the typed settings (e.g. a string for
/// `model.maxSessionTurns` is refused), naming the key.
pub fn validate(key: &[&str], value: &Value) -> Result<(), SettingsError> {
    let nested = key.iter().rev().fold(value.clone(), |inner, k| {
        let mut map = serde_json::Map::new();
        map.insert((*k).to_owned(), inner);
        Value::Object(map)
    });
    let text = serde_json::to_string_pretty(&nested).unwrap_or_default();
    parse_file(Path::new("<new value>"), &text).map(|_| ())
}

/// Sets (`Some`) or removes (`None`) the setting at `key` in `file`,
/// creating the file and its folders when missing. Settings keys are
/// validated first; other files take any value.
pub fn write_setting(file: &Path, key: &[&str], value: Option<&Value>) -> Result<(), WriteError> {
    if let Some(value) = value {
        validate(key, value).map_err(WriteError::Invalid)?;
    }
    edit_file(file, key, value, None)
}

/// [`write_setting`] without the settings validation, for other JSONC files
/// (`mode` applies when the file is created, e.g. 0o600).
pub fn edit_file(
    file: &Path,
    key: &[&str],
    value: Option<&Value>,
    mode: Option<u32>,
) -> Result<(), WriteError> {
    // Write through a symlink to the file it points at rather than
    // replacing the link with a regular file.
    let target = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
    let current = match std::fs::read_to_string(&target) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(WriteError::io(&target, e)),
    };
    let text = current.as_deref().unwrap_or("");
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let broken = |e: edit::ScanError| WriteError::Broken {
        path: target.clone(),
        line: e.line,
        column: e.column,
        message: e.message,
    };
    let edited = match value {
        Some(value) => edit::set(body, key, value).map_err(broken)?,
        None => match edit::remove(body, key).map_err(broken)? {
            Some(edited) => edited,
            None => return Ok(()),
        },
    };
    debug!(file = %target.display(), key = key.join("."), "writing setting");
    atomic_write(&target, format!("{bom}{edited}").as_bytes(), mode)
        .map_err(|e| WriteError::io(&target, e))
}

/// Replaces `file` with `contents` atomically: a temporary file in the same
/// folder (so the rename cannot cross file systems), flushed to disk, with
/// the old file's permissions (or `mode` for a new file), then renamed over
/// it. Missing folders are created.
pub fn atomic_write(file: &Path, contents: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    let result = (|| {
        let mut out = std::fs::File::create(&tmp)?;
        match std::fs::metadata(file) {
            Ok(meta) => out.set_permissions(meta.permissions())?,
            Err(_) => set_new_file_mode(&out, mode)?,
        }
        out.write_all(contents)?;
        out.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn set_new_file_mode(file: &std::fs::File, mode: Option<u32>) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match mode {
        Some(mode) => file.set_permissions(std::fs::Permissions::from_mode(mode)),
        None => Ok(()),
    }
}

#[cfg(not(unix))]
fn set_new_file_mode(_: &std::fs::File, _: Option<u32>) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validates_against_the_typed_settings() {
        assert!(validate(&["model", "maxSessionTurns"], &json!(3)).is_ok());
        let err = validate(&["model", "maxSessionTurns"], &json!("ten")).unwrap_err();
        assert!(err.to_string().contains("`model.maxSessionTurns`"), "{err}");
        assert!(validate(&["someUnknown", "key"], &json!({"x": 1})).is_ok());
    }

    #[test]
    fn key_paths() {
        assert_eq!(
            key_path("general.checkpointing.enabled"),
            ["general", "checkpointing", "enabled"]
        );
    }
}
