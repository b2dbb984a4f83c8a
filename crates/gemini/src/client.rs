//! The HTTP client: one request path for every backend, with retries.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::{BoxStream, Stream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER, USER_AGENT};
use serde::Deserialize;
use serde_json::Value;
use tracing::{debug, warn};

use gd_http::http_client_builder;

use crate::endpoint::{Auth, Backend, Method, RequestMeta};
use crate::error::{ApiError, GeminiError, truncate};
use crate::retry::RetryPolicy;
use crate::sent::{Sent, SignallingBody};
use crate::sse::SseDecoder;
use crate::types::{Content, CountTokensResponse, GenerateContentRequest, GenerateContentResponse};

/// Client settings that are not about where requests go.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub retry: RetryPolicy,
    /// The product surface named in the User-Agent (`cli`, `desktop`).
    pub surface: String,
    pub connect_timeout: Duration,
    /// Longest silence tolerated between two reads of a response body.
    pub read_timeout: Duration,
    /// More headers on every model request (e.g. Vertex AI's
    /// `X-Vertex-AI-LLM-Request-Type` from `billing.vertexAi.*`).
    pub extra_headers: Vec<(String, String)>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            retry: RetryPolicy::default(),
            surface: "cli".into(),
            connect_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(300),
            extra_headers: Vec::new(),
        }
    }
}

/// What a streaming call yields.
// Chunks are the common case and retries rare: boxing every chunk to shrink
// the rare variant would cost an allocation per chunk.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// One decoded chunk of the response.
    Chunk(GenerateContentResponse),
    /// An attempt failed before any content arrived; the stream waits
    /// `delay` and then tries again.
    Retry(RetryNotice),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// The attempt that is about to start (2 for the first retry).
    pub attempt: u32,
    pub max_attempts: u32,
    pub delay: Duration,
    pub reason: String,
}

/// A model listed by the API (`GET models`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    pub name: String,
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub input_token_limit: Option<u64>,
    #[serde(default)]
    pub output_token_limit: Option<u64>,
}

/// Talks to one [`Backend`]. Cheap to clone.
#[derive(Clone, Debug)]
pub struct GeminiClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    backend: Backend,
    options: ClientOptions,
}

