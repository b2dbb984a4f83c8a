//! The full file index of the workspace roots, searched with nucleo.
//!
//! The index is built on a background thread with the `ignore` crate's
//! parallel walker; files are fed to nucleo as they are found, so a search
//! started while the build runs streams results that improve as more of
//! the tree is indexed. Live changes (see [`crate::watch`]) add and remove
//! files. nucleo cannot delete items, so removed paths are kept as
//! tombstones and filtered out of results; once they pile up (or after a
//! rebuild) the matcher is restarted with the live set.
//!
//! Keys: a file of the first (primary) root is keyed by its path relative
//! to that root (`src/main.rs`), as `@path` references it; a file of
//! another root (an include directory) by its absolute path.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use nucleo::pattern::{CaseMatching, Normalization};
use nucleo::{Config, Injector, Matcher, Nucleo};
use serde::Serialize;

use crate::Filtering;

/// Files are handed to the matcher in batches of this size, to keep the
/// index lock cold while the walker threads run.
const BATCH: usize = 512;

/// A streamed search never reports more often than this, unless done.
const UPDATE_INTERVAL: Duration = Duration::from_millis(40);

/// One ranked search result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "camelCase")]
pub struct SearchMatch {
    /// The file's key (see the module docs).
    pub path: String,
    pub score: u32,
    /// Positions (in characters) of `path` the query matched, ascending,
    /// for highlighting.
    pub indices: Vec<u32>,
}

/// A snapshot of a running search: the best matches so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(rename_all = "camelCase")]
pub struct SearchUpdate {
    pub matches: Vec<SearchMatch>,
    /// How many files matched in all (the list is cut at the limit).
    pub matched: u32,
    /// How many files are indexed so far.
    pub indexed: u32,
    /// The index was complete and every file was matched: this is final.
    pub done: bool,
}

/// What changed in the index, for subscribers (the desktop forwards these
/// to the UI so the tree and the results stay current).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum IndexEvent {
    /// The full index is built.
    #[serde(rename_all = "camelCase")]
    Built {
        files: usize,
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        millis: u64,
    },
    /// Files were added or removed under `root` (an index into the roots);
    /// `dirs` are the folders (relative to that root, `""` for the root)
    /// whose listing changed.
    #[serde(rename_all = "camelCase")]
    Changed {
        root: usize,
        added: Vec<String>,
        removed: Vec<String>,
        dirs: Vec<String>,
    },
}

/// The index of every file of the roots that the ignore rules let through.
#[derive(Clone)]
pub struct FileIndex {
    inner: Arc<Inner>,
}

struct Inner {
    roots: Vec<PathBuf>,
    filtering: Filtering,
    /// Lock order: `nucleo` before `state`.
    nucleo: Mutex<Nucleo<Arc<str>>>,
    state: Mutex<State>,
    /// Whether a build is running, with a condition variable to wait on.
    building: Mutex<bool>,
    built: Condvar,
    /// Bumped to cancel a running build (a rebuild supersedes it).
    build_generation: AtomicU64,
    /// Bumped by every search, so a newer query cancels an older one.
    search_generation: AtomicU64,
    subscribers: Mutex<Vec<mpsc::Sender<IndexEvent>>>,
}

