//! Running shell commands with real bash and recording what ran.
//!
//! Every case gets a fresh directory `cases/N/` (cwd `a/b/work`, so `../x`
//! and `../../x` stay inside; `HOME` and `TMPDIR` inside too). `PATH` is
//! only the shim directory. `BASH_ENV` turns on `xtrace` (to a log, `PS4`
//! of control bytes) in every bash started, the nested `bash -c` ones too.
//! When bubblewrap works, bash runs with the whole file system read-only
//! except the sandbox's directory: a corpus mistake cannot harm the machine.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::shims;
use super::trace::{self, Recorded, Source};

/// Seconds one `bash -c` may run (corpus), and one batch (fuzz).
const CASE_TIMEOUT: &str = "10";
const BATCH_TIMEOUT: &str = "180";

/// What one case did.
#[derive(Debug, Clone)]
pub struct Run {
    pub commands: Vec<Recorded>,
    /// Files that exist in the case's directory afterwards (it starts with
    /// directories only), relative to it.
    pub written: Vec<String>,
    /// Bash's stdout and stderr (corpus runs only).
    pub output: String,
    pub timed_out: bool,
}

pub struct Sandbox {
    base: tempfile::TempDir,
    shims: PathBuf,
    env_file: PathBuf,
    worker: PathBuf,
    bwrap: bool,
    next: AtomicUsize,
}

struct CaseDir {
    root: PathBuf,
    log: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let base = tempfile::Builder::new()
            .prefix("gd-shell-diff")
            .tempdir()
            .expect("tempdir");
        let shims = base.path().join("shims");
        shims::install(&shims, &real_bash()).expect("install shims");
        let env_file = base.path().join("bash_env.sh");
        fs::write(
            &env_file,
            // `bash -x` would trace these lines: stop that first, quietly.
            "{ set +x; } 2>/dev/null\nexec 99>>\"$GD_TRACE\"\nBASH_XTRACEFD=99\nPS4=$'\\x1e\\x1f'\nset -x\n",
        )
        .expect("write BASH_ENV");
        let worker = base.path().join("worker.sh");
        fs::write(&worker, WORKER.replace("CASE_SECONDS", "20")).expect("write worker");
        fs::create_dir(base.path().join("cases")).expect("cases dir");
        let bwrap = std::env::var_os("GD_SHELL_NO_BWRAP").is_none()
            && Command::new(host_program("bwrap"))
                .args(["--ro-bind", "/", "/", "--dev", "/dev", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        Sandbox {
            base,
            shims,
            env_file,
            worker,
            bwrap,
            next: AtomicUsize::new(0),
        }
    }

    pub fn sandboxed(&self) -> bool {
        self.bwrap
    }

    fn case_dir(&self) -> CaseDir {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let root = self.base.path().join("cases").join(n.to_string());
        for sub in ["a/b/work", "home", "tmp"] {
            fs::create_dir_all(root.join(sub)).expect("case dir");
        }
        let log = root.with_extension("log");
        fs::write(&log, "").expect("log");
        CaseDir { root, log }
    }

    /// `timeout [bwrap ...] program`, with the sandbox's environment.
    fn command(&self, timeout: &str, cwd: &Path, program: &[&str]) -> Command {
        let mut argv: Vec<String> = vec!["-k".into(), "2".into(), timeout.into()];
        if self.bwrap {
            let base = self.base.path().to_string_lossy().into_owned();
            argv.push(host_program("bwrap").to_string_lossy().into_owned());
            for a in ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"] {
                argv.push(a.into());
            }
            argv.extend(["--bind".into(), base.clone(), base]);
            argv.extend(["--unshare-pid".into(), "--die-with-parent".into()]);
            argv.extend(["--chdir".into(), cwd.to_string_lossy().into_owned()]);
        }
        argv.extend(program.iter().map(|s| s.to_string()));
        let mut cmd = Command::new(host_program("timeout"));
        cmd.args(argv)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", &self.shims)
            .env("LC_ALL", "C.UTF-8");
        cmd
    }

    /// Runs `bash -c case` as the shell tool does, and records it.
    pub fn run(&self, case: &str) -> Run {
        let dir = self.case_dir();
        let work = dir.root.join("a/b/work");
        let mut cmd = self.command(CASE_TIMEOUT, &work, &["bash", "-c", case]);
        cmd.env("HOME", dir.root.join("home"))
            .env("TMPDIR", dir.root.join("tmp"))
            .env("BASH_ENV", &self.env_file)
            .env("GD_TRACE", &dir.log)
            .stdin(Stdio::null());
        // `output` reads to EOF: it also waits for background jobs that
        // still hold stdout, so their commands are in the log.
        let out = cmd.output().expect("run timeout/bash");
        let log = fs::read_to_string(&dir.log).unwrap_or_default();
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        Run {
            commands: trace::parse(&log),
            written: written(&dir.root),
            output,
            timed_out: out.status.code() == Some(124) || out.status.code() == Some(137),
        }
    }

