//! Updates: a signed manifest checked only when the user has set (or accepted) its URL, an
//! offer shown with its notes, and an install the package manager does where the app came from
//! a package.
//!
//! - [`source`]: the manifest URL (user settings only) and the public key (from the build);
//! - [`messages`]: what a refusal says, and the version comparison.
//!
//! Trust: the manifest itself is not signed (Tauri's format); the package is, with minisign, and
//! its signature also carries the version it was made for (`requireSignedVersion` in
//! tauri.conf.json), so a manifest cannot pair a new version number with an old package. A
//! downgrade is refused here, before anything is downloaded. Verification happens on the
//! downloaded bytes before they are written anywhere.
//!
//! What each kind of build gets (`tauri::utils::platform::bundle_type`, which the bundler
//! writes into the binary, and the package manager owning the executable: [`install_way`]):
//! - installed from the `.deb` or `.rpm`: the verified package is installed with
//!   `dpkg -i`/`rpm -U` through pkexec (or a graphical sudo prompt, or sudo), and the app offers
//!   to restart;
//! - anything else (a source build, `scripts/run-app.sh`): the verified package is saved in the
//!   Downloads folder and shown with its SHA-256 and its link, for the user to install.

mod messages;
mod source;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use gd_core::launch::home_dir;
use gd_protocol::{CommandError, CommandErrorKind};
use serde::Serialize;
use sha2::{Digest, Sha256};
use tauri::utils::config::BundleType;
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_updater::{Update, UpdaterExt};

pub use source::{MANIFEST_URL_KEY, PUBKEY_ENV};

use messages::Offered;

/// How long a check or a download may take before it is reported as failed.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The last update offered, kept for `update_install` (managed state).
#[derive(Default)]
pub struct Updates {
    offered: Mutex<Option<Update>>,
}

/// How this build takes an update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum UpdateInstall {
    /// Installed by the package manager (`deb`, `rpm` or `appimage`).
    Package { format: String },
    /// Not installed from a package: the verified package is saved for the user.
    Download,
}

/// What the About view shows before any check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatus {
    pub version: String,
    pub commit: String,
    /// The manifest URL in force (`update.manifestUrl`); `None`: updates are off.
    pub manifest_url: Option<String>,
    /// The URL this release suggests, offered for the user to accept.
    pub suggested_url: Option<String>,
    /// Whether this build can verify updates (it has a public key).
    pub can_verify: bool,
    pub install: UpdateInstall,
    /// Why the settings could not be read, if they could not.
    pub problem: Option<String>,
}

/// A newer version the manifest offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct UpdateOffer {
    pub version: String,
    pub current_version: String,
    /// The release notes (Markdown or plain text), as the manifest gives them.
    pub notes: Option<String>,
    /// `pub_date` as the manifest gives it.
    pub date: Option<String>,
    /// The package's download link.
    pub url: String,
    pub install: UpdateInstall,
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum UpdateCheck {
    /// No manifest URL is set: nothing was asked.
    Off,
    /// The manifest offers this version.
    UpToDate {
        version: String,
    },
    Available {
        offer: UpdateOffer,
    },
}

/// What an install did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum UpdateDone {
    /// The package manager installed it; it runs after a restart.
    Installed { version: String },
    /// Verified and saved for the user to install.
    Saved {
        version: String,
        path: String,
        sha256: String,
        url: String,
    },
}

fn update_error(message: impl Into<String>) -> CommandError {
    CommandError::new(CommandErrorKind::Update, message)
}

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// How this build takes an update, decided once per run.
///
/// The bundle type the bundler wrote into the binary is not enough: `tauri build` writes it into
/// `target/<profile>/gemini-desktop` in place, so a binary run from the build tree after
/// `scripts/package.sh` says "deb" (or "rpm") too. A package install is offered only when the
/// package manager also owns the running executable; anything else gets the verified download.
fn install_way() -> UpdateInstall {
    static WAY: std::sync::OnceLock<UpdateInstall> = std::sync::OnceLock::new();
    WAY.get_or_init(|| {
        let exe = std::env::current_exe().ok();
        let owned = |query: &[&str]| {
            exe.as_ref().is_some_and(|exe| {
                std::process::Command::new(query[0])
                    .args(&query[1..])
                    .arg(exe)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|status| status.success())
            })
        };
        let format = match tauri::utils::platform::bundle_type() {
            Some(BundleType::Deb) if owned(&["dpkg-query", "-S"]) => "deb",
            Some(BundleType::Rpm) if owned(&["rpm", "-qf"]) => "rpm",
            // The updater replaces the AppImage file the app runs from.
            Some(BundleType::AppImage) if std::env::var_os("APPIMAGE").is_some() => "appimage",
            bundle => {
                tracing::debug!(?bundle, ?exe, "not run from an installed package");
                return UpdateInstall::Download;
            }
        };
        UpdateInstall::Package {
            format: format.to_owned(),
        }
    })
    .clone()
}

