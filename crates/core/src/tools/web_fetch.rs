//! `web_fetch`: fetches the URLs named in the prompt, turns HTML into text
//! and asks the model to answer the prompt over that text.
//!
//! Addresses on private, loopback or link-local networks are refused unless
//! the user approved this very call in a confirmation: a model must not be
//! able to probe the user's local network on its own, even in yolo mode.

use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::Duration;

use futures::future::BoxFuture;
use gd_gemini::{Content, GenerateContentRequest, RequestMeta};
use gd_protocol::ConfirmationDetails;
use regex::Regex;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolErrorKind, ToolKind, ToolResult};

/// Bytes read per URL.
const MAX_BODY: usize = 10 * 1024 * 1024;
/// Characters of text per URL given to the model.
const MAX_TEXT: usize = 100_000;
const TIMEOUT: Duration = Duration::from_secs(15);

pub struct WebFetch {
    schema: Value,
    http: OnceLock<reqwest::Client>,
}

impl WebFetch {
    pub const NAME: &'static str = "web_fetch";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "prompt": {
                        "type": "string",
                        "description": "The request, containing the URL(s) to fetch (http:// or https://, up to 20) and what to do with their content."
                    }
                },
                "required": ["prompt"]
            }),
            http: OnceLock::new(),
        }
    }

    fn http(&self) -> Result<&reqwest::Client, String> {
        if let Some(client) = self.http.get() {
            return Ok(client);
        }
        let client = gd_gemini::http_client_builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::limited(5))
            .user_agent(concat!(
                "GeminiDesktop/",
                env!("CARGO_PKG_VERSION"),
                " (web_fetch)"
            ))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(self.http.get_or_init(|| client))
    }
}

impl Default for WebFetch {
    fn default() -> Self {
        Self::new()
    }
}

/// The URLs of a prompt, with GitHub `blob` pages turned into raw files.
pub fn extract_urls(prompt: &str) -> Vec<String> {
    static URL: OnceLock<Regex> = OnceLock::new();
    let re = URL.get_or_init(|| Regex::new(r#"https?://[^\s<>"'`]+"#).expect("valid regex"));
    let mut urls: Vec<String> = Vec::new();
    for m in re.find_iter(prompt) {
        let url = m
            .as_str()
            .trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '}']);
        let url = github_raw(url);
        if !urls.contains(&url) {
            urls.push(url);
        }
    }
    urls.truncate(20);
    urls
}

fn github_raw(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("https://github.com/") {
        let parts: Vec<&str> = rest.splitn(4, '/').collect();
        if parts.len() == 4 && parts[2] == "blob" {
            return format!(
                "https://raw.githubusercontent.com/{}/{}/{}",
                parts[0], parts[1], parts[3]
            );
        }
    }
    url.to_owned()
}

/// Whether `ip` is on a network the user's machine can reach but the
/// internet cannot (loopback, private, link-local, unique-local...).
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xfe00) == 0xfc00
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_private(IpAddr::V4(v4)))
        }
    }
}

/// Whether a URL's host resolves to a private address (or cannot be parsed).
async fn points_to_private_network(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return true;
    };
    let Some(host) = parsed.host_str() else {
        return true;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") || host.ends_with(".localhost") {
        return true;
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return is_private(ip);
    }
    let port = parsed.port_or_known_default().unwrap_or(443);
    match tokio::net::lookup_host((host, port)).await {
        Ok(addrs) => addrs.into_iter().any(|a| is_private(a.ip())),
        Err(_) => false,
    }
}

impl Tool for WebFetch {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn display_name(&self) -> &str {
        "WebFetch"
    }

    fn description(&self) -> &str {
        "Fetches the web pages whose URLs appear in the prompt (GitHub file pages are fetched raw), converts HTML to text and answers the prompt over their content, citing the sources. Use it to read documentation or pages the user points to."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Fetch
    }

    fn parameter_schema(&self) -> &Value {
        &self.schema
    }

    fn describe_call(&self, args: &Value) -> String {
        let urls = extract_urls(args["prompt"].as_str().unwrap_or_default());
        format!("Fetching {}", urls.join(", "))
    }