    /// Runs many cases in one bash worker, each in a subshell (`eval` in
    /// `( ... )`, which parses and runs the text as `bash -c` does), for
    /// speed: a fork per case instead of an exec. No per-case timeout: the
    /// fuzz grammar has no unbounded loop.
    pub fn run_batch(&self, cases: &[String]) -> Vec<Run> {
        let dirs: Vec<CaseDir> = cases.iter().map(|_| self.case_dir()).collect();
        let base = self.base.path().to_path_buf();
        let worker = self.worker.to_string_lossy().into_owned();
        let mut cmd = self.command(
            BATCH_TIMEOUT,
            &base,
            &["bash", "--norc", "--noprofile", &worker],
        );
        cmd.env("GD_BASH_ENV", &self.env_file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn worker");
        let mut stdin = child.stdin.take().expect("stdin");
        let input: Vec<u8> = dirs
            .iter()
            .zip(cases)
            .flat_map(|(d, c)| {
                let mut v = d.root.to_string_lossy().into_owned().into_bytes();
                v.push(0);
                v.extend(c.as_bytes().iter().filter(|&&b| b != 0));
                v.push(0);
                v
            })
            .collect();
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let out = child.wait_with_output().expect("worker");
        feeder.join().expect("feeder");
        // One exit status per case; 137 = killed by the watchdog.
        let statuses: Vec<bool> = out
            .stdout
            .split(|&b| b == 0)
            .take(cases.len())
            .map(|st| st == b"137")
            .collect();
        let done = out.stdout.iter().filter(|&&b| b == 0).count();
        assert_eq!(
            done,
            cases.len(),
            "the bash worker stopped early ({:?})",
            out.status
        );
        dirs.iter()
            .zip(statuses)
            .map(|(d, timed_out)| {
                let log = fs::read_to_string(&d.log).unwrap_or_default();
                let mut commands = trace::parse(&log);
                // The first record is the worker's own `eval '<case>'`.
                if commands
                    .first()
                    .is_some_and(|c| c.from == Source::Trace && c.name == "eval")
                {
                    commands.remove(0);
                }
                let run = Run {
                    commands,
                    written: written(&d.root),
                    output: String::new(),
                    timed_out,
                };
                let _ = fs::remove_dir_all(&d.root);
                let _ = fs::remove_file(&d.log);
                run
            })
            .collect()
    }
}

/// Reads `dir\0case\0` pairs; runs each case in a subshell in its own
/// directory with xtrace on; answers one NUL per case.
const WORKER: &str = r#"export BASH_ENV="$GD_BASH_ENV"
unset GD_BASH_ENV
# Job control: each case is its own process group, so the watchdog can
# kill all of it. The watchdog waits on a FIFO nobody writes (`read -t`).
set -m
[ -p "$PWD/never" ] || /usr/bin/mkfifo "$PWD/never" || exit 1
exec 200<>"$PWD/never"
# The cases' output goes to one drain for the whole batch (a pipe per case
# costs two forks). The drain holds the worker's stdout until every writer,
# background jobs of the cases included, has closed it: the test reads the
# logs only after that, so late commands are still in them.
exec 5> >(/bin/cat >/dev/null; :)
while IFS= read -r -d '' __gd_dir && IFS= read -r -d '' __gd_case; do
  export GD_TRACE="$__gd_dir.log" HOME="$__gd_dir/home" TMPDIR="$__gd_dir/tmp"
  cd "$__gd_dir/a/b/work" || exit 1
  ( exec 99>>"$GD_TRACE" 200<&-; BASH_XTRACEFD=99; PS4=$'\x1e\x1f'; unset __gd_dir; set -x; eval "$__gd_case" ) </dev/null >&5 2>&5 &
  __gd_pid=$!
  ( read -r -t CASE_SECONDS -u 200; kill -KILL -- -"$__gd_pid" ) >/dev/null 2>&1 &
  __gd_wd=$!
  wait "$__gd_pid"
  __gd_st=$?
  kill -KILL -- -"$__gd_wd" 2>/dev/null
  wait "$__gd_wd" 2>/dev/null
  printf '%s\0' "$__gd_st"
done
"#;

/// A program from the test process's `PATH` (the cases' `PATH` has only
/// the shims, and `Command` resolves with the child's `PATH`).
fn host_program(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(name))
}

fn real_bash() -> PathBuf {
    ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("bash is installed")
}

/// Every file (not directory) under `root`, relative.
fn written(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                _ => out.push(
                    path.strip_prefix(root)
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .into_owned(),
                ),
            }
        }
    }
    out.sort();
    out
}
