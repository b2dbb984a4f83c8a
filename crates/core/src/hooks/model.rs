//! BeforeModel, BeforeToolSelection and AfterModel around each model
//! request, on 0.61's stable shapes:
//!
//! - `llm_request`: `{model, messages: [{role, content}], config}` — the
//!   text of each message that has text, and the sampling parameters;
//! - `llm_response`: `{text, candidates: [{content: {role, parts: [text]},
//!   finishReason, index}], usageMetadata}` — one streamed chunk.
//!
//! What their answers do, as 0.61 does it:
//! - BeforeModel may change the request (model, sampling, the text of
//!   messages) for this request only, answer it itself with an
//!   `llm_response` (no HTTP call), deny it (the turn ends: "Agent execution
//!   blocked"), or stop the loop ("Agent execution stopped").
//! - BeforeToolSelection's merged `toolConfig` becomes the request's
//!   `toolConfig.functionCallingConfig`. We also narrow the declarations to
//!   the allowed names (`NONE`: none), so the model is not offered a tool the
//!   hooks took away.
//! - AfterModel runs for every streamed chunk before any of it is shown or
//!   kept: it may replace the chunk's text, deny it (the turn ends and the
//!   chunk is dropped), or stop the loop.
//!
//! Where we differ, on purpose: 0.61 uses a BeforeModel `llm_response` only
//! together with `decision: deny`, while its docs say any `llm_response`
//! skips the call; we follow the docs, so a hook written from them works
//! (with a deny, the "blocked" warning is shown as in 0.61). 0.61 keeps the
//! original chunk in the history while showing the replaced one; we keep
//! what was shown, so the model's memory is what the user saw. A replaced
//! chunk keeps its function calls (0.61 loses them from the turn but keeps
//! them in the history).

use gd_gemini::{Content, GenerateContentRequest, GenerateContentResponse, Part, Role};
use gd_hooks::registry::CallRef;
use gd_hooks::{Fired, HookEventName};
use gd_protocol::Event;
use serde_json::{Map, Value, json};

use super::{Hooks, fields, fire};
use crate::events::EventSink;

/// The model events of a session's main chat, handed to each request.
#[derive(Clone)]
pub struct ModelHooks {
    hooks: Hooks,
    sink: EventSink,
}

/// What BeforeModel (and BeforeToolSelection) decided for a request.
#[derive(Debug, PartialEq)]
pub enum BeforeRequest {
    /// Send it (possibly changed); `llm_request` is what AfterModel gets.
    Send { llm_request: Value },
    /// Do not send it: this is the answer.
    Answer(Vec<Part>),
    /// The turn ends here.
    End(HookEnd),
}

/// A model hook ended the turn: a deny ("Agent execution blocked: …") or
/// `continue: false` (`stopped`: "Agent execution stopped: …").
#[derive(Debug, Clone, PartialEq)]
pub struct HookEnd {
    pub reason: String,
    pub stopped: bool,
}

impl HookEnd {
    /// The end `fired` asks for, if any (a stop before a deny).
    fn of(fired: &Fired) -> Option<HookEnd> {
        if let Some(reason) = fired.stopped() {
            return Some(HookEnd {
                reason,
                stopped: true,
            });
        }
        fired.blocked().map(|reason| HookEnd {
            reason,
            stopped: false,
        })
    }
}

impl ModelHooks {
    /// `None` when no model event has a hook (the request path stays as it
    /// was: no JSON is built for hooks nobody runs).
    pub fn new(hooks: &Hooks, sink: &EventSink) -> Option<ModelHooks> {
        let wanted = [
            HookEventName::BeforeModel,
            HookEventName::BeforeToolSelection,
            HookEventName::AfterModel,
        ];
        wanted.iter().any(|e| hooks.has(*e)).then(|| ModelHooks {
            hooks: hooks.clone(),
            sink: sink.clone(),
        })
    }

    async fn fire(&self, event: HookEventName, fields: Map<String, Value>) -> Fired {
        fire(
            &self.hooks,
            &self.sink,
            event,
            None,
            fields,
            CallRef::default(),
        )
        .await
    }

