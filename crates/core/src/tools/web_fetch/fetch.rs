//! Fetching one URL: every hop (the URL, then each redirect) is checked by
//! the guard, resolved exactly once, and connected to exactly the checked
//! addresses.
//!
//! Redirects are followed here rather than by reqwest so that each new
//! location goes through the same checks as the first URL.
//!
//! Proxies (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` or the system's
//! settings): public targets go through the proxy, and then the proxy, not
//! this process, resolves the name and connects. The guard still resolves
//! every name once itself and refuses private answers before anything is
//! sent, but it cannot pin the proxy's own lookup: a name that rebinds
//! between our lookup and the proxy's reaches whatever the proxy can reach.
//! Private targets the user approved never use a proxy (they mean the
//! user's machine, not the proxy's). Where only the proxy can resolve
//! external names, names cannot be checked and such fetches fail.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::{StatusCode, Url};
use tracing::debug;

use super::Network;
use super::address::VisibleHost;
use super::resolver::PinnedResolver;

/// Bytes read per URL.
const MAX_BODY: usize = 10 * 1024 * 1024;
/// Characters of text per URL given to the model.
const MAX_TEXT: usize = 100_000;
/// Per request (hop).
const TIMEOUT: Duration = Duration::from_secs(15);
/// Redirects followed per URL, as Gemini CLI's fetch does.
pub const MAX_REDIRECTS: usize = 5;

/// Why a URL was not fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The guard refused a hop; nothing was sent to it.
    #[error("refused, {0}")]
    Refused(String),
    #[error("{0}")]
    Failed(String),
}

/// Where a checked hop's request goes.
enum Route {
    /// Through the system proxy, if one is configured.
    Proxied,
    /// Straight to the address, never through a proxy: a private address
    /// the user approved means the user's own machine or network, not the
    /// proxy's.
    Direct,
}

/// The HTTP clients of one `web_fetch` call, sharing one [`PinnedResolver`].
pub(super) struct Fetcher<'a> {
    network: &'a Network,
    pins: Arc<PinnedResolver>,
    proxied: reqwest::Client,
    direct: reqwest::Client,
    /// The user approved this call in a confirmation.
    confirmed: bool,
}

impl<'a> Fetcher<'a> {
    pub(super) fn new(network: &'a Network, confirmed: bool) -> Result<Self, String> {
        let pins = Arc::new(PinnedResolver::new(network.resolver.clone()));
        let build = |direct: bool| {
            let mut builder = gd_gemini::http_client_builder()
                .timeout(TIMEOUT)
                .redirect(reqwest::redirect::Policy::none())
                .dns_resolver(pins.clone())
                .user_agent(concat!(
                    "GeminiDesktop/",
                    env!("CARGO_PKG_VERSION"),
                    " (web_fetch)"
                ));
            if direct {
                builder = builder.no_proxy();
            }
            builder.build().map_err(|e| e.to_string())
        };
        Ok(Self {
            network,
            proxied: build(false)?,
            direct: build(true)?,
            pins,
            confirmed,
        })
    }

