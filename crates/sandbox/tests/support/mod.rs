//! What the tests against the real bubblewrap share: finding it (a test fails when it cannot
//! start, unless `GD_SANDBOX_TESTS=skip`), a workspace with a folder outside it and a fake home,
//! and running a shell script in the sandbox the way the app does (its own session, stdin
//! `/dev/null`, a deadline).

#![allow(dead_code)]

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gd_sandbox::{Network, Policy, Sandbox};

/// The sandbox, or None when the tests are told to skip (`GD_SANDBOX_TESTS=skip`); a machine
/// where it cannot start fails the test with the reason.
pub fn sandbox() -> Option<Sandbox> {
    match Sandbox::detect() {
        Ok(s) => Some(s),
        Err(why) if std::env::var("GD_SANDBOX_TESTS").as_deref() == Ok("skip") => {
            eprintln!("skipped (GD_SANDBOX_TESTS=skip): {why}");
            None
        }
        Err(why) => {
            panic!("the sandbox cannot start here (set GD_SANDBOX_TESTS=skip to skip): {why}")
        }
    }
}

/// `sandbox()` or return from the test.
#[macro_export]
macro_rules! sandbox_or_skip {
    () => {
        match support::sandbox() {
            Some(s) => s,
            None => return,
        }
    };
}

/// A tree outside `/tmp` (the sandbox's `/tmp` is its own, so a folder there would simply not
/// be visible; here the outside folder is visible and read-only, the harder case):
/// `root/ws` (the workspace, writable), `root/outside` (with `file`), `root/home` (a fake home
/// with `.ssh/id_rsa` and `.gemini/oauth_creds.json`).
/// Where the fixtures live: the test target's temporary folder, unless it is under `/tmp` (a
/// checkout in `/tmp`), which the sandbox replaces with its own: then `/var/tmp`, so that
/// "outside the workspace" means a folder the sandbox shows read-only, not one it hides.
pub fn visible_base() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let real = std::fs::canonicalize(&target).unwrap_or(target);
    if real.starts_with("/tmp") {
        PathBuf::from("/var/tmp")
    } else {
        real
    }
}

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub ws: PathBuf,
    pub outside: PathBuf,
    pub home: PathBuf,
}

pub const SSH_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- test key";
pub const OAUTH: &str = "{\"refresh_token\": \"test-refresh-token\"}";

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("gd-sandbox-")
            .tempdir_in(visible_base())
            .expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("ws");
        let outside = root.join("outside");
        let home = root.join("home");
        for d in [&ws, &outside, &home.join(".ssh"), &home.join(".gemini")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(outside.join("file"), "original\n").unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), SSH_KEY).unwrap();
        std::fs::write(home.join(".gemini/oauth_creds.json"), OAUTH).unwrap();
        Self {
            _dir: dir,
            root,
            ws,
            outside,
            home,
        }
    }

    /// Writable: the workspace; no network; the fake home.
    pub fn policy(&self) -> Policy {
        Policy {
            extra_writable: Vec::new(),
            writable: vec![self.ws.clone()],
            network: Network::None,
            home: Some(self.home.clone()),
        }
    }

    /// Runs `script` with `sh -c` in the workspace under the fixture's policy.
    pub fn run(&self, script: &str) -> Run {
        run(&self.policy(), &self.ws, script, &self.env())
    }

    /// The environment the commands get: the fake home, and the test's paths.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("HOME".into(), self.home.display().to_string()),
            ("W".into(), self.ws.display().to_string()),
            ("O".into(), self.outside.display().to_string()),
            ("ROOT".into(), self.root.display().to_string()),
            ("GIT_AUTHOR_NAME".into(), "t".into()),
            ("GIT_AUTHOR_EMAIL".into(), "t@example.com".into()),
            ("GIT_COMMITTER_NAME".into(), "t".into()),
            ("GIT_COMMITTER_EMAIL".into(), "t@example.com".into()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
            ("LC_ALL".into(), "C".into()),
        ]
    }
}

/// What a sandboxed run did.
#[derive(Debug)]
pub struct Run {
    /// None: killed by a signal (then `signal`).
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// stdout then stderr.
    pub output: String,
}

impl Run {
    pub fn failed(&self) -> bool {
        self.code != Some(0)
    }
}

/// Spawns `sh -c script` in the sandbox as the app does (new session, stdin /dev/null), with
/// `env` as its whole environment; returns the child (the bwrap process, leader of its group).
pub fn spawn(
    policy: &Policy,
    cwd: &Path,
    script: &str,
    env: &[(String, String)],
) -> std::process::Child {
    let sandbox = sandbox().expect("sandbox");
    let args = [OsString::from("-c"), OsString::from(script)];
    let prepared = sandbox
        .prepare(policy, Path::new("/bin/sh"), &args, cwd)
        .expect("prepare");
    let mut command = Command::new(prepared.program());
    command
        .args(prepared.args())
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    prepared.configure(&mut command);
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn().expect("spawn bwrap")
}

/// Runs `sh -c script` in the sandbox and waits (60 s at most, then kills its group).
pub fn run(policy: &Policy, cwd: &Path, script: &str, env: &[(String, String)]) -> Run {
    use std::os::unix::process::ExitStatusExt;
    let mut child = spawn(policy, cwd, script, env);
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            // SAFETY: killpg has no memory-safety preconditions.
            unsafe {
                libc::killpg(child.id() as i32, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let output = t1.join().unwrap() + &t2.join().unwrap();
    Run {
        code: status.code(),
        signal: status.signal(),
        output,
    }
}

/// Python 3 from the system (not a user's shim, which the fake home would break).
pub const PYTHON: &str = "/usr/bin/python3";

/// Whether `path` exists (without following a final symlink).
pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Runs git on the host (setting up fixtures).
pub fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdout(Stdio::null())
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?} in {}", dir.display());
}

/// A repository at `dir` with one commit.
pub fn repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("README"), "hello\n").unwrap();
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-q", "-m", "first"]);
}
