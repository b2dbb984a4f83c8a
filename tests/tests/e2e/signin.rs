//! Signing in through the real app, with secrets in a real gnome-keyring on the app's private
//! session bus:
//! - "Sign in with Google" against the fake Google OAuth server and the fake Code Assist
//!   server, the test acting as the browser (the app runs `GEMINI_DESKTOP_BROWSER` with the
//!   authorization URL; the test follows it, the fake redirects to the app's loopback callback);
//!   then a prompt goes through the Code Assist transport with the bearer token, the account
//!   view changes the Code Assist project (the next request carries it), a restart keeps the
//!   user signed in with that project, and a sign-in Google revoked leads back to the sign-in
//!   screen with the reason;
//! - an API key entered on the sign-in screen, validated against the fake Gemini API, used by
//!   the chat, and deleted by Sign out (the sign-in screen is back, also after a restart).
//!
//! Test ids (see this crate's README): `signin-screen`, `signin-google`, `signin-stage`,
//! `signin-api-key`, `api-key-input`, `api-key-save`, `account-open`, `account-label`,
//! `auth-status`, `account-email`, `auth-store`, `auth-method`, `project-list-load`,
//! `project-select`, `project-pick`, `auth-project`, `auth-close`, plus the chat ones.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use gd_e2e::App;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use gd_fake_gemini::{FakeGemini, FakeOAuth, credential_fingerprint};
use serde_json::json;

const MODEL: &str = "gemini-2.5-flash";

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

/// Waits until the browser script has written the URL (renamed into place, so complete).
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
            "the app did not open the browser (no {})",
            opened.display()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// One HTTP/1.1 GET on loopback, as a browser would send it: status and `Location`.
