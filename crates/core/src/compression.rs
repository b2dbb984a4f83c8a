//! Chat compression: when history approaches the model's context window,
//! older turns are summarised into a structured snapshot and the recent
//! tail is kept verbatim.

use gd_gemini::{Content, GenerateContentRequest, GenerationConfig, Part, RequestMeta};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use gd_protocol::{Event, RequestRole, Usage};

use crate::chat::Chat;
use crate::events::EventSink;
use crate::tokens::{estimate_tokens, token_limit};

/// Compress when the prompt exceeds this fraction of the context window.
pub const DEFAULT_THRESHOLD: f64 = 0.5;
/// Fraction of history (by size) kept verbatim after compression.
pub const PRESERVE_FRACTION: f64 = 0.3;

/// The model's reply recorded after the summary, so roles alternate.
const ACKNOWLEDGEMENT: &str = "Got it. Thanks for the additional context!";

const COMPRESSION_PROMPT: &str = r#"You compress the history of a coding session between a user and an AI coding agent. The agent will continue the work with only your summary and the most recent messages, so the summary must preserve every fact, decision and piece of state it needs and drop everything else.

Write a single <state_snapshot> element with these sections, in this order, as concise Markdown bullet points:

<state_snapshot>
  <overall_goal>What the user ultimately wants, in one or two sentences.</overall_goal>
  <key_knowledge>Facts learned: project layout, languages and libraries, build and test commands, conventions, constraints and preferences the user stated.</key_knowledge>
  <file_system_state>Files read, created, modified or deleted, with the essential point about each (e.g. "src/app.rs: added retry loop in fetch()").</file_system_state>
  <recent_actions>The last significant actions and their outcomes, including failures and why.</recent_actions>
  <current_plan>Numbered steps, each marked [DONE], [IN PROGRESS] or [TODO].</current_plan>
</state_snapshot>

Be specific: keep exact paths, identifiers, commands and error messages. Do not invent anything that is not in the history. Output only the <state_snapshot> element."#;

const FINAL_INSTRUCTION: &str = "Write the <state_snapshot> for the conversation above now.";

/// What a compression attempt did.
#[derive(Debug, Clone, PartialEq)]
pub enum CompressionOutcome {
    NotNeeded,
    Compressed {
        original_tokens: u64,
        new_tokens: u64,
    },
    /// The summary was not smaller; history was left unchanged.
    Inflated {
        original_tokens: u64,
        new_tokens: u64,
    },
    Failed(String),
}

/// The index where the kept tail starts: the first user prompt (not a tool
/// response) after `fraction` of the history by size. Returns 0 when there
/// is nothing sensible to compress.
pub fn find_split_point(history: &[Content], fraction: f64) -> usize {
    let sizes: Vec<usize> = history
        .iter()
        .map(|c| serde_json::to_string(c).map(|s| s.len()).unwrap_or(0))
        .collect();
    let target = sizes.iter().sum::<usize>() as f64 * fraction;
    let mut cumulative = 0usize;
    let mut last_split = 0;
    for (i, content) in history.iter().enumerate() {
        if content.is_user() && !content.has_function_response() {
            if cumulative as f64 >= target {
                return i;
            }
            last_split = i;
        }
        cumulative += sizes[i];
    }
    match history.last() {
        Some(last) if last.is_model() && last.function_calls().next().is_none() => history.len(),
        _ => last_split,
    }
}

/// The size of the chat's history in tokens: what the API counted for the
/// latest request, or an estimate before the first.
pub fn history_tokens(chat: &Chat) -> u64 {
    match chat.last_prompt_tokens() {
        0 => estimate_tokens(chat.history()),
        n => n,
    }
}

/// Compresses when the last prompt plus `pending` crosses `threshold` of the
/// window, or always when `force` is set. The summary request's usage is
/// reported on `sink` under the `utility_compressor` role (Gemini CLI 0.61
/// counts it apart from the conversation's own requests).
/// Whether [`maybe_compress`] would summarise (before it asks the model),
/// so a PreCompress hook can run first.
pub fn would_compress(chat: &Chat, threshold: f64, pending: &Content, force: bool) -> bool {
    let original_tokens = history_tokens(chat) + estimate_tokens(std::slice::from_ref(pending));
    let limit = token_limit(chat.model()) as f64;
    (force || (original_tokens as f64) >= threshold * limit)
        && find_split_point(chat.history(), 1.0 - PRESERVE_FRACTION) > 0
}

