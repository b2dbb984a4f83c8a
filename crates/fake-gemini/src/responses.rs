//! Response bodies in the real wire shape: `GenerateContentResponse` objects
//! (whole or split into stream chunks), list-models and embedding answers.

use serde_json::{Value, json};

/// What a model reply consists of, before it is shaped into response objects.
#[derive(Debug, Clone)]
pub struct ModelReply {
    pub parts: Vec<Value>,
    pub finish_reason: String,
    /// Answer with no candidates and `promptFeedback.blockReason`.
    pub block_reason: Option<String>,
    pub empty_candidates: bool,
    /// Replaces the computed `usageMetadata`.
    pub usage: Option<Value>,
    /// Extra fields merged into the (last chunk's) candidate.
    pub candidate_extra: Option<serde_json::Map<String, Value>>,
}

/// Per-request values that every response object carries.
#[derive(Debug, Clone)]
pub struct ResponseMeta {
    pub model: String,
    pub prompt_tokens: u64,
    /// Same for all chunks of one reply, like the real API.
    pub response_id: String,
}

impl ModelReply {
    /// A plain reply with `finishReason: STOP`.
    pub fn with_parts(parts: Vec<Value>) -> ModelReply {
        ModelReply {
            parts,
            finish_reason: "STOP".into(),
            block_reason: None,
            empty_candidates: false,
            usage: None,
            candidate_extra: None,
        }
    }

    /// The reference fake's estimate: a quarter of the text characters plus 5 per call.
    fn usage_json(&self, meta: &ResponseMeta) -> Value {
        if let Some(usage) = &self.usage {
            return usage.clone();
        }
        let text_chars: usize = self
            .parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .map(|t| t.chars().count())
            .sum();
        let calls = self
            .parts
            .iter()
            .filter(|p| p.get("functionCall").is_some())
            .count();
        let out = ((text_chars / 4 + 5 * calls) as u64).max(1);
        json!({
            "promptTokenCount": meta.prompt_tokens,
            "candidatesTokenCount": out,
            "totalTokenCount": meta.prompt_tokens + out,
        })
    }

    /// The whole reply as one object (`generateContent`).
    pub fn full(&self, meta: &ResponseMeta) -> Value {
        self.last_chunk(self.parts.clone(), meta)
    }

