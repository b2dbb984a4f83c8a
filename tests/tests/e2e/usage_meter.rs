//! The usage meter and panel through the real app: after a turn against the fake Gemini server,
//! the header's meter and the usage panel show exactly the `usageMetadata` the server sent
//! (summed by the core over the turn's two requests), the turn's row and footer too, and on an
//! API key the quota is reported as unknown; signed in with Google (Code Assist), the meter and
//! the panel show the buckets the fake `retrieveUserQuota` answered, with their reset times.
//!
//! Test ids (see `README.md` of this crate): `usage-meter`, `usage-meter-tokens`, `usage-panel`,
//! `usage-total-prompt`, `usage-total-cached`, `usage-total-output`, `usage-total-thoughts`,
//! `usage-total-tool`, `usage-total-total`, `usage-total-requests`, `usage-turn-row`,
//! `usage-turn-prompt`, `usage-lines-added`, `usage-quota`, `usage-quota-unknown`,
//! `turn-usage-prompt`.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use gd_fake_gemini::{FakeGemini, FakeOAuth};
use serde_json::{Value, json};

fn usage(prompt: u64, cached: u64, output: u64, thoughts: u64, tool: u64) -> Value {
    json!({"promptTokenCount": prompt, "cachedContentTokenCount": cached,
           "candidatesTokenCount": output, "thoughtsTokenCount": thoughts,
           "toolUsePromptTokenCount": tool,
           "totalTokenCount": prompt + output + thoughts + tool})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meter_and_panel_show_the_servers_usage_metadata() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    // Two requests in one turn: a file written (3 lines), then the answer.
    let fake = FakeGemini::start_with_vars(
        json!({"steps": [
            {"functionCalls": [{"name": "write_file", "args": {
                "file_path": "{{WORKSPACE}}/notes.md", "content": "a\nb\nc\n"}}],
             "usage": usage(12_345, 2_000, 67, 89, 11)},
            {"text": "Wrote the notes.", "usage": usage(13_000, 5_000, 33, 11, 0)}
        ]}),
        &[("WORKSPACE", ws.to_str().unwrap_or_default())],
    );
    let app = App::launch_connected("usage_meter", &[&ws], &fake.base_url()).await?;
    // Before any turn: nothing used.
    app.wait_for_attr("usage-meter-tokens", "data-value", "starts at zero", |v| {
        v == "0"
    })
    .await?;

    app.type_and_enter("prompt-input", "Write the notes")
        .await?;
    // The write asks first (the default mode).
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "answered", |t| {
        t.contains("Wrote the notes.")
    })
    .await?;
    let prompt = 12_345 + 13_000;
    let cached = 2_000 + 5_000;
    let output = 67 + 33;
    let thoughts = 89 + 11;
    let tool = 11;
    let total = prompt + output + thoughts + tool;
    app.wait_for_attr(
        "usage-meter-tokens",
        "data-value",
        "the turn's tokens",
        |v| v == total.to_string(),
    )
    .await?;
    let footer = app.texts("turn-usage-prompt").await?;
    ensure!(
        footer.last().map(String::as_str) == Some("↑25,345"),
        "the turn's footer: {footer:?}"
    );

    app.click("usage-meter").await?;
    app.wait_for_count("usage-panel", "opens", |n| n == 1)
        .await?;
    let n = |v: u64| {
        let s = v.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    for (id, value) in [
        ("usage-total-prompt", prompt),
        ("usage-total-output", output),
        ("usage-total-thoughts", thoughts),
        ("usage-total-tool", tool),
        ("usage-total-total", total),
        ("usage-total-requests", 2),
    ] {
        app.wait_for_text(id, "shows the server's figure", |t| t.trim() == n(value))
            .await?;
    }
    app.wait_for_text("usage-total-cached", "cached", |t| {
        t.starts_with(&n(cached))
    })
    .await?;
    app.wait_for_text("usage-lines-added", "the written lines", |t| t == "+3")
        .await?;
    let rows = app.texts("usage-turn-prompt").await?;
    ensure!(rows == [n(prompt)], "one turn row: {rows:?}");
    app.wait_for_attr("usage-quota", "data-source", "an API key", |s| {
        s == "gemini_api"
    })
    .await?;
    app.wait_for_text("usage-quota-unknown", "says unknown", |t| {
        t.contains("does not report")
    })
    .await?;
    app.screenshot("usage-panel").await?;
    app.close().await
}

// ----- Google sign-in (as tests/e2e/signin.rs drives it) ---------------------------------------------

