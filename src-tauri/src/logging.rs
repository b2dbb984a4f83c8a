//! Logging: one `tracing` pipeline writing to standard error and to a daily rolling file in the
//! app's log directory (`app.path().app_log_dir()`, on Linux
//! `~/.local/share/dev.geminidesktop.gemini-desktop/logs/gemini-desktop.YYYY-MM-DD.log`).
//!
//! Records of the `log` crate (Tauri, wry, tao, the plugins) are bridged into `tracing` by
//! `tracing-log` (installed by `try_init`, tracing-subscriber's `tracing-log` feature), so both
//! destinations see them. `tauri-plugin-log` is not used: it installs its own `log` logger, which
//! would compete with the bridge for the one global `log` slot and leave our own `tracing`
//! events out of its file.
//!
//! The log directory is only known once Tauri has built the app (it depends on the bundle
//! identifier), while logging must work before that (command-line errors). So the file layer
//! writes through [`DeferredFile`], which discards records until [`attach_log_file`] opens the
//! file from the setup hook.
//!
//! What is logged: the filter is `RUST_LOG` (default `info`). Our code never logs credentials
//! (API keys, tokens) or prompt and file contents at `info`; the HTTP stack does not log headers.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tracing_appender::rolling::{RollingFileAppender, RollingWriter, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::writer::{EitherWriter, OptionalWriter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Log filter used when `RUST_LOG` is not set.
const DEFAULT_LOG_FILTER: &str = "info";

/// Log files are `<prefix>.<date>.<suffix>`.
const FILE_PREFIX: &str = "gemini-desktop";
const FILE_SUFFIX: &str = "log";

/// Daily files kept in the log directory; older ones are deleted when a new day starts.
const MAX_LOG_FILES: usize = 7;

/// The rolling file, once [`attach_log_file`] has opened it.
static LOG_FILE: OnceLock<RollingFileAppender> = OnceLock::new();

/// A writer for the file layer that discards records until the log file is attached.
struct DeferredFile;

impl<'a> MakeWriter<'a> for DeferredFile {
    type Writer = OptionalWriter<RollingWriter<'a>>;

    fn make_writer(&'a self) -> Self::Writer {
        match LOG_FILE.get() {
            Some(file) => EitherWriter::A(file.make_writer()),
            None => OptionalWriter::none(),
        }
    }
}

/// Installs the global subscriber: standard error (coloured on a terminal) and the deferred
/// file (never coloured). Also bridges `log` records. Safe to call more than once.
pub fn init() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let file = tracing_subscriber::fmt::layer()
        .with_writer(DeferredFile)
        .with_ansi(false);
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(file)
        .try_init();
}

/// Opens the rolling log file in `dir` (created if needed) and starts writing to it. Returns
/// the directory; on failure the app keeps logging to standard error only.
pub fn attach_log_file(dir: &Path) -> Result<PathBuf, String> {
    if LOG_FILE.get().is_some() {
        return Ok(dir.to_path_buf());
    }
    // Owner-only: the log can name files, servers and accounts.
    gd_store::private::ensure_private_dir(dir)
        .map_err(|e| format!("create {}: {e}", dir.display()))?;
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(FILE_PREFIX)
        .filename_suffix(FILE_SUFFIX)
        .max_log_files(MAX_LOG_FILES)
        .build(dir)
        .map_err(|e| format!("open a log file in {}: {e}", dir.display()))?;
    // A concurrent caller may have won the race; either file is fine.
    let _ = LOG_FILE.set(appender);
    Ok(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_reach_the_file_once_attached_including_log_crate_records() {
        init();
        tracing::info!("before the file is attached");
        let dir = tempfile::tempdir().unwrap();
        attach_log_file(dir.path()).unwrap();
        tracing::info!(marker = "tracing-record", "after");
        log::info!("a log-crate record");

        let files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("gemini-desktop.") && name.ends_with(".log"),
            "{name}"
        );
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert!(!text.contains("before the file is attached"), "{text}");
        assert!(text.contains("marker=\"tracing-record\""), "{text}");
        assert!(text.contains("a log-crate record"), "{text}");
        assert!(
            !text.contains('\u{1b}'),
            "no colour codes in the file: {text}"
        );
    }
}
