//! The app under test and the WebDriver session driving it: launching it (display, driver,
//! isolated home, keyring), restarting and closing it. Reading and driving its page is in
//! `page.rs`.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::dbus::SessionBus;
use crate::keyring::Keyring;
use crate::paths::{
    DBUS_DAEMON, TAURI_DRIVER, WEBKIT_DRIVER, XVFB, app_binary, find_optional, find_tools,
    target_dir,
};
use crate::process::GroupChild;
use crate::xvfb::Xvfb;
use crate::{STARTUP_TIMEOUT, UI_TIMEOUT};

/// The X display the app is shown on.
#[derive(Debug)]
enum Display {
    /// A private Xvfb started by the harness.
    Own(Xvfb),
    /// An existing display named by `GD_E2E_DISPLAY`.
    External(String),
}

impl Display {
    fn name(&self) -> &str {
        match self {
            Display::Own(xvfb) => xvfb.display(),
            Display::External(name) => name,
        }
    }
}

/// Trusts the folders among `args` in `home`'s `~/.gemini/trustedFolders.json` (Gemini
/// CLI's file; folder trust is on by default).
fn trust_folder_args<S: AsRef<OsStr>>(home: &Path, args: &[S]) -> Result<()> {
    let rules: serde_json::Map<String, serde_json::Value> = args
        .iter()
        .map(|a| PathBuf::from(a.as_ref()))
        .filter(|p| p.is_dir())
        .filter_map(|p| p.canonicalize().ok())
        .map(|p| (p.to_string_lossy().into_owned(), "TRUST_FOLDER".into()))
        .collect();
    let file = home.join(".gemini/trustedFolders.json");
    std::fs::create_dir_all(home.join(".gemini")).context("create ~/.gemini")?;
    std::fs::write(&file, serde_json::to_string_pretty(&rules)?)
        .with_context(|| format!("write {}", file.display()))
}

/// The D-Bus name `tauri-plugin-single-instance` owns while the app runs: the app's
/// identifier (tauri.conf.json) + `.SingleInstance`.
const SINGLE_INSTANCE_NAME: &str = "dev.geminidesktop.gemini-desktop.SingleInstance";

/// Variables that would connect the app under test to a real account or endpoint.
const ISOLATED_ENV: &[&str] = &[
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "CODE_ASSIST_ENDPOINT",
    "GEMINI_MODEL",
    "GEMINI_SYSTEM_MD",
    "GEMINI_CLI_TRUST_WORKSPACE",
    "GEMINI_RESTRICTED_MODE",
    "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
];

/// The real app, running under tauri-driver, with an open WebDriver session.
///
/// Call [`App::close`] at the end of a test; if the test panics first, dropping the `App` still
/// kills every process it started and prints where the logs are.
pub struct App {
    client: Option<Client>,
    artifacts: PathBuf,
    driver_log: PathBuf,
    binary: PathBuf,
    /// The environment changes the app was launched with (`None`: removed).
    env: Vec<(OsString, Option<OsString>)>,
    /// tauri-driver's port, for [`App::restart`].
    port: u16,
    /// The launch arguments, for [`App::restart`].
    args: Vec<String>,
    // Field order is drop order: the driver (and with it the app) goes before the keyring, the
    // bus and the display.
    _driver: GroupChild,
    _keyring: Option<Keyring>,
    bus: Option<SessionBus>,
    display: Display,
    home: TempDir,
}

impl App {
    /// Launches the app binary with `args` (e.g. the workspace folder) and waits until the page
    /// has loaded. `name` names the artifacts directory `<target>/e2e/<name>/`.
    pub async fn launch<S: AsRef<OsStr>>(name: &str, args: &[S]) -> Result<Self> {
        Self::launch_with_env(name, args, &[]).await
    }

    /// Like [`App::launch`], with extra environment variables for the app (e.g. the fake
    /// Gemini server's URL and a test API key). Credentials and endpoints from the developer's
    /// own environment are never passed on.
    pub async fn launch_with_env<S: AsRef<OsStr>>(
        name: &str,
        args: &[S],
        env: &[(&str, &str)],
    ) -> Result<Self> {
        Self::launch_inner(name, args, env, false, true).await
    }

    /// Like [`App::launch_with_env`], but the folders on the command line are not trusted
    /// (every other launch trusts them in the app's `~/.gemini/trustedFolders.json`, as a
    /// user who answered the trust prompt would have): the app opens them in restricted mode
    /// with its trust prompt.
    pub async fn launch_untrusted<S: AsRef<OsStr>>(
        name: &str,
        args: &[S],
        env: &[(&str, &str)],
    ) -> Result<Self> {
        Self::launch_inner(name, args, env, false, false).await
    }