fn http_get(url: &str) -> Result<(u16, Option<String>, String)> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("not a plain-HTTP loopback URL: {url}"))?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = TcpStream::connect(host).with_context(|| format!("connect {host}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: gd-e2e-browser\r\nAccept: text/html\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .with_context(|| format!("no status line in {head:?}"))?;
    let location = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    Ok((status, location, body.to_owned()))
}

/// Follows the authorization URL like a browser: the fake Google "consents" and redirects to
/// the app's loopback callback, which answers with its page.
fn act_as_browser(url: &str) -> Result<String> {
    let (status, location, body) = http_get(url)?;
    ensure!(
        status == 302 || status == 303,
        "the fake Google answered {status}: {body}"
    );
    let callback = location.context("the fake Google redirects somewhere")?;
    ensure!(
        callback.starts_with("http://127.0.0.1:") && callback.contains("/oauth2callback?"),
        "the redirect goes to the app's loopback callback: {callback}"
    );
    let (status, _, page) = http_get(&callback)?;
    ensure!(
        status == 200,
        "the app's callback answered {status}: {page}"
    );
    Ok(page)
}

/// The app is connected with the model in the header, and not showing the sign-in screen.
async fn wait_connected(app: &App) -> Result<()> {
    app.wait_for_text("connection-text", "shows the model (connected)", |t| {
        t.contains(MODEL)
    })
    .await?;
    ensure!(
        app.count("signin-screen").await? == 0,
        "no sign-in screen once connected"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn google_sign_in_then_chat_over_code_assist_survives_a_restart_until_revoked() -> Result<()>
{
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let fake = FakeGemini::start(json!({"steps": [{"text": "Hello over Code Assist."}]}));
    let oauth = FakeOAuth::start();
    let (script, opened) = browser_script(temp.path())?;
    let mut env: Vec<(&str, String)> = oauth.env_vars();
    env.extend([
        ("CODE_ASSIST_ENDPOINT", fake.base_url()),
        ("GEMINI_DESKTOP_ONBOARD_POLL_MS", "5".into()),
        ("GEMINI_DESKTOP_BROWSER", script.display().to_string()),
        ("GEMINI_MODEL", MODEL.into()),
    ]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut app = App::launch_with_keyring("signin_google", &[&ws], &env).await?;
    app.wait_ready().await?;

    // First launch without credentials: the sign-in screen.
    app.wait_for_count("signin-screen", "is shown on first launch", |n| n == 1)
        .await?;
    app.click("signin-google").await?;
    let url = opened_url(&opened).await?;
    ensure!(url.starts_with(&oauth.auth_url()), "{url}");
    ensure!(url.contains("code_challenge_method=S256"), "{url}");
    app.wait_for_attr("signin-stage", "data-stage", "waits for the browser", |s| {
        s == "waiting_for_browser"
    })
    .await?;
    let shot = app.screenshot("google-waiting").await?;
    eprintln!("screenshot: {}", shot.display());

    let page = act_as_browser(&url)?;
    ensure!(page.contains("Signed in"), "{page}");

    // The email is shown, the screen is gone and a session runs over Code Assist.
    app.wait_for_text("account-label", "shows the account email", |t| {
        t == gd_fake_gemini::oauth::DEFAULT_EMAIL
    })
    .await?;
    wait_connected(&app).await?;
    app.wait_for_any_text("notice", "tells who signed in", |t| {
        t.contains("Signed in as dev@example.com") && t.contains("fake-project")
    })
    .await?;

    app.type_and_enter("prompt-input", "Say hello").await?;
    app.wait_for_last_text("message-model", "shows the answer", |t| {
        t.contains("Hello over Code Assist.")
    })
    .await?;
    let main = fake.main_requests();
    ensure!(main.len() == 1, "one chat request: {}", main.len());
    ensure!(
        main[0].api_style == "code_assist",
        "{:?}",
        main[0].api_style
    );
    let body = main[0].body.clone().context("JSON body")?;
    ensure!(body["project"] == "fake-project", "{body}");
    let issued: Vec<String> = oauth
        .access_tokens()
        .iter()
        .map(|t| credential_fingerprint(&format!("Bearer {t}")))
        .collect();
    ensure!(
        main[0].credential_kind.as_deref() == Some("bearer")
            && main[0]
                .credential_sha256_12
                .as_ref()
                .is_some_and(|f| issued.contains(f)),
        "the request carries an access token the fake Google issued: {:?}",
        main[0].credential_sha256_12
    );

    // The account view: where the secret lives (the real keyring, not the fallback file).
    app.click("account-open").await?;
    app.wait_for_text("account-email", "shows the email", |t| {
        t == "dev@example.com"
    })
    .await?;
    let store = app
        .wait_for_text("auth-store", "names the store", |t| !t.is_empty())
        .await?;
    ensure!(store.contains("System keyring"), "{store}");
    let secrets_file = app.home().join(".gemini/gemini-desktop/secrets.json");
    ensure!(
        !secrets_file.exists(),
        "no fallback secrets file: {}",
        secrets_file.display()
    );
    let shot = app.screenshot("account").await?;
    eprintln!("screenshot: {}", shot.display());

    // Change project: the picker lists the projects the fake Cloud Resource Manager returns,
    // onboarding runs again with the pick, and the next chat request carries it.
    app.wait_for_text("project-list-load", "offers a change", |t| {
        t == "Change project…"
    })
    .await?;
    app.click("project-list-load").await?;
    app.select_option("project-select", "other-project").await?;
    app.click("project-pick").await?;
    app.wait_for_any_text("notice", "says the project changed", |t| {
        t.contains("Gemini Code Assist is set up") && t.contains("project other-project")
    })
    .await?;
    wait_connected(&app).await?;
    let load = fake
        .requests()
        .into_iter()
        .rfind(|r| r.api_method.as_deref() == Some("loadCodeAssist"))
        .context("onboarding ran again")?;
    ensure!(
        load.body.as_ref().context("JSON body")?["cloudaicompanionProject"] == "other-project",
        "{:?}",
        load.body
    );
    // The new session's chat is empty; its first answer is the scenario's first step again.
    app.type_and_enter("prompt-input", "And now?").await?;
    app.wait_for_last_text("message-model", "shows the answer", |t| {
        t.contains("Hello over Code Assist.")
    })
    .await?;
    let main = fake.main_requests();
    ensure!(main.len() == 2, "a second chat request: {}", main.len());
    let body = main[1].body.clone().context("JSON body")?;
    ensure!(body["project"] == "other-project", "{body}");

    // A restart keeps the sign-in: no sign-in screen, the chat connects at once.
    app.restart().await?;
    app.wait_ready().await?;
    wait_connected(&app).await?;
    app.wait_for_text("account-label", "still shows the email", |t| {
        t == "dev@example.com"
    })
    .await?;
    ensure!(
        app.count("signin-screen").await? == 0,
        "no sign-in screen after a restart"
    );
    // ...and the picked project.
    app.click("account-open").await?;
    app.wait_for_text("auth-project", "keeps the picked project", |t| {
        t.contains("other-project") && t.contains("picked in Gemini Desktop")
    })
    .await?;
    app.click("auth-close").await?;

    // Google revokes the sign-in: the next request is refused (401), the refresh fails with
    // invalid_grant, and the app goes back to the sign-in screen saying so, without retrying.
    oauth.revoke_all();
    fake.reset(
        json!({"code_assist": {"tokens": ["ya29.not-issued"]}, "steps": [{"text": "never"}]}),
        &[],
    );
    app.type_and_enter("prompt-input", "Still there?").await?;
    app.wait_for_count("signin-screen", "is shown again", |n| n == 1)
        .await?;
    let reason = app
        .wait_for_text("signin-reason", "explains the revocation", |t| {
            t.contains("revoked")
        })
        .await?;
    ensure!(
        reason.starts_with("Your Google sign-in has expired or was revoked")
            && reason.contains("Sign in again"),
        "{reason}"
    );
    app.wait_for_text("account-label", "invites to sign in again", |t| {
        t == "Sign in"
    })
    .await?;
    app.interactable("signin-google").await?;
    let refused = fake.requests().len();
    ensure!(
        refused <= 2,
        "one refused request (and at most one retry), not a loop: {refused}"
    );
    let shot = app.screenshot("revoked").await?;
    eprintln!("screenshot: {}", shot.display());
    app.close().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_entered_on_the_sign_in_screen_is_checked_saved_used_and_signed_out()
-> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    let fake = FakeGemini::start(json!({"steps": [{"text": "Hello with a key."}]}));
    let base = fake.base_url();
    let mut app = App::launch_with_keyring(
        "signin_api_key",
        &[&ws],
        &[("GOOGLE_GEMINI_BASE_URL", &base), ("GEMINI_MODEL", MODEL)],
    )
    .await?;
    app.wait_ready().await?;
    app.wait_for_count("signin-screen", "is shown on first launch", |n| n == 1)
        .await?;
    app.click("signin-api-key").await?;
    app.type_into("api-key-input", "e2e-typed-key").await?;
    app.click("api-key-save").await?;
    wait_connected(&app).await?;
    app.wait_for_text("account-label", "names the method", |t| {
        t == "Gemini API key"
    })
    .await?;

    // Validated with a model list call carrying the key.
    let list = fake
        .requests()
        .into_iter()
        .find(|r| r.kind != "main")
        .context("a validation request reached the fake")?;
    ensure!(
        list.credential_sha256_12.as_deref()
            == Some(credential_fingerprint("e2e-typed-key").as_str()),
        "the validation used the typed key"
    );

    app.type_and_enter("prompt-input", "Hi").await?;
    app.wait_for_last_text("message-model", "shows the answer", |t| {
        t.contains("Hello with a key.")
    })
    .await?;
    let main = fake.main_requests();
    ensure!(
        main.last().and_then(|r| r.credential_sha256_12.as_deref())
            == Some(credential_fingerprint("e2e-typed-key").as_str()),
        "the chat used the saved key"
    );
    // The key lives in the keyring, and the page never shows it back.
    let html: String = serde_json::from_value(
        app.client()
            .execute("return document.documentElement.outerHTML;", vec![])
            .await?,
    )?;
    if html.contains("e2e-typed-key") {
        bail!("the key is still in the page");
    }
    app.click("account-open").await?;
    let store = app
        .wait_for_text("auth-store", "names the store", |t| !t.is_empty())
        .await?;
    ensure!(store.contains("System keyring"), "{store}");

    // Sign out deletes the key: the sign-in screen comes back, and stays after a restart.
    app.click("sign-out").await?;
    app.wait_for_text("signin-reason", "says so", |t| t == "You are signed out.")
        .await?;
    app.wait_for_text("account-label", "invites to sign in", |t| t == "Sign in")
        .await?;
    app.restart().await?;
    app.wait_ready().await?;
    app.wait_for_count("signin-screen", "is shown after a restart", |n| n == 1)
        .await?;
    app.close().await
}

/// The sign-in screen's order comes from gd-auth: this build has no OAuth client, so the API
/// key (which works for everyone) is first and primary and Google comes last; with a client
/// configured at run time, Google leads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_primary_sign_in_choice_is_one_this_build_can_use() -> Result<()> {
    const ORDER: &str = "return Array.from(document.querySelectorAll(\
        '[data-testid=signin-google], [data-testid=signin-api-key], [data-testid=signin-vertex]'))\
        .map((b) => [b.dataset.testid, b.classList.contains('primary')]);";
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    for (name, env, expected) in [
        (
            "signin_order_no_client",
            vec![],
            json!([
                ["signin-api-key", true],
                ["signin-vertex", false],
                ["signin-google", false]
            ]),
        ),
        (
            "signin_order_client",
            vec![
                (
                    "GEMINI_DESKTOP_OAUTH_CLIENT_ID",
                    "e2e-client.apps.googleusercontent.com",
                ),
                ("GEMINI_DESKTOP_OAUTH_CLIENT_SECRET", "e2e-secret"),
            ],
            json!([
                ["signin-google", true],
                ["signin-api-key", false],
                ["signin-vertex", false]
            ]),
        ),
    ] {
        let app = App::launch_with_env(name, &[&ws], &env).await?;
        app.wait_ready().await?;
        app.wait_for_count("signin-screen", "is shown", |n| n == 1)
            .await?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let order = app.client().execute(ORDER, vec![]).await?;
            if order == expected {
                break;
            }
            ensure!(
                Instant::now() < deadline,
                "{name}: order {order}, expected {expected}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        app.screenshot("signin-order").await?;
        app.close().await?;
    }
    Ok(())
}
