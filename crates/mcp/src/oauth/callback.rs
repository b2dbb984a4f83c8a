//! The loopback redirect of an OAuth sign-in (RFC 8252 §7.3): a listener on
//! 127.0.0.1 that takes exactly one redirect to its callback path carrying
//! the sign-in's `state`, answers the browser with a short page, and stops.
//! A redirect with another `state` or none (codes and `error=` alike) gets a
//! 400 and the listener keeps waiting: any web page the user visits can send
//! the browser to this port, and must not be able to end the sign-in.
//!
//! Plain HTTP/1.1 on a Tokio socket: the browser sends one GET and reads
//! one small answer, which does not justify an HTTP server. Requests to
//! other paths (a browser asking for `/favicon.ico`) get a 404 and the
//! listener keeps waiting.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::OAuthError;

/// The path of the redirect when settings do not name one (Gemini CLI's).
pub const DEFAULT_CALLBACK_PATH: &str = "/oauth/callback";

/// Requests larger than this are not a browser's redirect.
const MAX_REQUEST: usize = 16 * 1024;
/// How long one connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Where to listen, from an `oauth.redirectUri` setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedirectTarget {
    /// The host as written (`localhost`, `127.0.0.1` or `[::1]`): the
    /// redirect URI must match what was registered, character for character.
    pub host: String,
    pub ip: IpAddr,
    pub port: u16,
    pub path: String,
}

/// Why an `oauth.redirectUri` cannot be used (the texts complete
/// "`oauth.redirectUri`: ...").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectUriError {
    #[error("not a valid URL ({0})")]
    InvalidUrl(String),
    #[error("must be an http:// URL to this computer (a loopback redirect)")]
    NotHttp,
    #[error("must point at localhost, 127.0.0.1 or [::1]")]
    NotLoopback,
    #[error("needs a port (e.g. http://localhost:7777/oauth/callback)")]
    NoPort,
}

/// Checks an `oauth.redirectUri`: `http://` to a loopback host with a port.
pub fn parse_redirect_uri(uri: &str) -> Result<RedirectTarget, RedirectUriError> {
    let url = reqwest::Url::parse(uri).map_err(|e| RedirectUriError::InvalidUrl(e.to_string()))?;
    if url.scheme() != "http" {
        return Err(RedirectUriError::NotHttp);
    }
    let host = url.host_str().unwrap_or_default().to_owned();
    let ip: IpAddr = if host == "localhost" {
        Ipv4Addr::LOCALHOST.into()
    } else {
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok()
            .filter(IpAddr::is_loopback)
            .ok_or(RedirectUriError::NotLoopback)?
    };
    let port = url.port().ok_or(RedirectUriError::NoPort)?;
    let path = match url.path() {
        "" | "/" => DEFAULT_CALLBACK_PATH.to_owned(),
        path => path.to_owned(),
    };
    Ok(RedirectTarget {
        host,
        ip,
        port,
        path,
    })
}

/// What the authorization server sent back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackParams {
    pub code: String,
    pub state: String,
    /// RFC 9207 `iss`, when the server sends it.
    pub issuer: Option<String>,
}

/// A bound loopback listener waiting for the redirect.
#[derive(Debug)]
pub struct CallbackListener {
    listener: TcpListener,
    redirect_uri: String,
    path: String,
}

