//! The browser part of Google sign-in: a loopback HTTP server on 127.0.0.1
//! (a free port or a configured one) that accepts exactly one callback on
//! `/oauth2callback` carrying this sign-in's `state`, has the code exchanged and answers the
//! browser with a small page (a callback with another or no `state` gets a 400 page and the
//! sign-in keeps waiting: any web page can send the browser there); a paste-code fallback for browsers that cannot
//! reach this machine; cancellation; a 5-minute timeout.
//!
//! [`start`] returns a [`PendingLogin`] at once, with the URL to open; the
//! flow runs on a tokio task. A [`LoginControl`] (cheap to clone, e.g. kept
//! in the desktop shell's state) cancels it or submits a pasted code, and
//! reports the [`LoginStage`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use oauth2::url::Url;
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use crate::error::AuthError;
use crate::oauth::{GoogleOAuth, StoredTokens};

/// The callback path registered in the redirect URI.
pub const CALLBACK_PATH: &str = "/oauth2callback";

/// How long the browser has to come back.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Where a sign-in is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(export))]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum LoginStage {
    /// Waiting for the browser (or a pasted code).
    WaitingForBrowser,
    /// A code arrived; exchanging it for tokens.
    ExchangingCode,
    /// Reading the account and setting up Code Assist (see the manager).
    FinishingSetup {
        detail: String,
    },
    Done,
    Failed {
        message: String,
    },
}

/// Options of one sign-in.
#[derive(Debug, Clone)]
pub struct LoginOptions {
    /// A fixed port for the callback; `None` picks a free one.
    pub port: Option<u16>,
    pub timeout: Duration,
}

impl Default for LoginOptions {
    fn default() -> Self {
        Self {
            port: None,
            timeout: LOGIN_TIMEOUT,
        }
    }
}

/// Handle to cancel a sign-in or feed it a pasted code.
#[derive(Debug, Clone)]
pub struct LoginControl {
    cancel: CancellationToken,
    paste: mpsc::Sender<(String, oneshot::Sender<Result<(), AuthError>>)>,
    stage: watch::Receiver<LoginStage>,
    stage_tx: Arc<watch::Sender<LoginStage>>,
}

impl LoginControl {
    /// Stops the sign-in; [`PendingLogin::finish`] returns
    /// [`AuthError::Cancelled`].
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Submits what the user pasted: the whole URL the browser ended on
    /// (`http://127.0.0.1:PORT/oauth2callback?code=...&state=...`, whose
    /// state is checked) or just the code. Returns once the code was
    /// exchanged (or refused); [`PendingLogin::finish`] gets the same result.
    pub async fn submit_code(&self, pasted: &str) -> Result<(), AuthError> {
        let (tx, rx) = oneshot::channel();
        self.paste
            .send((pasted.to_owned(), tx))
            .await
            .map_err(|_| AuthError::Input("This sign-in has already ended.".into()))?;
        rx.await
            .map_err(|_| AuthError::Input("This sign-in has already ended.".into()))?
    }

    pub fn stage(&self) -> LoginStage {
        self.stage.borrow().clone()
    }

    /// Follows the stages (for a progress display).
    pub fn watch(&self) -> watch::Receiver<LoginStage> {
        self.stage.clone()
    }

    /// Reports a later stage (used by the manager after the exchange).
    pub fn set_stage(&self, stage: LoginStage) {
        let _ = self.stage_tx.send(stage);
    }
}

/// A sign-in in progress. Dropping it without [`PendingLogin::finish`]
/// cancels it.
#[derive(Debug)]
pub struct PendingLogin {
    /// The Google authorization URL to open in the browser.
    pub url: String,
    /// `http://127.0.0.1:PORT/oauth2callback`.
    pub redirect_uri: String,
    control: LoginControl,
    task: Option<tokio::task::JoinHandle<Result<StoredTokens, AuthError>>>,
}

impl PendingLogin {
    pub fn control(&self) -> LoginControl {
        self.control.clone()
    }

