//! [`FakeOAuth`]: a fake Google OAuth 2.0 server on loopback, for sign-in
//! tests: the authorization endpoint (which "consents" at once and redirects
//! to the `redirect_uri` with a code, or with `error=access_denied`), the
//! token endpoint (`authorization_code` with the PKCE verifier checked,
//! `refresh_token`, and the service-account `jwt-bearer` grant), userinfo,
//! revocation, and a Cloud Resource Manager project list.
//!
//! Tokens are predictable: `ya29.fake-access-N`, `1//fake-refresh-N`,
//! `4/fake-code-N`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub const CLIENT_ID: &str = "fake-client-id.apps.googleusercontent.com";
pub const CLIENT_SECRET: &str = "fake-client-secret";
pub const DEFAULT_EMAIL: &str = "dev@example.com";

/// What the authorization endpoint does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consent {
    /// Redirect with a code and the request's state.
    Approve,
    /// Redirect with `error=access_denied`.
    Deny,
    /// Redirect with a code and a different state (a forged callback).
    WrongState,
}

/// One thing that happened, for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OAuthEvent {
    /// The authorization endpoint was visited; the query as sent.
    Authorize(HashMap<String, String>),
    /// A token request: grant type and whether it succeeded.
    Token {
        grant_type: String,
        ok: bool,
    },
    Userinfo {
        ok: bool,
    },
    Revoke {
        token: String,
    },
    Projects,
}

struct Inner {
    consent: Consent,
    access_ttl: i64,
    /// Send a new refresh token with refresh answers.
    rotate_refresh: bool,
    email: String,
    projects: Value,
    counter: u64,
    /// code → (client_id, redirect_uri, code_challenge, scope)
    codes: HashMap<String, (String, String, String, String)>,
    /// refresh token → revoked
    refresh_tokens: HashMap<String, bool>,
    /// access token → (revoked, expires unix secs)
    access_tokens: HashMap<String, (bool, i64)>,
    events: Vec<OAuthEvent>,
}

type Shared = Arc<Mutex<Inner>>;

fn lock(state: &Shared) -> MutexGuard<'_, Inner> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A running fake OAuth server on `127.0.0.1`; dropped → shut down.
pub struct FakeOAuth {
    addr: SocketAddr,
    state: Shared,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeOAuth {
    /// Starts on a free port. Panics if it cannot (tests).
    pub fn start() -> FakeOAuth {
        Self::try_start().unwrap_or_else(|e| panic!("fake-oauth: cannot start: {e:#}"))
    }

    pub fn try_start() -> Result<FakeOAuth> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").context("bind 127.0.0.1:0")?;
        listener.set_nonblocking(true).context("set_nonblocking")?;
        let addr = listener.local_addr().context("local_addr")?;
        let state: Shared = Arc::new(Mutex::new(Inner {
            consent: Consent::Approve,
            access_ttl: 3599,
            rotate_refresh: false,
            email: DEFAULT_EMAIL.into(),
            projects: json!([
                {"projectId": "fake-project", "name": "Fake Project", "projectNumber": "111111111111"},
                {"projectId": "other-project", "name": "Other", "projectNumber": "222222222222"}
            ]),
            counter: 0,
            codes: HashMap::new(),
            refresh_tokens: HashMap::new(),
            access_tokens: HashMap::new(),
            events: Vec::new(),
        }));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("build tokio runtime")?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let app = Router::new()
            .route("/auth", get(authorize))
            .route("/token", post(token))
            .route("/userinfo", get(userinfo))
            .route("/revoke", post(revoke))
            .route("/projects", get(projects))
            .with_state(state.clone());
        let thread = std::thread::Builder::new()
            .name(format!("fake-oauth-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => return eprintln!("fake-oauth: cannot register listener: {e}"),
                    };
                    let server = axum::serve(listener, app);
                    tokio::select! {
                        result = server.into_future() => if let Err(e) = result {
                            eprintln!("fake-oauth: server error: {e}");
                        },
                        _ = rx => {}
                    }
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })
            .context("spawn server thread")?;
        Ok(FakeOAuth {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
    pub fn auth_url(&self) -> String {
        format!("{}/auth", self.base_url())
    }
    pub fn token_url(&self) -> String {
        format!("{}/token", self.base_url())
    }
    pub fn userinfo_url(&self) -> String {
        format!("{}/userinfo", self.base_url())
    }
    pub fn revoke_url(&self) -> String {
        format!("{}/revoke", self.base_url())
    }
    pub fn projects_url(&self) -> String {
        format!("{}/projects", self.base_url())
    }

    /// The `GEMINI_DESKTOP_OAUTH_*` variables that point a client here.
    pub fn env_vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("GEMINI_DESKTOP_OAUTH_CLIENT_ID", CLIENT_ID.into()),
            ("GEMINI_DESKTOP_OAUTH_CLIENT_SECRET", CLIENT_SECRET.into()),
            ("GEMINI_DESKTOP_OAUTH_AUTH_URL", self.auth_url()),
            ("GEMINI_DESKTOP_OAUTH_TOKEN_URL", self.token_url()),
            ("GEMINI_DESKTOP_OAUTH_USERINFO_URL", self.userinfo_url()),
            ("GEMINI_DESKTOP_OAUTH_REVOKE_URL", self.revoke_url()),
            ("GEMINI_DESKTOP_PROJECTS_URL", self.projects_url()),
        ]
    }