    fn prepare<'a>(
        &'a self,
        args: &'a Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Option<ConfirmationDetails>, ToolError>> {
        Box::pin(async move {
            let prompt = args["prompt"].as_str().unwrap_or_default();
            let urls = extract_urls(prompt);
            if urls.is_empty() {
                return Err(ToolError::new(
                    ToolErrorKind::InvalidParams,
                    "The 'prompt' must contain at least one valid URL (starting with http:// or https://).",
                ));
            }
            let mut private = Vec::new();
            for url in &urls {
                if points_to_private_network(url).await {
                    private.push(url.clone());
                }
            }
            let mut text = prompt.to_owned();
            if !private.is_empty() {
                text.push_str(&format!(
                    "\n\nWarning: these addresses are on a private or local network: {}",
                    private.join(", ")
                ));
            }
            Ok(Some(ConfirmationDetails::Info {
                title: "Fetch these URLs?".into(),
                prompt: text,
                urls,
            }))
        })
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let prompt = args["prompt"].as_str().unwrap_or_default().to_owned();
            let urls = extract_urls(&prompt);
            let http = match self.http() {
                Ok(http) => http,
                Err(e) => {
                    return ToolResult::error(
                        ToolErrorKind::Execution,
                        format!("Cannot fetch: {e}"),
                    );
                }
            };
            let mut pages = Vec::new();
            let mut failures = Vec::new();
            for url in &urls {
                if !ctx.confirmed && points_to_private_network(url).await {
                    failures.push(format!(
                        "{url}: refused, it is on a private or local network; the user must approve fetching it"
                    ));
                    continue;
                }
                match fetch_text(http, url).await {
                    Ok(text) => pages.push((url.clone(), text)),
                    Err(e) => failures.push(format!("{url}: {e}")),
                }
            }
            if pages.is_empty() {
                return ToolResult::error(
                    ToolErrorKind::Network,
                    format!("Error fetching the URLs:\n{}", failures.join("\n")),
                );
            }
            let sources: Vec<String> = pages
                .iter()
                .enumerate()
                .map(|(i, (url, _))| format!("[{}] {url}", i + 1))
                .collect();
            let mut answer = match &ctx.services.model {
                Some(model) => ask_model(model, &prompt, &pages).await,
                None => Err("no model connection".into()),
            }
            .unwrap_or_else(|error| {
                // Without an answer, give the model the text itself.
                let mut text =
                    format!("(Could not summarise the pages: {error}. Their text follows.)\n");
                for (url, page) in &pages {
                    text.push_str(&format!("\n--- {url} ---\n{page}\n"));
                }
                text
            });
            answer.push_str("\n\nSources:\n");
            answer.push_str(&sources.join("\n"));
            if !failures.is_empty() {
                answer.push_str(&format!("\n\nNot fetched:\n{}", failures.join("\n")));
            }
            ToolResult::success(
                answer,
                format!(
                    "Fetched {} URL(s) and processed their content.",
                    pages.len()
                ),
            )
        })
    }
}

async fn fetch_text(http: &reqwest::Client, url: &str) -> Result<String, String> {
    let mut response = http.get(url).send().await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status()));
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BODY {
            body.truncate(MAX_BODY);
            break;
        }
    }
    let text =
        if content_type.contains("html") || (content_type.is_empty() && looks_like_html(&body)) {
            html2text::from_read(body.as_slice(), 100)
                .map_err(|e| format!("cannot read the HTML: {e}"))?
        } else if content_type.starts_with("text/")
            || content_type.contains("json")
            || content_type.contains("xml")
            || content_type.contains("javascript")
            || content_type.is_empty()
        {
            String::from_utf8_lossy(&body).into_owned()
        } else {
            return Err(format!("unsupported content type {content_type}"));
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

async fn ask_model(
    model: &super::services::ModelAccess,
    prompt: &str,
    pages: &[(String, String)],
) -> Result<String, String> {
    let mut text = format!(
        "{prompt}\n\nAnswer the request above using only the content of the fetched pages below. Cite pages by their number in brackets.\n"
    );
    for (i, (url, page)) in pages.iter().enumerate() {
        text.push_str(&format!("\n--- [{}] {url} ---\n{page}\n", i + 1));
    }
    let request = GenerateContentRequest {
        contents: vec![Content::user_text(text)],
        ..GenerateContentRequest::default()
    };
    let meta = RequestMeta {
        session_id: model.session_id.clone(),
        prompt_id: format!("{}########web-fetch", model.session_id),
    };
    let response = model
        .client
        .generate(&model.model, &request, &meta)
        .await
        .map_err(|e| e.to_string())?;
    let answer = response.text();
    if answer.trim().is_empty() {
        Err("the model returned no answer".into())
    } else {
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_extracted_trimmed_deduplicated_and_github_blobs_made_raw() {
        let prompt = "Compare https://example.com/a. and (https://github.com/o/r/blob/main/src/lib.rs), also https://example.com/a";
        assert_eq!(
            extract_urls(prompt),
            vec![
                "https://example.com/a".to_string(),
                "https://raw.githubusercontent.com/o/r/main/src/lib.rs".to_string()
            ]
        );
        assert!(extract_urls("no links here").is_empty());
    }

    #[test]
    fn private_ranges() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.5.4",
            "169.254.1.1",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "142.250.74.46", "2001:4860:4860::8888"] {
            assert!(!is_private(ip.parse().unwrap()), "{ip}");
        }
    }
}
