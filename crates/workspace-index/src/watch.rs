//! Live updates: a debounced recursive watch of every root, applied to the
//! [`FileIndex`] (which reports them to its subscribers).

use std::time::Duration;

use notify::RecursiveMode;
use notify::event::{EventKind, ModifyKind};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::FileIndex;

/// How long changes are gathered before they are applied: short enough
/// that a change shows within a fraction of a second, long enough that a
/// `git checkout` or a build arrives as a few batches.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

#[derive(Debug, thiserror::Error)]
#[error("cannot watch `{path}`: {source}")]
pub struct WatchError {
    pub path: String,
    #[source]
    pub source: notify::Error,
}

/// Watches the roots of an index while it lives; dropping it stops the
/// watch.
pub struct Watcher {
    _debouncers: Vec<Debouncer<notify::RecommendedWatcher, RecommendedCache>>,
}

impl Watcher {
    /// Starts watching every root of `index`.
    pub fn new(index: &FileIndex) -> Result<Self, WatchError> {
        let mut debouncers = Vec::new();
        for (root, path) in index.roots().iter().enumerate() {
            let target = index.clone();
            let handler = move |result: DebounceEventResult| match result {
                Ok(events) => {
                    if events.iter().any(|e| e.need_rescan()) {
                        tracing::debug!("the watcher lost events: rebuilding the index");
                        target.start_build();
                        return;
                    }
                    let paths: Vec<_> = events
                        .iter()
                        .filter(|e| changes_entries(&e.event.kind))
                        .flat_map(|e| e.event.paths.iter().cloned())
                        .collect();
                    target.apply_changes(root, &paths);
                }
                Err(errors) => {
                    for error in errors {
                        tracing::warn!(%error, "file watcher error");
                    }
                }
            };
            let watch_error = |source| WatchError {
                path: path.display().to_string(),
                source,
            };
            let mut debouncer = new_debouncer(DEBOUNCE, None, handler).map_err(watch_error)?;
            debouncer
                .watch(path, RecursiveMode::Recursive)
                .map_err(watch_error)?;
            debouncers.push(debouncer);
        }
        Ok(Self {
            _debouncers: debouncers,
        })
    }
}

/// Whether an event can add, remove or rename entries. Reads (`Access`,
/// which the index's own walks cause) and metadata changes cannot; acting
/// on them would make reading `.gitignore` trigger a rebuild that reads it
/// again.
fn changes_entries(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(_) | EventKind::Other => false,
    }
}
