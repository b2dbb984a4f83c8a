//! The HTTP server: every request is routed, recorded, and answered from the
//! current scenario.
//!
//! The decision ("what to answer") is made synchronously in `plan`, which
//! records the request before any delay or hang, so a test waiting for a
//! request sees it as soon as it arrived. Writing the answer (delays,
//! streaming, faults) happens afterwards in the async handler.

use crate::faults::{self, ActiveFault, FailSpec, Fault};
use crate::pyjson::{approx_tokens, dumps};
use crate::record::{RecordedRequest, api_key, capture_request_meta};
use crate::responses::{self, ModelReply, ResponseMeta};
use crate::routes::{AdminRoute, ApiRoute, ApiStyle, Route, route};
use crate::scenario::{self, Scenario};
use crate::sse::{self, Action};
use crate::state::{LogChange, ServerState};
use crate::{code_assist, steps, utility};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use axum::serve::ListenerExt;
use bytes::Bytes;
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Request bodies above this are refused (real requests are well below).
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
const JSON_TYPE: &str = "application/json; charset=UTF-8";
const SSE_TYPE: &str = "text/event-stream";

/// The axum app: one fallback handler that does its own routing.
pub fn router(state: Arc<ServerState>) -> Router {
    Router::new().fallback(handle).with_state(state)
}

/// Serves on `listener` until `shutdown` resolves. Open connections are not
/// waited for (a `hang` fault would block a graceful shutdown forever); the
/// caller drops the runtime to end them.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<ServerState>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    // Small SSE writes without TCP_NODELAY meet the client's delayed ACK on a kept-alive
    // connection: a 40 ms stall per second request that Google's front ends do not have, and
    // that made every two-request benchmark measure the stall (bench/RESULTS.md).
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            eprintln!("fake-gemini: TCP_NODELAY not set: {e}");
        }
    });
    let server = axum::serve(listener, router(state));
    tokio::select! {
        result = server.into_future() => result,
        () = shutdown => Ok(()),
    }
}

async fn handle(State(state): State<Arc<ServerState>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(e) => {
            let err = json!({"error": {"code": 400, "message": format!("cannot read body: {e}"), "status": "INVALID_ARGUMENT"}});
            return Reply::json(400, err).into_response(None).await;
        }
    };
    let generation = state.generation();
    let planned = plan(&state, &parts.method, &parts.uri, &parts.headers, &bytes);
    if let Some(delay) = planned.delay {
        tokio::time::sleep(delay).await;
    }
    let mark: sse::MarkSent = Arc::new(move |seq| state.mark_stream_end(generation, seq));
    planned.reply.into_response(Some(mark)).await
}

/// How to answer one request.
pub(crate) struct Planned {
    /// Wait this long before sending anything.
    pub delay: Option<Duration>,
    pub reply: Reply,
}