    /// Waits for the browser (or a pasted code) and the code exchange.
    pub async fn finish(mut self) -> Result<StoredTokens, AuthError> {
        let task = self.task.take().expect("finish is called once");
        match task.await {
            Ok(result) => result,
            Err(e) if e.is_cancelled() => Err(AuthError::Cancelled),
            Err(e) => Err(AuthError::Protocol(format!("the sign-in task failed: {e}"))),
        }
    }
}

impl Drop for PendingLogin {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.control.cancel();
        }
    }
}

/// One request on the callback path.
struct Callback {
    query: HashMap<String, String>,
    reply: oneshot::Sender<Page>,
}

/// What the browser sees.
#[derive(Debug, Clone)]
struct Page {
    status: StatusCode,
    title: &'static str,
    message: String,
}

impl Page {
    fn success() -> Self {
        Self {
            status: StatusCode::OK,
            title: "Signed in",
            message: "You are signed in to Gemini Desktop. You can close this tab.".into(),
        }
    }

    fn failure(error: &AuthError) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            title: "Sign-in failed",
            message: format!("{error} You can close this tab."),
        }
    }

    fn render(&self) -> Response<Full<Bytes>> {
        let html = format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title} - Gemini Desktop</title>\
             <style>body{{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#202124}}\
             h1{{font-size:1.4rem}}</style></head><body><h1>{title}</h1><p>{message}</p></body></html>",
            title = self.title,
            message = html_escape(&self.message)
        );
        Response::builder()
            .status(self.status)
            .header("content-type", "text/html; charset=utf-8")
            .header("cache-control", "no-store")
            .header("connection", "close")
            .body(Full::new(Bytes::from(html)))
            .expect("static response parts are valid")
    }
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Binds the loopback port and starts the flow.
pub async fn start(oauth: GoogleOAuth, options: LoginOptions) -> Result<PendingLogin, AuthError> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, options.port.unwrap_or(0)));
    let listener = TcpListener::bind(addr).await.map_err(|e| {
        AuthError::Config(match options.port {
            Some(port) => format!(
                "Cannot listen on 127.0.0.1:{port} for the sign-in callback ({e}). Free the port or configure another one."
            ),
            None => format!("Cannot open a local port for the sign-in callback: {e}"),
        })
    })?;
    let port = listener
        .local_addr()
        .map_err(|e| AuthError::Config(format!("cannot read the callback port: {e}")))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
    let authorization = oauth.authorize(&redirect_uri)?;

    let cancel = CancellationToken::new();
    let (stage_tx, stage_rx) = watch::channel(LoginStage::WaitingForBrowser);
    let stage_tx = Arc::new(stage_tx);
    let (paste_tx, paste_rx) = mpsc::channel(4);
    let (callback_tx, callback_rx) = mpsc::channel::<Callback>(4);
    let control = LoginControl {
        cancel: cancel.clone(),
        paste: paste_tx,
        stage: stage_rx,
        stage_tx: stage_tx.clone(),
    };

    let server_stop = cancel.child_token();
    tokio::spawn(serve(listener, callback_tx, server_stop.clone()));

    let url = authorization.url.clone();
    let driver = Driver {
        oauth,
        state: authorization.state.secret().clone(),
        verifier: Some(authorization.verifier),
        redirect_uri: redirect_uri.clone(),
        stage: stage_tx,
    };
    let task = tokio::spawn(async move {
        let result = driver
            .run(callback_rx, paste_rx, cancel, options.timeout)
            .await;
        // Exactly one callback: the server stops with the first answer.
        server_stop.cancel();
        result
    });
    Ok(PendingLogin {
        url,
        redirect_uri,
        control,
        task: Some(task),
    })
}

/// Accepts connections until stopped; every request on the callback path is
/// handed to the driver, which decides the page.
async fn serve(listener: TcpListener, callbacks: mpsc::Sender<Callback>, stop: CancellationToken) {
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    warn!(error = %e, "sign-in callback server: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        debug!(%peer, "sign-in callback connection");
        let callbacks = callbacks.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<hyper::body::Incoming>| {
                let callbacks = callbacks.clone();
                async move { Ok::<_, Infallible>(handle(request, callbacks).await) }
            });
            let connection = http1::Builder::new()
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                result = connection => if let Err(e) = result {
                    debug!(error = %e, "sign-in callback connection ended");
                },
                // Do not keep idle browser connections after the sign-in.
                _ = async { stop.cancelled().await; tokio::time::sleep(Duration::from_secs(5)).await } => {}
            }
        });
    }
}