    /// BeforeModel then BeforeToolSelection, applied to `model` and
    /// `request`.
    pub async fn before_request(
        &self,
        model: &mut String,
        request: &mut GenerateContentRequest,
    ) -> BeforeRequest {
        if self.hooks.has(HookEventName::BeforeModel) {
            let fired = self
                .fire(
                    HookEventName::BeforeModel,
                    fields([("llm_request", llm_request(model, request))]),
                )
                .await;
            let end = HookEnd::of(&fired);
            if let Some(end @ HookEnd { stopped: true, .. }) = end {
                return BeforeRequest::End(end);
            }
            let specific = fired.merged.as_ref().map(|m| {
                (
                    m.specific("llm_response").cloned(),
                    m.specific("llm_request").cloned(),
                )
            });
            let (synthetic, changes) = specific.unwrap_or_default();
            let answer = synthetic.as_ref().and_then(response_parts);
            if let Some(end) = end {
                let Some(parts) = answer else {
                    return BeforeRequest::End(end);
                };
                self.sink.emit(Event::Warning {
                    message: format!("Agent execution blocked: {}", end.reason),
                });
                return BeforeRequest::Answer(parts);
            }
            if let Some(parts) = answer {
                return BeforeRequest::Answer(parts);
            }
            if let Some(Value::Object(changes)) = changes {
                apply_request_changes(&changes, model, request);
            }
        }
        let llm_request = llm_request(model, request);
        if self.hooks.has(HookEventName::BeforeToolSelection) {
            let fired = self
                .fire(
                    HookEventName::BeforeToolSelection,
                    fields([("llm_request", llm_request.clone())]),
                )
                .await;
            if let Some(config) = fired.merged.as_ref().and_then(|m| m.specific("toolConfig")) {
                apply_tool_config(config, request);
            }
        }
        BeforeRequest::Send { llm_request }
    }

    /// Whether chunks go through AfterModel.
    pub fn has_after_model(&self) -> bool {
        self.hooks.has(HookEventName::AfterModel)
    }

    /// AfterModel on one streamed chunk; a replacement is written into it.
    /// `Err`: the turn ends and the chunk is dropped.
    pub async fn after_chunk(
        &self,
        llm_request: &Value,
        chunk: &mut GenerateContentResponse,
    ) -> Result<(), HookEnd> {
        let fired = self
            .fire(
                HookEventName::AfterModel,
                fields([
                    ("llm_request", llm_request.clone()),
                    ("llm_response", llm_response(chunk)),
                ]),
            )
            .await;
        if let Some(end) = HookEnd::of(&fired) {
            return Err(end);
        }
        let replacement = fired
            .merged
            .as_ref()
            .and_then(|m| m.specific("llm_response"))
            .and_then(replaced_text);
        if let Some(text) = replacement {
            replace_chunk_text(chunk, text);
        }
        Ok(())
    }
}

/// The text parts of a message, joined (0.61's `toHookLLMRequest`).
fn text_of(content: &Content) -> Option<String> {
    let texts: Vec<&str> = content
        .parts
        .iter()
        .filter_map(|p| p.text.as_deref())
        .collect();
    let text = texts.concat();
    (!text.is_empty()).then_some(text)
}

fn role_name(role: Option<Role>) -> &'static str {
    match role {
        Some(Role::Model) => "model",
        _ => "user",
    }
}

/// The stable `llm_request` hooks see.
pub fn llm_request(model: &str, request: &GenerateContentRequest) -> Value {
    let messages: Vec<Value> = request
        .contents
        .iter()
        .filter_map(|c| {
            let text = text_of(c)?;
            Some(json!({"role": role_name(c.role), "content": text}))
        })
        .collect();
    let g = request.generation_config.clone().unwrap_or_default();
    let mut config = Map::new();
    let entries = [
        ("temperature", g.temperature.map(Value::from)),
        ("maxOutputTokens", g.max_output_tokens.map(Value::from)),
        ("topP", g.top_p.map(Value::from)),
        ("topK", g.top_k.map(Value::from)),
    ];
    for (key, value) in entries {
        if let Some(value) = value {
            config.insert(key.into(), value);
        }
    }
    json!({"model": model, "messages": messages, "config": config})
}

