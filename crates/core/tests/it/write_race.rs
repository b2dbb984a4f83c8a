//! A symlink swapped in while `write_file` and `replace` write must never
//! redirect a write outside the workspace (issue 12: the path used to be
//! checked, then resolved again when writing).
//!
//! A thread atomically exchanges a real directory (or file) of the
//! workspace with a symlink pointing outside (`renameat2(RENAME_EXCHANGE)`,
//! so the name always exists) in a tight loop while the real tools write
//! hundreds of times. The directory outside must be exactly as before.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::fs;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use gd_core::tools::replace::Replace;
use gd_core::tools::write_file::WriteFile;
use gd_core::tools::{Tool, ToolContext, ToolResult};
use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::json;

const CALLS: usize = 300;
const MIN_OK: usize = 5;
const MAX_CALLS: usize = 5000;

/// One race at a time: two swappers and the writes would share 2 cores.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Setup {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    ctx: ToolContext,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let ws = base.join("ws");
    let outside = base.join("outside");
    fs::create_dir_all(&ws).unwrap();
    fs::create_dir_all(&outside).unwrap();
    let ctx = ToolContext::new(vec![ws.clone()]);
    Setup {
        _dir: dir,
        ws,
        outside,
        ctx,
    }
}

/// Every file below `dir` with its content.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            files.extend(snapshot(&path));
        } else {
            files.insert(path.clone(), fs::read(&path).unwrap_or_default());
        }
    }
    files
}

/// The attacker: a thread exchanging `a` and `b` in a tight loop.
struct Swapper {
    stop: Arc<AtomicBool>,
    /// Set after each call: the thread puts the symlink back (a write that
    /// replaced the link with a file would otherwise end the attack).
    rearm: Arc<AtomicBool>,
    thread: thread::JoinHandle<u64>,
}

impl Swapper {
    fn start(a: PathBuf, b: PathBuf, rearm_with: impl Fn() + Send + 'static) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let rearm = Arc::new(AtomicBool::new(false));
        let (stop_flag, rearm_flag) = (stop.clone(), rearm.clone());
        let thread = thread::spawn(move || {
            let mut swaps = 0;
            while !stop_flag.load(Ordering::Relaxed) && swaps < 50_000_000 {
                if rearm_flag.swap(false, Ordering::Relaxed) {
                    rearm_with();
                }
                renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                swaps += 1;
            }
            swaps
        });
        Self {
            stop,
            rearm,
            thread,
        }
    }