    /// Like [`App::launch_with_env`], with an unlocked throwaway gnome-keyring on the app's
    /// session bus (see `keyring.rs`): secrets go to a real Secret Service.
    pub async fn launch_with_keyring<S: AsRef<OsStr>>(
        name: &str,
        args: &[S],
        env: &[(&str, &str)],
    ) -> Result<Self> {
        Self::launch_inner(name, args, env, true, true).await
    }

    async fn launch_inner<S: AsRef<OsStr>>(
        name: &str,
        args: &[S],
        env: &[(&str, &str)],
        keyring: bool,
        trust_folders: bool,
    ) -> Result<Self> {
        let external_display = std::env::var("GD_E2E_DISPLAY")
            .ok()
            .filter(|d| !d.is_empty());
        let binary = app_binary()?;
        let (tauri_driver, webkit_driver, xvfb) = if external_display.is_some() {
            let [tauri_driver, webkit_driver] = find_tools([TAURI_DRIVER, WEBKIT_DRIVER])?;
            (tauri_driver, webkit_driver, None)
        } else {
            let [tauri_driver, webkit_driver, xvfb] =
                find_tools([TAURI_DRIVER, WEBKIT_DRIVER, XVFB])?;
            (tauri_driver, webkit_driver, Some(xvfb))
        };

        let artifacts = target_dir()?.join("e2e").join(name);
        if artifacts.exists() {
            std::fs::remove_dir_all(&artifacts)
                .with_context(|| format!("clear {}", artifacts.display()))?;
        }
        std::fs::create_dir_all(&artifacts)
            .with_context(|| format!("create {}", artifacts.display()))?;

        let display = match (external_display, xvfb) {
            (Some(name), _) => Display::External(name),
            (None, Some(xvfb)) => Display::Own(Xvfb::start(&xvfb, &artifacts.join("xvfb.log"))?),
            (None, None) => unreachable!("Xvfb is looked up when no display is given"),
        };

        // A fresh home for the app: no user settings, webview caches or keyrings leak in.
        let home = tempfile::Builder::new()
            .prefix("gd-e2e-home-")
            .tempdir()
            .context("create a temporary HOME")?;
        if trust_folders {
            trust_folder_args(home.path(), args)?;
        }
        // XDG_RUNTIME_DIR must be private (mode 0700, which tempdirs have) and holds the bus.
        let runtime_dir = home.path().join("run");
        std::fs::create_dir(&runtime_dir).context("create XDG_RUNTIME_DIR")?;
        set_private(&runtime_dir)?;
        // A private session bus: the app allows one instance per bus (see `dbus.rs`).
        let bus = match find_optional(DBUS_DAEMON) {
            Some(daemon) => Some(SessionBus::start(
                &daemon,
                &runtime_dir.join("bus"),
                &artifacts.join("dbus.log"),
            )?),
            None => {
                eprintln!(
                    "gd-e2e: dbus-daemon not found ({}): the app runs without a session bus",
                    DBUS_DAEMON.install
                );
                None
            }
        };

        let keyring = match (keyring, &bus) {
            (false, _) => None,
            (true, Some(bus)) => Some(Keyring::start(
                bus.address(),
                &runtime_dir,
                home.path(),
                &home.path().join(".local/share"),
                &artifacts.join("gnome-keyring.log"),
            )?),
            (true, None) => bail!(
                "a keyring needs a session bus, and dbus-daemon was not found ({})",
                DBUS_DAEMON.install
            ),
        };

        let driver_log = artifacts.join("driver-and-app.log");
        let log_file = File::create(&driver_log)
            .with_context(|| format!("create {}", driver_log.display()))?;
        let port = free_port()?;
        let native_port = loop {
            let candidate = free_port()?;
            if candidate != port {
                break candidate;
            }
        };

        let mut app_env: Vec<(OsString, Option<OsString>)> = vec![
            ("DISPLAY".into(), Some(display.name().into())),
            ("GDK_BACKEND".into(), Some("x11".into())),
            ("WAYLAND_DISPLAY".into(), None),
            ("HOME".into(), Some(home.path().into())),
            (
                "XDG_CONFIG_HOME".into(),
                Some(home.path().join(".config").into()),
            ),
            (
                "XDG_DATA_HOME".into(),
                Some(home.path().join(".local/share").into()),
            ),
            (
                "XDG_CACHE_HOME".into(),
                Some(home.path().join(".cache").into()),
            ),
            (
                "XDG_STATE_HOME".into(),
                Some(home.path().join(".local/state").into()),
            ),
            ("XDG_RUNTIME_DIR".into(), Some(runtime_dir.clone().into())),
            (
                "DBUS_SESSION_BUS_ADDRESS".into(),
                bus.as_ref().map(|bus| bus.address().into()),
            ),
            // No accessibility bus lookups (and their warnings) on the private bus.
            ("NO_AT_BRIDGE".into(), Some("1".into())),
            (
                "RUST_LOG".into(),
                Some(
                    std::env::var("RUST_LOG")
                        .unwrap_or_else(|_| "info,gemini_desktop_lib=debug".into())
                        .into(),
                ),
            ),
        ];
        app_env.extend(ISOLATED_ENV.iter().map(|var| ((*var).into(), None)));
        // WebKitWebDriver's screenshot (webkit_web_view_get_snapshot) never answers when the
        // app has turned WebKit's compositing off (its Linux default, see
        // src-tauri/src/renderer.rs), so the tests keep compositing on.
        app_env.push(("GEMINI_DESKTOP_GPU".into(), Some("1".into())));
        app_env.extend(
            env.iter()
                .map(|(key, value)| ((*key).into(), Some((*value).into()))),
        );

        let mut command = Command::new(&tauri_driver);
        command
            .arg("--port")
            .arg(port.to_string())
            .arg("--native-port")
            .arg(native_port.to_string())
            .arg("--native-driver")
            .arg(&webkit_driver)
            .stdin(Stdio::null());
        apply_env(&mut command, &app_env);
        command
            .stdout(
                log_file
                    .try_clone()
                    .context("duplicate the log file handle")?,
            )
            .stderr(log_file);
        let mut driver = GroupChild::spawn("tauri-driver", &mut command)?;

        // tauri-driver listens at once but WebKitWebDriver takes a moment: wait for both.
        for (what, port) in [("tauri-driver", port), ("WebKitWebDriver", native_port)] {
            wait_for_port(port, &mut driver, what)
                .await
                .with_context(|| log_hint(&driver_log))?;
        }

        let args: Vec<String> = args
            .iter()
            .map(|arg| {
                arg.as_ref()
                    .to_str()
                    .map(str::to_owned)
                    .context("app arguments must be UTF-8 (they travel as JSON)")
            })
            .collect::<Result<_>>()?;
        let mut app = Self {
            client: None,
            artifacts,
            driver_log,
            binary: binary.clone(),
            env: app_env,
            port,
            args,
            _driver: driver,
            _keyring: keyring,
            bus,
            display,
            home,
        };
        app.client = Some(app.open_session(&app_path_string(&binary)?).await?);
        app.check_not_placeholder().await?;
        Ok(app)
    }

