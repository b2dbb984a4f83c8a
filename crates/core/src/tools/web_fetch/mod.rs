//! `web_fetch`: fetches the URLs named in the prompt, turns HTML into text
//! and asks the model to answer the prompt over that text.
//!
//! Security (issue 12):
//! - Nothing touches the network, DNS included, before the call is allowed:
//!   [`super::Tool::prepare`] runs before the policy decides and before the user is
//!   asked, so it only reads the URLs (a lookup of
//!   `https://<secret>.attacker.example/` would leak the secret to the
//!   attacker's DNS server even for a denied call).
//! - Every hop (the URL, each redirect) is checked before a request is sent,
//!   resolved exactly once and connected to exactly the checked addresses
//!   ([`fetch`], [`resolver`]).
//! - Private and reserved addresses ([`address`]) are reached only when the
//!   prompt names them visibly (an IP address or localhost), the
//!   confirmation shows it, and the user approves this very call; never for
//!   a name that resolves privately, never through a redirect to another
//!   origin, never in yolo mode or through an "always allow" rule.

pub mod address;
mod fetch;
pub mod resolver;

use std::sync::Arc;
use std::sync::OnceLock;

use gd_gemini::{Content, GenerateContentRequest, RequestMeta};
use gd_protocol::ConfirmationDetails;
use regex::Regex;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolContext, ToolError, ToolErrorKind, ToolResult};
pub use address::{Classifier, VisibleHost, default_classifier, is_private, special_purpose};
pub use fetch::{FetchError, MAX_REDIRECTS};
pub use resolver::{Resolver, SystemResolver};

/// How `web_fetch` reaches the network: who resolves names and which
/// addresses are off limits. Injectable so tests resolve names to loopback
/// servers without real DNS.
#[derive(Clone)]
pub struct Network {
    pub resolver: Arc<dyn Resolver>,
    pub classifier: Classifier,
}

impl Network {
    /// The system resolver and the IANA special-purpose lists.
    pub fn system() -> Self {
        Self {
            resolver: Arc::new(SystemResolver),
            classifier: default_classifier(),
        }
    }
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network").finish_non_exhaustive()
    }
}

/// The arguments of a `web_fetch` call.
#[derive(Debug, Deserialize)]
pub struct Params {
    prompt: String,
}

pub struct WebFetch {
    schema: Value,
    network: Network,
}

impl WebFetch {
    pub const NAME: &'static str = "web_fetch";

    pub fn new() -> Self {
        Self::with_network(Network::system())
    }

    /// A `web_fetch` resolving and classifying addresses with `network`.
    pub fn with_network(network: Network) -> Self {
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
            network,
        }
    }

    /// The URLs whose host is visibly private (no DNS), with why.
    fn visibly_private(&self, urls: &[String]) -> Vec<String> {
        urls.iter()
            .filter_map(|url| {
                let Ok(parsed) = reqwest::Url::parse(url) else {
                    return Some(format!("{url} (not a valid URL)"));
                };
                let kind = VisibleHost::of(&parsed)?.visibly_private(&self.network.classifier)?;
                Some(format!("{url} ({kind})"))
            })
            .collect()
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

crate::tools::tool_info! {
    default WebFetch,
    display: "WebFetch",
    kind: Fetch,
    description: "Fetches the web pages whose URLs appear in the prompt (GitHub file pages are fetched raw), converts HTML to text and answers the prompt over their content, citing the sources. Use it to read documentation or pages the user points to.",
    fn describe_call(&self, args: &Value) -> String {
        let urls = extract_urls(args["prompt"].as_str().unwrap_or_default());
        format!("Fetching {}", urls.join(", "))
    }
}

impl crate::tools::TypedTool for WebFetch {
    type Args = Params;

    async fn prepare(&self, args: Params, _ctx: &ToolContext) -> crate::tools::typed::Prepared {
        let prompt = args.prompt;
        let urls = extract_urls(&prompt);
        if urls.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::InvalidParams,
                "The 'prompt' must contain at least one valid URL (starting with http:// or https://).",
            ));
        }
        // No resolution here: this runs before the call is allowed.
        let private = self.visibly_private(&urls);
        let mut text = prompt;
        if !private.is_empty() {
            text.push_str(&format!(
                "\n\nWarning: these addresses are on a private or local network: {}. Approving lets this call reach them.",
                private.join(", ")
            ));
        }
        Ok(Some(ConfirmationDetails::Info {
            title: "Fetch these URLs?".into(),
            prompt: text,
            urls,
        }))
    }

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let prompt = args.prompt;
        let urls = extract_urls(&prompt);
        // `confirmed` only when the user approved this very call; a
        // policy "allow" (yolo, always-allow rules) never unlocks
        // private addresses.
        let fetcher = match fetch::Fetcher::new(&self.network, ctx.confirmed) {
            Ok(fetcher) => fetcher,
            Err(e) => {
                return Err(ToolError::new(
                    ToolErrorKind::Execution,
                    format!("Cannot fetch: {e}"),
                ));
            }
        };
        let mut pages = Vec::new();
        let mut failures = Vec::new();
        for url in &urls {
            match fetcher.fetch_text(url).await {
                Ok(text) => pages.push((url.clone(), text)),
                Err(e) => failures.push(format!("{url}: {e}")),
            }
        }
        if pages.is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::Network,
                format!("Error fetching the URLs:\n{}", failures.join("\n")),
            ));
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
        Ok(ToolResult::success(
            answer,
            format!(
                "Fetched {} URL(s) and processed their content.",
                pages.len()
            ),
        ))
    }
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
}