    pub fn set_consent(&self, consent: Consent) {
        lock(&self.state).consent = consent;
    }

    /// `expires_in` of new access tokens (seconds; may be small or 0).
    pub fn set_access_token_ttl(&self, secs: i64) {
        lock(&self.state).access_ttl = secs;
    }

    /// Whether refresh answers carry a new refresh token (Google's usually do not).
    pub fn set_rotate_refresh_tokens(&self, rotate: bool) {
        lock(&self.state).rotate_refresh = rotate;
    }

    pub fn set_email(&self, email: &str) {
        lock(&self.state).email = email.into();
    }

    /// The `projects` array of the project list.
    pub fn set_projects(&self, projects: Value) {
        lock(&self.state).projects = projects;
    }

    /// Revokes every refresh token issued so far (the user removed the app's
    /// access, or the token expired): refreshes fail with `invalid_grant`.
    pub fn revoke_all(&self) {
        let mut inner = lock(&self.state);
        inner.refresh_tokens.values_mut().for_each(|r| *r = true);
        inner.access_tokens.values_mut().for_each(|a| a.0 = true);
    }

    pub fn events(&self) -> Vec<OAuthEvent> {
        lock(&self.state).events.clone()
    }

    /// Token requests of `grant_type` so far (successful or not).
    pub fn token_requests(&self, grant_type: &str) -> usize {
        lock(&self.state)
            .events
            .iter()
            .filter(|e| matches!(e, OAuthEvent::Token { grant_type: g, .. } if g == grant_type))
            .count()
    }

    /// Issued access tokens, oldest first.
    pub fn access_tokens(&self) -> Vec<String> {
        let inner = lock(&self.state);
        let mut tokens: Vec<String> = inner.access_tokens.keys().cloned().collect();
        tokens.sort_by_key(|t| token_number(t));
        tokens
    }

    pub fn is_refresh_token_revoked(&self, token: &str) -> Option<bool> {
        lock(&self.state).refresh_tokens.get(token).copied()
    }

    pub fn refresh_tokens(&self) -> Vec<String> {
        let inner = lock(&self.state);
        let mut tokens: Vec<String> = inner.refresh_tokens.keys().cloned().collect();
        tokens.sort_by_key(|t| token_number(t));
        tokens
    }
}

fn token_number(token: &str) -> u64 {
    token
        .rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

impl Drop for FakeOAuth {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for FakeOAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeOAuth")
            .field("addr", &self.addr)
            .finish()
    }
}

fn json_reply(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        body.to_string(),
    )
        .into_response()
}

/// A token endpoint error: status and body.
type Failure = (StatusCode, Value);

fn oauth_error(error: &str, description: &str) -> Failure {
    (
        StatusCode::BAD_REQUEST,
        json!({"error": error, "error_description": description}),
    )
}

fn with_query(base: &str, pairs: &[(&str, &str)]) -> String {
    let mut ser = url_encode::Serializer::new(String::new());
    for (k, v) in pairs {
        ser.append_pair(k, v);
    }
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{}", ser.finish())
}

mod url_encode {
    /// A minimal `application/x-www-form-urlencoded` serializer.
    pub struct Serializer {
        out: String,
    }

    impl Serializer {
        pub fn new(out: String) -> Self {
            Self { out }
        }

