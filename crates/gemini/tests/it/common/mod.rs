//! Helpers shared by the transport integration tests: clients pointed at a
//! [`FakeGemini`], fast retry policies, a "main" request (one that declares
//! function tools, so the fake applies its scripted steps and faults), and
//! collecting a stream into events plus its final error.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use gd_fake_gemini::FakeGemini;
use gd_gemini::{
    Backend, ClientOptions, Content, CredentialSource, FunctionDeclaration, GeminiClient,
    GeminiError, GenerateContentRequest, GenerateContentResponse, GenerationConfig, RequestMeta,
    RetryNotice, RetryPolicy, SecretString, StaticToken, StreamEvent, Tool,
};
use serde_json::json;

pub const API_KEY: &str = "AIza-test-key-123";
pub const MODEL: &str = "gemini-2.5-flash";
/// The scripted reply most tests use; 26 characters, so `chunk_chars: 5`
/// gives 6 chunks.
pub const TEXT: &str = "The quick brown fox jumps.";

/// An environment lookup over fixed pairs (for `Backend::from_env`).
pub fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

/// A retry policy with millisecond delays so fault tests stay fast.
pub fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(10),
        jitter: 0.0,
        max_server_delay: Duration::from_secs(2),
    }
}

pub fn options(max_attempts: u32) -> ClientOptions {
    ClientOptions {
        retry: fast_retry(max_attempts),
        surface: "test".into(),
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(20),
        extra_headers: Vec::new(),
    }
}

/// Gemini API (API key) backend pointed at the fake.
pub fn api_key_backend(fake: &FakeGemini) -> Backend {
    Backend::from_env(
        env(&[
            ("GEMINI_API_KEY", API_KEY),
            ("GOOGLE_GEMINI_BASE_URL", &fake.base_url()),
        ]),
        None,
    )
    .expect("API key backend")
}

pub fn api_key_client(fake: &FakeGemini, max_attempts: u32) -> GeminiClient {
    GeminiClient::new(api_key_backend(fake), options(max_attempts)).expect("client")
}

/// A client whose Gemini API base URL is `base_url` (e.g. a closed port).
pub fn client_at(base_url: &str, opts: ClientOptions) -> GeminiClient {
    let backend = Backend::from_env(
        env(&[
            ("GEMINI_API_KEY", API_KEY),
            ("GOOGLE_GEMINI_BASE_URL", base_url),
        ]),
        None,
    )
    .expect("backend");
    GeminiClient::new(backend, opts).expect("client")
}

pub fn static_token(token: &str) -> Arc<dyn CredentialSource> {
    Arc::new(StaticToken(SecretString::new(token)))
}

/// A chat-turn request: declares a function tool, so the fake counts it as
/// a "main" request (faults and steps apply only to those).
pub fn main_request(prompt: &str) -> GenerateContentRequest {
    GenerateContentRequest {
        contents: vec![Content::user_text(prompt)],
        system_instruction: Some(Content::user_text("You are a test.")),
        tools: Some(vec![Tool::functions(vec![FunctionDeclaration {
            name: "list_directory".into(),
            description: Some("Lists a directory.".into()),
            parameters_json_schema: Some(json!({
                "type": "object",
                "properties": {"dir_path": {"type": "string"}},
                "required": ["dir_path"]
            })),
            parameters: None,
        }])]),
        generation_config: Some(GenerationConfig {
            temperature: Some(1.0),
            top_p: Some(0.95),
            ..GenerationConfig::default()
        }),
        ..GenerateContentRequest::default()
    }
}

pub fn meta() -> RequestMeta {
    RequestMeta {
        session_id: "session-1".into(),
        prompt_id: "session-1########0".into(),
    }
}

/// Everything a stream yielded: the events in order and the error that
/// ended it, if any. Checks that nothing follows an error.
#[derive(Debug)]
pub struct Collected {
    pub events: Vec<StreamEvent>,
    pub error: Option<GeminiError>,
}

impl Collected {
    pub fn chunks(&self) -> Vec<&GenerateContentResponse> {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Chunk(c) => Some(c),
                StreamEvent::Retry(_) => None,
            })
            .collect()
    }

    pub fn retries(&self) -> Vec<&RetryNotice> {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retry(r) => Some(r),
                StreamEvent::Chunk(_) => None,
            })
            .collect()
    }

    /// The concatenated non-thought text of every chunk.
    pub fn text(&self) -> String {
        self.chunks().iter().map(|c| c.text()).collect()
    }

    /// The stream ended cleanly; returns the events.
    pub fn ok(self) -> Vec<StreamEvent> {
        if let Some(error) = self.error {
            panic!("stream failed: {error} (events: {:?})", self.events);
        }
        self.events
    }

    /// The stream ended with an error; returns it.
    pub fn err(&self) -> &GeminiError {
        self.error
            .as_ref()
            .unwrap_or_else(|| panic!("stream did not fail (events: {:?})", self.events))
    }
}

/// Drains a stream (with an overall timeout so a bug cannot hang the suite).
pub async fn collect(stream: impl Stream<Item = Result<StreamEvent, GeminiError>>) -> Collected {
    let work = async {
        let mut stream = std::pin::pin!(stream);
        let mut events = Vec::new();
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(error) => {
                    assert!(
                        stream.next().await.is_none(),
                        "the stream must end after an error"
                    );
                    return Collected {
                        events,
                        error: Some(error),
                    };
                }
            }
        }
        Collected {
            events,
            error: None,
        }
    };
    tokio::time::timeout(Duration::from_secs(20), work)
        .await
        .expect("stream did not finish within 20 s")
}

/// Streams `main_request(prompt)` and collects the result.
pub async fn stream_main(client: &GeminiClient, prompt: &str) -> Collected {
    collect(client.stream(MODEL, &main_request(prompt), &meta())).await
}

/// A bearer-token source that counts its calls: token `tok-N` where N is
/// the number of `invalidate()` calls plus one.
#[derive(Debug, Default)]
pub struct CountingCredentials {
    pub fetched: AtomicUsize,
    pub invalidated: AtomicUsize,
}

impl CountingCredentials {
    pub fn fetched(&self) -> usize {
        self.fetched.load(Ordering::SeqCst)
    }

    pub fn invalidated(&self) -> usize {
        self.invalidated.load(Ordering::SeqCst)
    }
}

impl CredentialSource for CountingCredentials {
    fn access_token(&self) -> BoxFuture<'_, Result<SecretString, String>> {
        self.fetched.fetch_add(1, Ordering::SeqCst);
        let generation = self.invalidated.load(Ordering::SeqCst) + 1;
        Box::pin(async move { Ok(SecretString::new(format!("tok-{generation}"))) })
    }

    fn invalidate(&self) {
        self.invalidated.fetch_add(1, Ordering::SeqCst);
    }
}

/// A local port with nothing listening on it.
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    port
}
