//! The app under test and the WebDriver session driving it.

use std::ffi::OsStr;
use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::paths::{TAURI_DRIVER, WEBKIT_DRIVER, XVFB, app_binary, find_tools, target_dir};
use crate::process::GroupChild;
use crate::xvfb::Xvfb;
use crate::{STARTUP_TIMEOUT, UI_TIMEOUT};

/// CSS selector of the element carrying `data-testid="<id>"`.
pub fn testid(id: &str) -> String {
    format!("[data-testid=\"{id}\"]")
}

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
];

/// The real app, running under tauri-driver, with an open WebDriver session.
///
/// Call [`App::close`] at the end of a test; if the test panics first, dropping the `App` still
/// kills every process it started and prints where the logs are.
pub struct App {
    client: Option<Client>,
    artifacts: PathBuf,
    driver_log: PathBuf,
    // Field order is drop order: the driver (and with it the app) goes before the display.
    _driver: GroupChild,
    _display: Display,
    _home: TempDir,
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

        let mut command = Command::new(&tauri_driver);
        command
            .arg("--port")
            .arg(port.to_string())
            .arg("--native-port")
            .arg(native_port.to_string())
            .arg("--native-driver")
            .arg(&webkit_driver)
            .env("DISPLAY", display.name())
            .env("GDK_BACKEND", "x11")
            .env_remove("WAYLAND_DISPLAY")
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join(".config"))
            .env("XDG_DATA_HOME", home.path().join(".local/share"))
            .env("XDG_CACHE_HOME", home.path().join(".cache"))
            .env("XDG_STATE_HOME", home.path().join(".local/state"))
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG")
                    .unwrap_or_else(|_| "info,gemini_desktop_lib=debug".into()),
            )
            .stdin(Stdio::null());
        for var in ISOLATED_ENV {
            command.env_remove(var);
        }
        command.envs(env.iter().copied());
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

        let mut app = Self {
            client: None,
            artifacts,
            driver_log,
            _driver: driver,
            _display: display,
            _home: home,
        };
        app.client = Some(
            app.open_session(port, &app_path_string(&binary)?, args)
                .await?,
        );
        app.check_not_placeholder().await?;
        Ok(app)
    }

    async fn open_session<S: AsRef<OsStr>>(
        &self,
        port: u16,
        application: &str,
        args: &[S],
    ) -> Result<Client> {
        let args: Vec<String> = args
            .iter()
            .map(|arg| {
                arg.as_ref()
                    .to_str()
                    .map(str::to_owned)
                    .context("app arguments must be UTF-8 (they travel as JSON)")
            })
            .collect::<Result<_>>()?;
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

    /// Waits until the element with `data-testid=<id>` exists and its text satisfies `check`;
    /// returns that text.
    pub async fn wait_for_text(
        &self,
        id: &str,
        description: &str,
        check: impl Fn(&str) -> bool,
    ) -> Result<String> {
        let deadline = Instant::now() + UI_TIMEOUT;
        let mut last = None;
        loop {
            if let Ok(element) = self.client().find(Locator::Css(&testid(id))).await {
                let text = element.text().await.context("read element text")?;
                if check(&text) {
                    return Ok(text);
                }
                last = Some(text);
            }
            if Instant::now() >= deadline {
                let shot = self.failure_screenshot().await;
                bail!(
                    "[data-testid={id}] never {description} within {UI_TIMEOUT:?}; last text: \
                     {last:?}{shot}"
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until `script` (a function body returning a value) returns `true`.
    pub async fn wait_for_script(&self, script: &str, description: &str) -> Result<()> {
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            let value = self
                .client()
                .execute(script, vec![])
                .await
                .context("run script")?;
            if value == Value::Bool(true) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let shot = self.failure_screenshot().await;
                bail!("{description}: not true within {UI_TIMEOUT:?} (last value {value}){shot}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Saves a PNG screenshot of the window as `<artifacts>/<name>.png` and returns its path.
    /// Waits for two animation frames first: WebKit's screenshot can otherwise be one frame
    /// behind the DOM.
    pub async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        self.client()
            .execute_async(
                "const done = arguments[arguments.length - 1];\
                 requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
                vec![],
            )
            .await
            .context("wait for two animation frames")?;
        let png = self
            .client()
            .screenshot()
            .await
            .context("take a screenshot")?;
        if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
            bail!("the screenshot is not a PNG ({} bytes)", png.len());
        }
        let path = self.artifacts.join(format!("{name}.png"));
        std::fs::write(&path, png).with_context(|| format!("write {}", path.display()))?;
        Ok(path)
    }

    /// Best effort screenshot for a failure message: `"; screenshot: <path>"` or nothing.
    async fn failure_screenshot(&self) -> String {
        match self.screenshot("failure").await {
            Ok(path) => format!("; screenshot: {}", path.display()),
            Err(_) => String::new(),
        }
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
