//! Session history for Gemini Desktop: one embedded SQLite database (WAL,
//! FTS5) holding every session and message, whichever frontend ran it.
//!
//! * [`Store`] opens (and migrates, see [`schema`]) the database and is the
//!   only way in: writes go through one connection, reads through another,
//!   so listing and search never wait behind a commit (WAL lets them run
//!   side by side).
//! * Every [`Store::append_message`] is its own committed transaction: the
//!   recorder in gd-core awaits it before the next model request (the
//!   prompt's: before any of that request's answer is handled), so a crash
//!   or `kill -9` loses nothing that was shown.
//! * Reads never load a whole transcript: [`Store::page`] is keyset
//!   pagination by message order and cuts oversized messages;
//!   [`export`] streams row by row.
//! * [`gemini_cli`] reads Gemini CLI's own recordings for the browser and
//!   imports them on resume.
//!
//! All calls are blocking; async callers use `spawn_blocking` (the store is
//! cheap to clone).

pub mod export;
pub mod gemini_cli;
pub mod highlight;
pub mod private;
mod read;
pub mod retention;
pub mod schema;
mod search;
mod types;
mod write;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::Connection;
use thiserror::Error;

pub use search::{SearchHit, SearchQuery};
pub use types::*;

/// The environment variable that moves the data directory (tests, portable installs).
pub const DATA_DIR_ENV: &str = "GEMINI_DESKTOP_DATA_DIR";

/// `full` makes every commit fsync (see [`Durability`]).
pub const SYNC_ENV: &str = "GEMINI_DESKTOP_HISTORY_SYNC";

/// The database's file name inside the data directory.
pub const DB_FILE: &str = "history.sqlite3";

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("history database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot use the history database at {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the history database is from a newer Gemini Desktop (schema {found}, this build knows up to {known})"
    )]
    TooNew { found: i64, known: i64 },
    #[error("no session {0} in the history")]
    NoSuchSession(String),
    #[error("no message {0} in this session")]
    NoSuchMessage(String),
    #[error("stored message data is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cannot write the export: {0}")]
    Write(std::io::Error),
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// How hard each commit is pushed to disk.
///
/// Both survive a crash or `kill -9` of the process (a committed WAL frame
/// is in the OS page cache); only `Full` also survives power loss or an OS
/// crash, at the price of an fsync per message. See bench/RESULTS.md,
/// "Session history", for the measured cost that chose the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    #[default]
    Normal,
    Full,
}

/// The data directory: `$GEMINI_DESKTOP_DATA_DIR`, else
/// `$XDG_DATA_HOME/gemini-desktop`, else `~/.local/share/gemini-desktop`.
pub fn default_data_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("gemini-desktop"));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".local/share/gemini-desktop"))
}

/// The default database path (see [`default_data_dir`]).
pub fn default_db_path() -> Option<PathBuf> {
    default_data_dir().map(|d| d.join(DB_FILE))
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as i64
}

/// The history database. Cloning shares the connections.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: Mutex<Connection>,
    reader: Mutex<Connection>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating and migrating as needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, Durability::default())
    }

    /// The database at [`default_db_path`], with the durability
    /// `$GEMINI_DESKTOP_HISTORY_SYNC` asks for (`full`; else normal).
    pub fn open_default() -> Result<Self> {
        let path = default_db_path().ok_or_else(|| {
            StoreError::Invalid(format!(
                "cannot find a data directory: set HOME or {DATA_DIR_ENV}"
            ))
        })?;
        let durability = match std::env::var(SYNC_ENV).as_deref() {
            Ok("full") | Ok("FULL") => Durability::Full,
            _ => Durability::Normal,
        };
        Self::open_with(path, durability)
    }

    pub fn open_with(path: impl AsRef<Path>, durability: Durability) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        // Transcripts and file contents: owner-only folder and files, older installs
        // tightened (see [`private`]).
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            private::ensure_private_dir(dir).map_err(|source| StoreError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        private::ensure_private_db(&path).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        let mut writer = Connection::open(&path)?;
        while_busy(|| configure(&writer, durability))?;
        while_busy(|| schema::migrate(&mut writer))?;
        let reader = Connection::open(&path)?;
        while_busy(|| configure(&reader, durability))?;
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                writer: Mutex::new(writer),
                reader: Mutex::new(reader),
            }),
        })
    }

    /// Moves the write-ahead log into the database file (SQLite does this
    /// on its own every 1000 pages; after a bulk import it saves space).
    pub fn checkpoint(&self) -> Result<()> {
        self.writer()
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn writer(&self) -> MutexGuard<'_, Connection> {
        self.inner.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn reader(&self) -> MutexGuard<'_, Connection> {
        self.inner.reader.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Retries `step` while another connection holds the lock it needs.
///
/// The busy timeout covers ordinary waits, but SQLite answers `SQLITE_BUSY`
/// at once, without calling the busy handler, where waiting could deadlock:
/// two connections switching a new database to WAL, or one reading the
/// version while another migrates. The app and the CLI opening the store
/// together hit exactly that, so opening retries for a bounded time.
fn while_busy<T>(mut step: impl FnMut() -> Result<T>) -> Result<T> {
    const PATIENCE: Duration = Duration::from_secs(10);
    let start = std::time::Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match step() {
            Err(StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && start.elapsed() < PATIENCE =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

fn configure(conn: &Connection, durability: Durability) -> Result<()> {
    conn.busy_timeout(Duration::from_secs(5))?;
    // journal_mode answers with a row, so it is queried rather than executed.
    let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    let sync = match durability {
        Durability::Normal => "NORMAL",
        Durability::Full => "FULL",
    };
    conn.execute_batch(&format!(
        "PRAGMA synchronous={sync}; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;"
    ))?;
    Ok(())
}

/// A session title from the first prompt: its first line, whitespace
/// collapsed, cut at a word boundary to at most 80 characters.
pub fn title_from(prompt: &str) -> String {
    const MAX: usize = 80;
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut title = String::new();
    for word in words {
        let extra = if title.is_empty() { 0 } else { 1 } + word.chars().count();
        if title.chars().count() + extra > MAX {
            if title.is_empty() {
                title = gemini_cli::cut(word, MAX - 1);
            } else {
                title.push('…');
            }
            return title;
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
    }
    title
}