impl GeminiClient {
    pub fn new(backend: Backend, options: ClientOptions) -> Result<Self, GeminiError> {
        // The first request will need the root certificates: load them
        // while the session is being prepared and the connection opened.
        if backend.url("m", Method::Stream).starts_with("https://") {
            gd_http::prewarm_tls();
        }
        let http = http_client_builder()
            .connect_timeout(options.connect_timeout)
            .read_timeout(options.read_timeout)
            .build()
            .map_err(|e| GeminiError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                backend,
                options,
            }),
        })
    }

    pub fn backend(&self) -> &Backend {
        &self.inner.backend
    }

    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.options.retry
    }

    /// Non-streaming `generateContent`, retried on retryable failures.
    pub async fn generate(
        &self,
        model: &str,
        request: &GenerateContentRequest,
        meta: &RequestMeta,
    ) -> Result<GenerateContentResponse, GeminiError> {
        let body = Bytes::from(self.inner.backend.generate_body(model, request, meta)?);
        let mut attempts = Attempts::new(&self.inner.options.retry);
        loop {
            let result = async {
                let response = self
                    .inner
                    .send(model, Method::Generate, body.clone())
                    .await?;
                let bytes = response
                    .bytes()
                    .await
                    .map_err(|e| GeminiError::network(&e))?;
                self.inner.decode_response(&bytes)
            }
            .await;
            match result {
                Ok(response) => return Ok(response),
                Err(error) => match attempts.next_delay(error, &self.inner.backend) {
                    Ok(notice) => tokio::time::sleep(notice.delay).await,
                    Err(error) => return Err(error),
                },
            }
        }
    }

    /// `streamGenerateContent?alt=sse`. Failures before the first content
    /// chunk are retried (yielding [`StreamEvent::Retry`]); a failure after
    /// content ends the stream with [`GeminiError::StreamInterrupted`].
    /// Dropping the stream aborts the request.
    pub fn stream(
        &self,
        model: &str,
        request: &GenerateContentRequest,
        meta: &RequestMeta,
    ) -> impl Stream<Item = Result<StreamEvent, GeminiError>> + Send + 'static {
        self.stream_notifying(model, request, meta, None)
    }

    /// [`Self::stream`], firing `sent` once the first attempt's request has
    /// been handed to the connection (or ended without that, see [`Sent`]).
    pub fn stream_notifying(
        &self,
        model: &str,
        request: &GenerateContentRequest,
        meta: &RequestMeta,
        sent: Option<Sent>,
    ) -> impl Stream<Item = Result<StreamEvent, GeminiError>> + Send + 'static {
        let body = self
            .inner
            .backend
            .generate_body(model, request, meta)
            .map(Bytes::from);
        let state = StreamState {
            inner: self.inner.clone(),
            model: model.to_owned(),
            attempts: Attempts::new(&self.inner.options.retry),
            body,
            sent,
            response: None,
            decoder: SseDecoder::new(),
            pending: VecDeque::new(),
            pending_delay: None,
            content_seen: false,
            reading_done: false,
            done: false,
        };
        futures::stream::unfold(state, |mut state| async move {
            let item = state.next_item().await?;
            Some((item, state))
        })
    }

    /// `countTokens` for the given contents.
    pub async fn count_tokens(
        &self,
        model: &str,
        contents: &[Content],
    ) -> Result<u64, GeminiError> {
        let body = Bytes::from(self.inner.backend.count_tokens_body(model, contents)?);
        let response = self.inner.send(model, Method::CountTokens, body).await?;
        let bytes = response
            .bytes()
            .await
            .map_err(|e| GeminiError::network(&e))?;
        let value: Value = parse_json(&bytes)?;
        let value = self.inner.backend.unwrap_response(value);
        let parsed: CountTokensResponse =
            serde_json::from_value(value).map_err(|e| GeminiError::Decode {
                message: e.to_string(),
                snippet: truncate(&String::from_utf8_lossy(&bytes), 200),
            })?;
        Ok(parsed.total_tokens)
    }

    /// A Code Assist method outside the model calls (`v1internal:{method}`),
    /// once, with the session's bearer token: the answer's bytes.
    pub(crate) async fn post_code_assist(
        &self,
        method: &str,
        body: String,
    ) -> Result<Bytes, GeminiError> {
        let Backend::CodeAssist {
            endpoint,
            api_version,
            credentials,
            ..
        } = &self.inner.backend
        else {
            return Err(GeminiError::Config(format!(
                "{method} needs the Code Assist backend"
            )));
        };
        let token = credentials
            .access_token()
            .await
            .map_err(GeminiError::Credentials)?;
        let response = self
            .inner
            .http
            .post(format!("{endpoint}/{api_version}:{method}"))
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(USER_AGENT, self.inner.user_agent(""))
            .bearer_auth(token.expose())
            .body(body)
            .send()
            .await
            .map_err(|e| GeminiError::network(&e))?;
        let response = check_status(response).await?;
        response.bytes().await.map_err(|e| GeminiError::network(&e))
    }

    /// Lists the models an API key can use; a cheap call that validates the key.
    pub async fn list_models(&self) -> Result<Vec<ModelInfo>, GeminiError> {
        let Backend::GeminiApi {
            base_url,
            api_version,
            api_key,
        } = &self.inner.backend
        else {
            return Err(GeminiError::Config(
                "listing models needs the Gemini API backend".into(),
            ));
        };
        let response = self
            .inner
            .http
            .get(format!("{base_url}/{api_version}/models?pageSize=1000"))
            .header("x-goog-api-key", api_key.expose())
            .header(USER_AGENT, self.inner.user_agent(""))
            .send()
            .await
            .map_err(|e| GeminiError::network(&e))?;
        let response = check_status(response).await?;
        let bytes = response
            .bytes()
            .await
            .map_err(|e| GeminiError::network(&e))?;
        #[derive(Deserialize)]
        struct Models {
            #[serde(default)]
            models: Vec<ModelInfo>,
        }
        let models: Models = serde_json::from_slice(&bytes).map_err(|e| GeminiError::Decode {
            message: e.to_string(),
            snippet: truncate(&String::from_utf8_lossy(&bytes), 200),
        })?;
        Ok(models.models)
    }
}

impl Inner {
    fn user_agent(&self, model: &str) -> String {
        format!(
            "GeminiDesktop/{}/{} ({}; {}; {})",
            env!("CARGO_PKG_VERSION"),
            model,
            std::env::consts::OS,
            std::env::consts::ARCH,
            self.options.surface
        )
    }