    /// The reply as stream chunks (`streamGenerateContent`). With
    /// `chunk_chars > 0` and exactly one non-thought text part, that text is
    /// split into pieces: thought parts ride in the first chunk, any other
    /// parts (function calls...) in the last; only the last chunk carries
    /// `finishReason` and `usageMetadata`.
    pub fn chunks(&self, meta: &ResponseMeta, chunk_chars: usize) -> Vec<Value> {
        if self.block_reason.is_some() || self.empty_candidates || chunk_chars == 0 {
            return vec![self.full(meta)];
        }
        let is_thought = |p: &Value| p.get("thought").is_some_and(crate::pyjson::truthy);
        let text_idx: Vec<usize> = (0..self.parts.len())
            .filter(|&i| {
                self.parts[i].get("text").is_some_and(Value::is_string)
                    && !is_thought(&self.parts[i])
            })
            .collect();
        let [ti] = text_idx[..] else {
            return vec![self.full(meta)];
        };
        let text_part = &self.parts[ti];
        let text: Vec<char> = text_part["text"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .collect();
        if text.len() <= chunk_chars {
            return vec![self.full(meta)];
        }
        let pieces: Vec<String> = text
            .chunks(chunk_chars)
            .map(|c| c.iter().collect())
            .collect();
        let thoughts: Vec<Value> = self
            .parts
            .iter()
            .filter(|p| is_thought(p))
            .cloned()
            .collect();
        let others: Vec<Value> = (0..self.parts.len())
            .filter(|&i| i != ti && !is_thought(&self.parts[i]))
            .map(|i| self.parts[i].clone())
            .collect();
        let n = pieces.len();
        pieces
            .into_iter()
            .enumerate()
            .map(|(i, piece)| {
                // Extra keys of the text part (e.g. a thoughtSignature) stay on the first piece.
                let mut part = if i == 0 { text_part.clone() } else { json!({}) };
                part["text"] = json!(piece);
                let mut parts = if i == 0 { thoughts.clone() } else { Vec::new() };
                parts.push(part);
                if i + 1 == n {
                    parts.extend(others.iter().cloned());
                    self.last_chunk(parts, meta)
                } else {
                    json!({
                        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
                        "modelVersion": meta.model,
                        "responseId": meta.response_id,
                    })
                }
            })
            .collect()
    }

    fn last_chunk(&self, parts: Vec<Value>, meta: &ResponseMeta) -> Value {
        let usage = self.usage_json(meta);
        if let Some(reason) = &self.block_reason {
            return json!({
                "promptFeedback": {"blockReason": reason},
                "usageMetadata": usage,
                "modelVersion": meta.model,
                "responseId": meta.response_id,
            });
        }
        let candidates = if self.empty_candidates {
            json!([])
        } else {
            let mut candidate = json!({
                "content": {"role": "model", "parts": parts},
                "index": 0,
                "finishReason": self.finish_reason,
            });
            if let (Some(extra), Value::Object(map)) = (&self.candidate_extra, &mut candidate) {
                map.extend(extra.clone());
            }
            json!([candidate])
        };
        json!({
            "candidates": candidates,
            "usageMetadata": usage,
            "modelVersion": meta.model,
            "responseId": meta.response_id,
        })
    }
}

/// Code Assist (`/v1internal`) wraps every response object.
pub fn wrap_code_assist(response: Value, trace_id: &str) -> Value {
    json!({"response": response, "traceId": trace_id})
}

/// `GET /{ver}/models`: a couple of entries, enough for key validation.
pub fn list_models() -> Value {
    let model = |name: &str, display: &str, input: u64| {
        json!({
            "name": format!("models/{name}"),
            "version": "001",
            "displayName": display,
            "description": format!("{display} (fake-gemini)"),
            "inputTokenLimit": input,
            "outputTokenLimit": 65536,
            "supportedGenerationMethods": ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"],
            "temperature": 1.0,
            "topP": 0.95,
            "topK": 64,
            "maxTemperature": 2.0,
            "thinking": true,
        })
    };
    json!({"models": [
        model("gemini-2.5-flash", "Gemini 2.5 Flash", 1_048_576),
        model("gemini-2.5-pro", "Gemini 2.5 Pro", 1_048_576),
        model("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1_048_576),
    ]})
}

/// Dummy 8-dimensional embeddings, as in the reference fake.
pub fn embeddings(method: &str, request: &Value) -> Value {
    let emb = json!({"values": vec![0.0f64; 8]});
    if method == "embedContent" {
        return json!({"embedding": emb});
    }
    let n = request
        .get("requests")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    json!({"embeddings": vec![emb; n]})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> ResponseMeta {
        ResponseMeta {
            model: "m".into(),
            prompt_tokens: 10,
            response_id: "r".into(),
        }
    }

    #[test]
    fn full_reply_has_reference_shape() {
        let r = ModelReply::with_parts(vec![json!({"text": "12345678"})]);
        assert_eq!(
            r.full(&meta()),
            json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": "12345678"}]}, "index": 0, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
                "modelVersion": "m", "responseId": "r"
            })
        );
    }

    #[test]
    fn chunking_puts_thoughts_first_and_calls_last() {
        let r = ModelReply::with_parts(vec![
            json!({"text": "hmm", "thought": true}),
            json!({"text": "abcdefg"}),
            json!({"functionCall": {"name": "f", "args": {}}}),
        ]);
        let chunks = r.chunks(&meta(), 3);
        assert_eq!(chunks.len(), 3);
        assert_eq!(
            chunks[0]["candidates"][0]["content"]["parts"],
            json!([{"text": "hmm", "thought": true}, {"text": "abc"}])
        );
        assert!(chunks[0].get("usageMetadata").is_none());
        assert!(chunks[0]["candidates"][0].get("finishReason").is_none());
        assert_eq!(
            chunks[1]["candidates"][0]["content"]["parts"],
            json!([{"text": "def"}])
        );
        assert_eq!(
            chunks[2]["candidates"][0]["content"]["parts"],
            json!([{"text": "g"}, {"functionCall": {"name": "f", "args": {}}}])
        );
        assert_eq!(chunks[2]["candidates"][0]["finishReason"], "STOP");
        // usage counts the whole reply: (3 + 7) / 4 + 5
        assert_eq!(chunks[2]["usageMetadata"]["candidatesTokenCount"], 7);
    }

    #[test]
    fn two_text_parts_are_not_split() {
        let r = ModelReply::with_parts(vec![json!({"text": "abcdef"}), json!({"text": "ghijkl"})]);
        assert_eq!(r.chunks(&meta(), 2).len(), 1);
    }

    #[test]
    fn block_and_empty_shapes() {
        let mut r = ModelReply::with_parts(vec![]);
        r.block_reason = Some("SAFETY".into());
        let v = r.full(&meta());
        assert!(v.get("candidates").is_none());
        assert_eq!(v["promptFeedback"]["blockReason"], "SAFETY");
        r.block_reason = None;
        r.empty_candidates = true;
        assert_eq!(r.full(&meta())["candidates"], json!([]));
    }
}
