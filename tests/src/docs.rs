//! Screenshots for the README (`docs/screenshots/`): where they go, the window at a width, the
//! light or dark palette, a window or element shot, a series over themes and widths. Used by the
//! ignored `docs_*` tests that `scripts/docs-screenshots.sh` runs.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use serde_json::json;

use crate::App;
use crate::page::testid;

/// Where the images go: `GD_DOCS_SCREENSHOTS` or the test's artifacts folder.
pub fn out_dir(app: &App) -> PathBuf {
    std::env::var_os("GD_DOCS_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| app.artifacts_dir().to_path_buf())
}

/// Resizes the window to `width` px (the height stays 900) and waits for the layout to follow.
pub async fn resize(app: &App, width: u32) -> Result<()> {
    app.client()
        .set_window_size(width, 900)
        .await
        .context("resize the window")?;
    app.wait_for_script(
        // Both sides: after a restart the window comes back at its remembered size, and a
        // screenshot taken before the height followed shows a part of the page.
        &format!(
            "return Math.abs(window.innerWidth - {width}) <= 2 && Math.abs(window.innerHeight - 900) <= 2;"
        ),
        &format!("the page is {width}×900 px"),
    )
    .await
}

/// Forces the light or dark palette (what the `ui.theme` setting or the GTK theme choose).
pub async fn theme(app: &App, name: &str) -> Result<()> {
    app.client()
        .execute(
            "document.documentElement.dataset.theme = arguments[0];",
            vec![json!(name)],
        )
        .await
        .context("set the theme")?;
    Ok(())
}

/// A full-window screenshot copied to `<out>/<name>.png`.
pub async fn shot(app: &App, out: &Path, name: &str) -> Result<()> {
    let taken = app.screenshot(name).await?;
    if taken.parent() != Some(out) {
        std::fs::copy(&taken, out.join(format!("{name}.png")))
            .with_context(|| format!("copy {name}.png"))?;
    }
    Ok(())
}

/// A screenshot of one element (e.g. the header) as `<out>/<name>.png`: the window's screenshot
/// cut to the element's box with ImageMagick (WebKitWebDriver's own element screenshots of the
/// header come out black).
pub async fn element_shot(app: &App, id: &str, out: &Path, name: &str) -> Result<()> {
    let rect = app
        .client()
        .execute(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect();\
             return [r.x, r.y, r.width, r.height].map((v) => Math.round(v * devicePixelRatio));",
            vec![json!(testid(id))],
        )
        .await
        .with_context(|| format!("measure {id}"))?;
    let [x, y, w, h]: [i64; 4] = serde_json::from_value(rect)?;
    let full = app.screenshot(&format!("{name}-window")).await?;
    let target = out.join(format!("{name}.png"));
    let status = std::process::Command::new("convert")
        .arg(&full)
        .args(["-crop", &format!("{w}x{h}+{x}+{y}"), "+repage"])
        .arg(&target)
        .status()
        .context("run ImageMagick's convert (apt-get install imagemagick)")?;
    ensure!(status.success(), "convert failed to cut {name}.png");
    Ok(())
}

/// The same screen in both themes at each width.
pub async fn series(app: &App, out: &Path, name: &str, widths: &[u32]) -> Result<()> {
    for &width in widths {
        resize(app, width).await?;
        for palette in ["light", "dark"] {
            theme(app, palette).await?;
            shot(app, out, &format!("{name}-{palette}-{width}")).await?;
        }
    }
    theme(app, "light").await
}
