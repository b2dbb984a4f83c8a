//! Finding a bubblewrap that can start a sandbox on this machine, and saying why not.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::bwrap::Prepared;
use crate::error::SandboxError;
use crate::policy::Policy;

/// A bubblewrap that was seen to start a sandbox here.
#[derive(Debug, Clone)]
pub struct Sandbox {
    pub(crate) bwrap: PathBuf,
}

/// Why no sandbox can start here, and what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason} {fix}")]
pub struct Unavailable {
    /// What failed ("bubblewrap (bwrap) is not installed", "this kernel does not allow
    /// unprivileged user namespaces (kernel.unprivileged_userns_clone = 0)", AppArmor's
    /// restriction on Ubuntu 24.04, a container without the capability...), with bwrap's own
    /// message where it printed one.
    pub reason: String,
    /// What to do ("Install it: sudo apt install bubblewrap", the sysctl, the AppArmor profile).
    pub fix: String,
}

/// What the machine says about user namespaces, read from `/proc/sys` (None: no such setting
/// on this kernel) and the container markers: the inputs of [`classify`] besides bwrap's words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFacts {
    /// `kernel.unprivileged_userns_clone` (Debian and Ubuntu kernels).
    pub unprivileged_userns_clone: Option<i64>,
    /// `user.max_user_namespaces`.
    pub max_user_namespaces: Option<i64>,
    /// `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 23.10 and later).
    pub apparmor_restrict_unprivileged_userns: Option<i64>,
    /// `/.dockerenv`, `/run/.containerenv` or `$container` present.
    pub in_container: bool,
}

