//! The header in the real WebKit webview (the default 1,100 px window, then 720 px): no control
//! clips its text, the header does not overflow, and the YOLO approval switch draws its own
//! select (WebKitGTK's native one is a light grey GTK button, which put the white "YOLO" on
//! light grey).
//!
//! Test ids: `app-header`, `open-workspace`, `connection-status`, `history-open`,
//! `checkpoints-open`, `mcp-open`, `settings-open`, `account-open`, `approval-mode`.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::{Value, json};

/// The header controls whose text is cut (scrollWidth > clientWidth), and the header's overflow.
const CLIPPED: &str = "
    const ids = ['open-workspace', 'connection-status', 'history-open', 'checkpoints-open',
                 'mcp-open', 'settings-open', 'account-open', 'approval-mode'];
    const clipped = ids.filter((id) => {
        const el = document.querySelector(`[data-testid=${id}]`);
        return !el || el.scrollWidth > el.clientWidth + 0.5;
    });
    const header = document.querySelector('[data-testid=app-header]');
    return { clipped, overflow: header.scrollWidth - header.clientWidth, width: window.innerWidth };";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_clipped_and_yolo_is_legible() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let fake = FakeGemini::start(json!({"steps": [{"text": "unused"}]}));
    let app = App::launch_connected("header", &[&ws], &fake.base_url()).await?;

    let seen = app.client().execute(CLIPPED, vec![]).await?;
    ensure!(
        seen["clipped"] == json!([]) && seen["overflow"].as_f64().unwrap_or(1.0) <= 0.0,
        "header controls clipped or overflowing: {seen}"
    );

    app.select_option("approval-mode", "yolo").await?;
    app.wait_for_script(
        "return document.querySelector('[data-testid=app]')?.dataset.mode === 'yolo';",
        "YOLO is on",
    )
    .await?;
    let look: Value = app
        .client()
        .execute(
            "const s = getComputedStyle(document.querySelector('[data-testid=approval-mode]'));
             const label = getComputedStyle(document.querySelector('[data-testid=approval-mode]').parentElement);
             return { appearance: s.webkitAppearance || s.appearance, background: s.backgroundColor,
                      color: s.color, labelBackground: label.backgroundColor };",
            vec![],
        )
        .await?;
    ensure!(
        look["appearance"] == "none"
            && look["background"] == "rgba(0, 0, 0, 0)"
            && look["color"] == "rgb(255, 255, 255)"
            && look["labelBackground"] == "rgb(180, 35, 35)",
        "the YOLO switch is white on its own dark red, not on a native grey select: {look}"
    );
    let seen = app.client().execute(CLIPPED, vec![]).await?;
    ensure!(
        seen["clipped"] == json!([]),
        "YOLO: header controls clipped: {seen}"
    );
    let shot = app.screenshot("header-yolo").await?;
    eprintln!("screenshot: {}", shot.display());

    // The minimum window width (tauri.conf.json: 720 px): still nothing clipped.
    app.client().set_window_size(720, 700).await?;
    app.wait_for_script(
        "return window.innerWidth <= 720;",
        "the window is 720 px wide",
    )
    .await?;
    let seen = app.client().execute(CLIPPED, vec![]).await?;
    ensure!(
        seen["clipped"] == json!([]) && seen["overflow"].as_f64().unwrap_or(1.0) <= 0.0,
        "720 px: header controls clipped or overflowing: {seen}"
    );
    let shot = app.screenshot("header-720").await?;
    eprintln!("screenshot: {}", shot.display());
    app.close().await
}