/// The manifest URL in the settings, read off the async runtime (the outer error: the task
/// failed; the inner one: the settings could not be read).
async fn manifest_url() -> Result<Result<Option<String>, source::SourceError>, CommandError> {
    let home = home_dir();
    tauri::async_runtime::spawn_blocking(move || {
        source::manifest_url(home.as_deref(), &process_env)
    })
    .await
    .map_err(|e| update_error(format!("Reading the settings failed: {e}")))
}

/// Version, commit, and where updates would come from.
#[tauri::command]
pub async fn update_status<R: Runtime>(app: AppHandle<R>) -> Result<UpdateStatus, CommandError> {
    let (manifest_url, problem) = match manifest_url().await? {
        Ok(url) => (url, None),
        Err(error) => (None, Some(error.to_string())),
    };
    Ok(UpdateStatus {
        version: app.package_info().version.to_string(),
        commit: env!("GD_COMMIT").into(),
        manifest_url,
        suggested_url: source::suggested_url().map(str::to_owned),
        can_verify: source::pubkey(&process_env).is_some(),
        install: install_way(),
        problem,
    })
}

/// Asks the manifest (when its URL is set) whether a newer version exists.
#[tauri::command]
pub async fn update_check<R: Runtime>(
    app: AppHandle<R>,
    updates: State<'_, Updates>,
) -> Result<UpdateCheck, CommandError> {
    let Some(url) = manifest_url()
        .await?
        .map_err(|e| update_error(e.to_string()))?
    else {
        return Ok(UpdateCheck::Off);
    };
    let Some(pubkey) = source::pubkey(&process_env) else {
        return Err(update_error(
            "This build has no key to verify updates with, so none are checked. Builds made \
             by scripts/package.sh with a signing key have one.",
        ));
    };
    let endpoint = tauri::Url::parse(&url).map_err(|e| {
        update_error(format!(
            "The update manifest URL `{url}` is not a valid URL: {e}."
        ))
    })?;
    let updater = app
        .updater_builder()
        .pubkey(pubkey)
        .timeout(TIMEOUT)
        // Every version other than ours comes back, so that a downgrade is reported rather
        // than silently taken for "up to date".
        .version_comparator(|current, release| release.version != current)
        .endpoints(vec![endpoint])
        .and_then(|builder| builder.build())
        .map_err(|e| update_error(messages::check_failed(&e, &url)))?;
    tracing::info!(%url, "checking for updates");
    let found = updater
        .check()
        .await
        .map_err(|e| update_error(messages::check_failed(&e, &url)))?;
    // The plugin compared against the same version (`PackageInfo::version`).
    let current = app.package_info().version.to_string();
    let current = current.as_str();
    let Some(update) = found else {
        return Ok(UpdateCheck::UpToDate {
            version: current.into(),
        });
    };
    match messages::compare(current, &update.version).map_err(update_error)? {
        Offered::Same => Ok(UpdateCheck::UpToDate {
            version: current.into(),
        }),
        Offered::Older => {
            tracing::warn!(offered = %update.version, "the update manifest offers a downgrade");
            Err(update_error(messages::downgrade(&update.version, current)))
        }
        Offered::Newer => {
            let offer = UpdateOffer {
                version: update.version.clone(),
                current_version: current.into(),
                notes: update.body.clone().filter(|notes| !notes.trim().is_empty()),
                date: update.raw_json["pub_date"].as_str().map(str::to_owned),
                url: update.download_url.to_string(),
                install: install_way(),
            };
            tracing::info!(version = %offer.version, "an update is available");
            *updates.offered.lock().unwrap_or_else(|e| e.into_inner()) = Some(update);
            Ok(UpdateCheck::Available { offer })
        }
    }
}

