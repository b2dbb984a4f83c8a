//! google_web_search and web_fetch end to end: the fake Gemini server
//! answers the tools' own model requests, and a tiny local web server
//! serves the page to fetch.

use crate::common;

use std::sync::Arc;

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{ConfirmationDetails, ConfirmationOutcome, Event, Op, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn last_output(h: &Harness) -> Value {
    let bodies = h.bodies();
    bodies.last().unwrap()["contents"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["parts"][0]["functionResponse"]["response"]
        .clone()
}

#[tokio::test]
async fn web_search_answers_with_citations_and_sources() {
    let answer = "Tokio is an async runtime. It powers many servers.";
    let first_end = "Tokio is an async runtime.".len();
    let scenario = json!({
        "steps": [
            {"functionCalls": [{"name": "google_web_search", "args": {"query": "what is tokio"}}]},
            {"text": "Found it."}
        ],
        "utility": [{"match": "what is tokio", "text": answer, "candidate": {"groundingMetadata": {
            "groundingChunks": [{"web": {"uri": "https://tokio.rs", "title": "Tokio"}}],
            "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": first_end}, "groundingChunkIndices": [0]}]
        }}}]
    });
    let mut h = Harness::start(scenario);
    let events = h.turn("search").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(
        last_output(&h)["output"],
        "Web search results for \"what is tokio\":\n\nTokio is an async runtime.[1] It powers many servers.\n\nSources:\n[1] Tokio (https://tokio.rs)"
    );
    let search = h
        .fake
        .requests()
        .into_iter()
        .find(|r| r.kind == "utility")
        .expect("the search request");
    assert_eq!(search.body.unwrap()["tools"], json!([{"googleSearch": {}}]));
}

/// Serves one HTML page on loopback and returns its URL.
async fn serve_page(html: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                html.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        }
    });
    format!("http://127.0.0.1:{port}/guide.html")
}

const PAGE: &str = "<html><body><h1>Setup guide</h1><p>Run <b>make install</b> first.</p><script>evil()</script></body></html>";

fn fetch_scenario(url: &str) -> Value {
    json!({
        "steps": [
            {"functionCalls": [{"name": "web_fetch", "args": {"prompt": format!("Summarise {url}")}}]},
            {"text": "Summarised."}
        ],
        "utility": [{"match": "Setup guide", "text": "Install with make install [1]."}]
    })
}

#[tokio::test]
async fn a_private_address_is_refused_without_the_users_approval() {
    let url = serve_page(PAGE).await;
    let mut h = Harness::start(fetch_scenario(&url));
    let events = h.turn("summarise the guide").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let error = last_output(&h)["error"].as_str().unwrap().to_owned();
    assert!(error.contains("private or local network"), "{error}");
    assert!(
        h.fake.requests().iter().all(|r| r.kind != "utility"),
        "nothing was summarised"
    );
}

#[tokio::test]
async fn an_approved_fetch_converts_html_and_asks_the_model() {
    let url = serve_page(PAGE).await;
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        None,
    ));
    let mut h = Harness::start_with_policy(fetch_scenario(&url), |_| {}, policy);
    h.handle
        .submit(Op::user_text("summarise the guide"))
        .unwrap();
    let mut events = Vec::new();
    loop {
        let event = h.events.recv().await.unwrap();
        if let Event::ToolConfirmationRequest {
            call_id, details, ..
        } = &event
        {
            match details {
                ConfirmationDetails::Info { urls, prompt, .. } => {
                    assert_eq!(urls, &vec![url.clone()]);
                    assert!(prompt.contains("private or local network"), "{prompt}");
                }
                other => panic!("expected an info confirmation, got {other:?}"),
            }
            h.handle
                .submit(Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome: ConfirmationOutcome::ProceedOnce,
                    content: None,
                    hunks: None,
                })
                .unwrap();
        }
        let done = matches!(event, Event::TurnComplete { .. });
        events.push(event);
        if done {
            break;
        }
    }
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(
        last_output(&h)["output"],
        format!("Install with make install [1].\n\nSources:\n[1] {url}")
    );
    let summary = h
        .fake
        .requests()
        .into_iter()
        .find(|r| r.kind == "utility")
        .expect("a summary request");
    let sent = summary.body.unwrap()["contents"][0]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        sent.contains("Setup guide") && sent.contains("make install"),
        "{sent}"
    );
    assert!(
        !sent.contains("<b>") && !sent.contains("evil()"),
        "HTML was converted: {sent}"
    );
}