pub async fn maybe_compress(
    chat: &mut Chat,
    threshold: f64,
    pending: &Content,
    force: bool,
    cancel: &CancellationToken,
    sink: &EventSink,
) -> CompressionOutcome {
    let original_tokens = history_tokens(chat) + estimate_tokens(std::slice::from_ref(pending));
    let limit = token_limit(chat.model()) as f64;
    if !force && (original_tokens as f64) < threshold * limit {
        return CompressionOutcome::NotNeeded;
    }
    let split = find_split_point(chat.history(), 1.0 - PRESERVE_FRACTION);
    if split == 0 {
        return CompressionOutcome::NotNeeded;
    }
    let mut contents = chat.history()[..split].to_vec();
    contents.push(Content::user_text(FINAL_INSTRUCTION));
    let request = GenerateContentRequest {
        contents,
        system_instruction: Some(Content::user_text(COMPRESSION_PROMPT)),
        generation_config: Some(GenerationConfig::default()),
        ..GenerateContentRequest::default()
    };
    let meta = RequestMeta {
        session_id: chat.session_id().to_owned(),
        prompt_id: chat.next_prompt_id(),
    };
    let client = chat.client().clone();
    let model = chat.model().to_owned();
    let started = std::time::Instant::now();
    let response = tokio::select! {
        _ = cancel.cancelled() => return CompressionOutcome::Failed("cancelled".into()),
        response = client.generate(&model, &request, &meta) => response,
    };
    let summary = match response {
        Ok(response) => {
            if let Some(usage) = &response.usage_metadata {
                sink.emit(Event::Usage {
                    model: model.clone(),
                    latency_ms: started.elapsed().as_millis() as u64,
                    usage: Usage {
                        prompt_tokens: usage.prompt_token_count,
                        cached_tokens: usage.cached_content_token_count,
                        output_tokens: usage.candidates_token_count,
                        thoughts_tokens: usage.thoughts_token_count,
                        tool_tokens: usage.tool_use_prompt_token_count,
                        total_tokens: usage.total_token_count,
                    },
                    role: RequestRole::UtilityCompressor,
                });
            }
            response.text()
        }
        Err(error) => {
            warn!(%error, "chat compression request failed");
            return CompressionOutcome::Failed(error.to_string());
        }
    };
    if summary.trim().is_empty() {
        return CompressionOutcome::Failed("the model returned an empty summary".into());
    }
    let mut new_history = vec![
        Content::user(vec![Part::text(summary)]),
        Content::model(vec![Part::text(ACKNOWLEDGEMENT)]),
    ];
    new_history.extend_from_slice(&chat.history()[split..]);
    let new_tokens = estimate_tokens(&new_history) + estimate_tokens(std::slice::from_ref(pending));
    if new_tokens >= original_tokens {
        return CompressionOutcome::Inflated {
            original_tokens,
            new_tokens,
        };
    }
    info!(original_tokens, new_tokens, "chat history compressed");
    chat.set_history(new_history);
    chat.set_last_prompt_tokens(new_tokens);
    CompressionOutcome::Compressed {
        original_tokens,
        new_tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_gemini::{FunctionCall, FunctionResponse};
    use serde_json::json;

    fn call() -> Content {
        Content::model(vec![Part::function_call(FunctionCall {
            id: Some("1".into()),
            name: "ls".into(),
            args: Some(json!({})),
            extra: Default::default(),
        })])
    }

    fn response() -> Content {
        Content::user(vec![Part::function_response(FunctionResponse {
            id: Some("1".into()),
            name: "ls".into(),
            response: json!({"output": "x".repeat(100)}),
            extra: Default::default(),
        })])
    }

    #[test]
    fn split_lands_on_a_user_prompt_after_the_fraction() {
        let history = vec![
            Content::user_text("a".repeat(100)),
            call(),
            response(),
            Content::model(vec![Part::text("b".repeat(100))]),
            Content::user_text("c".repeat(100)),
            Content::model(vec![Part::text("d".repeat(100))]),
            Content::user_text("e".repeat(100)),
            call(),
        ];
        assert_eq!(find_split_point(&history, 0.5), 4);
        assert_eq!(
            find_split_point(&history, 0.95),
            6,
            "falls back to the last prompt"
        );
        let finished = &history[..6];
        assert_eq!(
            find_split_point(finished, 0.99),
            6,
            "everything when the model has finished"
        );
        assert_eq!(find_split_point(&history[..1], 0.5), 0);
    }
}
