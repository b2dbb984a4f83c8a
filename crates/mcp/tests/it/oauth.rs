//! OAuth sign-in to HTTP MCP servers against a real OAuth-protected server
//! (tests/fixtures/mcp/oauth_server.py: RFC 9728/8414 metadata, dynamic
//! registration, PKCE, refresh, a protected streamable-HTTP endpoint) over
//! loopback. The test plays the browser: it GETs the authorization URL and
//! follows the redirect to the client's loopback listener.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{options, python, repo_root, started, wait_status};
use gd_auth::secret_store::FileStore;
use gd_mcp::oauth::BrowserOpener;
use gd_mcp::{McpManager, McpOAuth};
use gd_protocol::McpServerState;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The OAuth fixture; killed on drop.
struct OAuthServer {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl OAuthServer {
    fn start(env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let child = std::process::Command::new(python())
            .arg(repo_root().join("tests/fixtures/mcp/oauth_server.py"))
            .arg(&port_file)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(90);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().unwrap();
            }
            assert!(Instant::now() < deadline, "the OAuth fixture did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Self {
            child,
            port,
            _dir: dir,
        }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base())
    }

    async fn stats(&self) -> Value {
        http()
            .get(format!("{}/test/stats", self.base()))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn control(&self, what: &str) {
        let status = http()
            .post(format!("{}/test/{what}", self.base()))
            .send()
            .await
            .unwrap()
            .status();
        assert!(status.is_success(), "{what}: {status}");
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http() -> reqwest::Client {
    gd_http::http_client_builder().build().unwrap()
}

/// The authorization pages "opened", in order.
#[derive(Clone, Default)]
struct Browser {
    opened: Arc<Mutex<Vec<String>>>,
}

impl Browser {
    fn opened(&self) -> Vec<String> {
        self.opened.lock().unwrap().clone()
    }

    /// A browser where the user consents: the fixture's /authorize
    /// redirects to the loopback callback, which reqwest follows.
    fn consenting(&self) -> BrowserOpener {
        let opened = self.opened.clone();
        Arc::new(move |url: &str| {
            opened.lock().unwrap().push(url.to_owned());
            let url = url.to_owned();
            tokio::spawn(async move {
                let response = http().get(&url).send().await.unwrap();
                assert!(response.status().is_success(), "{}", response.status());
            });
            Ok(())
        })
    }

    /// A browser that never comes back.
    fn idle(&self) -> BrowserOpener {
        let opened = self.opened.clone();
        Arc::new(move |url: &str| {
            opened.lock().unwrap().push(url.to_owned());
            Ok(())
        })
    }

    /// Forged redirects (another `state`, none, an `error=` with another `state`) reach the
    /// listener before the real one; `statuses` gets the listener's answers, in order.
    fn forging(&self, forged_statuses: Arc<Mutex<Vec<u16>>>) -> BrowserOpener {
        let opened = self.opened.clone();
        Arc::new(move |url: &str| {
            opened.lock().unwrap().push(url.to_owned());
            let url = url.to_owned();
            let forged_statuses = forged_statuses.clone();
            tokio::spawn(async move {
                let client = gd_http::http_client_builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .unwrap();
                let response = client.get(&url).send().await.unwrap();
                let location = response.headers()["location"].to_str().unwrap().to_owned();
                let redirect = reqwest::Url::parse(&location).unwrap();
                let pairs: Vec<(String, String)> = redirect
                    .query_pairs()
                    .map(|(k, v)| {
                        let v = if k == "state" {
                            "forged".into()
                        } else {
                            v.into_owned()
                        };
                        (k.into_owned(), v)
                    })
                    .collect();
                let mut forged = redirect.clone();
                forged.query_pairs_mut().clear().extend_pairs(pairs);
                let mut answers = vec![http().get(forged.as_str()).send().await.unwrap()];
                // The same without a state, and an `error=` with a forged state.
                let base = redirect.as_str().split('?').next().unwrap().to_owned();
                for query in ["code=stolen", "error=access_denied&state=forged"] {
                    answers.push(http().get(format!("{base}?{query}")).send().await.unwrap());
                }
                let statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
                forged_statuses.lock().unwrap().extend(statuses);
                // The real redirect, after the forged ones.
                let response = http().get(redirect.as_str()).send().await.unwrap();
                forged_statuses
                    .lock()
                    .unwrap()
                    .push(response.status().as_u16());
            });
            Ok(())
        })
    }
}

fn secrets(dir: &Path) -> Arc<FileStore> {
    Arc::new(FileStore::new(dir.join("auth/secrets.json")))
}

async fn manager_for(servers: Value, workspace: &Path, oauth: McpOAuth) -> McpManager {
    let mut options = options(servers, workspace);
    options.oauth = Some(oauth);
    started(options).await
}

fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect()
}

async fn add(manager: &McpManager, server: &str) -> Result<Value, gd_mcp::CallError> {
    manager
        .call_tool(
            server,
            "add",
            json!({"a": 2, "b": 3}),
            &CancellationToken::new(),
        )
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn sign_in_connects_and_the_tokens_persist() {
    let server = OAuthServer::start(&[]);
    let ws = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let browser = Browser::default();
    let servers = json!({"remote": {"httpUrl": server.mcp_url(), "timeout": 30000}});

    let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(browser.consenting());
    let manager = manager_for(servers.clone(), ws.path(), oauth).await;
    let status = manager.status("remote").unwrap();
    assert_eq!(status.state, McpServerState::NeedsAuth, "{status:?}");
    let error = status.error.unwrap();
    assert!(
        error.contains("gemini-desktop-cli mcp auth remote"),
        "{error}"
    );

    let mut events = manager.subscribe();
    manager.authenticate("remote").await.unwrap();
    wait_status(&manager, "remote", "connected", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    // The panel saw the browser step, with the page to open.
    let mut saw_authenticating = false;
    while let Ok(event) = events.try_recv() {
        if let gd_mcp::McpEvent::Status(s) = event
            && s.state == McpServerState::Authenticating
            && s.auth_url.is_some()
        {
            saw_authenticating = true;
        }
    }
    assert!(saw_authenticating);
    let opened = browser.opened();
    assert_eq!(opened.len(), 1);
    assert!(
        opened[0].starts_with(&format!("{}/authorize?", server.base())),
        "{}",
        opened[0]
    );
    for param in [
        "code_challenge_method=S256",
        "code_challenge=",
        "state=",
        "redirect_uri=http%3A%2F%2F127.0.0.1%3A",
    ] {
        assert!(opened[0].contains(param), "{param} in {}", opened[0]);
    }
    assert_eq!(texts(&add(&manager, "remote").await.unwrap()), ["5"]);
    let stats = server.stats().await;
    assert_eq!(stats["registrations"], 1, "{stats}");
    assert_eq!(stats["code_grants"], 1, "{stats}");
    assert!(stats["mcp_authorized"].as_u64().unwrap() > 0, "{stats}");
    manager.shutdown(Duration::from_secs(1)).await;

    // The secrets file is private and does not show up in the server's log.
    let file = store_dir.path().join("auth/secrets.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let doc: Value = serde_json::from_str(stored["mcp-oauth"].as_str().unwrap()).unwrap();
    let access = doc["servers"][server.mcp_url()]["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        !manager
            .log("remote")
            .unwrap()
            .iter()
            .any(|l| l.contains(&access))
    );

    // A new session (new manager, new OAuth service, same store) connects
    // at once, without a browser.
    let second = Browser::default();
    let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(second.idle());
    let manager = manager_for(servers, ws.path(), oauth).await;
    common::assert_connected(&manager, "remote");
    assert_eq!(texts(&add(&manager, "remote").await.unwrap()), ["5"]);
    assert!(second.opened().is_empty());
    assert_eq!(server.stats().await["authorizations"], 1);

    // Signing out forgets the tokens: the server needs signing in again.
    manager.sign_out("remote").await.unwrap();
    wait_status(&manager, "remote", "needs_auth", |s| {
        s.state == McpServerState::NeedsAuth
    })
    .await;
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn expired_tokens_refresh_and_a_revoked_sign_in_needs_auth_again() {
    let server = OAuthServer::start(&[]);
    let ws = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let browser = Browser::default();
    let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(browser.consenting());
    let manager = manager_for(
        json!({"remote": {"httpUrl": server.mcp_url(), "timeout": 30000}}),
        ws.path(),
        oauth,
    )
    .await;
    manager.authenticate("remote").await.unwrap();
    wait_status(&manager, "remote", "connected", |s| {
        s.state == McpServerState::Connected
    })
    .await;

    // The server drops every access token: the next call gets a 401, the
    // client refreshes and retries.
    server.control("expire").await;
    assert_eq!(texts(&add(&manager, "remote").await.unwrap()), ["5"]);
    let stats = server.stats().await;
    assert!(stats["refreshes"].as_u64().unwrap() >= 1, "{stats}");

    // Everything revoked: the refresh is refused, the server needs signing
    // in again and says why.
    server.control("revoke").await;
    let error = add(&manager, "remote").await.unwrap_err().to_string();
    assert!(error.contains("refused the sign-in"), "{error}");
    let status = wait_status(&manager, "remote", "needs_auth", |s| {
        s.state == McpServerState::NeedsAuth
    })
    .await;
    assert!(
        status.error.as_deref().unwrap().contains("mcp auth remote"),
        "{status:?}"
    );
    assert!(server.stats().await["refresh_rejected"].as_u64().unwrap() >= 1);

    // A restart (a new session) says the saved sign-in was refused.
    manager.restart("remote").unwrap();
    let status = wait_status(&manager, "remote", "needs_auth after restart", |s| {
        s.state == McpServerState::NeedsAuth && s.restarts == 0
    })
    .await;
    let error = status.error.unwrap();
    assert!(error.contains("expired or was revoked"), "{error}");

    // Signing in again works.
    manager.authenticate("remote").await.unwrap();
    wait_status(&manager, "remote", "connected again", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    assert_eq!(texts(&add(&manager, "remote").await.unwrap()), ["5"]);
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn short_lived_tokens_are_refreshed_before_they_expire() {
    // Tokens live 2 s; the client refreshes those that expire within 30 s,
    // i.e. before each request.
    let server = OAuthServer::start(&[("OAUTH_TOKEN_TTL", "2")]);
    let ws = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let browser = Browser::default();
    let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(browser.consenting());
    let manager = manager_for(
        json!({"remote": {"httpUrl": server.mcp_url(), "timeout": 30000}}),
        ws.path(),
        oauth,
    )
    .await;
    manager.authenticate("remote").await.unwrap();
    wait_status(&manager, "remote", "connected", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    let before = server.stats().await["refreshes"].as_u64().unwrap();
    assert_eq!(texts(&add(&manager, "remote").await.unwrap()), ["5"]);
    let after = server.stats().await;
    assert!(after["refreshes"].as_u64().unwrap() > before, "{after}");
    manager.shutdown(Duration::from_secs(1)).await;
}

/// Forged redirects to the loopback listener (any web page can send the browser there) get a
/// 400 and do not end the sign-in; the real redirect afterwards signs in.
#[tokio::test(flavor = "multi_thread")]
async fn a_forged_redirect_is_ignored_and_the_real_one_signs_in() {
    let server = OAuthServer::start(&[]);
    let ws = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let browser = Browser::default();
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let oauth =
        McpOAuth::new(secrets(store_dir.path())).with_opener(browser.forging(statuses.clone()));
    let manager = manager_for(
        json!({"remote": {"httpUrl": server.mcp_url(), "timeout": 30000}}),
        ws.path(),
        oauth,
    )
    .await;
    manager.authenticate("remote").await.unwrap();
    assert_eq!(*statuses.lock().unwrap(), [400, 400, 400, 200]);
    wait_status(&manager, "remote", "connected", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    assert_eq!(server.stats().await["code_grants"], 1);
    manager.shutdown(Duration::from_secs(1)).await;
}

/// A server whose metadata names a `file:`, `javascript:` or custom-scheme authorization
/// endpoint: the sign-in fails naming the scheme, and no opener ever sees the URL.
#[tokio::test(flavor = "multi_thread")]
async fn an_authorization_endpoint_that_is_not_a_web_page_is_never_opened() {
    for (endpoint, scheme) in [
        ("file:///etc/passwd", "file"),
        ("javascript:alert(1)", "javascript"),
        ("x-custom:run", "x-custom"),
    ] {
        let server = OAuthServer::start(&[("OAUTH_AUTHORIZATION_ENDPOINT", endpoint)]);
        let ws = tempfile::tempdir().unwrap();
        let store_dir = tempfile::tempdir().unwrap();
        let browser = Browser::default();
        let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(browser.idle());
        let manager = manager_for(
            json!({"remote": {"httpUrl": server.mcp_url(), "timeout": 30000}}),
            ws.path(),
            oauth,
        )
        .await;
        let error = manager
            .authenticate("remote")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(&format!("`{scheme}:`")),
            "{endpoint}: {error}"
        );
        assert!(
            browser.opened().is_empty(),
            "{endpoint}: {:?}",
            browser.opened()
        );
        let status = manager.status("remote").unwrap();
        assert_eq!(status.state, McpServerState::NeedsAuth);
        assert_eq!(status.auth_url, None);
        manager.shutdown(Duration::from_secs(1)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_requests_share_one_sign_in() {
    let server = OAuthServer::start(&[]);
    let ws = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let browser = Browser::default();
    let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(browser.consenting());
    let manager = manager_for(
        json!({"remote": {"httpUrl": server.mcp_url(), "timeout": 30000}}),
        ws.path(),
        oauth,
    )
    .await;
    let (a, b, c) = tokio::join!(
        manager.authenticate("remote"),
        manager.authenticate("remote"),
        manager.authenticate("remote"),
    );
    assert_eq!((a, b, c), (Ok(()), Ok(()), Ok(())));
    wait_status(&manager, "remote", "connected", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    assert_eq!(browser.opened().len(), 1);
    let stats = server.stats().await;
    assert_eq!(stats["registrations"], 1, "{stats}");
    assert_eq!(stats["authorizations"], 1, "{stats}");
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sign_in_can_be_cancelled_and_times_out() {
    let server = OAuthServer::start(&[]);
    let ws = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let browser = Browser::default();
    let servers = json!({"remote": {"httpUrl": server.mcp_url(), "timeout": 30000}});

    let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(browser.idle());
    let manager = manager_for(servers.clone(), ws.path(), oauth.clone()).await;
    assert_eq!(manager.cancel_authentication("remote"), Ok(false));
    manager.start_authentication("remote").unwrap();
    let status = wait_status(&manager, "remote", "waiting for the browser", |s| {
        s.state == McpServerState::Authenticating && s.auth_url.is_some()
    })
    .await;
    assert!(status.error.unwrap().contains("browser"));
    assert_eq!(manager.cancel_authentication("remote"), Ok(true));
    let status = wait_status(&manager, "remote", "needs_auth after cancel", |s| {
        s.state == McpServerState::NeedsAuth
    })
    .await;
    assert_eq!(status.error.as_deref(), Some("Sign-in cancelled."));

    // Restarting a server that waits for the browser stops the sign-in.
    manager.start_authentication("remote").unwrap();
    wait_status(&manager, "remote", "waiting for the browser again", |s| {
        s.state == McpServerState::Authenticating && s.auth_url.is_some()
    })
    .await;
    let url = server.mcp_url();
    manager.restart("remote").unwrap();
    let status = wait_status(&manager, "remote", "needs_auth after restart", |s| {
        s.state == McpServerState::NeedsAuth
    })
    .await;
    assert_eq!(status.auth_url, None);
    let deadline = Instant::now() + Duration::from_secs(30);
    while oauth.is_signing_in(&url) {
        assert!(Instant::now() < deadline, "the sign-in did not stop");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    manager.shutdown(Duration::from_secs(1)).await;

    let oauth = McpOAuth::new(secrets(store_dir.path()))
        .with_opener(browser.idle())
        .with_timeout(Duration::from_millis(500));
    let manager = manager_for(servers, ws.path(), oauth).await;
    let error = manager
        .authenticate("remote")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("timed out"), "{error}");
    assert_eq!(
        manager.status("remote").unwrap().state,
        McpServerState::NeedsAuth
    );
    assert_eq!(server.stats().await["code_grants"], 0);
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_client_and_endpoints_skip_registration() {
    let server = OAuthServer::start(&[("OAUTH_CLIENT_ID", "preregistered")]);
    let ws = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let browser = Browser::default();
    let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(browser.consenting());
    let manager = manager_for(
        json!({"remote": {"httpUrl": server.mcp_url(), "timeout": 30000, "oauth": {
            "clientId": "preregistered",
            "authorizationUrl": format!("{}/authorize", server.base()),
            "tokenUrl": format!("{}/token", server.base()),
            "scopes": ["mcp"],
        }}}),
        ws.path(),
        oauth,
    )
    .await;
    manager.authenticate("remote").await.unwrap();
    wait_status(&manager, "remote", "connected", |s| {
        s.state == McpServerState::Connected
    })
    .await;
    let opened = browser.opened();
    assert!(
        opened[0].contains("client_id=preregistered"),
        "{}",
        opened[0]
    );
    assert!(opened[0].contains("scope=mcp"), "{}", opened[0]);
    let stats = server.stats().await;
    assert_eq!(stats["registrations"], 0, "{stats}");
    assert_eq!(stats["code_grants"], 1, "{stats}");
    manager.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sign_in_is_refused_where_it_makes_no_sense() {
    let ws = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(Browser::default().idle());
    let mut options = options(
        json!({
            "local": common::fixture_stdio(json!({})),
            "off": {"httpUrl": "http://127.0.0.1:9/mcp", "oauth": {"enabled": false}},
        }),
        ws.path(),
    );
    options.oauth = Some(oauth);
    let manager = McpManager::new(options);
    let error = manager
        .start_authentication("local")
        .unwrap_err()
        .to_string();
    assert!(error.contains("stdio"), "{error}");
    let error = manager.start_authentication("off").unwrap_err().to_string();
    assert!(error.contains("oauth.enabled: false"), "{error}");
    let error = manager
        .start_authentication("nope")
        .unwrap_err()
        .to_string();
    assert!(error.contains("not configured"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_in_one_session_connects_the_others() {
    let server = OAuthServer::start(&[]);
    let ws = tempfile::tempdir().unwrap();
    let store_dir = tempfile::tempdir().unwrap();
    let browser = Browser::default();
    // One OAuth service per process, shared by the sessions' managers.
    let oauth = McpOAuth::new(secrets(store_dir.path())).with_opener(browser.consenting());
    let servers = json!({"remote": {"httpUrl": server.mcp_url(), "timeout": 30000}});
    let first = manager_for(servers.clone(), ws.path(), oauth.clone()).await;
    let second = manager_for(servers, ws.path(), oauth).await;
    assert_eq!(
        second.status("remote").unwrap().state,
        McpServerState::NeedsAuth
    );
    first.authenticate("remote").await.unwrap();
    for manager in [&first, &second] {
        wait_status(manager, "remote", "connected", |s| {
            s.state == McpServerState::Connected
        })
        .await;
    }
    assert_eq!(browser.opened().len(), 1);
    assert_eq!(texts(&add(&second, "remote").await.unwrap()), ["5"]);
    first.shutdown(Duration::from_secs(1)).await;
    second.shutdown(Duration::from_secs(1)).await;
}
