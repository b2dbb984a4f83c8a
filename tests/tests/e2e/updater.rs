//! Signed updates (issue 35), against a manifest and a package served from loopback and keys
//! made at test time with the real Tauri CLI (`tauri signer generate` / `sign`; no private key
//! is ever committed). The app trusts the test's public key through
//! `GEMINI_DESKTOP_UPDATER_PUBKEY`, as a build made by `scripts/package.sh` trusts its own.
//!
//! One launch, in order: updates are off by default and nothing is asked; a URL in the user's
//! settings is checked and the good update is offered with its notes, downloaded, verified and
//! (this being a build from source) saved with its SHA-256; then a package signed with another
//! key, a signature made for another version, a downgrade and an unreachable server are each
//! refused with their message, and nothing is saved.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail, ensure};
use gd_e2e::App;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the loopback server serves (path → body) and how many requests it had.
#[derive(Default)]
struct Served {
    files: HashMap<String, Vec<u8>>,
    requests: usize,
}

/// A minimal HTTP/1.1 server for static bodies: GET only, one request per connection.
async fn serve(served: Arc<Mutex<Served>>) -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let served = served.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head);
                let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let body = {
                    let mut served = served.lock().unwrap();
                    served.requests += 1;
                    served.files.get(&path).cloned()
                };
                let response = match body {
                    Some(body) => [
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .into_bytes(),
                        body,
                    ]
                    .concat(),
                    None => {
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_vec()
                    }
                };
                let _ = stream.write_all(&response).await;
            });
        }
    });
    Ok(port)
}

/// The Tauri CLI the UI's `npm ci` installed.
fn tauri_cli() -> Result<PathBuf> {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/node_modules/.bin/tauri");
    ensure!(
        cli.exists(),
        "{} is missing: run `npm --prefix ui ci` (the Tauri CLI signs the test's updates)",
        cli.display()
    );
    Ok(cli)
}