impl CallbackListener {
    /// Binds the configured redirect, or a free port on 127.0.0.1.
    pub async fn bind(configured: Option<&str>) -> Result<Self, OAuthError> {
        let target = match configured {
            Some(uri) => parse_redirect_uri(uri)
                .map_err(|e| OAuthError::Failed(format!("oauth.redirectUri {uri:?}: {e}")))?,
            None => RedirectTarget {
                host: "127.0.0.1".into(),
                ip: Ipv4Addr::LOCALHOST.into(),
                port: 0,
                path: DEFAULT_CALLBACK_PATH.into(),
            },
        };
        let listener = TcpListener::bind(SocketAddr::new(target.ip, target.port))
            .await
            .map_err(|e| {
                OAuthError::Failed(format!(
                    "cannot listen for the sign-in redirect on {}:{}: {e}",
                    target.host, target.port
                ))
            })?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Failed(format!("cannot read the listener's port: {e}")))?
            .port();
        Ok(Self {
            listener,
            redirect_uri: format!("http://{}:{port}{}", target.host, target.path),
            path: target.path,
        })
    }

    /// The redirect URI to register and to send in the authorization
    /// request.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the one redirect to the callback path and checks its
    /// `state` against `expected_state`. Ends with an error after `timeout`
    /// or when `cancel` fires.
    pub async fn wait(
        self,
        expected_state: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<CallbackParams, OAuthError> {
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            let (stream, _) = tokio::select! {
                _ = cancel.cancelled() => return Err(OAuthError::Cancelled),
                _ = &mut deadline => return Err(OAuthError::TimedOut(timeout)),
                accepted = self.listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        tracing::debug!("accepting a sign-in redirect connection failed: {e}");
                        continue;
                    }
                },
            };
            match handle(stream, &self.path, expected_state).await {
                Handled::Ignored => continue,
                Handled::Done(result) => return result,
            }
        }
    }
}

enum Handled {
    /// Not the redirect (another path, a broken request, another `state`): keep waiting.
    Ignored,
    Done(Result<CallbackParams, OAuthError>),
}

async fn handle(mut stream: TcpStream, path: &str, expected_state: &str) -> Handled {
    let Ok(Some(target)) = tokio::time::timeout(READ_TIMEOUT, read_target(&mut stream))
        .await
        .unwrap_or(Ok(None))
    else {
        return Handled::Ignored;
    };
    let Ok(url) = reqwest::Url::parse(&format!("http://127.0.0.1{target}")) else {
        respond(
            &mut stream,
            400,
            "Bad request",
            "This is not a sign-in redirect.",
        )
        .await;
        return Handled::Ignored;
    };
    if url.path() != path {
        respond(&mut stream, 404, "Not found", "Nothing here.").await;
        return Handled::Ignored;
    }
    let query = |key: &str| {
        url.query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    };
    if query("state").as_deref() != Some(expected_state) {
        tracing::warn!("a sign-in redirect without this sign-in's `state` was ignored");
        respond(
            &mut stream,
            400,
            "Not this sign-in",
            &OAuthError::StateMismatch.to_string(),
        )
        .await;
        return Handled::Ignored;
    }
    let result = if let Some(error) = query("error") {
        let description = query("error_description")
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        Err(OAuthError::Denied(format!("{error}{description}")))
    } else {
        match query("code") {
            Some(code) if !code.is_empty() => Ok(CallbackParams {
                code,
                state: expected_state.to_owned(),
                issuer: query("iss"),
            }),
            _ => Err(OAuthError::Failed(
                "the sign-in redirect carried no authorization code".into(),
            )),
        }
    };
    match &result {
        Ok(_) => {
            respond(
                &mut stream,
                200,
                "Signed in",
                "Gemini Desktop is signed in to the MCP server. You can close this window.",
            )
            .await
        }
        Err(e) => respond(&mut stream, 400, "Sign-in failed", &e.to_string()).await,
    }
    Handled::Done(result)
}

/// Reads the request head and returns the request target of a GET.
async fn read_target(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await?;
        if n == 0 || buf.len() + n > MAX_REQUEST {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    let mut parts = head.lines().next().unwrap_or("").split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Ok(Some(target.to_owned())),
        _ => Ok(None),
    }
}