    /// Quits the app (ends the WebDriver session) and starts it again in the same
    /// environment: same `HOME`, session bus and keyring, same arguments. What the app stored
    /// on disk or in the keyring survives; everything in memory does not.
    pub async fn restart(&mut self) -> Result<()> {
        if let Some(bus) = &self.bus
            && !crate::dbus::name_has_owner(bus.address(), SINGLE_INSTANCE_NAME)?
        {
            bail!(
                "the running app does not own {SINGLE_INSTANCE_NAME} on its bus: update \
                 SINGLE_INSTANCE_NAME (the app's identifier + `.SingleInstance`)"
            );
        }
        if let Some(client) = self.client.take() {
            client
                .close()
                .await
                .context("close the WebDriver session")?;
        }
        // The old process may still be exiting: while it owns the single-instance name, a new
        // launch would hand its command line over to it and exit.
        if let Some(bus) = &self.bus {
            let deadline = Instant::now() + STARTUP_TIMEOUT;
            while crate::dbus::name_has_owner(bus.address(), SINGLE_INSTANCE_NAME)? {
                if Instant::now() >= deadline {
                    bail!("the app did not exit within {STARTUP_TIMEOUT:?} of closing its session");
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        let application = app_path_string(&self.binary)?;
        self.client = Some(self.open_session(&application).await?);
        self.check_not_placeholder().await
    }

    async fn open_session(&self, application: &str) -> Result<Client> {
        let port = self.port;
        let args = &self.args;
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "tauri:options".into(),
            json!({ "application": application, "args": args }),
        );
        let mut builder = ClientBuilder::new(HttpConnector::new());
        builder.capabilities(capabilities);
        let url = format!("http://127.0.0.1:{port}");
        let connect = builder.connect(&url);
        let client = tokio::time::timeout(STARTUP_TIMEOUT, connect)
            .await
            .map_err(|_| anyhow!("no WebDriver session within {STARTUP_TIMEOUT:?}"))
            .and_then(|result| result.context("open a WebDriver session through tauri-driver"))
            .with_context(|| log_hint(&self.driver_log))?;
        Ok(client)
    }

    /// Fails clearly when the binary is not a production build of the real UI: a `tauri dev`
    /// build (which loads the Vite dev server) or one embedding the page `build.rs` writes when
    /// `ui/dist` is missing.
    async fn check_not_placeholder(&self) -> Result<()> {
        let url = self
            .client()
            .current_url()
            .await
            .context("read the page URL")?;
        if matches!(url.scheme(), "http" | "https") && url.host_str() != Some("tauri.localhost") {
            bail!(
                "the app loads {url}: the binary was built by `tauri dev` (without the \
                 `custom-protocol` feature). Rebuild it with `cargo build -p gemini-desktop`"
            );
        }
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            let state = self
                .client()
                .execute(
                    "return document.readyState === 'complete' \
                       ? !!document.querySelector('meta[name=\"gemini-desktop-placeholder\"]') \
                       : null;",
                    vec![],
                )
                .await
                .context("query the page")?;
            match state {
                Value::Bool(false) => return Ok(()),
                Value::Bool(true) => bail!(
                    "the app binary embeds the placeholder page: `ui/dist` was not built before \
                     `cargo build -p gemini-desktop`. Run `npm --prefix ui ci && npm --prefix ui \
                     run build`, then rebuild the app"
                ),
                _ if Instant::now() >= deadline => {
                    bail!("the page did not finish loading within {UI_TIMEOUT:?}")
                }
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    /// The WebDriver client, for anything the helpers below do not cover.
    pub fn client(&self) -> &Client {
        self.client.as_ref().expect("session is open until close()")
    }

    /// `<target>/e2e/<name>/`: screenshots and logs of this run.
    pub fn artifacts_dir(&self) -> &Path {
        &self.artifacts
    }

    /// The X display the app is shown on (e.g. `:12`).
    pub fn display(&self) -> &str {
        self.display.name()
    }

    /// The app's private `HOME` (and parent of its `XDG_*` directories).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Whether the app has its own D-Bus session bus (needed for the single-instance check).
    pub fn has_session_bus(&self) -> bool {
        self.bus.is_some()
    }

    /// The address of the app's private session bus, if it has one.
    pub fn session_bus_address(&self) -> Option<&str> {
        self.bus.as_ref().map(|bus| bus.address())
    }

    /// A command that starts the app binary again, in the same environment as this app (display,
    /// `HOME`, session bus, extra variables): a second launch, which hands its command line to
    /// this app and exits.
    pub fn second_launch<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut command = Command::new(&self.binary);
        command.args(args).stdin(Stdio::null());
        apply_env(&mut command, &self.env);
        command
    }

    /// Ends the WebDriver session (which closes the app) and stops every helper process.
    pub async fn close(mut self) -> Result<()> {
        if let Some(client) = self.client.take() {
            client
                .close()
                .await
                .context("close the WebDriver session")?;
        }
        Ok(())
    }
}

impl Drop for App {
    fn drop(&mut self) {
        // libtest shows a test's captured output only when it fails, which is when this helps.
        eprintln!(
            "gd-e2e artifacts: {}\n{}",
            self.artifacts.display(),
            log_hint(&self.driver_log)
        );
    }
}

fn app_path_string(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_owned)
        .with_context(|| format!("app path {} is not UTF-8", path.display()))
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("bind an ephemeral port")?;
    Ok(listener.local_addr()?.port())
}

/// Waits until something accepts TCP connections on 127.0.0.1:`port`, failing early if the
/// process that should listen there exits.
async fn wait_for_port(port: u16, process: &mut GroupChild, what: &str) -> Result<()> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if let Some(status) = process.exited() {
            bail!("{what} exited ({status}) before listening on port {port}");
        }
        if Instant::now() >= deadline {
            bail!("{what} did not listen on port {port} within {STARTUP_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Points at the log and repeats its end, for error messages.
fn log_hint(log: &Path) -> String {
    const TAIL_LINES: usize = 40;
    let tail = std::fs::read_to_string(log)
        .map(|text| {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
        })
        .unwrap_or_default();
    format!(
        "tauri-driver/WebKitWebDriver/app log: {} (last lines below)\n{tail}",
        log.display()
    )
}

/// Applies environment changes (`None` removes the variable).
fn apply_env(command: &mut Command, env: &[(OsString, Option<OsString>)]) {
    for (key, value) in env {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
}

fn set_private(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("chmod 700 {}", dir.display()))
}
