//! The app shell end to end: the real binary in a real WebKit webview. The header, the
//! webview's lock-down (capabilities and CSP), links, and the single-instance hand-over.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`,
//! then `cargo test -p gd-e2e`. See the `gd_e2e` crate docs for the tools it needs.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use gd_e2e::{App, app_binary};
use serde_json::{Value, json};

fn folder(temp: &tempfile::TempDir, name: &str) -> Result<PathBuf> {
    let path = temp.path().join(name);
    std::fs::create_dir(&path)?;
    Ok(path.canonicalize()?)
}

fn utf8(path: &Path) -> Result<&str> {
    path.to_str().context("UTF-8 path")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_shows_version_and_workspace_from_ipc() -> Result<()> {
    // A workspace path with a space, to check it survives the command line and the IPC round trip.
    let temp = tempfile::tempdir()?;
    let workspace = folder(&temp, "sample project")?;

    // A key (never used: the API address is a closed port) so that a session starts and the
    // chat shows; without credentials the sign-in screen replaces it (see chat.rs, signin.rs).
    let app = App::launch_with_env(
        "app_shell",
        &[&workspace],
        &[
            ("GEMINI_API_KEY", "e2e-unused-key"),
            ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"),
        ],
    )
    .await?;

    app.wait_for_text("app-title", "read \"Gemini Desktop\"", |text| {
        text == "Gemini Desktop"
    })
    .await?;
    // The version and workspace only appear once the `app_info` command has answered.
    let expected_version = format!("v{}", env!("CARGO_PKG_VERSION"));
    app.wait_for_text("app-version", "showed the app version", |text| {
        text == expected_version
    })
    .await?;
    app.wait_for_text("workspace-path", "showed the workspace path", |text| {
        text == utf8(&workspace).unwrap_or_default()
    })
    .await?;
    app.wait_ready().await?;

    // The composer and the controls are there.
    for id in ["prompt-input", "send", "open-workspace", "approval-mode"] {
        app.wait_for_count(id, "is present once", |n| n == 1)
            .await?;
    }
    let prompt = app.interactable("prompt-input").await?;
    ensure!(prompt.tag_name().await?.eq_ignore_ascii_case("textarea"));
    let modes = app
        .client()
        .execute(
            "return Array.from(document.querySelector('[data-testid=\"approval-mode\"]')\
               .options).map((o) => o.value);",
            vec![],
        )
        .await?;
    ensure!(
        modes == json!(["default", "auto_edit", "yolo", "plan"]),
        "approval modes: {modes}"
    );
    app.wait_for_count("message-list", "is present", |n| n == 1)
        .await?;

    let screenshot = app.screenshot("main-window").await?;
    eprintln!("screenshot: {}", screenshot.display());
    app.close().await
}

/// The outcome of `invoke` as text, for assertions: `allowed: <value>` or `denied: <error>`.
async fn try_invoke(app: &App, command: &str, args: Value) -> Result<String> {
    Ok(match app.invoke(command, args).await? {
        Ok(value) => format!("allowed: {value}"),
        Err(error) => format!("denied: {error}"),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webview_is_locked_down_by_capabilities_and_csp() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let app = App::launch("lockdown", &[temp.path()]).await?;
    app.wait_ready().await?;

    // What the capability does not grant is refused: core and plugin APIs the UI does not use,
    // including the plugins the backend uses itself (dialog, window-state) and the file system.
    let target = temp.path().join("secret.txt");
    std::fs::write(&target, "secret")?;
    let refused = [
        ("plugin:window|title", json!({ "label": "main" })),
        ("plugin:webview|print", json!({ "label": "main" })),
        ("plugin:app|app_hide", json!({})),
        (
            "plugin:event|emit",
            json!({ "event": "workspace-changed", "payload": {} }),
        ),
        (
            "plugin:dialog|open",
            json!({ "options": { "directory": true } }),
        ),
        ("plugin:dialog|message", json!({ "message": "hi" })),
        (
            "plugin:window-state|save_window_state",
            json!({ "flags": 63 }),
        ),
        (
            "plugin:fs|read_text_file",
            json!({ "path": utf8(&target)? }),
        ),
        ("plugin:opener|open_path", json!({ "path": utf8(&target)? })),
        (
            "plugin:opener|reveal_item_in_dir",
            json!({ "paths": [utf8(&target)?] }),
        ),
        // The opener only opens http(s) URLs, and only with the default browser.
        (
            "plugin:opener|open_url",
            json!({ "url": format!("file://{}", utf8(&target)?) }),
        ),
        (
            "plugin:opener|open_url",
            json!({ "url": "javascript:alert(1)" }),
        ),
        (
            "plugin:opener|open_url",
            json!({ "url": "https://example.com", "with": "sh" }),
        ),
        (
            "plugin:shell|open",
            json!({ "path": "https://example.com" }),
        ),
    ];
    for (command, args) in refused {
        let outcome = try_invoke(&app, command, args.clone()).await?;
        ensure!(outcome.starts_with("denied"), "{command} {args}: {outcome}");
    }
    // What the UI needs is allowed: listening to the backend's event.
    let listen = app
        .client()
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             const handler = window.__TAURI_INTERNALS__.transformCallback(() => {});\
             window.__TAURI_INTERNALS__.invoke('plugin:event|listen',\
               { event: 'workspace-changed', target: { kind: 'Any' }, handler })\
               .then((id) => done('allowed: ' + id), (e) => done('denied: ' + e));",
            vec![],
        )
        .await?;
    ensure!(
        listen.as_str().unwrap_or_default().starts_with("allowed"),
        "listen: {listen}"
    );

    // The CSP has no 'unsafe-eval': string evaluation is refused.
    let eval = app
        .client()
        .execute(
            "try { new Function('return 1')(); return 'allowed'; } \
             catch (error) { return 'blocked: ' + error; }",
            vec![],
        )
        .await?;
    let eval = eval.as_str().unwrap_or_default().to_owned();
    ensure!(eval.starts_with("blocked"), "eval: {eval}");

    // The CSP lets the page reach only the IPC: a request to any other origin never leaves.
    let listener = TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let url = format!(
        "http://127.0.0.1:{}/exfiltrate",
        listener.local_addr()?.port()
    );
    let fetched = app
        .client()
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             fetch(arguments[0]).then(() => done('fetched'), (e) => done('blocked: ' + e));",
            vec![json!(url)],
        )
        .await?;
    ensure!(
        fetched.as_str().unwrap_or_default().starts_with("blocked"),
        "fetch: {fetched}"
    );
    ensure!(
        listener.accept().is_err(),
        "the page connected to {url} despite the CSP"
    );

    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_open_in_the_system_browser() -> Result<()> {
    // A stand-in `xdg-open` (what the opener runs on Linux) that records what it was asked to open.
    let temp = tempfile::tempdir()?;
    let bin = folder(&temp, "bin")?;
    let record = temp.path().join("opened.txt");
    let script = bin.join("xdg-open");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{}'\n", utf8(&record)?),
    )?;
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    let path = format!(
        "{}:{}",
        utf8(&bin)?,
        std::env::var("PATH").unwrap_or_default()
    );
    let workspace = folder(&temp, "project")?;
    let app = App::launch_with_env("links", &[&workspace], &[("PATH", &path)]).await?;
    app.wait_ready().await?;

    let url = "https://ai.google.dev/gemini-api/docs?hl=en#models";
    let outcome = try_invoke(&app, "plugin:opener|open_url", json!({ "url": url })).await?;
    ensure!(outcome.starts_with("allowed"), "open_url: {outcome}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let opened = std::fs::read_to_string(&record).unwrap_or_default();
        if opened.lines().any(|line| line == url) {
            break;
        }
        if Instant::now() >= deadline {
            bail!("xdg-open was not run with {url}; it got {opened:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_launch_opens_its_folder_as_a_new_conversation() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let first = folder(&temp, "first project")?;
    let second = folder(&temp, "second project")?;
    let app = App::launch("single_instance", &[&first]).await?;
    ensure!(
        app.has_session_bus(),
        "this test needs dbus-daemon (Debian package `dbus-daemon`) for the app's session bus"
    );
    app.wait_ready().await?;
    app.wait_for_text("workspace-path", "shows the first folder", |t| {
        t == utf8(&first).unwrap_or_default()
    })
    .await?;
    // Record the backend's `workspace-changed` events as the UI receives them.
    app.client()
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             window.__gdEvents = [];\
             const handler = window.__TAURI_INTERNALS__.transformCallback(\
               (event) => window.__gdEvents.push(event.payload));\
             window.__TAURI_INTERNALS__.invoke('plugin:event|listen',\
               { event: 'workspace-changed', target: { kind: 'Any' }, handler })\
               .then(() => done(true), (e) => done(String(e)));",
            vec![],
        )
        .await?;

    // A launch without a folder only focuses the window.
    let output = app.run_second_launch::<&Path>(&[]).await?;
    ensure!(
        output.status.success(),
        "second launch without a folder: {output:?}"
    );
    // A launch naming something that is not a folder is refused by that launch itself.
    let file = temp.path().join("file.txt");
    std::fs::write(&file, "x")?;
    let output = app.run_second_launch(&[&file]).await?;
    ensure!(output.status.code() == Some(2), "{output:?}");

    // Take the keyboard focus away from the window (to the root window: there is no window
    // manager), so that the hand-over has to give it back.
    let root = app
        .x11("xdotool", &["search", "--maxdepth", "0", "--name", ""])
        .await?;
    let root = root.lines().next().context("the root window")?.to_owned();
    app.x11("xdotool", &["windowfocus", "--sync", &root])
        .await?;
    ensure!(app.x11("xdotool", &["getwindowfocus"]).await? == root);

    // A launch with another folder hands it over and exits at once, without a window.
    let started = Instant::now();
    let output = app.run_second_launch(&[&second]).await?;
    ensure!(
        output.status.success(),
        "second launch: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("the second launch exited after {:?}", started.elapsed());

    // The backend switched, the window got the event, and the UI shows the new folder.
    let info = app
        .invoke("app_info", json!({}))
        .await?
        .map_err(|e| anyhow::anyhow!("app_info: {e}"))?;
    ensure!(
        info["workspace"] == json!(utf8(&second)?),
        "app_info after the hand-over: {info}"
    );
    let events = app
        .client()
        .execute("return window.__gdEvents;", vec![])
        .await?;
    ensure!(
        events == json!([{ "workspace": utf8(&second)? }]),
        "workspace-changed events: {events}"
    );
    // The window has the keyboard focus again.
    let main = app
        .x11(
            "xdotool",
            &["search", "--onlyvisible", "--name", "^Gemini Desktop$"],
        )
        .await?;
    let focus = app.x11("xdotool", &["getwindowfocus"]).await?;
    ensure!(
        main.lines().any(|id| id == focus),
        "focus is on {focus}, the window is {main}"
    );
    app.wait_for_text("workspace-path", "shows the second folder", |t| {
        t == utf8(&second).unwrap_or_default()
    })
    .await?;
    // (Signed out here, so no sidebar: tests/e2e/conversations.rs checks, signed in, that the
    // folder opens as a new conversation beside the running one.)
    app.close().await
}

#[test]
fn a_workspace_that_is_not_a_directory_is_rejected() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let file = temp.path().join("not-a-folder.txt");
    std::fs::write(&file, "hello")?;

    // The command line is checked before any window is created, so no display is needed.
    let output = Command::new(app_binary()?)
        .arg(&file)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .output()
        .context("run the app")?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(2),
        "exit status; stderr:\n{stderr}"
    );
    assert!(stderr.contains("is not a directory"), "stderr:\n{stderr}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_workspace_without_a_path_uses_the_native_folder_picker() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let first = folder(&temp, "first")?;
    let chosen = folder(&temp, "chosen folder")?;
    let app = App::launch("folder_picker", &[&first]).await?;
    app.wait_ready().await?;

    start_picker(&app).await?;
    // The GTK folder chooser: type the path into its location field and accept.
    focus_dialog(&app).await?;
    app.x11("xdotool", &["key", "--clearmodifiers", "ctrl+l"])
        .await?;
    app.x11("xdotool", &["type", "--delay", "5", utf8(&chosen)?])
        .await?;
    app.x11("xdotool", &["key", "Return"]).await?;

    let picked = picker_answer(&app).await?;
    ensure!(
        picked == json!({ "path": utf8(&chosen)? }),
        "open_workspace: {picked}"
    );
    let info = app
        .invoke("app_info", json!({}))
        .await?
        .map_err(|e| anyhow::anyhow!("app_info: {e}"))?;
    ensure!(info["workspace"] == json!(utf8(&chosen)?), "{info}");

    // Cancelling the dialog answers null and keeps the workspace.
    start_picker(&app).await?;
    focus_dialog(&app).await?;
    app.x11("xdotool", &["key", "Escape"]).await?;
    let picked = picker_answer(&app).await?;
    ensure!(picked == json!({ "path": null }), "cancelled: {picked}");
    let info = app
        .invoke("app_info", json!({}))
        .await?
        .map_err(|e| anyhow::anyhow!("app_info: {e}"))?;
    ensure!(info["workspace"] == json!(utf8(&chosen)?), "{info}");
    app.close().await
}

/// Waits for the (visible) folder dialog and gives it the keyboard focus (there is no window
/// manager to do it).
async fn focus_dialog(app: &App) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let focused = async {
            let found = app
                .x11(
                    "xdotool",
                    &["search", "--onlyvisible", "--name", "^Open a folder$"],
                )
                .await?;
            let dialog = found.lines().last().context("no dialog yet")?.to_owned();
            app.x11("xdotool", &["windowfocus", "--sync", &dialog])
                .await
        }
        .await;
        match focused {
            Ok(_) => return Ok(()),
            Err(error) if Instant::now() >= deadline => {
                return Err(error.context("the folder dialog did not show up"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Calls `open_workspace` without a path the way the UI's `open-workspace` button does, without
/// waiting: the command answers only once the dialog is closed ([`picker_answer`]).
async fn start_picker(app: &App) -> Result<()> {
    app.client()
        .execute(
            "window.__gdPicked = undefined;\
             window.__TAURI_INTERNALS__.invoke('open_workspace', { path: null })\
               .then((path) => { window.__gdPicked = { path }; },\
                     (error) => { window.__gdPicked = { error: String(error) }; });",
            vec![],
        )
        .await?;
    Ok(())
}

async fn picker_answer(app: &App) -> Result<Value> {
    app.wait_for_script(
        "return window.__gdPicked !== undefined;",
        "open_workspace answered",
    )
    .await?;
    Ok(app
        .client()
        .execute("return window.__gdPicked;", vec![])
        .await?)
}

/// Start-up shows no blank frame: the window is created hidden and the UI asks for it to be
/// shown once its header with the app's data is laid out (`ui_ready`, after `app_info`
/// answered), not on the safety timeout. Before the change the window was mapped at once and
/// nothing logged `window shown`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_is_shown_at_the_uis_first_paint() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let workspace = folder(&temp, "first-paint")?;
    let app = App::launch_with_env(
        "first_paint",
        &[&workspace],
        &[
            ("GEMINI_API_KEY", "e2e-unused-key"),
            ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"),
        ],
    )
    .await?;
    app.wait_ready().await?;
    let log_path = app.artifacts_dir().join("driver-and-app.log");
    let deadline = Instant::now() + Duration::from_secs(20);
    let shown = loop {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        if let Some(line) = log.lines().find(|l| l.contains("window shown")) {
            break line.to_owned();
        }
        ensure!(
            Instant::now() < deadline,
            "the app never logged `window shown`; log: {}",
            log_path.display()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    ensure!(
        shown.contains("first paint"),
        "shown by the timeout, not by the UI: {shown}"
    );
    // The UI asked after `app_info` had answered (its data is in the first frame).
    let marks = app
        .client()
        .execute(
            "const t = (n) => performance.getEntriesByName(n)[0]?.startTime ?? null; \
             return [t('app-info'), t('ui-ready')];",
            vec![],
        )
        .await?;
    let (info, ready) = (marks[0].as_f64(), marks[1].as_f64());
    ensure!(
        matches!((info, ready), (Some(i), Some(r)) if r >= i),
        "marks app-info / ui-ready: {marks}"
    );
    // And the X server has the window mapped now.
    let visible = app
        .x11(
            "xdotool",
            &["search", "--onlyvisible", "--name", "Gemini Desktop"],
        )
        .await?;
    ensure!(!visible.is_empty(), "no visible window");
    app.screenshot("first-paint").await?;
    app.close().await
}
