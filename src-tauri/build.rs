//! Build script of the Tauri shell.
//!
//! `tauri.conf.json` lives at the repository root (next to `ui/` and `icons/`), so the config
//! path is given to tauri-build explicitly; paths inside the config (`frontendDist`, icons) are
//! relative to the config file. `src/lib.rs` points `generate_context!` at the same file.

use std::path::Path;

/// Turns the command table into tauri-build's list of the app's commands: tauri-build generates
/// an `allow-<command>` permission for each one, and the IPC layer denies any command that no
/// capability grants (see `capabilities/default.json`, which a test keeps equal to the table).
macro_rules! app_commands {
    ($($module:ident :: $name:ident ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?;)*) => {
        const COMMANDS: &[&str] = &[$(stringify!($name)),*];
    };
}

// The one list of the app's commands (see the file's header).
include!("src/command_list.rs");

/// Shown by the app when the frontend has not been built, so `cargo check`/`clippy` of the
/// workspace keep working on machines without Node.js.
const PLACEHOLDER_INDEX: &str = r#"<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <meta name="gemini-desktop-placeholder" content="ui-not-built" />
    <title>Gemini Desktop (UI not built)</title>
  </head>
  <body>
    <h1>Gemini Desktop: the UI has not been built</h1>
    <p>Run <code>npm --prefix ui ci &amp;&amp; npm --prefix ui run build</code>, then rebuild the app.</p>
  </body>
</html>
"#;

fn main() {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .expect("src-tauri has a parent directory");
    let config = root.join("tauri.conf.json");
    let dist = root.join("ui").join("dist");

    println!("cargo:rerun-if-changed={}", config.display());
    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("capabilities").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("src").join("command_list.rs").display()
    );
    // A directory here makes cargo rerun this script (and so re-embed the assets) whenever any
    // file below it changes.
    println!("cargo:rerun-if-changed={}", dist.display());

    if !dist.join("index.html").exists() {
        println!(
            "cargo:warning=ui/dist is missing: embedding a placeholder page. Build the UI with \
             `npm --prefix ui ci && npm --prefix ui run build` and rebuild."
        );
        std::fs::create_dir_all(&dist).expect("create ui/dist");
        std::fs::write(dist.join("index.html"), PLACEHOLDER_INDEX).expect("write placeholder");
    }

    let attributes = tauri_build::Attributes::new()
        .config_path(&config)
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(error) = tauri_build::try_build(attributes) {
        panic!("tauri-build failed: {error:#}");
    }
}
