//! Installing an extension through the real app (issue 20): `/extensions` → "Install
//! extension…" → a local folder (the `tests/fixtures/extensions/e2e-demo` fixture: an MCP server
//! running the repo's python fixture server, a custom command and a policy) → the consent screen
//! lists the server with its command line, the command and the policy before anything is
//! installed → Install → the panel lists it enabled, its copy is in `~/.gemini/extensions`; its
//! setting is set from the panel into the extension's `.env`; its command is offered in `/`
//! completion.
//!
//! Test ids: `extensions-panel`, `extensions-install-open`, `ext-install-source`,
//! `ext-install-preview`, `ext-consent`, `ext-server-launches`, `ext-commands`, `ext-policies`,
//! `ext-consent-install`, `ext-item` (`data-name`, `data-enabled`), `ext-setting` (`data-env`,
//! `data-set`), `ext-setting-edit`, `ext-setting-value`, `ext-setting-save`, `slash-suggestion`
//! (`data-name`).
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`; the python venv
//! comes from `scripts/install-mcp-test-deps.sh` (`GD_TEST_MCP_PYTHON` overrides it).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const NAME: &str = "e2e-demo";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The python with `mcp`; a missing one fails the test (no silent skip).
fn python() -> Result<PathBuf> {
    let python = std::env::var_os("GD_TEST_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/test-deps/venv-mcp/bin/python"));
    ensure!(
        python.exists(),
        "{} not found: run scripts/install-mcp-test-deps.sh or set GD_TEST_MCP_PYTHON",
        python.display()
    );
    Ok(python)
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The fixture extension as a user would have it: the folder, with the repo's fixture server
/// as its `server.py` and the test venv's python as the command (the fixture says `python3`).
fn extension_source(dir: &Path) -> Result<PathBuf> {
    let source = dir.join(NAME);
    copy_dir(
        &repo_root().join("tests/fixtures/extensions").join(NAME),
        &source,
    )?;
    std::fs::copy(
        repo_root().join("tests/fixtures/mcp/fixture_server.py"),
        source.join("server.py"),
    )?;
    let manifest_path = source.join("gemini-extension.json");
    let mut manifest: Value = serde_json::from_str(&std::fs::read_to_string(&manifest_path)?)?;
    manifest["mcpServers"]["e2e-demo-server"]["command"] = json!(python()?);
    manifest["settings"] = json!([
        {"name": "Greeting", "description": "What the server says", "envVar": "E2E_GREETING"}
    ]);
    std::fs::write(&manifest_path, serde_json::to_string_pretty(&manifest)?)?;
    Ok(source)
}

async fn shots(app: &App, what: &str, scroll_to: &str) -> Result<()> {
    for (width, theme) in [(1440, "light"), (800, "dark")] {
        gd_e2e::docs::resize(app, width).await?;
        gd_e2e::docs::theme(app, theme).await?;
        app.client()
            .execute(
                &format!(
                    "document.querySelector('[data-testid=\"{scroll_to}\"]')?.scrollIntoView();"
                ),
                vec![],
            )
            .await?;
        let shot = app.screenshot(&format!("{what}-{theme}-{width}")).await?;
        eprintln!("{what} screenshot: {}", shot.display());
    }
    gd_e2e::docs::theme(app, "light").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_extension_is_installed_through_the_consent_screen() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    let ws = ws.canonicalize()?;
    let source = extension_source(temp.path())?;
    let fake = FakeGemini::start(json!({"steps": [{"text": "unused"}]}));
    let app = App::launch_connected("extensions", &[&ws], &fake.base_url()).await?;

    // 1. The panel, empty; the install form takes the folder.
    app.type_and_enter("prompt-input", "/extensions").await?;
    app.wait_for_count("extensions-panel", "opened", |n| n == 1)
        .await?;
    app.click("extensions-install-open").await?;
    app.type_into("ext-install-source", source.to_str().context("UTF-8 path")?)
        .await?;
    app.click("ext-install-preview").await?;

    // 2. The consent screen: what it will start and add, before anything is installed.
    app.wait_for_count("ext-consent", "the consent screen", |n| n == 1)
        .await?;
    let launches = app.texts("ext-server-launches").await?;
    ensure!(
        launches.len() == 1 && launches[0].contains("server.py") && launches[0].contains("stdio"),
        "the server's command line: {launches:?}"
    );
    let commands = app.texts("ext-consent ext-commands").await?;
    ensure!(
        commands.iter().any(|c| c.contains("/e2e-hello")),
        "the command: {commands:?}"
    );
    let policies = app.texts("ext-consent ext-policies").await?;
    ensure!(
        policies.iter().any(|p| p.contains("run_shell_command")),
        "the policy: {policies:?}"
    );
    let installed = app.home().join(".gemini/extensions").join(NAME);
    ensure!(
        !installed.exists(),
        "nothing installed before Install: {}",
        installed.display()
    );
    shots(&app, "extension-consent", "ext-consent").await?;

    // 3. Install: listed and enabled, its copy in the user's extensions folder.
    app.click("ext-consent-install").await?;
    app.wait_for_attr(
        &format!("ext-item[data-name={NAME}]"),
        "data-enabled",
        "installed and enabled",
        |v| v == "true",
    )
    .await?;
    app.wait_until_gone("ext-consent", "the consent screen closed")
        .await?;
    ensure!(
        installed.join("gemini-extension.json").exists(),
        "installed into {}",
        installed.display()
    );
    // 4. Its setting, set from the panel: kept in the extension's `.env`.
    let setting = format!("ext-item[data-name={NAME}] ext-setting[data-env=E2E_GREETING]");
    app.click(&format!("{setting} ext-setting-edit")).await?;
    app.type_into(&format!("{setting} ext-setting-value"), "bonjour")
        .await?;
    app.click(&format!("{setting} ext-setting-save")).await?;
    app.wait_for_attr(&setting, "data-set", "the setting is set", |v| v == "true")
        .await?;
    let env = std::fs::read_to_string(installed.join(".env"))?;
    ensure!(env == "E2E_GREETING=\"bonjour\"\n", "the .env: {env:?}");

    app.click(&format!("ext-item[data-name={NAME}] ext-details-toggle"))
        .await?;
    shots(&app, "extensions-panel", "extensions-panel").await?;

    // 5. Its command is offered in `/` completion.
    app.client()
        .active_element()
        .await?
        .send_keys("\u{e00c}")
        .await?;
    app.wait_until_gone("extensions-panel", "the panel closed with Escape")
        .await?;
    app.type_into("prompt-input", "/e2e").await?;
    app.wait_for_count(
        "slash-suggestion[data-name=e2e-hello]",
        "the extension's command is offered",
        |n| n == 1,
    )
    .await?;
    app.close().await
}