/// The answer itself.
pub(crate) enum Reply {
    Json {
        status: u16,
        body: Value,
        headers: Vec<(&'static str, String)>,
    },
    Text {
        status: u16,
        content_type: &'static str,
        body: String,
        headers: Vec<(&'static str, String)>,
    },
    /// A body written by [`sse::body`]; with `content_length` set the length
    /// is announced up front (a non-streaming answer that gets cut or stalls).
    Stream {
        content_type: &'static str,
        content_length: Option<usize>,
        actions: Vec<Action>,
    },
    /// Never answer.
    Hang,
}

impl Planned {
    fn now(reply: Reply) -> Planned {
        Planned { delay: None, reply }
    }
}

impl Reply {
    fn json(status: u16, body: Value) -> Reply {
        Reply::Json {
            status,
            body,
            headers: Vec::new(),
        }
    }

    async fn into_response(self, mark: Option<sse::MarkSent>) -> Response {
        let (status, content_type, body, headers, length) = match self {
            Reply::Json {
                status,
                body,
                headers,
            } => (
                status,
                JSON_TYPE,
                Body::from(dumps(&body, true)),
                headers,
                None,
            ),
            Reply::Text {
                status,
                content_type,
                body,
                headers,
            } => (status, content_type, Body::from(body), headers, None),
            Reply::Stream {
                content_type,
                content_length,
                actions,
            } => {
                let mut headers = Vec::new();
                if content_type == SSE_TYPE {
                    headers.push(("cache-control", "no-cache".to_string()));
                }
                (
                    200,
                    content_type,
                    sse::body(actions, mark),
                    headers,
                    content_length,
                )
            }
            Reply::Hang => std::future::pending().await,
        };
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut builder = Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, content_type);
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        if let Some(len) = length {
            builder = builder.header(header::CONTENT_LENGTH, len);
        }
        builder.body(body).unwrap_or_else(|e| {
            let mut resp =
                Response::new(Body::from(format!("fake-gemini: bad response header: {e}")));
            *resp.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            resp
        })
    }
}

fn not_found(message: &str) -> Reply {
    Reply::json(
        404,
        json!({"error": {"code": 404, "message": message, "status": "NOT_FOUND"}}),
    )
}

/// Decides the answer and records the request (admin calls are not recorded).
pub(crate) fn plan(
    state: &ServerState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    bytes: &Bytes,
) -> Planned {
    let api = match route(method, uri.path()) {
        Route::Admin(admin) => return Planned::now(admin_reply(state, admin, bytes)),
        Route::Api(api) => api,
    };
    let mut rec = RecordedRequest {
        method: method.as_str().to_string(),
        path: uri.path().to_string(),
        kind: "unhandled".into(),
        ..RecordedRequest::default()
    };
    capture_request_meta(&mut rec, headers, uri.query());
    let body: Option<Value> = serde_json::from_slice(bytes).ok();
    if body.is_none() && !bytes.is_empty() {
        rec.raw = Some(
            String::from_utf8_lossy(bytes)
                .chars()
                .take(20_000)
                .collect(),
        );
    }
    rec.body = body.clone();
    let scenario = state.scenario();
    let call = Call {
        state,
        scenario: &scenario,
        headers,
        query: uri.query(),
    };
    let unhandled = |rec: RecordedRequest| {
        state.record(rec);
        Planned::now(not_found("not found in fake"))
    };

    match api {
        ApiRoute::ListModels => {
            rec.api_style = ApiStyle::Gemini.as_str().into();
            rec.kind = "list_models".into();
            if let Some(reply) = call.reject_api_key(&mut rec) {
                return reply;
            }
            state.record(rec);
            Planned::now(Reply::json(200, responses::list_models()))
        }
        ApiRoute::Model {
            style,
            model,
            method,
        } => {
            rec.api_style = style.as_str().into();
            rec.model = Some(model.clone());
            rec.api_method = Some(method.clone());
            match body.filter(Value::is_object) {
                Some(body) => call.model_method(rec, style, &model, &method, body),
                None => unhandled(rec),
            }
        }
        ApiRoute::CodeAssistOperation { name } => {
            rec.api_style = ApiStyle::CodeAssist.as_str().into();
            rec.api_method = Some("getOperation".into());
            rec.kind = "code_assist_setup".into();
            if let Some(reply) = call.reject_bearer(&mut rec) {
                return reply;
            }
            let reply = match state.poll_operation(&name) {
                Some(polls) => Reply::json(
                    200,
                    code_assist::operation(&name, &scenario.code_assist, polls),
                ),
                None => not_found("no such operation"),
            };
            state.record(rec);
            Planned::now(reply)
        }
        ApiRoute::CodeAssist { method }
            if method == "loadCodeAssist" || method == "onboardUser" =>
        {
            rec.api_style = ApiStyle::CodeAssist.as_str().into();
            rec.api_method = Some(method.clone());
            rec.kind = "code_assist_setup".into();
            if let Some(reply) = call.reject_bearer(&mut rec) {
                return reply;
            }
            let spec = &scenario.code_assist;
            let reply = if method == "loadCodeAssist" {
                match &spec.load_error {
                    Some(error) => Reply::json(error.status, error.body()),
                    None => Reply::json(
                        200,
                        spec.load.clone().unwrap_or_else(|| {
                            code_assist::default_load_for(
                                body.as_ref()
                                    .and_then(|b| b.get("cloudaicompanionProject"))
                                    .and_then(Value::as_str),
                            )
                        }),
                    ),
                }
            } else {
                match &spec.onboard_error {
                    Some(error) => Reply::json(error.status, error.body()),
                    None => {
                        let name = state.new_operation();
                        Reply::json(200, code_assist::operation(&name, spec, 0))
                    }
                }
            };
            state.record(rec);
            Planned::now(reply)
        }
        ApiRoute::CodeAssist { method } if method == "retrieveUserQuota" => {
            rec.api_style = ApiStyle::CodeAssist.as_str().into();
            rec.api_method = Some(method.clone());
            rec.kind = "code_assist_quota".into();
            if let Some(reply) = call.reject_bearer(&mut rec) {
                return reply;
            }
            let spec = &scenario.code_assist;
            let reply = match &spec.quota_error {
                Some(error) => Reply::json(error.status, error.body()),
                None => Reply::json(
                    200,
                    spec.quota
                        .clone()
                        .unwrap_or_else(code_assist::default_quota),
                ),
            };
            state.record(rec);
            Planned::now(reply)
        }
        ApiRoute::CodeAssist { method } => {
            rec.api_style = ApiStyle::CodeAssist.as_str().into();
            rec.api_method = Some(method.clone());
            if let Some(reply) = call.reject_bearer(&mut rec) {
                return reply;
            }
            // The wrapped body: {"model", "project", "user_prompt_id", "request": {...}}.
            let request = body
                .as_ref()
                .and_then(|b| b.get("request"))
                .filter(|r| r.is_object())
                .cloned();
            let model = body
                .as_ref()
                .and_then(|b| b.get("model"))
                .or_else(|| request.as_ref().and_then(|r| r.get("model")))
                .and_then(Value::as_str)
                .map(|m| m.strip_prefix("models/").unwrap_or(m).to_string());
            rec.model = model.clone();
            let model = model.unwrap_or_default();
            match request {
                Some(request) => {
                    call.model_method(rec, ApiStyle::CodeAssist, &model, &method, request)
                }
                None => unhandled(rec),
            }
        }
        ApiRoute::Unknown { style } => {
            rec.api_style = style.as_str().into();
            unhandled(rec)
        }
    }
}

fn admin_reply(state: &ServerState, admin: AdminRoute, bytes: &Bytes) -> Reply {
    match admin {
        AdminRoute::Health => {
            let name = state.scenario().name.clone();
            Reply::json(200, json!({"ok": true, "scenario": name}))
        }
        AdminRoute::Reset => admin_reset(state, bytes),
        AdminRoute::Requests => {
            let requests = serde_json::to_value(state.requests()).unwrap_or(Value::Null);
            Reply::json(200, json!({"requests": requests}))
        }
    }
}

/// `POST /__admin/reset {"scenario": PATH | {...}, "log": PATH | null, "vars": {...}}`.
fn admin_reset(state: &ServerState, bytes: &Bytes) -> Reply {
    let fail = |e: anyhow::Error| Reply::json(400, json!({"ok": false, "error": format!("{e:#}")}));
    let body: Value = if bytes.is_empty() {
        json!({})
    } else {
        match serde_json::from_slice(bytes) {
            Ok(Value::Object(map)) => Value::Object(map),
            Ok(other) => return fail(anyhow::anyhow!("reset body must be an object, got {other}")),
            Err(e) => return fail(anyhow::anyhow!("reset body is not JSON: {e}")),
        }
    };
    let scenario = match body.get("scenario") {
        None => None,
        Some(source) => match scenario::vars_from_json(body.get("vars"))
            .and_then(|vars| scenario::load(source, &vars))
        {
            Ok(s) => Some(s),
            Err(e) => return fail(e),
        },
    };
    let log = match body.get("log") {
        None => LogChange::Keep,
        Some(Value::Null) => LogChange::Set(None),
        Some(Value::String(p)) => LogChange::Set(Some(p.into())),
        Some(other) => return fail(anyhow::anyhow!("log must be a path or null, got {other}")),
    };
    state.reset(scenario, log);
    Reply::json(
        200,
        json!({"ok": true, "scenario": state.scenario().name.clone()}),
    )
}

/// The record's `kind` for a model-method request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    CountTokens,
    Embed,
    Main,
    Utility,
    Unhandled,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::CountTokens => "countTokens",
            Kind::Embed => "embed",
            Kind::Main => "main",
            Kind::Utility => "utility",
            Kind::Unhandled => "unhandled",
        }
    }
}

