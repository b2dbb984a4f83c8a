//! `update_topic` (Gemini CLI 0.61's topics): the model names the phase of
//! the work it is in ("chapters") and states its immediate intent. The
//! session keeps the current topic; a new title starts a chapter, which
//! frontends show (see [`gd_protocol::Event::TopicChanged`]) and history
//! search finds. It never asks: 0.61's read-only policy allows it, since it
//! only changes what the user sees.
//!
//! The results follow 0.61's `topicTool.ts` word for word, so the model
//! reads the same thing in both programs.

use gd_gemini::Content;
use gd_protocol::Event;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolContext, ToolError, ToolErrorKind, ToolResult};

/// The arguments of an `update_topic` call.
#[derive(Debug, Deserialize)]
pub struct Params {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    strategic_intent: Option<String>,
}

/// The session's current topic: 0.61's `TopicState`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicState {
    pub title: Option<String>,
    pub intent: Option<String>,
}

impl TopicState {
    /// Takes the trimmed, single-line title and intent; either may be left
    /// out (the current one stays). `false` when both are empty.
    pub fn set(&mut self, title: Option<&str>, intent: Option<&str>) -> bool {
        let clean = |s: Option<&str>| {
            s.map(|s| {
                s.trim()
                    .split(['\r', '\n'])
                    .filter(|l| !l.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|s| !s.is_empty())
        };
        let (title, intent) = (clean(title), clean(intent));
        if title.is_none() && intent.is_none() {
            return false;
        }
        if title.is_some() {
            self.title = title;
        }
        if intent.is_some() {
            self.intent = intent;
        }
        true
    }

    /// The topic a conversation ended with: its `update_topic` calls
    /// replayed (a resumed conversation continues in its last chapter).
    pub fn replay(history: &[Content]) -> Self {
        let mut state = Self::default();
        for call in history.iter().flat_map(Content::function_calls) {
            if call.name != UpdateTopic::NAME {
                continue;
            }
            let arg = |key: &str| {
                call.args
                    .as_ref()
                    .and_then(|a| a.get(key))
                    .and_then(Value::as_str)
            };
            state.set(arg("title"), arg("strategic_intent"));
        }
        state
    }
}

/// How much of a topic call history search indexes (a summary is 5–10
/// sentences; this keeps a runaway one bounded).
pub const SEARCH_CHARS: usize = 4000;

/// An `update_topic` call's words for history search: title, summary and
/// intent, in that order, on one line each.
pub fn search_text(args: &Value) -> String {
    ["title", "summary", "strategic_intent"]
        .iter()
        .filter_map(|key| args.get(key).and_then(Value::as_str))
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The tool; the topic itself lives in the session's services
/// ([`super::ToolServices::topic`]).
pub struct UpdateTopic {
    schema: Value,
}

impl UpdateTopic {
    pub const NAME: &'static str = "update_topic";

    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "title": {
                        "type": "string",
                        "description": "The title of the new topic or chapter."
                    },
                    "summary": {
                        "type": "string",
                        "description": "(OPTIONAL) A detailed summary (5-10 sentences) covering both the work completed in the previous topic and the strategic intent of the new topic. This is required when transitioning between topics to maintain continuity."
                    },
                    "strategic_intent": {
                        "type": "string",
                        "description": "A mandatory one-sentence statement of your immediate intent."
                    },
                    "wait_for_previous": super::schema::wait_for_previous()
                },
                "required": ["strategic_intent"]
            }),
        }
    }
}

crate::tools::tool_info! {
    default UpdateTopic,
    display: "Update Topic Context",
    kind: Think,
    description: "Manages your narrative flow. Include `title` and `summary` only when starting a new Chapter (logical phase) or shifting strategic intent.",
}

impl crate::tools::TypedTool for UpdateTopic {
    type Args = Params;

