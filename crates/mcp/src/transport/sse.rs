//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp 3 no longer
//! ships a client for: `GET url` opens an event stream whose first
//! `endpoint` event names where to POST messages; every answer arrives as a
//! `message` event on the stream.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, HeaderMap, WWW_AUTHENTICATE};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::SseStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Why the SSE transport failed.
#[derive(Debug, thiserror::Error)]
pub enum SseTransportError {
    #[error("HTTP request failed: {0}")]
    Http(#[from] reqwest::Error),
    #[error("HTTP 401 Unauthorized")]
    Unauthorized { www_authenticate: Option<String> },
    #[error("HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the event stream is not text/event-stream (content type {0:?})")]
    NotAnEventStream(Option<String>),
    #[error("the event stream ended before the server sent its `endpoint` event")]
    NoEndpoint,
    #[error("the server's endpoint {0:?} is not a valid URL")]
    BadEndpoint(String),
    #[error("the event stream failed: {0}")]
    Stream(String),
}

/// A connected SSE transport.
pub struct SseClientTransport {
    client: reqwest::Client,
    headers: HeaderMap,
    endpoint: reqwest::Url,
    incoming: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
    reader: JoinHandle<()>,
}

impl std::fmt::Debug for SseClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseClientTransport")
            .field("endpoint", &self.endpoint.as_str())
            .finish_non_exhaustive()
    }
}

impl SseClientTransport {
    /// Opens the event stream and waits for the `endpoint` event.
    pub async fn connect(
        client: reqwest::Client,
        url: &str,
        headers: HeaderMap,
    ) -> Result<Self, SseTransportError> {
        let base =
            reqwest::Url::parse(url).map_err(|_| SseTransportError::BadEndpoint(url.into()))?;
        let response = client
            .get(base.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(SseTransportError::Unauthorized {
                www_authenticate: response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned),
            });
        }
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            return Err(SseTransportError::Status {
                status: status.as_u16(),
                body: body.chars().take(300).collect(),
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if !content_type
            .as_deref()
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            return Err(SseTransportError::NotAnEventStream(content_type));
        }
        let mut events = SseStream::from_bytes_stream(response.bytes_stream());
        let endpoint = loop {
            match events.next().await {
                None => return Err(SseTransportError::NoEndpoint),
                Some(Err(e)) => return Err(SseTransportError::Stream(e.to_string())),
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    let data = event.data.unwrap_or_default();
                    let data = data.trim();
                    break base
                        .join(data)
                        .map_err(|_| SseTransportError::BadEndpoint(data.to_owned()))?;
                }
                Some(Ok(_)) => {}
            }
        };
        let (tx, incoming) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            while let Some(event) = events.next().await {
                let event = match event {
                    Ok(event) => event,
                    Err(e) => {
                        tracing::debug!(error = %e, "SSE stream failed");
                        break;
                    }
                };
                if !matches!(event.event.as_deref(), None | Some("message")) {
                    continue;
                }
                let Some(data) = event.data else { continue };
                match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                    Ok(message) => {
                        if tx.send(message).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "ignoring an SSE message that is not JSON-RPC")
                    }
                }
            }
        });
        Ok(Self {
            client,
            headers,
            endpoint,
            incoming,
            reader,
        })
    }

    /// Where messages are POSTed (the `endpoint` event, resolved against the URL).
    pub fn endpoint(&self) -> &reqwest::Url {
        &self.endpoint
    }
}

impl Drop for SseClientTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = SseTransportError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .timeout(Duration::from_secs(60))
            .json(&item);
        async move {
            let response = request.send().await?;
            let status = response.status();
            if status == reqwest::StatusCode::UNAUTHORIZED {
                return Err(SseTransportError::Unauthorized {
                    www_authenticate: response
                        .headers()
                        .get(WWW_AUTHENTICATE)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned),
                });
            }
            if !status.is_success() {
                let body = response.text().await.unwrap_or_default();
                return Err(SseTransportError::Status {
                    status: status.as_u16(),
                    body: body.chars().take(300).collect(),
                });
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.incoming.close();
        Ok(())
    }
}