/// Per-request context for answering a model call.
struct Call<'a> {
    state: &'a ServerState,
    scenario: &'a Scenario,
    headers: &'a HeaderMap,
    query: Option<&'a str>,
}

/// Non-fault reply settings taken from the step (or the scenario).
struct Shape {
    chunk_chars: usize,
    chunk_delay: Option<Duration>,
}

impl Call<'_> {
    /// With `api_keys` in the scenario, answers a wrong or missing key like the real API.
    fn reject_api_key(&self, rec: &mut RecordedRequest) -> Option<Planned> {
        let keys = self.scenario.api_keys.as_ref()?;
        let key = api_key(self.headers, self.query);
        if key.is_some_and(|k| keys.contains(&k)) {
            return None;
        }
        rec.fault = Some("invalid_api_key".into());
        rec.fault_status = Some(400);
        self.state.record(std::mem::take(rec));
        Some(Planned::now(Reply::json(
            400,
            faults::invalid_api_key_json(),
        )))
    }

    /// With `code_assist.tokens` in the scenario, a Code Assist call needs
    /// one of those bearer tokens (else 401 like the real API).
    fn reject_bearer(&self, rec: &mut RecordedRequest) -> Option<Planned> {
        let tokens = self.scenario.code_assist.tokens.as_ref()?;
        let presented = self
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if presented.is_some_and(|t| tokens.iter().any(|k| k == t)) {
            return None;
        }
        rec.fault = Some("unauthenticated".into());
        rec.fault_status = Some(401);
        self.state.record(std::mem::take(rec));
        Some(Planned::now(Reply::json(
            401,
            code_assist::unauthenticated(),
        )))
    }

    fn model_method(
        &self,
        mut rec: RecordedRequest,
        style: ApiStyle,
        model: &str,
        method: &str,
        request: Value,
    ) -> Planned {
        let kind = match method {
            "countTokens" => Kind::CountTokens,
            "embedContent" | "batchEmbedContents" if style != ApiStyle::CodeAssist => Kind::Embed,
            "generateContent" | "streamGenerateContent" if steps::is_main(&request) => Kind::Main,
            "generateContent" | "streamGenerateContent" => Kind::Utility,
            _ => Kind::Unhandled,
        };
        rec.kind = kind.as_str().into();
        if kind == Kind::Unhandled {
            self.state.record(rec);
            return Planned::now(not_found("method not in fake"));
        }
        if style == ApiStyle::Gemini
            && let Some(reply) = self.reject_api_key(&mut rec)
        {
            return reply;
        }
        let out = Output {
            stream: method == "streamGenerateContent",
            code_assist: style == ApiStyle::CodeAssist,
            meta: ResponseMeta {
                model: model.to_string(),
                prompt_tokens: approx_tokens(&request),
                response_id: String::new(),
            },
        };
        match kind {
            Kind::CountTokens => {
                self.state.record(rec);
                let count = json!({"totalTokens": approx_tokens(&request)});
                Planned::now(Reply::json(200, count))
            }
            Kind::Embed => {
                self.state.record(rec);
                Planned::now(Reply::json(200, responses::embeddings(method, &request)))
            }
            Kind::Main => self.main_turn(rec, &request, out),
            Kind::Utility | Kind::Unhandled => self.utility_turn(rec, &request, out),
        }
    }

    fn utility_turn(&self, mut rec: RecordedRequest, request: &Value, out: Output) -> Planned {
        let (parts, source) = utility::respond(request, self.scenario);
        rec.source = Some(source);
        rec.reply_parts = Some(Value::Array(parts.clone()));
        let shape = Shape {
            chunk_chars: self.scenario.chunk_chars,
            chunk_delay: self.scenario.chunk_delay,
        };
        let mut model_reply = ModelReply::with_parts(parts);
        model_reply.candidate_extra = utility::candidate_extra(request, self.scenario);
        let reply = out.answer(self.state, rec, &model_reply, &shape, None);
        Planned {
            delay: self.scenario.delay,
            reply,
        }
    }

    fn main_turn(&self, mut rec: RecordedRequest, request: &Value, out: Output) -> Planned {
        let n = self.state.next_main();
        let fault = faults::select(self.scenario, n);
        let fault_delay = fault.as_ref().and_then(|f| f.delay);
        if let Some(active) = &fault {
            rec.fault = Some(active.fault.label());
            // Faults that replace the answer entirely need no step.
            let early = match &active.fault {
                Fault::HttpError(spec) => Some(error_reply(spec)),
                Fault::RawSse { body, split_every } => Some(Reply::Stream {
                    content_type: SSE_TYPE,
                    content_length: None,
                    actions: sse::split_bytes(body.as_bytes(), split_every.unwrap_or(body.len())),
                }),
                Fault::Hang { after_chunks: None } => Some(Reply::Hang),
                _ => None,
            };
            if let Some(reply) = early {
                if let Fault::HttpError(spec) = &active.fault {
                    rec.fault_status = Some(spec.status());
                }
                rec.source = Some("fault".into());
                self.state.record(rec);
                return Planned {
                    delay: fault_delay.or(self.scenario.delay),
                    reply,
                };
            }
        }
        let chosen = steps::choose(self.scenario, request);
        rec.step = Some(chosen.index);
        rec.source = Some(chosen.source.clone());
        rec.reply_parts = Some(Value::Array(chosen.parts.clone()));
        if !chosen.warnings.is_empty() {
            rec.warning = Some(chosen.warnings.join("; "));
        }
        let step = chosen.step;
        let reply = ModelReply {
            parts: chosen.parts,
            finish_reason: step.finish_reason.clone().unwrap_or_else(|| "STOP".into()),
            block_reason: step.block_reason.clone(),
            empty_candidates: step.empty_candidates,
            usage: step.usage.clone(),
            candidate_extra: None,
        };
        let shape = Shape {
            chunk_chars: fault
                .as_ref()
                .and_then(|f| f.chunk_chars)
                .or(step.chunk_chars)
                .unwrap_or(self.scenario.chunk_chars),
            chunk_delay: step.chunk_delay_ms.or(self.scenario.chunk_delay),
        };
        let delay = fault_delay.or(step.delay_ms).or(self.scenario.delay);
        Planned {
            delay,
            reply: out.answer(self.state, rec, &reply, &shape, fault.as_ref()),
        }
    }
}