    async fn send(
        &self,
        model: &str,
        method: Method,
        body: impl Into<reqwest::Body>,
    ) -> Result<reqwest::Response, GeminiError> {
        let url = self.backend.url(model, method);
        let mut request = self
            .http
            .post(&url)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(USER_AGENT, self.user_agent(model))
            .header(
                "x-goog-api-client",
                concat!("gemini-desktop/", env!("CARGO_PKG_VERSION")),
            )
            .body(body);
        for (name, value) in &self.options.extra_headers {
            request = request.header(name.as_str(), value.as_str());
        }
        request = match self.backend.auth() {
            Auth::ApiKey(key) => request.header("x-goog-api-key", key.expose()),
            Auth::Bearer(source) => {
                let token = source
                    .access_token()
                    .await
                    .map_err(GeminiError::Credentials)?;
                request.bearer_auth(token.expose())
            }
        };
        debug!(%url, "sending model request");
        let response = request.send().await.map_err(|e| GeminiError::network(&e))?;
        check_status(response).await
    }

    fn decode_response(&self, bytes: &[u8]) -> Result<GenerateContentResponse, GeminiError> {
        let value = parse_json(bytes)?;
        self.decode_value(value, bytes)
    }

    fn decode_value(
        &self,
        value: Value,
        raw: &[u8],
    ) -> Result<GenerateContentResponse, GeminiError> {
        if let Some(error) = ApiError::from_stream_event(&value) {
            return Err(error.into());
        }
        let value = self.backend.unwrap_response(value);
        serde_json::from_value(value).map_err(|e| GeminiError::Decode {
            message: e.to_string(),
            snippet: truncate(&String::from_utf8_lossy(raw), 200),
        })
    }
}

async fn check_status(response: reqwest::Response) -> Result<reqwest::Response, GeminiError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response.text().await.unwrap_or_default();
    Err(ApiError::from_http(status.as_u16(), retry_after.as_deref(), &body).into())
}

fn parse_json(bytes: &[u8]) -> Result<Value, GeminiError> {
    serde_json::from_slice(bytes).map_err(|e| GeminiError::Decode {
        message: e.to_string(),
        snippet: truncate(&String::from_utf8_lossy(bytes), 200),
    })
}

/// Counts attempts and decides whether and when to try again.
struct Attempts {
    policy: RetryPolicy,
    made: u32,
    refreshed_credentials: bool,
}

impl Attempts {
    fn new(policy: &RetryPolicy) -> Self {
        Self {
            policy: policy.clone(),
            made: 1,
            refreshed_credentials: false,
        }
    }

    /// After a failed attempt: `Ok(notice)` to retry after `notice.delay`,
    /// `Err` to give up with the final error.
    fn next_delay(
        &mut self,
        error: GeminiError,
        backend: &Backend,
    ) -> Result<RetryNotice, GeminiError> {
        // A rejected bearer token gets one fresh token, immediately.
        if let (GeminiError::Api(api), Auth::Bearer(source)) = (&error, backend.auth())
            && api.status == 401
            && !self.refreshed_credentials
        {
            self.refreshed_credentials = true;
            source.invalidate();
            return Ok(self.advance(Duration::ZERO, &error));
        }
        if !error.is_retryable() {
            return Err(self.final_error(error));
        }
        if self.made >= self.policy.max_attempts {
            return Err(self.final_error(error));
        }
        let server_delay = match &error {
            GeminiError::Api(api) => api.retry_delay,
            _ => None,
        };
        if let Some(delay) = server_delay
            && delay > self.policy.max_server_delay
        {
            warn!(
                ?delay,
                "server asked for a longer wait than we allow; giving up"
            );
            return Err(self.final_error(error));
        }
        let delay = self.policy.delay(self.made, server_delay);
        Ok(self.advance(delay, &error))
    }

    fn advance(&mut self, delay: Duration, error: &GeminiError) -> RetryNotice {
        self.made += 1;
        warn!(attempt = self.made, ?delay, %error, "retrying model request");
        RetryNotice {
            attempt: self.made,
            max_attempts: self.policy.max_attempts,
            delay,
            reason: error.to_string(),
        }
    }