/// Downloads the offered update, verifies it, and installs it (a package install) or saves it
/// (any other build).
#[tauri::command]
pub async fn update_install<R: Runtime>(
    app: AppHandle<R>,
    updates: State<'_, Updates>,
) -> Result<UpdateDone, CommandError> {
    let update = updates
        .offered
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .ok_or_else(|| update_error("No update is on offer: check for updates first."))?;
    // `download` verifies the signature (and the signed version) before returning the bytes.
    let bytes = update
        .download(|_, _| {}, || {})
        .await
        .map_err(|e| update_error(messages::install_failed(&e)))?;
    tracing::info!(version = %update.version, bytes = bytes.len(), "update downloaded and verified");
    let done = match install_way() {
        UpdateInstall::Package { .. } => {
            let version = update.version.clone();
            tauri::async_runtime::spawn_blocking(move || update.install(&bytes))
                .await
                .map_err(|e| update_error(format!("The install task failed: {e}")))?
                .map_err(|e| update_error(messages::install_failed(&e)))?;
            UpdateDone::Installed { version }
        }
        UpdateInstall::Download => {
            let folder = app
                .path()
                .download_dir()
                .ok()
                .or_else(|| home_dir().map(|home| home.join("Downloads")))
                .ok_or_else(|| {
                    update_error("There is no Downloads folder to save the update in.")
                })?;
            let name = file_name(update.download_url.path(), &update.version);
            let url = update.download_url.to_string();
            let version = update.version.clone();
            tauri::async_runtime::spawn_blocking(move || save(&folder, &name, &bytes))
                .await
                .map_err(|e| update_error(format!("The save task failed: {e}")))?
                .map(|(path, sha256)| UpdateDone::Saved {
                    version,
                    path: path.display().to_string(),
                    sha256,
                    url,
                })
                .map_err(|e| {
                    update_error(format!("The verified update could not be saved: {e}."))
                })?
        }
    };
    updates
        .offered
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    Ok(done)
}

/// Restarts the app (after an installed update).
#[tauri::command]
pub fn app_restart<R: Runtime>(app: AppHandle<R>) {
    tracing::info!("restarting for the installed update");
    app.restart();
}

/// The file name to save a download as: the URL's last segment when it is a plain name, else
/// one made from the version.
fn file_name(url_path: &str, version: &str) -> String {
    let last = url_path.rsplit('/').next().unwrap_or_default();
    // `%XX` decoded: the bundler's names have spaces (`Gemini Desktop_0.2.0_amd64.deb`).
    let decoded = percent_encoding::percent_decode_str(last)
        .decode_utf8_lossy()
        .into_owned();
    let plain = !decoded.is_empty()
        && !decoded.starts_with('.')
        && !decoded.contains(['/', '\\', '\0'])
        && decoded.len() <= 200;
    if plain {
        decoded
    } else {
        format!("gemini-desktop-{version}.update")
    }
}

/// Writes `bytes` into `folder` as `name` (or `name (2)`, ... when taken: nothing of the
/// user's is overwritten), privately and atomically; returns the path and the SHA-256.
fn save(folder: &Path, name: &str, bytes: &[u8]) -> std::io::Result<(PathBuf, String)> {
    std::fs::create_dir_all(folder)?;
    let mut path = folder.join(name);
    let mut n = 2;
    while path.exists() {
        path = folder.join(format!("{name} ({n})"));
        n += 1;
    }
    gd_settings::write::atomic_write(&path, bytes, Some(0o600))?;
    let sha256 = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    tracing::info!(path = %path.display(), "verified update saved");
    Ok((path, sha256))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_download_keeps_its_name_unless_it_is_not_a_plain_one() {
        assert_eq!(
            file_name("/r/Gemini%20Desktop_0.2.0_amd64.deb", "0.2.0"),
            "Gemini Desktop_0.2.0_amd64.deb"
        );
        for bad in ["/r/", "/r/..", "/r/%2e%2e", "/r/a%2Fb", "/r/.hidden"] {
            assert_eq!(
                file_name(bad, "1.0.0"),
                "gemini-desktop-1.0.0.update",
                "{bad}"
            );
        }
    }

    #[test]
    fn saving_never_overwrites_and_reports_the_checksum() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.deb"), b"mine").unwrap();
        let (path, sha) = save(dir.path(), "a.deb", b"abc").unwrap();
        assert_eq!(path, dir.path().join("a.deb (2)"));
        assert_eq!(std::fs::read(dir.path().join("a.deb")).unwrap(), b"mine");
        assert_eq!(
            sha,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