/// An HTTP error answer (never wrapped, also for Code Assist).
fn error_reply(spec: &FailSpec) -> Reply {
    let mut headers = Vec::new();
    if let Some(ra) = &spec.retry_after {
        headers.push(("retry-after", ra.clone()));
    }
    match &spec.body {
        Some(body) => Reply::Text {
            status: spec.status(),
            content_type: JSON_TYPE,
            body: body.clone(),
            headers,
        },
        None => Reply::Json {
            status: spec.status(),
            body: spec.error_json(),
            headers,
        },
    }
}

/// How a generate answer is sent.
struct Output {
    stream: bool,
    code_assist: bool,
    meta: ResponseMeta,
}

impl Output {
    /// Records the request, then shapes the reply (possibly broken by `fault`).
    fn answer(
        mut self,
        state: &ServerState,
        mut rec: RecordedRequest,
        reply: &ModelReply,
        shape: &Shape,
        fault: Option<&ActiveFault>,
    ) -> Reply {
        let chunks = if self.stream {
            reply.chunks(&self.meta, shape.chunk_chars)
        } else {
            Vec::new()
        };
        if self.stream {
            rec.sse_chunks = Some(chunks.len());
        }
        // Ids are derived from the record's sequence number: deterministic and unique per reset.
        let seq = state.record(rec);
        self.meta.response_id = format!("fake{seq:012x}");
        let trace_id = format!("trace{seq:011x}");
        let finish = |mut v: Value| {
            v["responseId"] = json!(self.meta.response_id);
            if self.code_assist {
                responses::wrap_code_assist(v, &trace_id)
            } else {
                v
            }
        };
        let fault = fault.map(|f| &f.fault);
        if !self.stream {
            let text = dumps(&finish(reply.full(&self.meta)), true);
            return match fault {
                Some(Fault::CutStream { partial_bytes, .. }) => Reply::Stream {
                    content_type: JSON_TYPE,
                    content_length: Some(text.len()),
                    actions: vec![
                        Action::Data(Bytes::copy_from_slice(
                            &text.as_bytes()[..(*partial_bytes).min(text.len() - 1)],
                        )),
                        Action::Abort,
                    ],
                },
                Some(Fault::MalformedChunk { garbage, .. }) => Reply::Text {
                    status: 200,
                    content_type: JSON_TYPE,
                    body: format!("{{\"candidates\": [{garbage}"),
                    headers: Vec::new(),
                },
                Some(Fault::Hang { .. }) => Reply::Stream {
                    content_type: JSON_TYPE,
                    content_length: Some(text.len()),
                    actions: vec![Action::Stall],
                },
                _ => Reply::Text {
                    status: 200,
                    content_type: JSON_TYPE,
                    body: text,
                    headers: Vec::new(),
                },
            };
        }
        let events: Vec<Bytes> = chunks.into_iter().map(|c| sse::event(&finish(c))).collect();
        let sent =
            |n: usize| sse::events_with_pauses(&events[..n.min(events.len())], shape.chunk_delay);
        let actions = match fault {
            Some(Fault::CutStream {
                after_chunks,
                partial_bytes,
            }) => {
                let mut actions = sent(*after_chunks);
                if let Some(next) = events.get(*after_chunks) {
                    // Strictly part of the event, so the client can never see it complete.
                    let n = (*partial_bytes).min(next.len() - 1);
                    actions.push(Action::Data(next.slice(..n)));
                }
                actions.push(Action::Abort);
                actions
            }
            Some(Fault::MalformedChunk {
                after_chunks,
                garbage,
            }) => {
                let mut actions = sent(*after_chunks);
                let bad = format!("data: {{\"candidates\": [{garbage}\r\n\r\n");
                actions.push(Action::Data(Bytes::from(bad)));
                actions
            }
            Some(Fault::Hang {
                after_chunks: Some(n),
            }) => {
                let mut actions = sent(*n);
                actions.push(Action::Stall);
                actions
            }
            _ => {
                let mut actions = sent(events.len());
                actions.push(Action::MarkSent(seq));
                actions
            }
        };
        Reply::Stream {
            content_type: SSE_TYPE,
            content_length: None,
            actions,
        }
    }
}
