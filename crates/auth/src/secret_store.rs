//! Where secrets live: the operating system's keyring, or (when no keyring
//! service is reachable) a file only the user can read.
//!
//! Backends, enabled per target in `Cargo.toml`:
//! * Linux and the BSDs: the freedesktop **Secret Service** (GNOME Keyring,
//!   KWallet, KeePassXC) through keyring's *synchronous* backend
//!   (`sync-secret-service`, libdbus). We chose the synchronous one on
//!   purpose: the asynchronous backend runs zbus on a tokio runtime of its
//!   own and keyring documents that calling it from a thread that drives a
//!   tokio runtime can deadlock; our callers are tokio tasks (the desktop
//!   shell's commands, the CLI's current-thread runtime). The synchronous
//!   backend never touches a runtime, libdbus is already a dependency of the
//!   desktop app on Linux, and every call here is short (async callers go
//!   through `spawn_blocking`). Secrets cross D-Bus encrypted
//!   (`crypto-rust`, a DH session with pure-Rust crypto, no OpenSSL).
//! * macOS: the login Keychain (`apple-native`).
//! * Windows: the Credential Manager (`windows-native`).
//!
//! keyring 3 silently falls back to an in-memory mock when no store is
//! compiled in; [`probe_keyring`] refuses that mock, so a build mistake shows
//! up as "no keyring" instead of secrets that vanish at exit.
//!
//! The fallback [`FileStore`] writes `secrets.json` with mode 0600 in a 0700
//! directory, atomically, and the choice (with the reason) is reported by
//! [`StoreInfo`] so the status view can say where secrets are.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use gd_http::SecretString;
use serde::Serialize;
use thiserror::Error;
use tracing::{debug, warn};

/// The keyring "service" under which every secret of the app is stored.
pub const SERVICE: &str = "gemini-desktop";

/// The file name of the fallback store inside the auth directory.
pub const SECRETS_FILE: &str = "secrets.json";

/// The secrets the app keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "kebab-case")]
pub enum SecretKey {
    /// A Gemini API key (Google AI Studio).
    GeminiApiKey,
    /// A Vertex AI API key (express mode).
    VertexApiKey,
    /// The Google OAuth tokens (JSON: refresh token, access token, expiry).
    GoogleOauth,
    /// OAuth sign-ins to MCP servers (gd-mcp's JSON: tokens and client
    /// registrations per server URL). Not one of [`SecretKey::ALL`]: signing
    /// out of Gemini leaves the MCP servers signed in.
    McpOauth,
}

impl SecretKey {
    /// The Gemini credentials (what signing out of Gemini removes).
    pub const ALL: [SecretKey; 3] = [Self::GeminiApiKey, Self::VertexApiKey, Self::GoogleOauth];

    /// The keyring account name / file key.
    pub fn account(self) -> &'static str {
        match self {
            Self::GeminiApiKey => "gemini-api-key",
            Self::VertexApiKey => "vertex-api-key",
            Self::GoogleOauth => "google-oauth",
            Self::McpOauth => "mcp-oauth",
        }
    }
}

/// Which kind of store holds the secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StoreKind {
    /// The OS keyring; `backend` names it for people.
    Keyring { backend: String },
    /// The 0600 file.
    File { path: PathBuf },
    /// Process memory (tests only: gone at exit).
    Memory,
}

impl StoreKind {
    /// One line for the status view.
    pub fn describe(&self) -> String {
        match self {
            Self::Keyring { backend } => format!("the system keyring ({backend})"),
            Self::File { path } => format!("the file {} (readable only by you)", path.display()),
            Self::Memory => "memory only (not saved)".into(),
        }
    }
}

/// The selected store and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
pub struct StoreInfo {
    pub kind: StoreKind,
    /// Set when the file is used because the keyring was not reachable.
    pub fallback_reason: Option<String>,
}