    async fn run(&self, args: Params, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let (state, new_chapter) = {
            let mut state = ctx.services.topic.lock().unwrap_or_else(|e| e.into_inner());
            let title = args.title.as_deref().map(str::trim).unwrap_or("");
            let new_chapter = !title.is_empty() && Some(title) != state.title.as_deref();
            if !state.set(args.title.as_deref(), args.strategic_intent.as_deref()) {
                return Err(ToolError::new(
                    ToolErrorKind::InvalidParams,
                    "Provide a non-empty strategic_intent (and a title to start a new topic).",
                ));
            }
            (state.clone(), new_chapter)
        };
        let topic = state.title.clone().unwrap_or_else(|| "...".to_owned());
        let summary = args
            .summary
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let given_intent = args
            .strategic_intent
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let intent = given_intent
            .map(str::to_owned)
            .or_else(|| state.intent.clone())
            .unwrap_or_else(|| "...".to_owned());
        let (llm, display) = if new_chapter {
            let summary_text = summary.unwrap_or("...");
            let mut llm = format!("Current topic: \"{topic}\"\nTopic summary: {summary_text}");
            let mut display = format!("## 📂 Topic: **{topic}**\n\n**Summary:**\n{summary_text}");
            if let Some(intent) = given_intent {
                llm.push_str(&format!("\n\nStrategic Intent: {intent}"));
                display.push_str(&format!("\n\n> [!STRATEGY]\n> **Intent:** {intent}"));
            }
            (llm, display)
        } else {
            (
                format!("Strategic Intent: {intent}"),
                format!("> [!STRATEGY]\n> **Intent:** {intent}"),
            )
        };
        tracing::debug!(topic, intent, new_chapter, "topic updated");
        if let Some(output) = &ctx.output {
            output.emit_event(Event::TopicChanged {
                call_id: output.call_id().to_owned(),
                title: state.title.clone(),
                summary: summary.map(str::to_owned),
                strategic_intent: intent,
                new_chapter,
            });
        }
        Ok(ToolResult::success(llm, display))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{OutputSink, Tool};

    fn text(result: &ToolResult) -> String {
        match &result.llm_content {
            crate::tools::LlmContent::Text(t) => t.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_new_title_starts_a_chapter_and_intents_update_it() {
        let tool = UpdateTopic::new();
        let (sink, mut events) = crate::events::EventSink::new();
        let mut ctx = ToolContext::new(vec![std::env::temp_dir()]);
        ctx.output = Some(OutputSink::new(sink, "call-1".into()));

        let first = tool
            .execute(
                json!({"title": " Explore\nthe code ", "summary": "Looked around.", "strategic_intent": "Find the parser."}),
                &ctx,
            )
            .await;
        assert_eq!(
            text(&first),
            "Current topic: \"Explore the code\"\nTopic summary: Looked around.\n\nStrategic Intent: Find the parser."
        );
        assert_eq!(
            events.try_recv().unwrap(),
            Event::TopicChanged {
                call_id: "call-1".into(),
                title: Some("Explore the code".into()),
                summary: Some("Looked around.".into()),
                strategic_intent: "Find the parser.".into(),
                new_chapter: true,
            }
        );

        // The same title again only updates the intent.
        let again = tool
            .execute(
                json!({"title": "Explore the code", "strategic_intent": "Read lexer.rs."}),
                &ctx,
            )
            .await;
        assert_eq!(text(&again), "Strategic Intent: Read lexer.rs.");
        assert!(matches!(
            events.try_recv().unwrap(),
            Event::TopicChanged {
                new_chapter: false,
                ..
            }
        ));
        assert_eq!(
            *ctx.services.topic.lock().unwrap(),
            TopicState {
                title: Some("Explore the code".into()),
                intent: Some("Read lexer.rs.".into())
            }
        );
    }

    #[test]
    fn replaying_the_history_restores_the_last_topic() {
        let call = |args: Value| {
            Content::model(vec![gd_gemini::Part::function_call(
                gd_gemini::FunctionCall {
                    name: UpdateTopic::NAME.into(),
                    args: Some(args),
                    ..Default::default()
                },
            )])
        };
        let history = vec![
            call(json!({"title": "One", "strategic_intent": "a"})),
            call(json!({"title": "Two", "strategic_intent": "b"})),
            call(json!({"strategic_intent": "c"})),
        ];
        assert_eq!(
            TopicState::replay(&history),
            TopicState {
                title: Some("Two".into()),
                intent: Some("c".into())
            }
        );
    }

    #[tokio::test]
    async fn empty_calls_are_refused() {
        let tool = UpdateTopic::new();
        let ctx = ToolContext::new(vec![std::env::temp_dir()]);
        let result = tool.execute(json!({"strategic_intent": "  "}), &ctx).await;
        assert!(result.error.is_some());
        assert_eq!(*ctx.services.topic.lock().unwrap(), TopicState::default());
        let missing = tool.execute(json!({"title": 3}), &ctx).await;
        assert!(missing.error.is_some(), "bad types are a clear error");
    }
}
