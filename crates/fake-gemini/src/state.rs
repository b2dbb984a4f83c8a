//! Shared server state: the current scenario, counters and the request journal.
//!
//! A plain `std::sync::Mutex` + `Condvar` (not tokio primitives) so that
//! synchronous test code can wait for requests without a runtime, while the
//! server's handlers only ever hold the lock for a few field updates.

use crate::record::RecordedRequest;
use crate::scenario::Scenario;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// State shared by the server's handlers and the [`crate::FakeGemini`] handle.
pub struct ServerState {
    inner: Mutex<Inner>,
    recorded: Condvar,
}

struct Inner {
    scenario: Arc<Scenario>,
    log_path: Option<PathBuf>,
    seq: u64,
    /// Counts resets, so a stream of an earlier run cannot mark a newer request.
    generation: u64,
    main_seen: u64,
    requests: Vec<RecordedRequest>,
    /// Code Assist onboarding operations: name → polls so far.
    operations: std::collections::HashMap<String, u32>,
}

/// How a reset treats the JSONL log path.
pub enum LogChange {
    Keep,
    Set(Option<PathBuf>),
}

impl ServerState {
    pub fn new(scenario: Scenario, log_path: Option<PathBuf>) -> ServerState {
        ServerState {
            inner: Mutex::new(Inner {
                scenario: Arc::new(scenario),
                log_path,
                seq: 0,
                generation: 0,
                main_seen: 0,
                requests: Vec::new(),
                operations: Default::default(),
            }),
            recorded: Condvar::new(),
        }
    }

    /// A poisoned lock only means a panic elsewhere; the data is still usable.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn scenario(&self) -> Arc<Scenario> {
        self.lock().scenario.clone()
    }

    /// Counts a main request; returns its 1-based number since the last reset.
    pub fn next_main(&self) -> u64 {
        let mut inner = self.lock();
        inner.main_seen += 1;
        inner.main_seen
    }

    /// Starts a Code Assist onboarding operation; returns its name.
    pub fn new_operation(&self) -> String {
        let mut inner = self.lock();
        let name = format!("operations/onboard-{}", inner.operations.len() + 1);
        inner.operations.insert(name.clone(), 0);
        name
    }

    /// Counts one poll of `name`; `None` for an unknown operation.
    pub fn poll_operation(&self, name: &str) -> Option<u32> {
        let mut inner = self.lock();
        let polls = inner.operations.get_mut(name)?;
        *polls += 1;
        Some(*polls)
    }

    /// Assigns `seq`/`ts`, stores the record, appends it to the log and wakes waiters.
    pub fn record(&self, mut rec: RecordedRequest) -> u64 {
        let mut inner = self.lock();
        inner.seq += 1;
        rec.seq = inner.seq;
        rec.ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        if let Some(path) = &inner.log_path {
            append_log_line(path, &rec);
        }
        inner.requests.push(rec);
        let seq = inner.seq;
        drop(inner);
        self.recorded.notify_all();
        seq
    }

    /// Switches scenario (when given) and log, clears counters and the journal.
    pub fn reset(&self, scenario: Option<Scenario>, log: LogChange) {
        let mut inner = self.lock();
        if let Some(s) = scenario {
            inner.scenario = Arc::new(s);
        }
        if let LogChange::Set(path) = log {
            inner.log_path = path;
        }
        inner.seq = 0;
        inner.generation += 1;
        inner.main_seen = 0;
        inner.requests.clear();
        inner.operations.clear();
        drop(inner);
        self.recorded.notify_all();
    }

    /// The current reset generation (see [`ServerState::mark_stream_end`]).
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Records that the streamed answer to request `seq` (of reset `generation`) was sent.
    pub fn mark_stream_end(&self, generation: u64, seq: u64) {
        let mut inner = self.lock();
        if inner.generation != generation {
            return;
        }
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        if let Some(rec) = inner.requests.iter_mut().find(|r| r.seq == seq) {
            rec.stream_end_ts = Some(ts);
        }
        drop(inner);
        self.recorded.notify_all();
    }

    /// Switches the JSONL log without touching anything else.
    pub fn set_log(&self, path: Option<PathBuf>) {
        self.lock().log_path = path;
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// Blocks until at least `n` requests are recorded or `timeout` passes.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut inner = self.lock();
        while inner.requests.len() < n {
            let Some(left) = deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
            else {
                return false;
            };
            inner = match self.recorded.wait_timeout(inner, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }
}

/// A log that cannot be written must not break the request, so errors are
/// reported on stderr only.
fn append_log_line(path: &PathBuf, rec: &RecordedRequest) {
    let line = match serde_json::to_string(rec) {
        Ok(line) => line,
        Err(e) => {
            eprintln!("fake-gemini: cannot serialise request record: {e}");
            return;
        }
    };
    let result = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
    if let Err(e) = result {
        eprintln!("fake-gemini: cannot append to log {}: {e}", path.display());
    }
}