/// The stable `llm_response` of one chunk (thoughts left out).
pub fn llm_response(chunk: &GenerateContentResponse) -> Value {
    let candidates: Vec<Value> = chunk
        .candidates
        .iter()
        .map(|c| {
            let texts: Vec<&str> = c
                .content
                .iter()
                .flat_map(|content| &content.parts)
                .filter(|p| !p.is_thought())
                .filter_map(|p| p.text.as_deref())
                .collect();
            let mut candidate = json!({"content": {"role": "model", "parts": texts}});
            if let Some(reason) = &c.finish_reason {
                candidate["finishReason"] = reason.as_str().into();
            }
            if let Some(index) = c.index {
                candidate["index"] = index.into();
            }
            candidate
        })
        .collect();
    let text: String = candidates
        .first()
        .and_then(|c| c["content"]["parts"].as_array())
        .map(|parts| parts.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let usage = chunk
        .usage_metadata
        .as_ref()
        .and_then(|u| serde_json::to_value(u).ok())
        .unwrap_or_else(|| json!({}));
    json!({"text": text, "candidates": candidates, "usageMetadata": usage})
}

/// The text of a hook's `llm_response`: its first candidate's parts (plain
/// strings or `{text}` objects), else its `text`.
fn response_text(response: &Value) -> Option<String> {
    let parts = response
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array);
    if let Some(parts) = parts {
        let texts: Vec<&str> = parts
            .iter()
            .filter_map(|p| p.as_str().or_else(|| p.get("text").and_then(Value::as_str)))
            .collect();
        if !texts.is_empty() {
            return Some(texts.concat());
        }
    }
    response
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// A BeforeModel answer as the parts of a model message.
fn response_parts(response: &Value) -> Option<Vec<Part>> {
    response_text(response).map(|text| vec![Part::text(text)])
}

/// AfterModel's replacement: only one with candidate parts counts (0.61's
/// `getModifiedResponse`).
fn replaced_text(response: &Value) -> Option<String> {
    let has_parts = response
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array)
        .is_some_and(|p| !p.is_empty());
    has_parts.then(|| response_text(response)).flatten()
}

/// Puts `text` where the chunk's (non-thought) text was; function calls and
/// thoughts stay.
fn replace_chunk_text(chunk: &mut GenerateContentResponse, text: String) {
    let Some(candidate) = chunk.candidates.first_mut() else {
        return;
    };
    let content = candidate
        .content
        .get_or_insert_with(|| Content::model(Vec::new()));
    let is_text = |p: &Part| p.text.is_some() && !p.is_thought();
    let at = content
        .parts
        .iter()
        .position(is_text)
        .unwrap_or(content.parts.len());
    content.parts.retain(|p| !is_text(p));
    let at = at.min(content.parts.len());
    content.parts.insert(at, Part::text(text));
}

/// 0.61's `fromHookLLMRequest`: the model, the sampling parameters given,
/// and the messages' text — matched in order to the messages that have
/// text (other parts kept), extra messages appended.
fn apply_request_changes(
    changes: &Map<String, Value>,
    model: &mut String,
    request: &mut GenerateContentRequest,
) {
    if let Some(m) = changes.get("model").and_then(Value::as_str) {
        *model = m.to_owned();
    }
    if let Some(config) = changes.get("config").and_then(Value::as_object) {
        let g = request
            .generation_config
            .get_or_insert_with(Default::default);
        // 0.61 assigns all four, so one left out is unset.
        g.temperature = config.get("temperature").and_then(Value::as_f64);
        g.max_output_tokens = config
            .get("maxOutputTokens")
            .and_then(Value::as_u64)
            .map(|v| v.min(u32::MAX as u64) as u32);
        g.top_p = config.get("topP").and_then(Value::as_f64);
        g.top_k = config
            .get("topK")
            .and_then(Value::as_u64)
            .map(|v| v.min(u32::MAX as u64) as u32);
    }
    let Some(messages) = changes.get("messages").and_then(Value::as_array) else {
        return;
    };
    let message = |m: &Value| -> (Option<Role>, String) {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("model") => Role::Model,
            _ => Role::User,
        };
        let text = match m.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        (Some(role), text)
    };
    let mut next = messages.iter();
    for content in request.contents.iter_mut() {
        if !content.parts.iter().any(|p| p.text.is_some()) {
            continue;
        }
        let Some(m) = next.next() else {
            break;
        };
        let (role, text) = message(m);
        content.role = role;
        content.parts.retain(|p| p.text.is_none());
        content.parts.insert(0, Part::text(text));
    }
    for m in next {
        let (role, text) = message(m);
        request.contents.push(Content {
            parts: vec![Part::text(text)],
            role,
        });
    }
}

