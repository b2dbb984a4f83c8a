//! Where the app binary, the tools and the artifacts are.

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The directory of the running executable's profile: `<target>/<profile>` (tests run from
/// `<target>/<profile>/deps`, examples from `<target>/<profile>/examples`).
fn profile_dir() -> Result<PathBuf> {
    let exe = env::current_exe().context("locate the running test executable")?;
    let deps = exe
        .parent()
        .context("test executable has no parent directory")?;
    let profile = if deps
        .file_name()
        .is_some_and(|name| name == "deps" || name == "examples")
    {
        deps.parent().context("deps directory has no parent")?
    } else {
        deps
    };
    Ok(profile.to_path_buf())
}

/// Cargo's target directory: `CARGO_TARGET_DIR` if set, else the nearest ancestor of the test
/// executable holding the `CACHEDIR.TAG` cargo writes at the root of every target directory.
pub fn target_dir() -> Result<PathBuf> {
    if let Some(dir) = env::var_os("CARGO_TARGET_DIR") {
        let dir = PathBuf::from(dir);
        if dir.is_absolute() {
            return Ok(dir);
        }
    }
    let profile = profile_dir()?;
    Ok(profile
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .unwrap_or(&profile)
        .to_path_buf())
}

/// The `gemini-desktop` binary under test: `GD_E2E_APP`, or the one cargo built in the same
/// target directory and profile as this test.
pub fn app_binary() -> Result<PathBuf> {
    let (path, origin) = match env::var_os("GD_E2E_APP") {
        Some(path) => (PathBuf::from(path), "GD_E2E_APP"),
        None => (
            profile_dir()?.join(format!("gemini-desktop{}", env::consts::EXE_SUFFIX)),
            "the test's target directory",
        ),
    };
    if path.is_file() {
        warn_if_stale(&path);
    } else {
        bail!(
            "the app binary {} (from {origin}) does not exist: build the UI and the app before \
             running the end-to-end tests:\n    npm --prefix ui ci && npm --prefix ui run build \
             && cargo build -p gemini-desktop\n(use the same profile as the tests, or set \
             GD_E2E_APP to the binary)",
            path.display()
        );
    }
    Ok(path)
}

/// Warns (on stderr, which libtest shows for failing tests) when a source of the app is newer
/// than the binary: the tests would then exercise an old build.
fn warn_if_stale(binary: &Path) {
    let Ok(built) = binary.metadata().and_then(|meta| meta.modified()) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sources = [
        "src-tauri/src",
        "src-tauri/build.rs",
        "tauri.conf.json",
        "ui/dist",
    ];
    let newer: Vec<&str> = sources
        .into_iter()
        .filter(|source| newest_mtime(&root.join(source)).is_some_and(|mtime| mtime > built))
        .collect();
    if !newer.is_empty() {
        eprintln!(
            "gd-e2e: warning: {} changed after {} was built; rebuild with `npm --prefix ui run \
             build && cargo build -p gemini-desktop`",
            newer.join(", "),
            binary.display()
        );
    }
}

fn newest_mtime(path: &Path) -> Option<std::time::SystemTime> {
    let meta = path.metadata().ok()?;
    let own = meta.modified().ok();
    if !meta.is_dir() {
        return own;
    }
    std::fs::read_dir(path)
        .ok()?
        .flatten()
        .filter_map(|entry| newest_mtime(&entry.path()))
        .chain(own)
        .max()
}

/// An external program the harness needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tool {
    pub name: &'static str,
    /// Environment variable naming the program's path explicitly.
    pub env: &'static str,
    /// How to install it.
    pub install: &'static str,
}

pub(crate) const TAURI_DRIVER: Tool = Tool {
    name: "tauri-driver",
    env: "GD_E2E_TAURI_DRIVER",
    install: "cargo install tauri-driver --locked",
};

pub(crate) const WEBKIT_DRIVER: Tool = Tool {
    name: "WebKitWebDriver",
    env: "GD_E2E_WEBKIT_DRIVER",
    install: "apt-get install webkit2gtk-driver",
};

pub(crate) const XVFB: Tool = Tool {
    name: "Xvfb",
    env: "GD_E2E_XVFB",
    install: "apt-get install xvfb (or set GD_E2E_DISPLAY to an existing X display)",
};

pub(crate) const DBUS_DAEMON: Tool = Tool {
    name: "dbus-daemon",
    env: "GD_E2E_DBUS_DAEMON",
    install: "apt-get install dbus-daemon (Debian 12: package `dbus-daemon`)",
};

pub(crate) const GNOME_KEYRING: Tool = Tool {
    name: "gnome-keyring-daemon",
    env: "GD_E2E_GNOME_KEYRING",
    install: "apt-get install gnome-keyring",
};

pub(crate) const DBUS_SEND: Tool = Tool {
    name: "dbus-send",
    env: "GD_E2E_DBUS_SEND",
    install: "apt-get install dbus-bin",
};

/// Finds a tool that the harness can do without.
pub(crate) fn find_optional(tool: Tool) -> Option<PathBuf> {
    find_tool(tool)
}

/// Finds each tool, or fails with one message naming every missing tool and how to install it.
pub(crate) fn find_tools<const N: usize>(tools: [Tool; N]) -> Result<[PathBuf; N]> {
    let found = tools.map(find_tool);
    let missing: Vec<String> = tools
        .iter()
        .zip(&found)
        .filter(|(_, path)| path.is_none())
        .map(|(tool, _)| {
            format!(
                "  - `{}`: install it with `{}`, or set {} to its path",
                tool.name, tool.install, tool.env
            )
        })
        .collect();
    if !missing.is_empty() {
        bail!(
            "the end-to-end tests need tools that were not found on PATH:\n{}",
            missing.join("\n")
        );
    }
    Ok(found.map(|path| path.expect("checked above")))
}

fn find_tool(tool: Tool) -> Option<PathBuf> {
    if let Some(path) = env::var_os(tool.env) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    let mut dirs: Vec<PathBuf> = env::var_os("PATH")
        .map(|path| env::split_paths(&path).collect())
        .unwrap_or_default();
    // `cargo install` puts binaries there, and it is not always on PATH (e.g. under sudo).
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")));
    if let Some(cargo_home) = cargo_home {
        dirs.push(cargo_home.join("bin"));
    }
    dirs.into_iter()
        .map(|dir| dir.join(OsString::from(tool.name)))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