impl HostFacts {
    /// This machine's.
    pub fn read() -> Self {
        let sysctl = |path: &str| {
            std::fs::read_to_string(path)
                .ok()
                .and_then(|v| v.trim().parse().ok())
        };
        Self {
            unprivileged_userns_clone: sysctl("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: sysctl("/proc/sys/user/max_user_namespaces"),
            apparmor_restrict_unprivileged_userns: sysctl(
                "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            ),
            in_container: Path::new("/.dockerenv").exists()
                || Path::new("/run/.containerenv").exists()
                || std::env::var_os("container").is_some_and(|v| !v.is_empty()),
        }
    }
}

/// What the trial sandbox runs: it prints [`TRIAL_OK`] only under the seccomp filter with
/// `no_new_privs`.
const TRIAL_SCRIPT: &str = "grep -q '^Seccomp:[[:space:]]*2' /proc/self/status \
    && grep -q '^NoNewPrivs:[[:space:]]*1' /proc/self/status \
    && echo gd-sandbox-ok \
    || { echo 'the trial command ran without the seccomp filter' >&2; exit 1; }";
const TRIAL_OK: &str = "gd-sandbox-ok";

/// Names the bubblewrap to use instead of the one on `PATH` (a packager's own build; tests point
/// it at a missing or broken one to see the refusal).
pub const BWRAP_ENV: &str = "GEMINI_DESKTOP_BWRAP";

/// How long the trial sandbox may take (milliseconds when it works).
const TRIAL_TIMEOUT: Duration = Duration::from_secs(20);
const TURN_OFF: &str = "or turn the sandbox off knowingly (security.toolSandboxing): commands then run with all your rights.";

impl Sandbox {
    /// Finds `bwrap` ([`BWRAP_ENV`] when set, else on `PATH`, then `/usr/bin/bwrap`) and starts
    /// one trivial sandbox with the same options real commands get, so a machine where it cannot
    /// work is found here, once, with the reason. The result is cached for the process.
    pub fn detect() -> Result<Sandbox, Unavailable> {
        static DETECTED: OnceLock<Result<Sandbox, Unavailable>> = OnceLock::new();
        DETECTED
            .get_or_init(|| {
                let chosen = std::env::var_os(BWRAP_ENV)
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from);
                let result = match chosen.or_else(find_bwrap) {
                    Some(bwrap) => Sandbox::detect_with(&bwrap),
                    None => Err(not_installed(None)),
                };
                match &result {
                    Ok(sandbox) => {
                        tracing::debug!(bwrap = %sandbox.bwrap.display(), "sandbox available")
                    }
                    Err(why) => tracing::warn!(%why, "sandbox unavailable"),
                }
                result
            })
            .clone()
    }

    /// [`Sandbox::detect`] with this bubblewrap, not cached (tests point it at a missing or fake
    /// one).
    pub fn detect_with(bwrap: &Path) -> Result<Sandbox, Unavailable> {
        if !crate::seccomp::SUPPORTED {
            return Err(Unavailable {
                reason: "The sandbox runs on Linux, on x86_64 and aarch64 only.".to_owned(),
                fix: format!("On this system, {}", TURN_OFF.trim_start_matches("or ")),
            });
        }
        let sandbox = Sandbox {
            bwrap: bwrap.to_path_buf(),
        };
        // The trial proves the filter and no_new_privs are in force (a bubblewrap that cannot
        // apply them, or something else named bwrap, does not pass).
        let args = ["-c".into(), TRIAL_SCRIPT.into()];
        let prepared = sandbox
            .prepare(&Policy::default(), Path::new("sh"), &args, Path::new("/"))
            .map_err(|e| Unavailable {
                reason: format!("The sandbox could not be prepared: {e}."),
                fix: format!("Report this; {TURN_OFF}"),
            })?;
        match trial(&prepared) {
            Ok((true, _)) => Ok(sandbox),
            Ok((false, stderr)) => Err(classify(&stderr, &HostFacts::read())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not_installed(Some(bwrap))),
            Err(e) => Err(Unavailable {
                reason: format!("bubblewrap ({}) could not be run: {e}.", bwrap.display()),
                fix: format!(
                    "Check that it is an executable bubblewrap (`bwrap --version`), {TURN_OFF}"
                ),
            }),
        }
    }

    /// The bubblewrap this sandbox runs.
    pub fn bwrap(&self) -> &Path {
        &self.bwrap
    }

    /// `program args...` run in `cwd` under `policy`: what to spawn instead.
    ///
    /// Errors: a writable folder that is not an absolute, existing folder (or lies under
    /// `/proc`, `/dev`, `/sys`), a relative `cwd`, a protected part that is a symbolic link (it
    /// could be replaced, so it cannot be kept read-only), the filter's memfd.
    ///
    /// Host-side effect, the only one: a protected part of a writable folder that does not
    /// exist yet (`.gemini`; a git folder's `hooks`, or its `config`; the `core.hooksPath`
    /// folder; `config.worktree` when `extensions.worktreeConfig` is on) is created empty on
    /// the host first, so that it can be mounted read-only and the command cannot create it.
    /// It stays after the command (an empty folder, which git ignores).
    pub fn prepare(
        &self,
        policy: &Policy,
        program: &Path,
        args: &[std::ffi::OsString],
        cwd: &Path,
    ) -> Result<Prepared, SandboxError> {
        crate::bwrap::prepare(&self.bwrap, policy, program, args, cwd)
    }
}

/// `bwrap` on `PATH`, else `/usr/bin/bwrap`, if executable.
fn find_bwrap() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("bwrap"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    on_path
        .into_iter()
        .filter(|p| p.is_absolute())
        .chain([PathBuf::from("/usr/bin/bwrap")])
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs the trial sandbox: (it printed the token and exited 0, its stderr).
fn trial(prepared: &Prepared) -> std::io::Result<(bool, String)> {
    let mut command = Command::new(prepared.program());
    command
        .args(prepared.args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    prepared.configure(&mut command);
    let mut child = command.spawn()?;
    // The outputs are short; read them on threads so a chatty failure cannot block it.
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(64 * 1024).read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > TRIAL_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let printed = stdout.join().unwrap_or_default();
    let text = stderr.join().unwrap_or_default();
    match status {
        Some(status) if status.success() && printed.trim() != TRIAL_OK => Ok((
            false,
            format!(
                "bwrap exited 0, but the trial command did not report running under the sandbox. {text}"
            ),
        )),
        Some(status) => Ok((status.success(), text)),
        None => Ok((
            false,
            format!(
                "the trial sandbox did not finish in {} s. {text}",
                TRIAL_TIMEOUT.as_secs()
            ),
        )),
    }
}

fn not_installed(at: Option<&Path>) -> Unavailable {
    let reason = match at {
        Some(path) => format!("bubblewrap (bwrap) is not installed at {}.", path.display()),
        None => {
            "bubblewrap (bwrap) is not installed (looked on PATH and at /usr/bin/bwrap).".to_owned()
        }
    };
    Unavailable {
        reason,
        fix: format!(
            "Install it: `sudo apt install bubblewrap` (Debian, Ubuntu), `sudo dnf install \
             bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch); {TURN_OFF}"
        ),
    }
}

/// Why bubblewrap failed, from what it printed (`stderr`) and what the machine says (`facts`).
/// Pure: the same inputs always give the same answer.
pub fn classify(stderr: &str, facts: &HostFacts) -> Unavailable {
    let said = said(stderr);
    let lower = stderr.to_ascii_lowercase();
    let namespace_refused = lower.contains("operation not permitted")
        || lower.contains("permission denied")
        || lower.contains("no permissions to creat");
    let about_namespaces = namespace_refused || lower.contains("namespace");
    if facts.max_user_namespaces == Some(0) && about_namespaces {
        return Unavailable {
            reason: format!(
                "This system allows no user namespaces (user.max_user_namespaces = 0), which the sandbox needs.{said}"
            ),
            fix: format!(
                "Allow them: `sudo sysctl -w user.max_user_namespaces=15000` (and put \
                 `user.max_user_namespaces = 15000` in /etc/sysctl.d/99-userns.conf to keep it); {TURN_OFF}"
            ),
        };
    }
    if facts.unprivileged_userns_clone == Some(0) && about_namespaces {
        return Unavailable {
            reason: format!(
                "This kernel does not allow unprivileged user namespaces \
                 (kernel.unprivileged_userns_clone = 0), which the sandbox needs.{said}"
            ),
            fix: format!(
                "Allow them: `sudo sysctl -w kernel.unprivileged_userns_clone=1` (and put \
                 `kernel.unprivileged_userns_clone = 1` in /etc/sysctl.d/99-userns.conf to keep \
                 it); {TURN_OFF}"
            ),
        };
    }
    if facts.apparmor_restrict_unprivileged_userns == Some(1) && namespace_refused {
        return Unavailable {
            reason: format!(
                "AppArmor does not let bubblewrap use user namespaces \
                 (kernel.apparmor_restrict_unprivileged_userns = 1, the default since Ubuntu 24.04).{said}"
            ),
            fix: format!(
                "Give bwrap an AppArmor profile that allows them: create \
                 /etc/apparmor.d/bwrap with `abi <abi/4.0>, include <tunables/global> profile bwrap \
                 /usr/bin/bwrap flags=(unconfined) {{ userns, include if exists <local/bwrap> }}` \
                 and run `sudo apparmor_parser -r /etc/apparmor.d/bwrap`; or allow them for all \
                 programs: `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; {TURN_OFF}"
            ),
        };
    }
    if namespace_refused {
        let where_ = if facts.in_container {
            "This looks like a container that does not allow creating namespaces"
        } else {
            "Creating the sandbox's namespaces or mounts was refused (as in a container, or under \
             another sandbox, that does not allow it)"
        };
        return Unavailable {
            reason: format!("{where_}.{said}"),
            fix: format!(
                "Run the container with user namespaces allowed (Docker: `--security-opt \
                 seccomp=unconfined --security-opt apparmor=unconfined`, or `--privileged`; \
                 Podman: `--security-opt unmask=/proc/*` may be needed for /proc), {TURN_OFF}"
            ),
        };
    }
    Unavailable {
        reason: format!("bubblewrap could not start a sandbox.{said}"),
        fix: format!(
            "Run `bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent true` \
             in a terminal to see why, {TURN_OFF}"
        ),
    }
}

/// ` bwrap said: "…".` (trimmed, at most 500 characters), or nothing.
fn said(stderr: &str) -> String {
    let text = stderr.trim();
    if text.is_empty() {
        return String::new();
    }
    let mut short: String = text.chars().take(500).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    format!(" bwrap said: \"{short}\".")
}

#[cfg(test)]
mod tests;
