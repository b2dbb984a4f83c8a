//! The MCP panel in the real app: a python MCP server (the fixture server
//! over stdio, `mcp` 2.x from target/test-deps) configured in the workspace's
//! `.gemini/settings.json` starts with the session; the panel shows it
//! connected with its tools, the model's call of one of them runs, and
//! Disable / Enable stop and start it (persisted like `gemini mcp disable`).
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`;
//! the python venv comes from `scripts/install-mcp-test-deps.sh`
//! (`GD_TEST_MCP_PYTHON` overrides it).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::json;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_shows_a_real_stdio_server_connected_with_its_tools() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let script = repo_root().join("tests/fixtures/mcp/fixture_server.py");
    let settings = json!({"mcpServers": {"fixture": {
        "command": python()?,
        "args": [script, "stdio"],
        "trust": true,
        "description": "The test fixture server"
    }}});
    std::fs::create_dir_all(ws.join(".gemini"))?;
    std::fs::write(
        ws.join(".gemini/settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )?;
    let fake = FakeGemini::start_with_vars(
        json!({"steps": [
            {"functionCalls": [{"name": "@mcp:fixture:add", "args": {"a": 20, "b": 22}}]},
            {"text": "The sum is 42."}
        ]}),
        &[("WORKSPACE", ws.to_str().context("UTF-8 path")?)],
    );
    let app = App::launch_connected("mcp_panel", &[&ws], &fake.base_url()).await?;

    app.click("mcp-open").await?;
    app.wait_for_count("mcp-panel", "opened", |n| n == 1)
        .await?;
    // The panel may open before the session has listed its servers: wait for the row.
    app.wait_for_count("mcp-server", "one server row", |n| n == 1)
        .await?;
    let servers = app.attrs("mcp-server", "data-server").await?;
    ensure!(
        servers == [Some("fixture".to_owned())],
        "one server listed: {servers:?}"
    );
    // Live: the row turns connected when the real server answered discovery.
    app.wait_for_attr("mcp-server", "data-state", "connected", |s| {
        s == "connected"
    })
    .await?;
    app.wait_for_text("mcp-state", "says connected", |t| t.contains("Connected"))
        .await?;
    let meta = app.texts("mcp-meta").await?;
    ensure!(
        meta.len() == 1 && meta[0].starts_with("stdio · ") && meta[0].contains("trusted"),
        "transport and trust shown: {meta:?}"
    );

    app.click("mcp-expand").await?;
    app.wait_for_count("mcp-tool", "listed", |n| n >= 10)
        .await?;
    let tools = app.attrs("mcp-tool", "data-tool").await?;
    for expected in ["add", "echo", "image", "resource_link"] {
        ensure!(
            tools.contains(&Some(expected.to_owned())),
            "{expected} missing from {tools:?}"
        );
    }
    ensure!(
        !tools.contains(&Some("untyped".to_owned())),
        "a tool without schema types is not offered: {tools:?}"
    );
    let texts = app.texts("mcp-tool").await?;
    ensure!(
        texts.iter().any(|t| t.contains("Add two integers.")),
        "descriptions shown: {texts:?}"
    );
    // The server's log tail (our own notes go there too, in context).
    app.wait_for_text("mcp-log", "shows the log tail", |t| {
        t.contains("skipping tool 'untyped'")
    })
    .await?;
    app.screenshot("mcp-panel").await?;
    app.click("mcp-close").await?;
    app.wait_until_gone("mcp-panel", "closed").await?;

    // The model calls the server's tool: it runs and its result reaches the model.
    app.type_and_enter("prompt-input", "Add 20 and 22").await?;
    app.wait_for_last_text("message-model", "showed the answer", |t| {
        t.contains("The sum is 42.")
    })
    .await?;
    app.wait_for_attr("tool-card", "data-state", "succeeded", |s| s == "success")
        .await?;
    // Titled with the server's and the tool's own names core reports, not `mcp_fixture_add`.
    app.wait_for_last_text("tool-title", "titled server › tool", |t| {
        t == "fixture › add"
    })
    .await?;
    let requests = fake.main_requests();
    ensure!(
        requests.len() == 2,
        "two model requests: {}",
        requests.len()
    );
    let body = requests[1].body.clone().context("a JSON body")?;
    let response = &body["contents"]
        .as_array()
        .context("contents")?
        .last()
        .context("last")?["parts"][0]["functionResponse"];
    ensure!(
        response["name"] == "mcp_fixture_add"
            && response["response"]["output"] == "<untrusted_context>\n42\n</untrusted_context>",
        "the MCP result reached the model: {response}"
    );

    // Disable: the server stops, the choice is written where Gemini CLI
    // keeps it; Enable starts it again with its tools.
    app.click("mcp-open").await?;
    app.wait_for_count("mcp-panel", "opened again", |n| n == 1)
        .await?;
    app.wait_for_text("mcp-toggle", "offers Disable", |t| t.trim() == "Disable")
        .await?;
    app.click("mcp-toggle").await?;
    app.wait_for_attr("mcp-server", "data-state", "disabled", |s| s == "disabled")
        .await?;
    app.wait_for_text("mcp-toggle", "offers Enable", |t| t.trim() == "Enable")
        .await?;
    let file = app.home().join(".gemini/mcp-server-enablement.json");
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&file).with_context(|| format!("read {}", file.display()))?,
    )?;
    ensure!(
        saved == json!({"fixture": {"enabled": false}}),
        "the choice is persisted: {saved}"
    );
    app.click("mcp-toggle").await?;
    app.wait_for_attr("mcp-server", "data-state", "connected again", |s| {
        s == "connected"
    })
    .await?;
    app.click("mcp-expand").await?;
    app.wait_for_count("mcp-tool", "listed again", |n| n >= 10)
        .await?;
    app.close().await
}

/// Signing in to an OAuth-protected HTTP server from the panel: the real
/// OAuth fixture (tests/fixtures/mcp/oauth_server.py) answers 401, the row
/// offers Authenticate, the app runs the sign-in with `GEMINI_DESKTOP_BROWSER`
/// playing the browser (a python one-liner that follows the authorization
/// redirect back to the app's loopback listener), and the server connects
/// with its tools; the tokens land in the app's secret store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authenticate_signs_in_to_an_oauth_server() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let python = python()?;
    // The fixture writes its port to a file once it listens.
    let port_file = temp.path().join("oauth-port");
    let mut fixture = std::process::Command::new(&python)
        .arg(repo_root().join("tests/fixtures/mcp/oauth_server.py"))
        .arg(&port_file)
        .stdin(std::process::Stdio::null())
        .spawn()?;
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let fixture = Kill(&mut fixture);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let port: u16 = loop {
        if let Ok(text) = std::fs::read_to_string(&port_file) {
            break text.trim().parse()?;
        }
        ensure!(
            std::time::Instant::now() < deadline,
            "the OAuth fixture did not start"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::create_dir_all(ws.join(".gemini"))?;
    std::fs::write(
        ws.join(".gemini/settings.json"),
        serde_json::to_string_pretty(
            &json!({"mcpServers": {"remote": {"httpUrl": url, "trust": true}}}),
        )?,
    )?;
    let browser = temp.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nexec '{}' -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n",
            python.display()
        ),
    )?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755))?;
    }
    let fake = FakeGemini::start_with_vars(
        json!({"steps": [{"text": "unused"}]}),
        &[("WORKSPACE", ws.to_str().context("UTF-8 path")?)],
    );
    let base = fake.base_url();
    let app = App::launch_with_env(
        "mcp_oauth",
        &[&ws],
        &[
            ("GEMINI_API_KEY", "e2e-key"),
            ("GOOGLE_GEMINI_BASE_URL", &base),
            ("GEMINI_DESKTOP_SECRET_STORE", "file"),
            (
                "GEMINI_DESKTOP_BROWSER",
                browser.to_str().context("UTF-8 path")?,
            ),
        ],
    )
    .await?;
    app.wait_ready().await?;
    app.click("mcp-open").await?;
    app.wait_for_attr("mcp-server", "data-state", "needs_auth", |s| {
        s == "needs_auth"
    })
    .await?;
    app.wait_for_text("mcp-error", "says how to sign in", |t| {
        t.contains("401") && t.contains("Authenticate")
    })
    .await?;
    app.click("mcp-authenticate").await?;
    app.wait_for_attr("mcp-server", "data-state", "connected", |s| {
        s == "connected"
    })
    .await?;
    app.click("mcp-expand").await?;
    app.wait_for_count("mcp-tool", "listed", |n| n >= 10)
        .await?;
    app.screenshot("mcp-oauth-connected").await?;
    let secrets = app.home().join(".gemini/gemini-desktop/secrets.json");
    let stored =
        std::fs::read_to_string(&secrets).with_context(|| format!("read {}", secrets.display()))?;
    ensure!(stored.contains("mcp-oauth"), "the sign-in is stored");
    drop(fixture);
    app.close().await
}

/// "Add server" in the MCP panel: a wrong name is explained and nothing typed is lost; the
/// fixture server added by its command line lands in the workspace's settings.json (written by
/// the settings writer) and the reloaded session shows it connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_added_in_the_panel_is_written_and_connects() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    std::fs::create_dir_all(ws.join(".gemini"))?;
    std::fs::write(
        ws.join(".gemini/settings.json"),
        "{\n  // kept\n  \"ui\": {\"theme\": \"light\"}\n}\n",
    )?;
    let fake = FakeGemini::start(json!({"steps": [{"text": "ok"}]}));
    let base = fake.base_url();
    let app = App::launch_with_env(
        "mcp_add_server",
        &[&ws],
        &[
            ("GEMINI_API_KEY", "e2e-key"),
            ("GOOGLE_GEMINI_BASE_URL", &base),
        ],
    )
    .await?;
    app.wait_ready().await?;
    // The header's model pill grows when the session's model list arrives, moving the buttons
    // beside it: click once it has (a click computed before the move can land on Settings).
    app.wait_for_script(
        "return document.querySelector('[data-testid=connection-status]')?.dataset.state === 'connected' \
         && !!document.querySelector('[data-testid=model-select]');",
        "the session is connected and its model list is in the header",
    )
    .await?;
    app.click("mcp-open").await?;
    app.click("mcp-add-open").await?;
    let script = repo_root().join("tests/fixtures/mcp/fixture_server.py");
    let command = format!(
        "'{}' '{}' stdio",
        python()?.display(),
        script.canonicalize()?.display()
    );
    app.replace_text("mcp-add-name", "my fixture").await?;
    app.replace_text("mcp-add-command", &command).await?;
    app.select_option("mcp-add-scope", "workspace").await?;
    app.click("mcp-add-submit").await?;
    app.wait_for_text("mcp-add-error", "explains the name", |t| {
        t.contains("cannot be a server name")
    })
    .await?;
    ensure!(
        app.texts("mcp-add-command").await? == [command.clone()],
        "the command is kept"
    );

    app.replace_text("mcp-add-name", "fixture").await?;
    app.click("mcp-add-submit").await?;
    app.wait_for_text("mcp-add-status", "says where it went", |t| {
        t.starts_with("Added fixture to ") && t.contains(".gemini/settings.json")
    })
    .await?;
    app.wait_for_attr("mcp-server", "data-state", "connected", |s| {
        s == "connected"
    })
    .await?;
    let text = std::fs::read_to_string(ws.join(".gemini/settings.json"))?;
    ensure!(text.contains("// kept"), "the comment stays: {text}");
    ensure!(
        text.contains("\"fixture\"") && text.contains("stdio"),
        "the entry: {text}"
    );
    app.screenshot("mcp-added").await?;
    app.close().await
}
