//! What GTK draws itself (a `<select>`'s drop-down list, scroll bars) follows the app's theme
//! (issue 34, item 10g): no stylesheet reaches it, so the UI hands `ui.theme` to the backend
//! (`set_window_theme`, ui/tests/theme.test.mjs checks the UI sends it) and the backend sets the
//! window's theme. GTK then exports the variant it draws with as the top-level window's
//! `_GTK_THEME_VARIANT` property, which this reads with `xprop` — GTK's own account, not ours.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use serde_json::json;

/// The `_GTK_THEME_VARIANT` of the app's top-level window ("" while GTK exports none).
async fn variant(app: &App) -> Result<String> {
    let ids = app
        .x11(
            "xdotool",
            &["search", "--onlyvisible", "--name", "Gemini Desktop"],
        )
        .await?;
    let id = ids.lines().next().context("the app's window")?.to_owned();
    let prop = app
        .x11("xprop", &["-id", &id, "_GTK_THEME_VARIANT"])
        .await?;
    // `_GTK_THEME_VARIANT(UTF8_STRING) = "dark"`, or "...:  not found."
    Ok(prop
        .split_once(" = ")
        .map(|(_, v)| v.trim_matches('"').to_owned())
        .unwrap_or_default())
}

/// Polls the variant until `want` says yes (GTK applies the setting on its main loop, after the
/// command returned); the last one seen otherwise.
async fn variant_until(app: &App, want: impl Fn(&str) -> bool) -> Result<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let seen = variant(app).await?;
        if want(&seen) || std::time::Instant::now() >= deadline {
            return Ok(seen);
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_windows_native_theme_follows_the_apps() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let app = App::launch("native_theme", &[temp.path()]).await?;
    app.wait_ready().await?;

    let set = app
        .invoke("set_window_theme", json!({"theme": "dark"}))
        .await?;
    ensure!(set.is_ok(), "set_window_theme dark: {set:?}");
    let dark = variant_until(&app, |v| v == "dark").await?;
    ensure!(dark == "dark", "GTK draws the window dark: {dark:?}");

    let set = app
        .invoke("set_window_theme", json!({"theme": "light"}))
        .await?;
    ensure!(set.is_ok(), "set_window_theme light: {set:?}");
    let light = variant_until(&app, |v| v != "dark").await?;
    ensure!(
        light != "dark",
        "GTK draws the window light again: {light:?}"
    );

    let bad = app
        .invoke("set_window_theme", json!({"theme": "purple"}))
        .await?;
    ensure!(bad.is_err(), "an unknown theme is refused: {bad:?}");
    app.close().await
}