struct State {
    injector: Injector<Arc<str>>,
    /// The live files, by key.
    present: HashSet<Arc<str>>,
    /// Files still in the matcher but deleted since.
    tombstones: HashSet<Arc<str>>,
    /// Keys of the folders the ignore rules let through (roots included as
    /// `""` for the primary root and their absolute path for the others).
    dirs: HashSet<String>,
    /// The matcher must be restarted with `present` (after a rebuild).
    needs_restart: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl FileIndex {
    /// An empty index of `roots` (the first is the primary workspace).
    /// Call [`FileIndex::start_build`] to fill it.
    pub fn new(roots: Vec<PathBuf>, filtering: Filtering) -> Self {
        let nucleo = Nucleo::new(Config::DEFAULT.match_paths(), Arc::new(|| {}), None, 1);
        let state = State {
            injector: nucleo.injector(),
            present: HashSet::new(),
            tombstones: HashSet::new(),
            dirs: HashSet::new(),
            needs_restart: false,
        };
        Self {
            inner: Arc::new(Inner {
                roots,
                filtering,
                nucleo: Mutex::new(nucleo),
                state: Mutex::new(state),
                building: Mutex::new(false),
                built: Condvar::new(),
                build_generation: AtomicU64::new(0),
                search_generation: AtomicU64::new(0),
                subscribers: Mutex::new(Vec::new()),
            }),
        }
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.inner.roots
    }

    pub fn filtering(&self) -> Filtering {
        self.inner.filtering
    }

    /// Starts (or restarts) the full build on a background thread and
    /// returns at once. A build already running is cancelled.
    pub fn start_build(&self) {
        let generation = self.inner.build_generation.fetch_add(1, Ordering::SeqCst) + 1;
        *lock(&self.inner.building) = true;
        {
            let mut state = lock(&self.inner.state);
            // The matcher holds exactly `present` and `tombstones`: only
            // restart it if it holds anything.
            state.needs_restart |= !state.present.is_empty() || !state.tombstones.is_empty();
            state.present.clear();
            state.tombstones.clear();
            state.dirs.clear();
        }
        let inner = self.inner.clone();
        let spawned = std::thread::Builder::new()
            .name("workspace-index".into())
            .spawn(move || build(&inner, generation));
        if let Err(error) = spawned {
            tracing::error!(%error, "cannot start the index build thread");
            *lock(&self.inner.building) = false;
            self.inner.built.notify_all();
        }
    }

    /// Whether the full build is still running.
    pub fn is_building(&self) -> bool {
        *lock(&self.inner.building)
    }

    /// Waits until no build runs; `false` on timeout.
    pub fn wait_built(&self, timeout: Duration) -> bool {
        let guard = lock(&self.inner.building);
        let (guard, _) = self
            .inner
            .built
            .wait_timeout_while(guard, timeout, |building| *building)
            .unwrap_or_else(|e| e.into_inner());
        !*guard
    }

    /// How many files are indexed.
    pub fn len(&self) -> usize {
        lock(&self.inner.state).present.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` is an indexed file.
    pub fn contains(&self, key: &str) -> bool {
        lock(&self.inner.state).present.contains(key)
    }

    /// A channel of [`IndexEvent`]s from now on.
    pub fn subscribe(&self) -> mpsc::Receiver<IndexEvent> {
        let (tx, rx) = mpsc::channel();
        lock(&self.inner.subscribers).push(tx);
        rx
    }

    /// Fuzzy-searches the index for `query`, calling `on_update` with the
    /// best `limit` matches each time they change (at most every 40 ms)
    /// and a last time with `done` set once the index is complete and
    /// fully matched. Runs on the calling thread until then, or until
    /// `on_update` returns `false`, or a newer search starts (which
    /// cancels this one). Case is smart: an upper-case letter in the query
    /// makes it case-sensitive.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        mut on_update: impl FnMut(SearchUpdate) -> bool,
    ) {
        let inner = &self.inner;
        let generation = inner.search_generation.fetch_add(1, Ordering::SeqCst) + 1;
        let mut nucleo = lock(&inner.nucleo);
        if inner.search_generation.load(Ordering::SeqCst) != generation {
            return;
        }
        nucleo
            .pattern
            .reparse(0, query, CaseMatching::Smart, Normalization::Smart, false);
        let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
        let mut last_sent: Option<Instant> = None;
        loop {
            if inner.search_generation.load(Ordering::SeqCst) != generation {
                return;
            }
            sync_matcher(&mut nucleo, &mut lock(&inner.state));
            let status = nucleo.tick(10);
            let building = *lock(&inner.building);
            let done = !building && !status.running;
            let due = last_sent.is_none_or(|t| t.elapsed() >= UPDATE_INTERVAL);
            if done || (status.changed && due) || last_sent.is_none() {
                let update = collect(&nucleo, &lock(&inner.state), &mut matcher, limit, done);
                last_sent = Some(Instant::now());
                if !on_update(update) || done {
                    return;
                }
            }
        }
    }

    /// Applies file-system changes below root `root` (paths as the
    /// watcher reports them, absolute): each path is looked at again, so
    /// creates, deletes and both ends of a rename all come down to "is it
    /// there now, and do the ignore rules let it through". A change to an
    /// ignore file rebuilds the whole index.
    pub fn apply_changes(&self, root: usize, paths: &[PathBuf]) {
        let Some(root_path) = self.inner.roots.get(root) else {
            return;
        };
        let mut paths: Vec<&PathBuf> = paths
            .iter()
            .filter(|p| {
                p.starts_with(root_path) && !p.components().any(|c| c.as_os_str() == ".git")
            })
            .collect();
        // Parents before children, so a new folder is known before its files.
        paths.sort_by_key(|p| p.components().count());
        paths.dedup();
        if paths.iter().any(|p| {
            p.file_name()
                .is_some_and(|n| crate::filter::is_ignore_file(&n.to_string_lossy()))
                && self.parent_known(root, p)
        }) {
            tracing::debug!("an ignore file changed: rebuilding the index");
            self.start_build();
            return;
        }

        let mut added = Vec::new();
        let mut removed = Vec::new();
        let mut dirs = Vec::new();
        // The names each touched folder lets through, read once per batch (a checkout can
        // touch thousands of files in a few folders).
        let mut visible: HashMap<PathBuf, HashSet<OsString>> = HashMap::new();
        for path in paths {
            let Some(key) = self.key(root, path) else {
                continue;
            };
            let parent_rel = path
                .parent()
                .map(|p| relative(root_path, p))
                .unwrap_or_default();
            match std::fs::symlink_metadata(path) {
                Ok(meta) => {
                    if !self.parent_known(root, path) || !self.visible(&mut visible, path) {
                        continue;
                    }
                    let mut state = lock(&self.inner.state);
                    if meta.is_dir() {
                        if state.dirs.insert(key) {
                            drop(state);
                            added.extend(self.index_subtree(root, path));
                            dirs.push(parent_rel);
                        }
                    } else if meta.is_file() && add_file(&mut state, &key) {
                        added.push(key);
                        dirs.push(parent_rel);
                    }
                }
                Err(_) => {
                    let mut state = lock(&self.inner.state);
                    if remove_file(&mut state, &key) {
                        removed.push(key);
                        dirs.push(parent_rel);
                    } else if state.dirs.remove(&key) {
                        let prefix = format!("{key}/");
                        let below: Vec<Arc<str>> = state
                            .present
                            .iter()
                            .filter(|k| k.starts_with(&prefix))
                            .cloned()
                            .collect();
                        for k in below {
                            remove_file(&mut state, &k);
                            removed.push(k.to_string());
                        }
                        state.dirs.retain(|d| !d.starts_with(&prefix));
                        dirs.push(parent_rel);
                    }
                }
            }
        }
        if added.is_empty() && removed.is_empty() && dirs.is_empty() {
            return;
        }
        dirs.sort();
        dirs.dedup();
        self.emit(IndexEvent::Changed {
            root,
            added,
            removed,
            dirs,
        });
    }

    /// The key of `path` (below root `root`), see the module docs.
    pub fn key(&self, root: usize, path: &Path) -> Option<String> {
        let root_path = self.inner.roots.get(root)?;
        let rel = path.strip_prefix(root_path).ok()?;
        Some(if root == 0 {
            rel.to_string_lossy().replace('\\', "/")
        } else {
            path.to_string_lossy().into_owned()
        })
    }

    fn parent_known(&self, root: usize, path: &Path) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        let Some(parent_key) = self.key(root, parent) else {
            return false;
        };
        lock(&self.inner.state).dirs.contains(&parent_key)
    }

    /// Whether the ignore rules let `path` through (its parent folder being
    /// known to be let through); `cache` holds the folders already read.
    fn visible(&self, cache: &mut HashMap<PathBuf, HashSet<OsString>>, path: &Path) -> bool {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        cache
            .entry(parent.to_path_buf())
            .or_insert_with(|| {
                self.inner
                    .filtering
                    .walker(parent)
                    .max_depth(Some(1))
                    .build()
                    .filter_map(Result::ok)
                    .filter(|e| e.depth() == 1)
                    .map(|e| e.file_name().to_owned())
                    .collect()
            })
            .contains(name)
    }

    /// Indexes everything below a new folder; returns the added keys.
    fn index_subtree(&self, root: usize, dir: &Path) -> Vec<String> {
        let mut added = Vec::new();
        for entry in self
            .inner
            .filtering
            .walker(dir)
            .build()
            .filter_map(Result::ok)
        {
            if entry.depth() == 0 {
                continue;
            }
            let Some(key) = self.key(root, entry.path()) else {
                continue;
            };
            let mut state = lock(&self.inner.state);
            match entry.file_type() {
                Some(t) if t.is_dir() => {
                    state.dirs.insert(key);
                }
                Some(t) if t.is_file() && add_file(&mut state, &key) => added.push(key),
                _ => {}
            }
        }
        added
    }

    fn emit(&self, event: IndexEvent) {
        lock(&self.inner.subscribers).retain(|tx| tx.send(event.clone()).is_ok());
    }
}

/// Adds a file under the state lock; `false` if it was there already.
fn add_file(state: &mut State, key: &str) -> bool {
    if state.present.contains(key) {
        return false;
    }
    let key: Arc<str> = Arc::from(key);
    // A file deleted and created again is still in the matcher.
    if !state.tombstones.remove(&key) {
        state
            .injector
            .push(key.clone(), |k, cols| cols[0] = k.as_ref().into());
    }
    state.present.insert(key);
    true
}

/// Removes a file under the state lock; `false` if it was not indexed.
fn remove_file(state: &mut State, key: &str) -> bool {
    match state.present.take(key) {
        Some(key) => {
            state.tombstones.insert(key);
            true
        }
        None => false,
    }
}

/// Restarts the matcher with the live files after a rebuild, or once
/// tombstones make up a quarter of it.
fn sync_matcher(nucleo: &mut Nucleo<Arc<str>>, state: &mut State) {
    let stale = state.tombstones.len() > 1024 && state.tombstones.len() * 4 > state.present.len();
    if !state.needs_restart && !stale {
        return;
    }
    nucleo.restart(true);
    state.injector = nucleo.injector();
    for key in &state.present {
        state
            .injector
            .push(key.clone(), |k, cols| cols[0] = k.as_ref().into());
    }
    state.tombstones.clear();
    state.needs_restart = false;
}

fn collect(
    nucleo: &Nucleo<Arc<str>>,
    state: &State,
    matcher: &mut Matcher,
    limit: usize,
    done: bool,
) -> SearchUpdate {
    let snapshot = nucleo.snapshot();
    let pattern = snapshot.pattern().column_pattern(0);
    let mut matches = Vec::with_capacity(limit);
    let mut indices = Vec::new();
    for item in snapshot.matched_items(..) {
        if matches.len() >= limit {
            break;
        }
        if state.tombstones.contains(item.data) {
            continue;
        }
        indices.clear();
        let haystack = item.matcher_columns[0].slice(..);
        let score = pattern
            .indices(haystack, matcher, &mut indices)
            .unwrap_or(0);
        indices.sort_unstable();
        indices.dedup();
        matches.push(SearchMatch {
            path: item.data.to_string(),
            score,
            indices: indices.clone(),
        });
    }
    SearchUpdate {
        matches,
        matched: snapshot.matched_item_count(),
        indexed: state.present.len() as u32,
        done,
    }
}

/// `path` relative to `root`, `/`-separated (`""` for the root itself).
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default()
}

/// The build thread: walks every root in parallel, feeding files to the
/// matcher in batches, then reports [`IndexEvent::Built`].
fn build(inner: &Arc<Inner>, generation: u64) {
    let started = Instant::now();
    let index = FileIndex {
        inner: inner.clone(),
    };
    for (root, root_path) in inner.roots.iter().enumerate() {
        if let Some(key) = index.key(root, root_path) {
            lock(&inner.state).dirs.insert(key);
        }
        let mut builder = BatchBuilder {
            index: &index,
            root,
            generation,
        };
        inner
            .filtering
            .walker(root_path)
            .build_parallel()
            .visit(&mut builder);
    }
    if inner.build_generation.load(Ordering::SeqCst) != generation {
        return;
    }
    let files = lock(&inner.state).present.len();
    let millis = started.elapsed().as_millis() as u64;
    tracing::debug!(files, millis, "workspace index built");
    // Subscribers hear of it before waiters wake, so a subscription made
    // after `wait_built` never receives this build's event.
    index.emit(IndexEvent::Built { files, millis });
    *lock(&inner.building) = false;
    inner.built.notify_all();
}

struct BatchBuilder<'a> {
    index: &'a FileIndex,
    root: usize,
    generation: u64,
}

impl<'a> ParallelVisitorBuilder<'a> for BatchBuilder<'a> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(BatchVisitor {
            index: self.index,
            root: self.root,
            generation: self.generation,
            files: Vec::with_capacity(BATCH),
            dirs: Vec::new(),
        })
    }
}

/// One walker thread's share: files and folders found, flushed to the
/// index every [`BATCH`] files and when the thread ends.
struct BatchVisitor<'a> {
    index: &'a FileIndex,
    root: usize,
    generation: u64,
    files: Vec<String>,
    dirs: Vec<String>,
}

impl BatchVisitor<'_> {
    fn flush(&mut self) {
        let inner = &self.index.inner;
        if inner.build_generation.load(Ordering::SeqCst) != self.generation {
            self.files.clear();
            self.dirs.clear();
            return;
        }
        let mut state = lock(&inner.state);
        for key in self.files.drain(..) {
            add_file(&mut state, &key);
        }
        state.dirs.extend(self.dirs.drain(..));
    }
}

impl ParallelVisitor for BatchVisitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.index.inner.build_generation.load(Ordering::Relaxed) != self.generation {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if entry.depth() == 0 {
            return WalkState::Continue;
        }
        let Some(key) = self.index.key(self.root, entry.path()) else {
            return WalkState::Continue;
        };
        match entry.file_type() {
            Some(t) if t.is_dir() => self.dirs.push(key),
            Some(t) if t.is_file() => {
                self.files.push(key);
                if self.files.len() >= BATCH {
                    self.flush();
                }
            }
            _ => {}
        }
        WalkState::Continue
    }
}

impl Drop for BatchVisitor<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}