async fn respond(stream: &mut TcpStream, status: u16, title: &str, message: &str) {
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><h1>{title}</h1><p>{}</p></body></html>",
        escape(message)
    );
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris() {
        let t = parse_redirect_uri("http://localhost:7777/oauth/callback").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("localhost", 7777, "/oauth/callback")
        );
        let t = parse_redirect_uri("http://127.0.0.1:8080").unwrap();
        assert_eq!(t.path, DEFAULT_CALLBACK_PATH);
        assert!(parse_redirect_uri("http://[::1]:9/cb").is_ok());
        assert!(
            parse_redirect_uri("https://localhost:1/cb")
                .unwrap_err()
                .to_string()
                .contains("http://")
        );
        assert!(
            parse_redirect_uri("http://example.com:1/cb")
                .unwrap_err()
                .to_string()
                .contains("localhost")
        );
        assert!(
            parse_redirect_uri("http://localhost/cb")
                .unwrap_err()
                .to_string()
                .contains("port")
        );
        assert!(
            parse_redirect_uri("nope")
                .unwrap_err()
                .to_string()
                .contains("not a valid URL")
        );
    }

    async fn get(uri: &str) -> (u16, String) {
        let client = gd_http::http_client_builder().build().unwrap();
        let response = client.get(uri).send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    #[tokio::test]
    async fn one_redirect_with_the_right_state() {
        let listener = CallbackListener::bind(None).await.unwrap();
        let uri = listener.redirect_uri().to_owned();
        assert!(
            uri.starts_with("http://127.0.0.1:") && uri.ends_with(DEFAULT_CALLBACK_PATH),
            "{uri}"
        );
        let cancel = CancellationToken::new();
        let waiting =
            tokio::spawn(
                async move { listener.wait("s1", Duration::from_secs(30), &cancel).await },
            );
        let base = uri.trim_end_matches(DEFAULT_CALLBACK_PATH).to_owned();
        assert_eq!(get(&format!("{base}/favicon.ico")).await.0, 404);
        let (status, page) = get(&format!("{uri}?code=c0de&state=s1")).await;
        assert_eq!(status, 200);
        assert!(page.contains("close this window"));
        let params = waiting.await.unwrap().unwrap();
        assert_eq!(params.code, "c0de");
        assert_eq!(params.issuer, None);
    }

    #[tokio::test]
    async fn wrong_state_error_timeout_and_cancel() {
        let listener = CallbackListener::bind(None).await.unwrap();
        let uri = listener.redirect_uri().to_owned();
        let cancel = CancellationToken::new();
        let waiting = tokio::spawn(async move {
            listener
                .wait("expected", Duration::from_secs(30), &cancel)
                .await
        });
        for forged in [
            "code=c&state=forged",
            "code=c",
            "error=access_denied&state=forged",
            "error=access_denied",
        ] {
            let (status, page) = get(&format!("{uri}?{forged}")).await;
            assert_eq!(status, 400, "{forged}");
            assert!(page.contains("state"), "{forged}: {page}");
            assert!(!waiting.is_finished(), "{forged} ended the sign-in");
        }
        let (status, _) = get(&format!("{uri}?code=real&state=expected")).await;
        assert_eq!(status, 200);
        assert_eq!(waiting.await.unwrap().unwrap().code, "real");

        let listener = CallbackListener::bind(None).await.unwrap();
        let uri = listener.redirect_uri().to_owned();
        let cancel = CancellationToken::new();
        let waiting =
            tokio::spawn(async move { listener.wait("s", Duration::from_secs(30), &cancel).await });
        get(&format!(
            "{uri}?error=access_denied&error_description=no+thanks&state=s"
        ))
        .await;
        let error = waiting.await.unwrap().unwrap_err();
        assert!(
            error.to_string().contains("access_denied: no thanks"),
            "{error}"
        );

        let listener = CallbackListener::bind(None).await.unwrap();
        let cancel = CancellationToken::new();
        let error = listener
            .wait("s", Duration::from_millis(50), &cancel)
            .await
            .unwrap_err();
        assert!(matches!(error, OAuthError::TimedOut(_)));

        let listener = CallbackListener::bind(None).await.unwrap();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let error = listener
            .wait("s", Duration::from_secs(30), &cancel)
            .await
            .unwrap_err();
        assert_eq!(error, OAuthError::Cancelled);
    }
}