#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum StoreError {
    /// The store cannot be reached or refused access.
    #[error("{store}: {message}")]
    Unavailable { store: String, message: String },
    /// The stored value is unreadable (not UTF-8, broken file).
    #[error("{store}: {message}")]
    Corrupt { store: String, message: String },
}

/// A place for secrets. Methods block (D-Bus, Keychain, file I/O); call them
/// from `spawn_blocking` in async code.
pub trait SecretStore: Send + Sync + fmt::Debug {
    fn kind(&self) -> StoreKind;
    fn get(&self, key: SecretKey) -> Result<Option<SecretString>, StoreError>;
    fn set(&self, key: SecretKey, value: &SecretString) -> Result<(), StoreError>;
    /// Deleting a missing secret is not an error.
    fn delete(&self, key: SecretKey) -> Result<(), StoreError>;

    /// A secret under a keyring service and account the caller names, not
    /// one of the app's own [`SecretKey`]s: an extension's sensitive
    /// settings live where Gemini CLI 0.61 keeps them (service
    /// `Gemini CLI Extensions <name> <id>`, account `__secret__<ENV_VAR>`),
    /// so both programs find them. The file store keys them by both names.
    fn get_entry(&self, service: &str, account: &str) -> Result<Option<SecretString>, StoreError>;
    fn set_entry(
        &self,
        service: &str,
        account: &str,
        value: &SecretString,
    ) -> Result<(), StoreError>;
    /// Deleting a missing entry is not an error.
    fn delete_entry(&self, service: &str, account: &str) -> Result<(), StoreError>;
}

/// The file and memory stores' key for a named entry (a service name may
/// hold spaces and paths; a newline separates it from the account).
fn entry_key(service: &str, account: &str) -> String {
    format!("{service}\n{account}")
}

// ---------------------------------------------------------------------------
// Keyring

/// Human name of the keyring compiled for this target.
pub fn keyring_backend_name() -> &'static str {
    if cfg!(target_os = "macos") {
        "macOS Keychain"
    } else if cfg!(windows) {
        "Windows Credential Manager"
    } else {
        "Secret Service"
    }
}

/// The OS keyring (see the module docs for the backends).
#[derive(Debug, Clone)]
pub struct KeyringStore {
    service: String,
    /// A fallback file from a time without keyring: read when the keyring has
    /// nothing, cleaned on delete, never written.
    legacy_file: Option<FileStore>,
}

impl KeyringStore {
    pub fn new(service: impl Into<String>) -> Self {
        Self {
            service: service.into(),
            legacy_file: None,
        }
    }

    /// Also read secrets the fallback file at `path` holds (from an earlier
    /// run without keyring), so switching stores does not sign anyone out.
    pub fn with_legacy_file(mut self, path: PathBuf) -> Self {
        self.legacy_file = Some(FileStore::new(path));
        self
    }

    fn entry(&self, key: SecretKey) -> Result<keyring::Entry, StoreError> {
        keyring::Entry::new(&self.service, key.account()).map_err(keyring_error)
    }
}

fn keyring_error(error: keyring::Error) -> StoreError {
    let store = keyring_backend_name().to_string();
    match error {
        keyring::Error::BadEncoding(_) => StoreError::Corrupt {
            store,
            message: "the stored value is not text".into(),
        },
        keyring::Error::NoStorageAccess(e) => StoreError::Unavailable {
            store,
            message: format!(
                "access refused or the keyring is locked ({})",
                crate::redact::redact(&e.to_string())
            ),
        },
        other => StoreError::Unavailable {
            store,
            message: crate::redact::redact(&other.to_string()),
        },
    }
}

impl SecretStore for KeyringStore {
    fn kind(&self) -> StoreKind {
        StoreKind::Keyring {
            backend: keyring_backend_name().into(),
        }
    }

    fn get(&self, key: SecretKey) -> Result<Option<SecretString>, StoreError> {
        read(self.entry(key)?, || match &self.legacy_file {
            Some(file) => file.get(key),
            None => Ok(None),
        })
    }