async fn handle(
    request: Request<hyper::body::Incoming>,
    callbacks: mpsc::Sender<Callback>,
) -> Response<Full<Bytes>> {
    if request.uri().path() != CALLBACK_PATH || request.method() != hyper::Method::GET {
        return Page {
            status: StatusCode::NOT_FOUND,
            title: "Not found",
            message: "This address only receives Google's sign-in answer.".into(),
        }
        .render();
    }
    let query = request
        .uri()
        .query()
        .map(|q| {
            oauth2::url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let (reply, page) = oneshot::channel();
    if callbacks.send(Callback { query, reply }).await.is_err() {
        return finished_page().render();
    }
    match page.await {
        Ok(page) => page.render(),
        Err(_) => finished_page().render(),
    }
}

fn finished_page() -> Page {
    Page {
        status: StatusCode::GONE,
        title: "Sign-in already finished",
        message: "This sign-in has already ended. Go back to Gemini Desktop; start a new sign-in there if needed.".into(),
    }
}

struct Driver {
    oauth: GoogleOAuth,
    state: String,
    verifier: Option<oauth2::PkceCodeVerifier>,
    redirect_uri: String,
    stage: Arc<watch::Sender<LoginStage>>,
}

impl Driver {
    async fn run(
        mut self,
        mut callbacks: mpsc::Receiver<Callback>,
        mut pastes: mpsc::Receiver<(String, oneshot::Sender<Result<(), AuthError>>)>,
        cancel: CancellationToken,
        timeout: Duration,
    ) -> Result<StoredTokens, AuthError> {
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let result = loop {
            tokio::select! {
                _ = cancel.cancelled() => break Err(AuthError::Cancelled),
                _ = &mut deadline => break Err(AuthError::TimedOut(timeout.as_secs().div_ceil(60).max(1))),
                Some(callback) = callbacks.recv() => {
                    // A request without our `state` is not Google's answer to this sign-in
                    // (a forged or stale link any web page can make the browser open): it
                    // is refused and the sign-in keeps waiting, so it cannot end it.
                    if !self.owns(&callback.query) {
                        warn!("sign-in callback without this sign-in's state ignored");
                        let _ = callback.reply.send(Page::failure(&AuthError::StateMismatch));
                        continue;
                    }
                    let result = match self.check_callback(&callback.query) {
                        Ok(code) => self.exchange(&code, &cancel).await,
                        Err(e) => Err(e),
                    };
                    let page = match &result {
                        Ok(_) => Page::success(),
                        Err(e) => Page::failure(e),
                    };
                    let _ = callback.reply.send(page);
                    break result;
                }
                Some((pasted, reply)) = pastes.recv() => {
                    let code = match parse_pasted(&pasted) {
                        // Another sign-in's address (an old tab): say so and keep waiting.
                        Ok(Pasted::Query(query)) if !self.owns(&query) => {
                            let _ = reply.send(Err(AuthError::StateMismatch));
                            continue;
                        }
                        Ok(pasted) => self.check_pasted(pasted),
                        // A typo: say so and keep waiting.
                        Err(e) => {
                            let _ = reply.send(Err(e));
                            continue;
                        }
                    };
                    let result = match code {
                        Ok(code) => self.exchange(&code, &cancel).await,
                        Err(e) => Err(e),
                    };
                    let _ = reply.send(result.as_ref().map(|_| ()).map_err(Clone::clone));
                    break result;
                }
            }
        };
        let _ = self.stage.send(match &result {
            Ok(_) => LoginStage::FinishingSetup {
                detail: "Reading your Google account".into(),
            },
            Err(e) => LoginStage::Failed {
                message: e.to_string(),
            },
        });
        result
    }

    /// Whether `query` carries this sign-in's `state`. Google sends it with codes and with
    /// errors alike (RFC 6749 §4.1.2); anything else, `error=` included, may come from any
    /// page the browser visited and must not end the sign-in.
    fn owns(&self, query: &HashMap<String, String>) -> bool {
        query.get("state").is_some_and(|s| *s == self.state)
    }

    /// The code of a callback that [`Driver::owns`] (checked again here).
    fn check_callback(&self, query: &HashMap<String, String>) -> Result<String, AuthError> {
        if !self.owns(query) {
            return Err(AuthError::StateMismatch);
        }
        if let Some(error) = query.get("error") {
            return Err(denied(error, query.get("error_description")));
        }
        match query.get("code") {
            Some(code) if !code.is_empty() => Ok(code.clone()),
            _ => Err(AuthError::Protocol(
                "The browser came back without an authorization code. Start the sign-in again."
                    .into(),
            )),
        }
    }

    fn check_pasted(&self, pasted: Pasted) -> Result<String, AuthError> {
        match pasted {
            Pasted::Code(code) => Ok(code),
            Pasted::Query(query) => self.check_callback(&query),
        }
    }

    async fn exchange(
        &mut self,
        code: &str,
        cancel: &CancellationToken,
    ) -> Result<StoredTokens, AuthError> {
        let _ = self.stage.send(LoginStage::ExchangingCode);
        let verifier = self
            .verifier
            .take()
            .ok_or_else(|| AuthError::Protocol("the code was already used".into()))?;
        tokio::select! {
            _ = cancel.cancelled() => Err(AuthError::Cancelled),
            result = self.oauth.exchange_code(code, verifier, &self.redirect_uri) => result,
        }
    }
}

fn denied(error: &str, description: Option<&String>) -> AuthError {
    let error = crate::redact::redact(error);
    match description {
        Some(d) if !d.trim().is_empty() => {
            AuthError::Denied(format!("{error} ({})", crate::redact::redact(d)))
        }
        _ if error == "access_denied" => {
            AuthError::Denied("access_denied (consent was declined)".into())
        }
        _ => AuthError::Denied(error),
    }
}

/// What the user pasted.
#[derive(Debug, PartialEq, Eq)]
enum Pasted {
    Code(String),
    Query(HashMap<String, String>),
}

fn parse_pasted(text: &str) -> Result<Pasted, AuthError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(AuthError::Input(
            "Paste the address the browser ended on, or the code.".into(),
        ));
    }
    let query_of = |q: &str| -> HashMap<String, String> {
        oauth2::url::form_urlencoded::parse(q.trim_start_matches('?').as_bytes())
            .into_owned()
            .collect()
    };
    if let Ok(url) = Url::parse(text)
        && url.query().is_some()
    {
        let query = query_of(url.query().unwrap_or_default());
        if query.contains_key("code") || query.contains_key("error") {
            return Ok(Pasted::Query(query));
        }
    }
    if text.contains("code=") || text.contains("error=") {
        let q = text.split_once('?').map(|(_, q)| q).unwrap_or(text);
        return Ok(Pasted::Query(query_of(q)));
    }
    if text.chars().any(char::is_whitespace) {
        return Err(AuthError::Input(
            "That does not look like an authorization code or a sign-in address.".into(),
        ));
    }
    Ok(Pasted::Code(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_inputs() {
        assert_eq!(
            parse_pasted("  4/0Abc-def  ").unwrap(),
            Pasted::Code("4/0Abc-def".into())
        );
        let Pasted::Query(q) =
            parse_pasted("http://127.0.0.1:40123/oauth2callback?state=s1&code=4%2F0X&scope=a")
                .unwrap()
        else {
            panic!()
        };
        assert_eq!(q["code"], "4/0X");
        assert_eq!(q["state"], "s1");
        let Pasted::Query(q) = parse_pasted("?code=abc&state=zz").unwrap() else {
            panic!()
        };
        assert_eq!(q["code"], "abc");
        assert!(parse_pasted("").is_err());
        assert!(parse_pasted("two words").is_err());
    }

    #[test]
    fn pages_escape_messages() {
        let page = Page::failure(&AuthError::Denied("<script>".into()));
        let response = page.render();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
}