fn run(cli: &Path, args: &[&str], dir: &Path) -> Result<()> {
    let out = std::process::Command::new(cli)
        .args(args)
        .current_dir(dir)
        .output()
        .with_context(|| format!("run tauri {args:?}"))?;
    ensure!(
        out.status.success(),
        "tauri {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// A new key pair in `dir` as `<name>.key` / `<name>.key.pub`; returns the public key's text.
fn keypair(cli: &Path, dir: &Path, name: &str) -> Result<String> {
    let key = format!("{name}.key");
    run(
        cli,
        &["signer", "generate", "--ci", "-p", "", "-w", &key],
        dir,
    )?;
    Ok(std::fs::read_to_string(dir.join(format!("{key}.pub")))?
        .trim()
        .to_owned())
}

/// `file` signed with `<key>.key` for `version`: the `.sig` text the manifest carries.
fn sign(cli: &Path, dir: &Path, key: &str, version: &str, file: &str) -> Result<String> {
    run(
        cli,
        &[
            "signer",
            "sign",
            "-f",
            &format!("{key}.key"),
            "-p",
            "",
            "--app-version",
            version,
            file,
        ],
        dir,
    )?;
    Ok(std::fs::read_to_string(dir.join(format!("{file}.sig")))?
        .trim()
        .to_owned())
}

/// A Tauri v2 static manifest offering `version` with `url` and `signature` for this system.
fn manifest(version: &str, url: &str, signature: &str) -> Vec<u8> {
    let platform = json!({ "url": url, "signature": signature });
    json!({
        "version": version,
        "notes": "Faster startup.\nImages in the prompt box.",
        "pub_date": "2026-12-01T10:00:00Z",
        "platforms": { "linux-x86_64": platform, "linux-aarch64": platform },
    })
    .to_string()
    .into_bytes()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

async fn set_url(app: &App, url: &str) -> Result<()> {
    let set = app
        .invoke(
            "settings_set",
            json!({"scope": "user", "key": "update.manifestUrl", "value": url}),
        )
        .await?;
    ensure!(set.is_ok(), "settings_set update.manifestUrl: {set:?}");
    Ok(())
}

/// Opens the About view from the Panels menu.
async fn open_about(app: &App) -> Result<()> {
    app.click("panels-open").await?;
    let about = app
        .client()
        .find(fantoccini::Locator::Css(
            "[data-testid=panels-item][data-panel=about]",
        ))
        .await
        .context("the Panels menu's About")?;
    app.click_element(&about).await.context("click About")?;
    app.wait_for_count("about-panel", "the About view opens", |n| n == 1)
        .await?;
    Ok(())
}

/// Clicks "Check now" and waits until that check has answered (the About view counts them).
async fn check_now(app: &App) -> Result<()> {
    let checks = |attrs: Vec<Option<String>>| {
        attrs
            .first()
            .cloned()
            .flatten()
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0)
    };
    let before = checks(app.attrs("about-updates", "data-checks").await?);
    app.click("about-check").await?;
    app.wait_for_attr("about-updates", "data-checks", "the check answers", |n| {
        n.parse::<u32>().is_ok_and(|n| n > before)
    })
    .await?;
    Ok(())
}

/// A release as the test publishes it: keys made now, the package signed three ways, and the
/// loopback server with the good manifest at `/latest.json`.
struct Release {
    _keys: tempfile::TempDir,
    good_pub: String,
    package: Vec<u8>,
    good_sig: String,
    other_sig: String,
    old_sig: String,
    served: Arc<Mutex<Served>>,
    base: String,
    package_url: String,
}

impl Release {
    async fn publish() -> Result<Self> {
        let cli = tauri_cli()?;
        let keys = tempfile::tempdir()?;
        let dir = keys.path();
        let good_pub = keypair(&cli, dir, "good")?;
        keypair(&cli, dir, "other")?;
        let package = b"Gemini Desktop 9.9.9, a package as the bundler makes it".to_vec();
        for name in ["gd_9.9.9_amd64.deb", "other.deb", "old.deb"] {
            std::fs::write(dir.join(name), &package)?;
        }
        let good_sig = sign(&cli, dir, "good", "9.9.9", "gd_9.9.9_amd64.deb")?;
        let other_sig = sign(&cli, dir, "other", "9.9.9", "other.deb")?;
        let old_sig = sign(&cli, dir, "good", "9.9.8", "old.deb")?;
        let served = Arc::new(Mutex::new(Served::default()));
        let port = serve(served.clone()).await?;
        let base = format!("http://127.0.0.1:{port}");
        let package_url = format!("{base}/releases/gd_9.9.9_amd64.deb");
        let release = Self {
            _keys: keys,
            good_pub,
            package,
            good_sig,
            other_sig,
            old_sig,
            served,
            base,
            package_url,
        };
        release.put("/releases/gd_9.9.9_amd64.deb", release.package.clone());
        release.put(
            "/latest.json",
            manifest("9.9.9", &release.package_url, &release.good_sig),
        );
        Ok(release)
    }

    fn put(&self, path: &str, body: Vec<u8>) {
        self.served
            .lock()
            .unwrap()
            .files
            .insert(path.to_owned(), body);
    }

    fn requests(&self) -> usize {
        self.served.lock().unwrap().requests
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_are_off_by_default_then_signed_ones_are_offered_and_bad_ones_refused() -> Result<()>
{
    let release = Release::publish().await?;
    let Release {
        good_pub,
        package,
        good_sig,
        other_sig,
        old_sig,
        base,
        package_url,
        ..
    } = &release;
    let put = |path: &str, body: Vec<u8>| release.put(path, body);
    let workspace = tempfile::tempdir()?;
    let app = App::launch_with_env(
        "updater",
        &[workspace.path()],
        &[("GEMINI_DESKTOP_UPDATER_PUBKEY", good_pub)],
    )
    .await?;
    app.wait_ready().await?;

    // Off by default: the About view says so, and nothing was asked of anyone.
    open_about(&app).await?;
    app.wait_for_text("about-updates-off", "updates are off", |t| {
        t.contains("never asks")
    })
    .await?;
    let commit = app.texts("about-commit").await?.join("");
    ensure!(
        commit.len() == 12 || commit == "unknown",
        "the About view shows the commit: {commit:?}"
    );
    ensure!(release.requests() == 0, "nothing asked the server");
    ensure!(
        app.count("update-notice").await? == 0,
        "no notice without updates"
    );

    // On: the good update is offered with its notes.
    set_url(&app, &format!("{base}/latest.json")).await?;
    app.click("about-close").await?;
    open_about(&app).await?;
    check_now(&app).await?;
    app.wait_for_text("about-offer", "the offer", |t| t.contains("9.9.9"))
        .await?;
    app.wait_for_text("update-available", "the notice", |t| {
        t == "Version 9.9.9 is available"
    })
    .await?;
    app.wait_for_text("update-notes", "the notes", |t| {
        t.contains("Faster startup.") && t.contains("Images in the prompt box.")
    })
    .await?;
    // Verified and saved (a build from source cannot replace itself), with its SHA-256: from the
    // notice's button, the About view closed.
    app.click("about-close").await?;
    app.wait_for_text("update-install", "the button", |t| t == "Download 9.9.9")
        .await?;
    app.click("update-install").await?;
    let saved = app
        .wait_for_text("update-saved-path", "the saved package", |t| !t.is_empty())
        .await?;
    let saved = PathBuf::from(saved);
    ensure!(
        saved.starts_with(app.home()),
        "saved in the user's Downloads: {}",
        saved.display()
    );
    ensure!(
        std::fs::read(&saved)? == *package,
        "the saved file is the package"
    );
    let want_sha: String = Sha256::digest(package)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let shown_sha = app.texts("update-sha256").await?.join("");
    ensure!(
        shown_sha == want_sha,
        "the checksum shown is the package's: {shown_sha}"
    );
    let shown_link = app.texts("update-link").await?.join("");
    ensure!(shown_link == *package_url, "the link: {shown_link}");
    let downloads = saved
        .parent()
        .context("the Downloads folder")?
        .to_path_buf();
    let before = files_in(&downloads);
    open_about(&app).await?;

    // Each bad manifest: the check or the install refuses it with its message; nothing saved.
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "a package signed with another key",
            manifest("9.9.9", package_url, other_sig),
            "signature does not match",
        ),
        (
            "a signature made for another version",
            manifest("9.9.9", package_url, old_sig),
            "is for version 9.9.8, but the manifest announces 9.9.9",
        ),
        (
            "a downgrade",
            manifest("0.0.1", package_url, good_sig),
            "offers version 0.0.1, which is older than this one",
        ),
        (
            "an unreachable server",
            Vec::new(),
            "Could not reach the update server",
        ),
    ];
    for (what, body, message) in cases {
        if body.is_empty() {
            // A port nothing listens on any more.
            let closed = std::net::TcpListener::bind("127.0.0.1:0")?
                .local_addr()?
                .port();
            set_url(&app, &format!("http://127.0.0.1:{closed}/latest.json")).await?;
        } else {
            put("/latest.json", body);
        }
        check_now(&app).await?;
        if app.count("about-offer").await? == 1 {
            app.click("about-install").await?;
        }
        let shown = app
            .wait_for_text("update-error", what, |t| t.contains(message))
            .await
            .with_context(|| format!("{what}: the refusal"))?;
        ensure!(
            shown.ends_with("Nothing was changed."),
            "{what}: says nothing changed: {shown}"
        );
        ensure!(
            files_in(&downloads) == before,
            "{what}: nothing was saved ({:?})",
            files_in(&downloads)
        );
    }
    if app.count("update-available").await? != 0 {
        bail!("no offer stays on show after a refusal");
    }
    let status: Value = app
        .invoke("update_status", json!({}))
        .await?
        .map_err(|e| anyhow::anyhow!("update_status: {e}"))?;
    ensure!(
        status["install"]["kind"] == "download",
        "a debug build is not a package: {status}"
    );
    app.close().await
}

/// The README's pictures of updates: the notice over a live conversation (light and dark, 1440
/// and 800 px), the About view with the offer, the verified download and a refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "documentation screenshots: run by scripts/docs-screenshots.sh"]
async fn docs_updates() -> Result<()> {
    use gd_e2e::docs::{out_dir, resize, series, shot};
    use gd_fake_gemini::FakeGemini;

    let release = Release::publish().await?;
    let fake = FakeGemini::start(json!({"steps": [
        {"text": "The build is green: every test passed."}
    ]}));
    let workspace = tempfile::tempdir()?;
    let app = App::launch_connected_with_env(
        "docs_updates",
        &[workspace.path()],
        &fake.base_url(),
        &[("GEMINI_DESKTOP_UPDATER_PUBKEY", &release.good_pub)],
    )
    .await?;
    let out = out_dir(&app);
    std::fs::create_dir_all(&out)?;
    app.type_and_enter("prompt-input", "Is the build green?")
        .await?;
    app.wait_for_last_text("message-model", "answered", |t| t.contains("green"))
        .await?;

    set_url(&app, &format!("{}/latest.json", release.base)).await?;
    open_about(&app).await?;
    check_now(&app).await?;
    app.wait_for_text("about-offer", "the offer", |t| t.contains("9.9.9"))
        .await?;
    resize(&app, 1100).await?;
    shot(&app, &out, "about-update-light-1100").await?;
    app.click("about-close").await?;
    app.wait_for_count("about-panel", "closed", |n| n == 0)
        .await?;
    series(&app, &out, "update-notice", &[1440, 800]).await?;

    resize(&app, 1100).await?;
    app.click("update-install").await?;
    app.wait_for_count("update-saved", "saved", |n| n == 1)
        .await?;
    shot(&app, &out, "update-saved-light-1100").await?;

    release.put(
        "/latest.json",
        manifest("9.9.9", &release.package_url, &release.other_sig),
    );
    open_about(&app).await?;
    check_now(&app).await?;
    app.click("about-install").await?;
    app.wait_for_text("update-error", "refused", |t| t.contains("signature"))
        .await?;
    app.click("about-close").await?;
    app.wait_for_count("about-panel", "closed", |n| n == 0)
        .await?;
    shot(&app, &out, "update-refused-light-1100").await?;
    app.close().await
}

/// An app installed from the `.deb` installs a signed update through the package manager: run
/// as root on a throwaway machine by `scripts/test-update-install.sh`, which installs the older
/// package, points `GD_E2E_APP` at `/usr/bin/gemini-desktop` and names the newer package in
/// `GD_UPDATE_DEB` (its version in `GD_UPDATE_VERSION`, a file only it installs in
/// `GD_UPDATE_MARKER`). The installed app is a debug-profile package (`tauri bundle --debug`), which
/// may fetch a manifest over plain http from loopback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "installs a package: run by scripts/test-update-install.sh"]
async fn an_installed_deb_takes_the_signed_update_through_the_package_manager() -> Result<()> {
    let deb = PathBuf::from(std::env::var("GD_UPDATE_DEB").context("GD_UPDATE_DEB")?);
    let version = std::env::var("GD_UPDATE_VERSION").context("GD_UPDATE_VERSION")?;
    let cli = tauri_cli()?;
    let keys = tempfile::tempdir()?;
    let public = keypair(&cli, keys.path(), "release")?;
    std::fs::copy(&deb, keys.path().join("update.deb"))?;
    let signature = sign(&cli, keys.path(), "release", &version, "update.deb")?;
    let served = Arc::new(Mutex::new(Served::default()));
    let port = serve(served.clone()).await?;
    let url = format!("http://127.0.0.1:{port}/gemini-desktop_{version}_amd64.deb");
    let platform = json!({ "url": url, "signature": signature });
    {
        let mut served = served.lock().unwrap();
        served.files.insert(
            format!("/gemini-desktop_{version}_amd64.deb"),
            std::fs::read(keys.path().join("update.deb"))?,
        );
        served.files.insert(
            "/latest.json".into(),
            json!({
                "version": version,
                "notes": "The package manager installs this one.",
                "platforms": {
                    "linux-x86_64-deb": platform,
                    "linux-x86_64": { "url": "http://127.0.0.1:1/wrong", "signature": "x" },
                },
            })
            .to_string()
            .into_bytes(),
        );
    }

    let workspace = tempfile::tempdir()?;
    let app = App::launch_with_env(
        "updater_deb",
        &[workspace.path()],
        &[("GEMINI_DESKTOP_UPDATER_PUBKEY", &public)],
    )
    .await?;
    app.wait_ready().await?;
    set_url(&app, &format!("http://127.0.0.1:{port}/latest.json")).await?;
    open_about(&app).await?;
    app.wait_for_text("about-install-way", "installed from the .deb", |t| {
        t.contains(".deb package")
    })
    .await?;
    check_now(&app).await?;
    app.wait_for_text("about-install", "offers to install", |t| {
        t == format!("Install {version}")
    })
    .await?;
    app.click("about-install").await?;
    app.wait_for_text("update-installed", "installed", |t| t.contains(&version))
        .await?;
    let installed = std::process::Command::new("dpkg-query")
        .args([
            "-W",
            "-f",
            "${Version} ${db:Status-Status}",
            "gemini-desktop",
        ])
        .output()?;
    let installed = String::from_utf8_lossy(&installed.stdout).into_owned();
    ensure!(
        installed == format!("{version} installed"),
        "dpkg has the update: {installed:?}"
    );
    // The newer package's own file (the script marks it) is on disk: its contents went in.
    let marker = std::env::var("GD_UPDATE_MARKER").context("GD_UPDATE_MARKER")?;
    ensure!(
        Path::new(&marker).is_file(),
        "the update's files are installed: {marker} is missing"
    );
    app.close().await
}