    fn final_error(&self, error: GeminiError) -> GeminiError {
        if self.made > 1 {
            GeminiError::Exhausted {
                attempts: self.made,
                source: Box::new(error),
            }
        } else {
            error
        }
    }
}

/// The state machine behind [`GeminiClient::stream`].
struct StreamState {
    inner: Arc<Inner>,
    model: String,
    attempts: Attempts,
    body: Result<Bytes, GeminiError>,
    /// Fired when the first attempt's request has gone out.
    sent: Option<Sent>,
    response: Option<BoxStream<'static, reqwest::Result<Bytes>>>,
    decoder: SseDecoder,
    /// Complete SSE payloads not yet handed out; parsed lazily so that a bad
    /// event after good ones fails only when reached.
    pending: VecDeque<String>,
    pending_delay: Option<Duration>,
    content_seen: bool,
    reading_done: bool,
    done: bool,
}

impl StreamState {
    async fn next_item(&mut self) -> Option<Result<StreamEvent, GeminiError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(payload) = self.pending.pop_front() {
                match self.decode_payload(&payload) {
                    Ok(chunk) => {
                        self.content_seen |= chunk.has_parts();
                        return Some(Ok(StreamEvent::Chunk(chunk)));
                    }
                    Err(error) => {
                        if let Some(item) = self.fail(error) {
                            return Some(item);
                        }
                        continue;
                    }
                }
            }
            if let Some(error) = self.decoder.take_error() {
                if let Some(item) = self.fail(error.into()) {
                    return Some(item);
                }
                continue;
            }
            if self.reading_done {
                self.done = true;
                return None;
            }
            let Some(response) = self.response.as_mut() else {
                if let Some(item) = self.connect().await {
                    return Some(item);
                }
                continue;
            };
            match response.next().await {
                Some(Ok(bytes)) => match self.decoder.feed(&bytes) {
                    Ok(events) => self.pending.extend(events),
                    Err(error) => {
                        if let Some(item) = self.fail(error.into()) {
                            return Some(item);
                        }
                    }
                },
                Some(Err(error)) => {
                    if let Some(item) = self.fail(GeminiError::network(&error)) {
                        return Some(item);
                    }
                }
                None => {
                    self.response = None;
                    self.reading_done = true;
                    match self.decoder.finish() {
                        Ok(last) => self.pending.extend(last),
                        Err(error) => {
                            if let Some(item) = self.fail(error.into()) {
                                return Some(item);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Starts (or restarts) the HTTP request. Returns an item to yield when
    /// the attempt failed (a retry notice or the final error).
    async fn connect(&mut self) -> Option<Result<StreamEvent, GeminiError>> {
        if let Some(delay) = self.pending_delay.take() {
            tokio::time::sleep(delay).await;
        }
        let body = match &self.body {
            Ok(body) => body.clone(),
            Err(error) => {
                self.done = true;
                return Some(Err(GeminiError::Config(error.to_string())));
            }
        };
        let body = match self.sent.take() {
            Some(sent) => reqwest::Body::wrap(SignallingBody::new(body, sent)),
            None => body.into(),
        };
        match self.inner.send(&self.model, Method::Stream, body).await {
            Ok(response) => {
                self.response = Some(response.bytes_stream().boxed());
                self.decoder = SseDecoder::new();
                self.reading_done = false;
                None
            }
            Err(error) => self.fail(error),
        }
    }

    /// Handles a failure of the current attempt: retry when nothing has been
    /// shown yet, otherwise end the stream with the error.
    fn fail(&mut self, error: GeminiError) -> Option<Result<StreamEvent, GeminiError>> {
        self.response = None;
        self.pending.clear();
        self.decoder = SseDecoder::new();
        self.reading_done = false;
        if self.content_seen {
            self.done = true;
            return Some(Err(GeminiError::StreamInterrupted(error.to_string())));
        }
        match self.attempts.next_delay(error, &self.inner.backend) {
            Ok(notice) => {
                self.pending_delay = Some(notice.delay);
                Some(Ok(StreamEvent::Retry(notice)))
            }
            Err(error) => {
                self.done = true;
                Some(Err(error))
            }
        }
    }

    fn decode_payload(&self, payload: &str) -> Result<GenerateContentResponse, GeminiError> {
        let value = parse_json(payload.as_bytes())?;
        self.inner.decode_value(value, payload.as_bytes())
    }
}