    fn set(&self, key: SecretKey, value: &SecretString) -> Result<(), StoreError> {
        write(self.entry(key)?, value)?;
        // The keyring copy is now the current one.
        if let Some(file) = &self.legacy_file {
            let _ = file.delete(key);
        }
        Ok(())
    }

    fn delete(&self, key: SecretKey) -> Result<(), StoreError> {
        if let Some(file) = &self.legacy_file {
            file.delete(key)?;
        }
        remove(self.entry(key)?)
    }

    fn get_entry(&self, service: &str, account: &str) -> Result<Option<SecretString>, StoreError> {
        read(named_entry(service, account)?, || match &self.legacy_file {
            Some(file) => file.get_entry(service, account),
            None => Ok(None),
        })
    }

    fn set_entry(
        &self,
        service: &str,
        account: &str,
        value: &SecretString,
    ) -> Result<(), StoreError> {
        write(named_entry(service, account)?, value)?;
        if let Some(file) = &self.legacy_file {
            let _ = file.delete_entry(service, account);
        }
        Ok(())
    }

    fn delete_entry(&self, service: &str, account: &str) -> Result<(), StoreError> {
        if let Some(file) = &self.legacy_file {
            file.delete_entry(service, account)?;
        }
        remove(named_entry(service, account)?)
    }
}

// One keyring entry's read, write and removal, shared by the app's own keys
// and named entries (an extension's settings): a missing entry falls back to
// what `legacy` finds (the 0600 file a secret was kept in before the keyring
// answered), and removing a missing entry is not an error.

fn named_entry(service: &str, account: &str) -> Result<keyring::Entry, StoreError> {
    keyring::Entry::new(service, account).map_err(keyring_error)
}

fn read(
    entry: keyring::Entry,
    legacy: impl FnOnce() -> Result<Option<SecretString>, StoreError>,
) -> Result<Option<SecretString>, StoreError> {
    match entry.get_password() {
        Ok(value) => Ok(Some(SecretString::new(value))),
        Err(keyring::Error::NoEntry) => legacy(),
        Err(e) => Err(keyring_error(e)),
    }
}

fn write(entry: keyring::Entry, value: &SecretString) -> Result<(), StoreError> {
    entry.set_password(value.expose()).map_err(keyring_error)
}

fn remove(entry: keyring::Entry) -> Result<(), StoreError> {
    match entry.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(keyring_error(e)),
    }
}

/// Checks that a real (persistent) keyring answers: `Err(reason)` otherwise.
pub fn probe_keyring(service: &str) -> Result<(), String> {
    use keyring::credential::CredentialPersistence;
    let persistence = keyring::default::default_credential_builder().persistence();
    if !matches!(persistence, CredentialPersistence::UntilDelete) {
        return Err("this build has no persistent keyring backend".into());
    }
    let entry = keyring::Entry::new(service, "store-probe")
        .map_err(|e| crate::redact::redact(&e.to_string()))?;
    match entry.get_password() {
        Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(keyring::Error::NoStorageAccess(e)) => Err(format!(
            "the keyring is locked or refused access ({})",
            crate::redact::redact(&e.to_string())
        )),
        Err(e) => Err(crate::redact::redact(&e.to_string())),
    }
}

// ---------------------------------------------------------------------------
// File

/// A JSON file of secrets, mode 0600, replaced atomically on every write.
/// Read-modify-write runs under one process-wide lock, so the several
/// managers of one process (the shell's, each session's) never lose an
/// update; between processes the atomic rename keeps the file whole.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

/// Serializes every file store's read-modify-write in this process.
static FILE_LOCK: Mutex<()> = Mutex::new(());

impl FileStore {
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn unavailable(&self, what: &str, e: &std::io::Error) -> StoreError {
        StoreError::Unavailable {
            store: self.path.display().to_string(),
            message: format!("{what}: {e}"),
        }
    }

