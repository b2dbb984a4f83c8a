//! `gemini-desktop-cli auth ...` as a real process: the API key from
//! stdin, Google sign-in with the test as the browser (loopback, a browser
//! command, and the pasted address), status, logout, and runs that use the
//! stored credentials when the environment has none.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use gd_fake_gemini::oauth::Consent;
use gd_fake_gemini::{FakeOAuth, credential_fingerprint};
use serde_json::{Value, json};

/// A run with a fake Code Assist server and a fake Google, without
/// GEMINI_API_KEY in the environment.
struct AuthRun {
    run: Run,
    oauth: FakeOAuth,
}

impl AuthRun {
    fn new(scenario: Value) -> Self {
        Self {
            run: Run::new(scenario),
            oauth: FakeOAuth::start(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.run.command(args);
        cmd.env_remove("GEMINI_API_KEY")
            .env("CODE_ASSIST_ENDPOINT", self.run.fake.base_url())
            .env("GEMINI_DESKTOP_ONBOARD_POLL_MS", "5");
        for (k, v) in self.oauth.env_vars() {
            cmd.env(k, v);
        }
        cmd
    }

    fn output(&self, args: &[&str], stdin: &str) -> std::process::Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    fn secrets_file(&self) -> std::path::PathBuf {
        self.run.home.join(".gemini/gemini-desktop/secrets.json")
    }
}

/// The caller waits for the returned child.
#[allow(clippy::zombie_processes)]
/// Starts `auth login` and returns the child and the authorization URL it
/// printed on stderr (the rest of stderr keeps flowing into the channel).
fn start_login(
    run: &AuthRun,
    extra: &[&str],
    stdin: Stdio,
) -> (Child, String, mpsc::Receiver<String>) {
    let mut args = vec!["auth", "login"];
    args.extend_from_slice(extra);
    let mut child = run
        .command(&args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
            .expect("the CLI prints the authorization URL on stderr");
        if let Some(url) = line
            .trim()
            .strip_prefix("http")
            .map(|rest| format!("http{rest}"))
        {
            return (child, url, rx);
        }
    }
}

fn browse(url: &str, follow: bool) -> (u16, String, Option<String>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut builder = gd_gemini::http_client_builder();
        if !follow {
            builder = builder.redirect(reqwest::redirect::Policy::none());
        }
        let response = builder.build().unwrap().get(url).send().await.unwrap();
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get("location")
            .map(|v| v.to_str().unwrap().to_owned());
        (status, response.text().await.unwrap_or_default(), location)
    })
}