/// A browser stand-in: writes the URL it is asked to open to `opened`.
fn browser_script(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    use std::os::unix::fs::PermissionsExt;
    let opened = dir.join("opened-url");
    let script = dir.join("browser.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > '{}.tmp' && mv '{0}.tmp' '{0}'\n",
            opened.display()
        ),
    )?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    Ok((script, opened))
}

/// Waits until the browser script has written the URL (a file: no event to wait on).
async fn opened_url(opened: &Path) -> Result<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(url) = std::fs::read_to_string(opened)
            && !url.is_empty()
        {
            return Ok(url);
        }
        ensure!(
            Instant::now() < deadline,
            "the app did not open the browser"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// One HTTP/1.1 GET on loopback: status and `Location`.
fn http_get(url: &str) -> Result<(u16, Option<String>)> {
    let rest = url.strip_prefix("http://").context("a loopback URL")?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = TcpStream::connect(host)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let head = response.split("\r\n\r\n").next().unwrap_or_default();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .context("a status line")?;
    let location = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    Ok((status, location))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_assist_quota_buckets_show_in_the_meter_and_panel() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "Hello over Code Assist."}],
        "code_assist": {"quota": {"buckets": [
            {"modelId": "gemini-2.5-flash", "tokenType": "REQUESTS", "remainingFraction": 0.42,
             "remainingAmount": "42", "resetTime": "2031-02-03T04:05:06Z"},
            {"modelId": "gemini-2.5-pro", "tokenType": "REQUESTS", "remainingFraction": 0.05,
             "resetTime": "2031-02-03T05:00:00Z"}
        ]}}
    }));
    let oauth = FakeOAuth::start();
    let (script, opened) = browser_script(temp.path())?;
    let mut env: Vec<(&str, String)> = oauth.env_vars();
    env.extend([
        ("CODE_ASSIST_ENDPOINT", fake.base_url()),
        ("GEMINI_DESKTOP_ONBOARD_POLL_MS", "5".into()),
        ("GEMINI_DESKTOP_BROWSER", script.display().to_string()),
        ("GEMINI_MODEL", "gemini-2.5-flash".into()),
    ]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let app = App::launch_with_keyring("usage_meter_code_assist", &[&ws], &env).await?;
    app.wait_ready().await?;
    app.click("signin-google").await?;
    let url = opened_url(&opened).await?;
    let (status, callback) = http_get(&url)?;
    ensure!(
        status == 302 || status == 303,
        "the fake Google answered {status}"
    );
    let (status, _) = http_get(&callback.context("a redirect to the app")?)?;
    ensure!(status == 200, "the app's callback answered {status}");
    app.wait_for_text("connection-text", "connected", |t| {
        t.contains("gemini-2.5-flash")
    })
    .await?;

    // The session's model's bucket, asked for when the session started.
    app.wait_for_attr("usage-meter-quota", "data-value", "the flash bucket", |v| {
        v == "0.42"
    })
    .await?;
    app.wait_for_text("usage-meter-quota", "42%", |t| t == "42%")
        .await?;
    let title = app.attrs("usage-meter", "title").await?;
    let title = title.last().cloned().flatten().unwrap_or_default();
    ensure!(
        title.contains("Quota for gemini-2.5-flash: 42% left, resets") && title.contains("2031"),
        "the tooltip: {title}"
    );
    let asked = fake
        .requests()
        .into_iter()
        .filter(|r| r.kind == "code_assist_quota")
        .collect::<Vec<_>>();
    ensure!(
        asked.first().and_then(|r| r.body.clone()) == Some(json!({"project": "fake-project"})),
        "retrieveUserQuota for the project: {:?}",
        asked.iter().map(|r| &r.body).collect::<Vec<_>>()
    );

    app.click("usage-meter").await?;
    app.wait_for_count("usage-quota-bucket", "both buckets", |n| n == 2)
        .await?;
    let models = app.attrs("usage-quota-bucket", "data-model").await?;
    ensure!(
        models
            == [
                Some("gemini-2.5-flash".into()),
                Some("gemini-2.5-pro".into())
            ],
        "{models:?}"
    );
    let resets = app.attrs("usage-quota-reset", "data-reset").await?;
    ensure!(
        resets
            == [
                Some("2031-02-03T04:05:06Z".into()),
                Some("2031-02-03T05:00:00Z".into())
            ],
        "{resets:?}"
    );
    let percents = app.texts("usage-quota-percent").await?;
    ensure!(percents == ["42%", "5%"], "{percents:?}");
    app.screenshot("code-assist-quota").await?;
    app.close().await
}