    fn read_map(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(self.unavailable("cannot read", &e)),
        };
        tighten_permissions(&self.path);
        if text.trim().is_empty() {
            return Ok(BTreeMap::new());
        }
        serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
            store: self.path.display().to_string(),
            // serde_json's message names line and column, never the content.
            message: format!("not a JSON object of strings: {e}"),
        })
    }

    fn write_map(&self, map: &BTreeMap<String, String>) -> Result<(), StoreError> {
        if map.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(self.unavailable("cannot remove", &e)),
            };
        }
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        create_private_dir(dir).map_err(|e| self.unavailable("cannot create the directory", &e))?;
        let text = serde_json::to_string_pretty(map).map_err(|e| StoreError::Corrupt {
            store: self.path.display().to_string(),
            message: e.to_string(),
        })?;
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            self.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| SECRETS_FILE.into()),
            std::process::id()
        ));
        let result = (|| {
            use std::io::Write as _;
            let _ = std::fs::remove_file(&tmp);
            let mut file = private_file_options().open(&tmp)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(self.unavailable("cannot write", &e));
        }
        Ok(())
    }
}

impl FileStore {
    fn get_key(&self, key: &str) -> Result<Option<SecretString>, StoreError> {
        let _guard = FILE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        Ok(self.read_map()?.remove(key).map(SecretString::new))
    }

    fn set_key(&self, key: &str, value: &SecretString) -> Result<(), StoreError> {
        let _guard = FILE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut map = self.read_map()?;
        map.insert(key.to_owned(), value.expose().to_owned());
        self.write_map(&map)
    }

    fn delete_key(&self, key: &str) -> Result<(), StoreError> {
        let _guard = FILE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut map = match self.read_map() {
            Ok(map) => map,
            // A broken file cannot hold a usable secret: start over.
            Err(StoreError::Corrupt { .. }) => BTreeMap::new(),
            Err(e) => return Err(e),
        };
        if map.remove(key).is_none() && self.path.exists() && !map.is_empty() {
            return Ok(());
        }
        self.write_map(&map)
    }
}

impl SecretStore for FileStore {
    fn kind(&self) -> StoreKind {
        StoreKind::File {
            path: self.path.clone(),
        }
    }

    fn get(&self, key: SecretKey) -> Result<Option<SecretString>, StoreError> {
        self.get_key(key.account())
    }

    fn set(&self, key: SecretKey, value: &SecretString) -> Result<(), StoreError> {
        self.set_key(key.account(), value)
    }

    fn delete(&self, key: SecretKey) -> Result<(), StoreError> {
        self.delete_key(key.account())
    }

    fn get_entry(&self, service: &str, account: &str) -> Result<Option<SecretString>, StoreError> {
        self.get_key(&entry_key(service, account))
    }

    fn set_entry(
        &self,
        service: &str,
        account: &str,
        value: &SecretString,
    ) -> Result<(), StoreError> {
        self.set_key(&entry_key(service, account), value)
    }

    fn delete_entry(&self, service: &str, account: &str) -> Result<(), StoreError> {
        self.delete_key(&entry_key(service, account))
    }
}

#[cfg(unix)]
fn private_file_options() -> std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    options
}

#[cfg(not(unix))]
fn private_file_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    options
}

/// Creates `dir` (mode 0700 for the directories created here).
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// A secrets file someone made readable for others is put back to 0600.
fn tighten_permissions(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            warn!(path = %path.display(), "secrets file was readable by others; setting mode 0600");
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

// ---------------------------------------------------------------------------
// Memory

/// Secrets in process memory: for tests and for shells that must not persist.
#[derive(Debug, Default)]
pub struct MemoryStore {
    /// By account (the app's keys) or [`entry_key`] (named entries).
    map: Mutex<BTreeMap<String, SecretString>>,
}

impl MemoryStore {
    fn get_key(&self, key: &str) -> Option<SecretString> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned()
    }

    fn set_key(&self, key: String, value: &SecretString) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, value.clone());
    }

    fn delete_key(&self, key: &str) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }
}