/// BeforeToolSelection's merged `toolConfig` on the request.
fn apply_tool_config(config: &Value, request: &mut GenerateContentRequest) {
    let mode = config.get("mode").and_then(Value::as_str).unwrap_or("AUTO");
    let names: Vec<String> = config
        .get("allowedFunctionNames")
        .and_then(Value::as_array)
        .map(|n| {
            n.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut calling = json!({"mode": mode});
    if !names.is_empty() {
        calling["allowedFunctionNames"] = json!(names);
    }
    request.tool_config = Some(json!({"functionCallingConfig": calling}));
    let Some(tools) = request.tools.as_mut() else {
        return;
    };
    for tool in tools.iter_mut() {
        if let Some(decls) = tool.function_declarations.as_mut() {
            decls.retain(|d| mode != "NONE" && (names.is_empty() || names.contains(&d.name)));
        }
    }
    tools.retain(|t| {
        t.function_declarations
            .as_ref()
            .is_none_or(|d| !d.is_empty())
            || t.google_search.is_some()
            || t.url_context.is_some()
    });
    if tools.is_empty() {
        request.tools = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> GenerateContentRequest {
        GenerateContentRequest {
            contents: vec![
                Content::user_text("first"),
                Content::model(vec![Part {
                    function_call: Some(gd_gemini::FunctionCall {
                        name: "ls".into(),
                        ..Default::default()
                    }),
                    ..Part::default()
                }]),
                Content::user(vec![Part::text("second"), Part::text(" half")]),
            ],
            ..GenerateContentRequest::default()
        }
    }

    #[test]
    fn messages_are_the_text_of_messages_that_have_text() {
        let r = llm_request("m", &request());
        assert_eq!(
            r["messages"],
            json!([{"role": "user", "content": "first"}, {"role": "user", "content": "second half"}])
        );
        assert_eq!(r["config"], json!({}));
    }

    #[test]
    fn changed_messages_replace_text_in_order_and_keep_other_parts() {
        let mut req = request();
        let mut model = "m".to_owned();
        let changes = json!({
            "model": "other",
            "config": {"temperature": 0.5},
            "messages": [
                {"role": "user", "content": "FIRST"},
                {"role": "user", "content": "SECOND"},
                {"role": "user", "content": "third"}
            ]
        });
        apply_request_changes(changes.as_object().unwrap(), &mut model, &mut req);
        assert_eq!(model, "other");
        assert_eq!(req.contents[0].text(), "FIRST");
        assert!(req.contents[1].parts[0].function_call.is_some());
        assert_eq!(req.contents[2].text(), "SECOND");
        assert_eq!(req.contents[2].parts.len(), 1);
        assert_eq!(req.contents[3].text(), "third");
        let g = req.generation_config.unwrap();
        assert_eq!(g.temperature, Some(0.5));
        assert_eq!(g.top_p, None);
    }

    #[test]
    fn a_replaced_chunk_keeps_its_calls() {
        let mut chunk: GenerateContentResponse = serde_json::from_value(json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"text": "secret"},
                {"functionCall": {"name": "ls", "args": {}}}
            ]}}]
        }))
        .unwrap();
        assert_eq!(llm_response(&chunk)["text"], "secret");
        replace_chunk_text(&mut chunk, "[redacted]".into());
        let parts = &chunk.candidates[0].content.as_ref().unwrap().parts;
        assert_eq!(parts[0].text.as_deref(), Some("[redacted]"));
        assert!(parts[1].function_call.is_some());
        assert_eq!(
            replaced_text(&json!({"candidates": [{"content": {"parts": []}}], "text": "x"})),
            None
        );
    }

    #[test]
    fn tool_config_narrows_declarations() {
        let decl = |n: &str| gd_gemini::FunctionDeclaration {
            name: n.into(),
            ..Default::default()
        };
        let mut req = GenerateContentRequest {
            tools: Some(vec![gd_gemini::Tool::functions(vec![decl("a"), decl("b")])]),
            ..GenerateContentRequest::default()
        };
        apply_tool_config(
            &json!({"mode": "ANY", "allowedFunctionNames": ["b"]}),
            &mut req,
        );
        let tools = req.tools.as_ref().unwrap();
        let names: Vec<&str> = tools[0]
            .function_declarations
            .as_ref()
            .unwrap()
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        assert_eq!(names, ["b"]);
        assert_eq!(
            req.tool_config,
            Some(json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["b"]}}))
        );
        apply_tool_config(&json!({"mode": "NONE"}), &mut req);
        assert!(req.tools.is_none());
    }
}