    /// The text of `url`, following up to [`MAX_REDIRECTS`] redirects.
    pub(super) async fn fetch_text(&self, url: &str) -> Result<String, FetchError> {
        let start =
            Url::parse(url).map_err(|e| FetchError::Failed(format!("invalid URL ({e})")))?;
        let mut current = start.clone();
        let mut hop = 0;
        loop {
            let route = self.check(&current, &start).await.map_err(|why| {
                FetchError::Refused(if hop == 0 {
                    why
                } else {
                    format!("it redirects to {current}, and {why}")
                })
            })?;
            let client = match route {
                Route::Proxied => &self.proxied,
                Route::Direct => &self.direct,
            };
            debug!(url = %current, hop, "web_fetch request");
            let response = client
                .get(current.clone())
                .send()
                .await
                .map_err(|e| FetchError::Failed(error_chain(&e)))?;
            let Some(location) = redirect_location(&response) else {
                return read_text(response).await;
            };
            if hop == MAX_REDIRECTS {
                return Err(FetchError::Failed(format!(
                    "too many redirects (more than {MAX_REDIRECTS})"
                )));
            }
            let next = current.join(&location).map_err(|e| {
                FetchError::Failed(format!("it redirects to an invalid URL {location:?} ({e})"))
            })?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(FetchError::Refused(format!(
                    "it redirects to {next}; only http and https redirects are followed"
                )));
            }
            current = next;
            hop += 1;
        }
    }

    /// Checks one hop before anything is sent to it, and pins its name to
    /// the checked addresses. `start` is the URL from the prompt.
    async fn check(&self, url: &Url, start: &Url) -> Result<Route, String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("only http and https URLs are fetched, not {url}"));
        }
        let host = VisibleHost::of(url).ok_or_else(|| format!("{url} has no host"))?;
        let classify = &self.network.classifier;
        // What the user saw and approved: the prompt's URL, with a host that
        // is visibly private, and redirects within that same origin.
        let approved = self.confirmed
            && url.origin() == start.origin()
            && VisibleHost::of(start).is_some_and(|h| h.visibly_private(classify).is_some());
        let private_refusal = |what: String| {
            if approved {
                Ok(Route::Direct)
            } else {
                Err(format!(
                    "{what}, on a private or local network; web_fetch reaches such addresses only when the prompt names them (an IP address or localhost) and the user approves the call"
                ))
            }
        };
        match host {
            VisibleHost::Ip(ip) => match classify(ip) {
                None => Ok(Route::Proxied),
                Some(kind) => private_refusal(format!("{ip} is a {kind} address")),
            },
            VisibleHost::Localhost(name) => {
                let route = private_refusal(format!("{name} is a loopback name"))?;
                // RFC 6761: localhost is loopback; no need to ask DNS.
                self.pins.pin(
                    &name,
                    vec![
                        IpAddr::V4(Ipv4Addr::LOCALHOST),
                        IpAddr::V6(Ipv6Addr::LOCALHOST),
                    ],
                );
                Ok(route)
            }
            VisibleHost::Name(name) => {
                let port = url.port_or_known_default().unwrap_or(443);
                let ips = self
                    .network
                    .resolver
                    .lookup(&name, port)
                    .await
                    .map_err(|e| format!("{name} cannot be resolved ({e})"))?;
                if ips.is_empty() {
                    return Err(format!("{name} has no addresses"));
                }
                // A name is never trusted to point somewhere private, even
                // when approved: the user saw the name, not where it points.
                if let Some((ip, kind)) = ips.iter().find_map(|ip| classify(*ip).map(|k| (ip, k))) {
                    return Err(format!(
                        "{name} resolves to {ip}, a {kind} address on a private or local network; names that resolve to private addresses are never fetched"
                    ));
                }
                self.pins.pin(&name, ips);
                Ok(Route::Proxied)
            }
        }
    }
}

/// The `Location` of a redirect response.
fn redirect_location(response: &reqwest::Response) -> Option<String> {
    let redirect = matches!(
        response.status(),
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    );
    if !redirect {
        return None;
    }
    response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// An error with its causes (reqwest's own message hides them).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

async fn read_text(mut response: reqwest::Response) -> Result<String, FetchError> {
    let failed = |e: reqwest::Error| FetchError::Failed(error_chain(&e));
    if !response.status().is_success() {
        return Err(FetchError::Failed(format!("HTTP {}", response.status())));
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BODY {
            body.truncate(MAX_BODY);
            break;
        }
    }
    let text =
        if content_type.contains("html") || (content_type.is_empty() && looks_like_html(&body)) {
            html2text::from_read(body.as_slice(), 100)
                .map_err(|e| FetchError::Failed(format!("cannot read the HTML: {e}")))?
        } else if content_type.starts_with("text/")
            || content_type.contains("json")
            || content_type.contains("xml")
            || content_type.contains("javascript")
            || content_type.is_empty()
        {
            String::from_utf8_lossy(&body).into_owned()
        } else {
            return Err(FetchError::Failed(format!(
                "unsupported content type {content_type}"
            )));
        };
    Ok(if text.chars().count() > MAX_TEXT {
        let cut: String = text.chars().take(MAX_TEXT).collect();
        format!("{cut}\n[... page text truncated at {MAX_TEXT} characters ...]")
    } else {
        text
    })
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    head.contains("<html") || head.contains("<!doctype html")
}