    /// Stops the thread; how many exchanges it made.
    fn finish(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// Calls `call(i)` at least [`CALLS`] times, and on until [`MIN_OK`] calls
/// succeeded (a write succeeds only when the whole check saw the real
/// directory, which the swapper makes rare), at most [`MAX_CALLS`] times.
async fn run_calls<F: Future<Output = ToolResult>>(
    swapper: &Swapper,
    mut call: impl FnMut(usize) -> F,
) -> Outcomes {
    let mut outcomes = Outcomes::default();
    let mut i = 0;
    while i < MAX_CALLS && (i < CALLS || outcomes.ok < MIN_OK) {
        outcomes.add(call(i).await);
        swapper.rearm.store(true, Ordering::Relaxed);
        i += 1;
    }
    outcomes
}

/// What the calls did: how many succeeded and the error kinds of the rest.
#[derive(Default, Debug)]
struct Outcomes {
    ok: usize,
    /// Per error kind: how many, and the last message.
    errors: BTreeMap<String, (usize, String)>,
}

impl Outcomes {
    fn add(&mut self, result: ToolResult) {
        match result.error {
            None => self.ok += 1,
            Some(error) => {
                let entry = self.errors.entry(format!("{:?}", error.kind)).or_default();
                entry.0 += 1;
                entry.1 = error.message;
            }
        }
    }
}

fn assert_untouched(outside: &Path, before: &BTreeMap<PathBuf, Vec<u8>>, outcomes: &Outcomes) {
    let after = snapshot(outside);
    let changed: Vec<_> = after
        .iter()
        .filter(|(path, content)| before.get(*path) != Some(*content))
        .map(|(path, _)| path.clone())
        .collect();
    assert!(
        changed.is_empty(),
        "{} files outside the workspace were created or modified ({outcomes:?}): {changed:?}",
        changed.len()
    );
    assert_eq!(after.len(), before.len());
}

/// `ws/sub` flips between a real directory and a symlink to `outside`.
#[tokio::test]
async fn a_directory_swapped_for_a_symlink_never_redirects_writes() {
    let s = setup();
    fs::create_dir(s.ws.join("sub")).unwrap();
    std::os::unix::fs::symlink(&s.outside, s.ws.join(".swap")).unwrap();
    let before = snapshot(&s.outside);
    let _serial = SERIAL.lock().await;
    let swapper = Swapper::start(s.ws.join("sub"), s.ws.join(".swap"), || {});

    let (write_file, replace) = (WriteFile::new(), Replace::new());
    let outcomes = run_calls(&swapper, |i| {
        let (write_file, replace, s) = (&write_file, &replace, &s);
        async move {
            if i % 2 == 0 {
                let args = json!({"file_path": format!("sub/w{i}.txt"), "content": "w\n"});
                write_file.execute(args, &s.ctx).await
            } else {
                // An empty old_string creates the file.
                let args = json!({"file_path": s.ws.join(format!("sub/r{i}.txt")),
                    "old_string": "", "new_string": "r\n", "instruction": "create"});
                replace.execute(args, &s.ctx).await
            }
        }
    })
    .await;
    let swaps = swapper.finish();

    assert!(swaps > 0, "the swapper never ran");
    assert_untouched(&s.outside, &before, &outcomes);
    assert!(
        outcomes.ok >= MIN_OK,
        "too few writes succeeded: {outcomes:?}"
    );
    // A write that found the symlink was refused as leaving the workspace.
    let allowed = ["PathNotInWorkspace", "NotADirectory", "NotFound"];
    for kind in outcomes.errors.keys() {
        assert!(allowed.contains(&kind.as_str()), "{outcomes:?}");
    }
}

/// `ws/target.txt` flips between a real file and a symlink to a file
/// outside, which must keep its content.
#[tokio::test]
async fn a_file_swapped_for_a_symlink_never_redirects_writes() {
    let s = setup();
    let secret = s.outside.join("secret.txt");
    fs::write(&secret, "outside\n").unwrap();
    fs::write(s.ws.join("target.txt"), "inside\n").unwrap();
    std::os::unix::fs::symlink(&secret, s.ws.join(".swap")).unwrap();
    let before = snapshot(&s.outside);
    let _serial = SERIAL.lock().await;
    let (file, link) = (s.ws.join("target.txt"), s.ws.join(".swap"));
    let rearm = {
        let (file, link, secret) = (file.clone(), link.clone(), secret.clone());
        move || {
            let _ = fs::remove_file(&file);
            let _ = fs::remove_file(&link);
            fs::write(&file, "inside\n").unwrap();
            std::os::unix::fs::symlink(&secret, &link).unwrap();
        }
    };
    let swapper = Swapper::start(file, link, rearm);

    let (write_file, replace) = (WriteFile::new(), Replace::new());
    let outcomes = run_calls(&swapper, |i| {
        let (write_file, replace, s) = (&write_file, &replace, &s);
        async move {
            if i % 2 == 0 {
                let args = json!({"file_path": "target.txt", "content": format!("w{i}\n")});
                write_file.execute(args, &s.ctx).await
            } else {
                // Whatever the file holds now (the inside or the outside
                // text) is edited.
                let args = json!({"file_path": s.ws.join("target.txt"),
                    "old_string": "\n", "new_string": "!\n", "instruction": "edit"});
                replace.execute(args, &s.ctx).await
            }
        }
    })
    .await;
    let swaps = swapper.finish();

    assert!(swaps > 0, "the swapper never ran");
    assert_untouched(&s.outside, &before, &outcomes);
    assert_eq!(fs::read_to_string(&secret).unwrap(), "outside\n");
    assert!(
        outcomes.ok >= MIN_OK,
        "too few writes succeeded: {outcomes:?}"
    );
}