        pub fn append_pair(&mut self, name: &str, value: &str) -> &mut Self {
            if !self.out.is_empty() {
                self.out.push('&');
            }
            encode(name, &mut self.out);
            self.out.push('=');
            encode(value, &mut self.out);
            self
        }

        pub fn finish(&mut self) -> String {
            std::mem::take(&mut self.out)
        }
    }

    fn encode(text: &str, out: &mut String) {
        for b in text.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    out.push(b as char)
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
    }

    /// Parses a form body or query string.
    pub fn parse(text: &str) -> std::collections::HashMap<String, String> {
        text.split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (decode(k), decode(v))
            })
            .collect()
    }

    fn decode(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < bytes.len() => {
                    let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                    match u8::from_str_radix(hex, 16) {
                        Ok(b) => {
                            out.push(b);
                            i += 2;
                        }
                        Err(_) => out.push(b'%'),
                    }
                }
                b => out.push(b),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

async fn authorize(
    State(state): State<Shared>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let mut inner = lock(&state);
    inner.events.push(OAuthEvent::Authorize(query.clone()));
    let get = |k: &str| query.get(k).cloned().unwrap_or_default();
    let redirect = get("redirect_uri");
    if get("client_id") != CLIENT_ID {
        return (
            StatusCode::BAD_REQUEST,
            "Error 401: invalid_client (unknown client_id)",
        )
            .into_response();
    }
    if !(redirect.starts_with("http://127.0.0.1:") || redirect.starts_with("http://localhost:")) {
        return (StatusCode::BAD_REQUEST, "Error 400: redirect_uri_mismatch").into_response();
    }
    if get("response_type") != "code"
        || get("code_challenge_method") != "S256"
        || get("code_challenge").is_empty()
    {
        return (
            StatusCode::BAD_REQUEST,
            "Error 400: invalid_request (PKCE S256 required)",
        )
            .into_response();
    }
    let state_param = get("state");
    let location = match inner.consent {
        Consent::Deny => with_query(
            &redirect,
            &[("error", "access_denied"), ("state", &state_param)],
        ),
        consent => {
            inner.counter += 1;
            let code = format!("4/fake-code-{}", inner.counter);
            inner.codes.insert(
                code.clone(),
                (
                    get("client_id"),
                    redirect.clone(),
                    get("code_challenge"),
                    get("scope"),
                ),
            );
            let sent_state = if consent == Consent::WrongState {
                "forged-state".to_string()
            } else {
                state_param
            };
            with_query(
                &redirect,
                &[
                    ("state", &sent_state),
                    ("code", &code),
                    ("scope", &get("scope")),
                ],
            )
        }
    };
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

fn issue_access(inner: &mut Inner) -> (String, i64) {
    inner.counter += 1;
    let token = format!("ya29.fake-access-{}", inner.counter);
    let ttl = inner.access_ttl;
    inner
        .access_tokens
        .insert(token.clone(), (false, now() + ttl));
    (token, ttl)
}

fn issue_refresh(inner: &mut Inner) -> String {
    inner.counter += 1;
    let token = format!("1//fake-refresh-{}", inner.counter);
    inner.refresh_tokens.insert(token.clone(), false);
    token
}

async fn token(State(state): State<Shared>, body: Bytes) -> Response {
    let form = url_encode::parse(&String::from_utf8_lossy(&body));
    let get = |k: &str| form.get(k).cloned().unwrap_or_default();
    let grant = get("grant_type");
    let mut inner = lock(&state);
    let result = token_grant(&mut inner, &grant, &get);
    inner.events.push(OAuthEvent::Token {
        grant_type: grant,
        ok: result.is_ok(),
    });
    match result {
        Ok(body) => json_reply(StatusCode::OK, body),
        Err((status, body)) => json_reply(status, body),
    }
}

fn token_grant(
    inner: &mut Inner,
    grant: &str,
    get: &dyn Fn(&str) -> String,
) -> std::result::Result<Value, Failure> {
    if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer" {
        if get("assertion").split('.').count() != 3 {
            return Err(oauth_error("invalid_grant", "Invalid JWT."));
        }
        let (access, ttl) = issue_access(inner);
        return Ok(json!({"access_token": access, "expires_in": ttl, "token_type": "Bearer"}));
    }
    if get("client_id") != CLIENT_ID || get("client_secret") != CLIENT_SECRET {
        return Err((
            StatusCode::UNAUTHORIZED,
            json!({"error": "invalid_client", "error_description": "The OAuth client was not found."}),
        ));
    }
    match grant {
        "authorization_code" => {
            let Some((client, redirect, challenge, scope)) = inner.codes.remove(&get("code"))
            else {
                return Err(oauth_error("invalid_grant", "Malformed auth code."));
            };
            if client != get("client_id") || redirect != get("redirect_uri") {
                return Err(oauth_error("invalid_grant", "Bad Request"));
            }
            let verifier = get("code_verifier");
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(verifier.as_bytes()));
            if verifier.is_empty() || computed != challenge {
                return Err(oauth_error("invalid_grant", "Invalid code verifier."));
            }
            let (access, ttl) = issue_access(inner);
            let refresh = issue_refresh(inner);
            Ok(json!({
                "access_token": access, "expires_in": ttl, "refresh_token": refresh,
                "scope": scope, "token_type": "Bearer", "id_token": "fake.id.token"
            }))
        }
        "refresh_token" => {
            let refresh = get("refresh_token");
            match inner.refresh_tokens.get(&refresh) {
                Some(false) => {}
                Some(true) => {
                    return Err(oauth_error(
                        "invalid_grant",
                        "Token has been expired or revoked.",
                    ));
                }
                None => return Err(oauth_error("invalid_grant", "Bad Request")),
            }
            let (access, ttl) = issue_access(inner);
            let mut body = json!({
                "access_token": access, "expires_in": ttl,
                "scope": "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile",
                "token_type": "Bearer"
            });
            if inner.rotate_refresh {
                inner.refresh_tokens.insert(refresh, true);
                body["refresh_token"] = json!(issue_refresh(inner));
            }
            Ok(body)
        }
        other => Err(oauth_error(
            "unsupported_grant_type",
            &format!("Invalid grant_type: {other}"),
        )),
    }
}