impl SecretStore for MemoryStore {
    fn kind(&self) -> StoreKind {
        StoreKind::Memory
    }

    fn get(&self, key: SecretKey) -> Result<Option<SecretString>, StoreError> {
        Ok(self.get_key(key.account()))
    }

    fn set(&self, key: SecretKey, value: &SecretString) -> Result<(), StoreError> {
        self.set_key(key.account().to_owned(), value);
        Ok(())
    }

    fn delete(&self, key: SecretKey) -> Result<(), StoreError> {
        self.delete_key(key.account());
        Ok(())
    }

    fn get_entry(&self, service: &str, account: &str) -> Result<Option<SecretString>, StoreError> {
        Ok(self.get_key(&entry_key(service, account)))
    }

    fn set_entry(
        &self,
        service: &str,
        account: &str,
        value: &SecretString,
    ) -> Result<(), StoreError> {
        self.set_key(entry_key(service, account), value);
        Ok(())
    }

    fn delete_entry(&self, service: &str, account: &str) -> Result<(), StoreError> {
        self.delete_key(&entry_key(service, account));
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Selection

/// Which store to use: `GEMINI_DESKTOP_SECRET_STORE` = `auto` (default),
/// `keyring` or `file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StorePreference {
    #[default]
    Auto,
    Keyring,
    File,
}

impl StorePreference {
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("auto") => Ok(Self::Auto),
            Some("keyring") => Ok(Self::Keyring),
            Some("file") => Ok(Self::File),
            Some(other) => Err(format!(
                "GEMINI_DESKTOP_SECRET_STORE must be auto, keyring or file, not '{other}'"
            )),
        }
    }
}

/// A store and the record of why it was chosen.
#[derive(Debug, Clone)]
pub struct SelectedStore {
    pub store: Arc<dyn SecretStore>,
    pub info: StoreInfo,
}

/// Picks the store: the keyring when it answers, else the 0600 file at
/// `file` (with a warning). `Keyring` fails instead of falling back.
pub fn select_store(
    service: &str,
    file: PathBuf,
    preference: StorePreference,
) -> Result<SelectedStore, StoreError> {
    match preference {
        StorePreference::File => Ok(file_store(file, None)),
        StorePreference::Keyring => match cached_probe(service) {
            Ok(()) => Ok(keyring_store(service, file)),
            Err(reason) => Err(StoreError::Unavailable {
                store: keyring_backend_name().into(),
                message: reason,
            }),
        },
        StorePreference::Auto => match cached_probe(service) {
            Ok(()) => Ok(keyring_store(service, file)),
            Err(reason) => {
                warn!(
                    %reason,
                    path = %file.display(),
                    "no keyring service reachable; secrets go to a file readable only by you"
                );
                Ok(file_store(file, Some(reason)))
            }
        },
    }
}

fn keyring_store(service: &str, file: PathBuf) -> SelectedStore {
    let store = KeyringStore::new(service).with_legacy_file(file);
    SelectedStore {
        info: StoreInfo {
            kind: store.kind(),
            fallback_reason: None,
        },
        store: Arc::new(store),
    }
}

fn file_store(file: PathBuf, reason: Option<String>) -> SelectedStore {
    let store = FileStore::new(file);
    SelectedStore {
        info: StoreInfo {
            kind: store.kind(),
            fallback_reason: reason,
        },
        store: Arc::new(store),
    }
}

/// The probe answer, once per process and service (a D-Bus round trip).
fn cached_probe(service: &str) -> Result<(), String> {
    static PROBES: OnceLock<Mutex<BTreeMap<String, Result<(), String>>>> = OnceLock::new();
    let probes = PROBES.get_or_init(Default::default);
    if let Some(answer) = probes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(service)
    {
        return answer.clone();
    }
    let answer = probe_keyring(service);
    debug!(service, ?answer, "keyring probe");
    probes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(service.to_owned(), answer.clone());
    answer
}

#[cfg(test)]
#[path = "secret_store_tests.rs"]
mod tests;
