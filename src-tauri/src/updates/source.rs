//! Where updates come from and what they must be signed with: the manifest URL from the
//! settings and the public key from the build.
//!
//! The URL is read from the system defaults, the user's and the system settings files only,
//! never from a folder's `.gemini/settings.json`: a project the user opens must not choose
//! where the app asks for updates (that request tells the server the app's version and that it
//! runs). Nothing is asked while no layer sets it.
//!
//! The key is compiled in (`GD_UPDATER_PUBKEY` when `scripts/package.sh` builds a signed
//! release) or, for tests and for people who sign their own builds, named by the environment
//! (`GEMINI_DESKTOP_UPDATER_PUBKEY`). It is never read from a settings file: whoever could write
//! it there could then sign an "update" of their own.

use std::path::{Path, PathBuf};

use gd_settings::layers::{LoadOptions, load_layers, lookup};

/// The settings key of the manifest URL (`update.manifestUrl`, Gemini Desktop only).
pub const MANIFEST_URL_KEY: &str = "update.manifestUrl";

/// The environment variable naming the updates' public key (the `.pub` file's text as
/// `tauri signer generate` writes it); it wins over the compiled-in one.
pub const PUBKEY_ENV: &str = "GEMINI_DESKTOP_UPDATER_PUBKEY";

/// The public key updates must be signed with, if this build has one.
pub fn pubkey(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let given = |key: Option<String>| key.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty());
    given(env(PUBKEY_ENV)).or_else(|| given(option_env!("GD_UPDATER_PUBKEY").map(str::to_owned)))
}

/// A manifest URL the release suggests (`GD_UPDATE_MANIFEST_URL` at build time): the About view
/// offers it, and it is used only once the user accepts it into their settings.
pub fn suggested_url() -> Option<&'static str> {
    option_env!("GD_UPDATE_MANIFEST_URL").filter(|url| !url.trim().is_empty())
}

/// Why the manifest URL could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SourceError {
    #[error("The settings could not be read: {0}")]
    Settings(String),
    #[error("`{MANIFEST_URL_KEY}` must be a text (a URL), not {0}.")]
    NotText(String),
}

/// The manifest URL set in the settings (system defaults, user, system), `None` when unset or
/// blank. `home` is the user's home folder.
pub fn manifest_url(
    home: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, SourceError> {
    let loaded = load_layers(&LoadOptions {
        home: home.map(Path::to_path_buf),
        // Never read (`workspace_trusted: false`); a path is needed all the same.
        workspace: home.map_or_else(|| PathBuf::from("/"), Path::to_path_buf),
        env,
        workspace_trusted: false,
    })
    .map_err(|e| SourceError::Settings(e.to_string()))?;
    match lookup(&loaded.merged, &["update", "manifestUrl"]) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(url)) if url.trim().is_empty() => Ok(None),
        Some(serde_json::Value::String(url)) => Ok(Some(url.trim().to_owned())),
        Some(other) => Err(SourceError::NotText(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_url_comes_from_the_user_settings_and_is_off_when_unset() {
        let home = tempfile::tempdir().unwrap();
        let system = home.path().join("system.json");
        let env = |name: &str| {
            (name == "GEMINI_CLI_SYSTEM_SETTINGS_PATH").then(|| system.display().to_string())
        };
        assert_eq!(manifest_url(Some(home.path()), &env), Ok(None));
        write(
            &home.path().join(".gemini/settings.json"),
            r#"{ "update": { "manifestUrl": " https://example.test/latest.json " } }"#,
        );
        assert_eq!(
            manifest_url(Some(home.path()), &env),
            Ok(Some("https://example.test/latest.json".into()))
        );
        write(&system, r#"{ "update": { "manifestUrl": 3 } }"#);
        assert_eq!(
            manifest_url(Some(home.path()), &env),
            Err(SourceError::NotText("3".into()))
        );
    }

    #[test]
    fn the_environment_key_wins_and_blank_is_none() {
        let env = |name: &str| (name == PUBKEY_ENV).then(|| " key ".to_owned());
        assert_eq!(pubkey(&env).as_deref(), Some("key"));
        let blank = |name: &str| (name == PUBKEY_ENV).then(String::new);
        assert_eq!(
            pubkey(&blank),
            option_env!("GD_UPDATER_PUBKEY").map(str::to_owned),
            "a blank variable is unset"
        );
    }
}