fn bearer_ok(inner: &Inner, headers: &HeaderMap) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|t| inner.access_tokens.get(t))
        .is_some_and(|(revoked, expires)| !revoked && *expires > now())
}

async fn userinfo(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let mut inner = lock(&state);
    let ok = bearer_ok(&inner, &headers);
    inner.events.push(OAuthEvent::Userinfo { ok });
    if !ok {
        return json_reply(
            StatusCode::UNAUTHORIZED,
            json!({"error": {"code": 401, "message": "Request is missing required authentication credential.", "status": "UNAUTHENTICATED"}}),
        );
    }
    json_reply(
        StatusCode::OK,
        json!({"id": "1234567890", "email": inner.email, "verified_email": true, "name": "Dev Eloper", "picture": "https://example.com/p.png"}),
    )
}

async fn revoke(State(state): State<Shared>, body: Bytes) -> Response {
    let form = url_encode::parse(&String::from_utf8_lossy(&body));
    let token = form.get("token").cloned().unwrap_or_default();
    let mut inner = lock(&state);
    inner.events.push(OAuthEvent::Revoke {
        token: token.clone(),
    });
    let known = if let Some(r) = inner.refresh_tokens.get_mut(&token) {
        *r = true;
        // Revoking a refresh token ends its access tokens too.
        inner.access_tokens.values_mut().for_each(|a| a.0 = true);
        true
    } else if let Some(a) = inner.access_tokens.get_mut(&token) {
        a.0 = true;
        true
    } else {
        false
    };
    if known {
        json_reply(StatusCode::OK, json!({}))
    } else {
        let (status, body) = oauth_error("invalid_token", "Token expired or revoked");
        json_reply(status, body)
    }
}

async fn projects(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let mut inner = lock(&state);
    inner.events.push(OAuthEvent::Projects);
    if !bearer_ok(&inner, &headers) {
        return json_reply(
            StatusCode::UNAUTHORIZED,
            json!({"error": {"code": 401, "message": "unauthenticated", "status": "UNAUTHENTICATED"}}),
        );
    }
    json_reply(StatusCode::OK, json!({"projects": inner.projects}))
}

#[cfg(test)]
mod tests {
    use super::url_encode;

    #[test]
    fn form_round_trip() {
        let mut s = url_encode::Serializer::new(String::new());
        s.append_pair("a b", "4/x&y=z%");
        let text = s.finish();
        assert_eq!(text, "a+b=4%2Fx%26y%3Dz%25");
        let parsed = url_encode::parse(&text);
        assert_eq!(parsed["a b"], "4/x&y=z%");
    }
}