fn wait(child: Child) -> (i32, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// [`wait`] for a child whose stderr [`start_login`] reads: the rest of it.
fn wait_login(child: Child, stderr_lines: mpsc::Receiver<String>) -> (i32, String, String) {
    let (code, stdout, _) = wait(child);
    let rest: Vec<String> = stderr_lines.iter().collect();
    (code, stdout, rest.join("\n"))
}

#[test]
fn a_positional_prompt_still_runs() {
    let run = Run::new(json!({"steps": [{"text": "positional ok"}]}));
    let out = run.run(&["some prompt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("positional ok"));
    let out = run.run(&["-p", "auth"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a prompt may say auth: {}",
        stderr(&out)
    );
    let out = run.run(&["-p", "hi", "auth", "status"]);
    assert_eq!(out.status.code(), Some(42));
}

#[test]
fn status_without_credentials_exits_41_and_explains() {
    let run = AuthRun::new(json!(null));
    let out = run.output(&["auth", "status", "--json"], "");
    assert_eq!(out.status.code(), Some(41));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["ready"], false);
    assert_eq!(
        status["store"]["kind"]["type"], "file",
        "no D-Bus in the test environment"
    );
    assert!(
        status["problem"]["message"]
            .as_str()
            .unwrap()
            .contains("auth login")
    );
    let out = run.output(&["auth", "status"], "");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Ready:          no"), "{text}");
}

#[test]
fn set_api_key_reads_stdin_validates_stores_and_runs_use_it() {
    let run = AuthRun::new(
        json!({"api_keys": ["the-real-key"], "steps": [{"text": "with the stored key"}]}),
    );
    let out = run.output(&["auth", "set-api-key"], "wrong-key\n");
    assert_eq!(out.status.code(), Some(41), "{}", stderr(&out));
    assert!(stderr(&out).contains("did not accept"), "{}", stderr(&out));
    assert!(!run.secrets_file().exists());

    let out = run.output(&["auth", "set-api-key"], "");
    assert_eq!(
        out.status.code(),
        Some(42),
        "an empty stdin is an input error"
    );

    let out = run.output(&["auth", "set-api-key"], "  the-real-key\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("stored in the file"), "{stdout}");
    assert!(
        stderr(&out).contains("no keyring service is reachable"),
        "{}",
        stderr(&out)
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(run.secrets_file())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }

    let out = run.output(&["-p", "hi", "-o", "json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["response"], "with the stored key");

    let out = run.output(&["auth", "status", "--json"], "");
    assert_eq!(out.status.code(), Some(0));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["active"], "gemini-api-key");
    assert_eq!(status["api_key"]["stored"], true);

    // GEMINI_API_KEY in the environment still wins (and is rejected here).
    let out = run
        .command(&["-p", "hi"])
        .env("GEMINI_API_KEY", "env-key")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(41));

    let out = run.output(&["auth", "logout"], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("gemini-api-key"));
    let out = run.output(&["-p", "hi"], "");
    assert_eq!(out.status.code(), Some(41));
}

#[test]
fn login_without_browser_then_runs_over_code_assist_then_logout() {
    let run = AuthRun::new(json!({"steps": [{"text": "hello over code assist"}]}));
    let (child, url, lines) = start_login(&run, &["--no-browser"], Stdio::null());
    assert!(url.starts_with(&run.oauth.auth_url()), "{url}");
    assert!(
        url.contains("code_challenge_method=S256") && url.contains("access_type=offline"),
        "{url}"
    );
    let (status, page, _) = browse(&url, true);
    assert_eq!(status, 200, "{page}");
    let (code, stdout, stderr_text) = wait_login(child, lines);
    assert_eq!(code, 0, "{stderr_text}");
    assert!(stdout.contains("Signed in as dev@example.com."), "{stdout}");
    assert!(stdout.contains("fake-project"), "{stdout}");

    let out = run.output(&["auth", "status", "--json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["active"], "google-login");
    assert_eq!(status["google"]["email"], "dev@example.com");
    assert_eq!(status["google"]["tier_id"], "standard-tier");
    assert_eq!(status["google"]["project"], "fake-project");
    assert!(status["google"]["token_expires_in_secs"].as_i64().unwrap() > 3000);
    let text = String::from_utf8_lossy(&run.output(&["auth", "status"], "").stdout).into_owned();
    assert!(text.contains("Google account: dev@example.com"), "{text}");

    // A run with no credentials in the environment uses the sign-in.
    let out = run.output(&["-p", "hi", "-o", "json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["response"], "hello over code assist");
    let main = run.run.fake.main_requests();
    assert_eq!(main.len(), 1);
    assert_eq!(main[0].api_style, "code_assist");
    assert_eq!(main[0].body.as_ref().unwrap()["project"], "fake-project");
    assert_eq!(
        main[0].credential_sha256_12.as_deref(),
        Some(credential_fingerprint("Bearer ya29.fake-access-2").as_str())
    );

    let out = run.output(&["auth", "logout"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Revoked"));
    assert_eq!(
        run.oauth.is_refresh_token_revoked("1//fake-refresh-3"),
        Some(true)
    );
    let out = run.output(&["-p", "hi"], "");
    assert_eq!(out.status.code(), Some(41));
}

#[test]
fn login_opens_the_browser_command_after_printing_the_address() {
    let run = AuthRun::new(json!(null));
    let opened = run.run.home.join("opened-url");
    let script = run.run.home.join("browser.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut cmd = run.command(&["auth", "login"]);
    cmd.env("GEMINI_DESKTOP_BROWSER", &script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let url = loop {
        if let Ok(url) = std::fs::read_to_string(&opened)
            && !url.is_empty()
        {
            break url;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the browser command was not run"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    browse(&url, true);
    let (code, _, stderr_text) = wait(child);
    assert_eq!(code, 0, "{stderr_text}");
    let printed = stderr_text.find(&url).expect("the URL is printed");
    let opening = stderr_text.find("Opening the browser").unwrap();
    assert!(printed < opening, "{stderr_text}");
}

#[test]
fn login_accepts_the_pasted_address() {
    let run = AuthRun::new(json!(null));
    let (mut child, url, lines) = start_login(&run, &["--no-browser"], Stdio::piped());
    let (status, _, location) = browse(&url, false);
    assert_eq!(status, 302);
    let location = location.unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{location}").unwrap();
    drop(stdin);
    let (code, stdout, stderr_text) = wait_login(child, lines);
    assert_eq!(code, 0, "{stderr_text}");
    assert!(stdout.contains("Signed in as dev@example.com."), "{stdout}");
}

#[test]
fn denied_login_exits_41() {
    let run = AuthRun::new(json!(null));
    run.oauth.set_consent(Consent::Deny);
    let (child, url, lines) = start_login(&run, &["--no-browser"], Stdio::null());
    browse(&url, true);
    let (code, _, stderr_text) = wait_login(child, lines);
    assert_eq!(code, 41);
    assert!(stderr_text.contains("access_denied"), "{stderr_text}");
}

#[test]
fn a_code_assist_problem_after_login_exits_41_with_the_fix() {
    let run =
        AuthRun::new(json!({"code_assist": {"load": {"currentTier": {"id": "standard-tier"}}}}));
    let (child, url, lines) = start_login(&run, &["--no-browser"], Stdio::null());
    browse(&url, true);
    let (code, _, stderr_text) = wait_login(child, lines);
    assert_eq!(code, 41);
    assert!(
        stderr_text.contains("GOOGLE_CLOUD_PROJECT"),
        "{stderr_text}"
    );
    // A run explains the same.
    let out = run.output(&["-p", "hi"], "");
    assert_eq!(out.status.code(), Some(41));
    assert!(
        stderr(&out).contains("GOOGLE_CLOUD_PROJECT"),
        "{}",
        stderr(&out)
    );
}
