//! Run statistics, accumulated from session events and rendered in the
//! shapes Gemini CLI prints (`stats` of `-o json`, `result.stats` of
//! `-o stream-json`).

use std::collections::BTreeMap;

use gd_protocol::{Event, ToolCallStatus};
use serde_json::{Value, json};

#[derive(Debug, Default, Clone)]
struct TokenTotals {
    prompt: u64,
    candidates: u64,
    total: u64,
    cached: u64,
    thoughts: u64,
    tool: u64,
}

impl TokenTotals {
    fn input(&self) -> u64 {
        self.prompt.saturating_sub(self.cached)
    }

    fn to_json(&self) -> Value {
        json!({
            "input": self.input(),
            "prompt": self.prompt,
            "candidates": self.candidates,
            "total": self.total,
            "cached": self.cached,
            "thoughts": self.thoughts,
            "tool": self.tool,
        })
    }
}

#[derive(Debug, Default, Clone)]
struct ModelStats {
    requests: u64,
    errors: u64,
    latency_ms: u64,
    errors_by_type: BTreeMap<String, u64>,
    tokens: TokenTotals,
}

#[derive(Debug, Default, Clone)]
struct ToolStats {
    count: u64,
    success: u64,
    fail: u64,
    duration_ms: u64,
    accept: u64,
    reject: u64,
}

/// Everything counted during a run.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    models: BTreeMap<String, ModelStats>,
    tools: BTreeMap<String, ToolStats>,
    current_model: String,
}

impl Stats {
    pub fn new(model: &str) -> Self {
        Self {
            current_model: model.to_owned(),
            ..Self::default()
        }
    }

    /// Updates the counters from one event.
    pub fn record(&mut self, event: &Event) {
        match event {
            Event::Usage {
                model,
                latency_ms,
                usage,
            } => {
                let stats = self.models.entry(model.clone()).or_default();
                stats.requests += 1;
                stats.latency_ms += latency_ms;
                let t = &mut stats.tokens;
                t.prompt += usage.prompt_tokens;
                t.candidates += usage.output_tokens;
                t.total += usage.total_tokens;
                t.cached += usage.cached_tokens;
                t.thoughts += usage.thoughts_tokens;
                t.tool += usage.tool_tokens;
            }
            Event::Retrying { reason, .. } => self.model_error(reason),
            Event::Error {
                status: Some(status),
                ..
            } => self.model_error(&status.to_string()),
            Event::ToolCallResponse {
                name,
                status,
                duration_ms,
                ..
            } => {
                let stats = self.tools.entry(name.clone()).or_default();
                stats.count += 1;
                stats.duration_ms += duration_ms;
                match status {
                    ToolCallStatus::Success => {
                        stats.success += 1;
                        stats.accept += 1;
                    }
                    ToolCallStatus::Error => {
                        stats.fail += 1;
                        stats.accept += 1;
                    }
                    ToolCallStatus::Cancelled => {
                        stats.fail += 1;
                        stats.reject += 1;
                    }
                }
            }
            _ => {}
        }
    }

    fn model_error(&mut self, kind: &str) {
        let stats = self.models.entry(self.current_model.clone()).or_default();
        stats.errors += 1;
        let key: String = kind.chars().take(80).collect();
        *stats.errors_by_type.entry(key).or_default() += 1;
    }

    pub fn tool_calls(&self) -> u64 {
        self.tools.values().map(|t| t.count).sum()
    }

    /// The `stats` object of `-o json`.
    pub fn to_json(&self) -> Value {
        let models: serde_json::Map<String, Value> = self
            .models
            .iter()
            .map(|(name, m)| {
                let api = json!({
                    "totalRequests": m.requests,
                    "totalErrors": m.errors,
                    "totalLatencyMs": m.latency_ms,
                    "errorsByType": m.errors_by_type,
                });
                let role = json!({
                    "totalRequests": m.requests,
                    "totalErrors": m.errors,
                    "totalLatencyMs": m.latency_ms,
                    "tokens": m.tokens.to_json(),
                });
                (
                    name.clone(),
                    json!({"api": api, "tokens": m.tokens.to_json(), "roles": {"main": role}}),
                )
            })
            .collect();
        let decisions = |accept: u64, reject: u64| json!({"accept": accept, "reject": reject, "modify": 0, "auto_accept": 0});
        let by_name: serde_json::Map<String, Value> = self
            .tools
            .iter()
            .map(|(name, t)| {
                (
                    name.clone(),
                    json!({
                        "count": t.count,
                        "success": t.success,
                        "fail": t.fail,
                        "durationMs": t.duration_ms,
                        "decisions": decisions(t.accept, t.reject),
                    }),
                )
            })
            .collect();
        let sum = |f: fn(&ToolStats) -> u64| self.tools.values().map(f).sum::<u64>();
        json!({
            "models": models,
            "tools": {
                "totalCalls": sum(|t| t.count),
                "totalSuccess": sum(|t| t.success),
                "totalFail": sum(|t| t.fail),
                "totalDurationMs": sum(|t| t.duration_ms),
                "totalDecisions": decisions(sum(|t| t.accept), sum(|t| t.reject)),
                "byName": by_name,
            },
            "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0},
        })
    }

    /// The `stats` of the stream-json `result` event.
    pub fn to_stream_json(&self, duration_ms: u64) -> Value {
        let mut totals = TokenTotals::default();
        let models: serde_json::Map<String, Value> = self
            .models
            .iter()
            .map(|(name, m)| {
                let t = &m.tokens;
                totals.prompt += t.prompt;
                totals.candidates += t.candidates;
                totals.total += t.total;
                totals.cached += t.cached;
                (name.clone(), compact_tokens(t))
            })
            .collect();
        let mut stats = compact_tokens(&totals);
        let object = stats
            .as_object_mut()
            .expect("compact_tokens returns an object");
        object.insert("duration_ms".into(), json!(duration_ms));
        object.insert("tool_calls".into(), json!(self.tool_calls()));
        object.insert("models".into(), Value::Object(models));
        stats
    }
}

fn compact_tokens(t: &TokenTotals) -> Value {
    json!({
        "total_tokens": t.total,
        "input_tokens": t.prompt,
        "output_tokens": t.candidates,
        "cached": t.cached,
        "input": t.input(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_protocol::Usage;

    #[test]
    fn shapes_match_gemini_cli() {
        let mut stats = Stats::new("gemini-2.5-flash");
        let usage = |p, c| Event::Usage {
            model: "gemini-2.5-flash".into(),
            latency_ms: 10,
            usage: Usage {
                prompt_tokens: p,
                output_tokens: c,
                total_tokens: p + c,
                ..Usage::default()
            },
        };
        stats.record(&usage(100, 5));
        stats.record(&usage(120, 8));
        stats.record(&Event::ToolCallResponse {
            call_id: "c".into(),
            name: "list_directory".into(),
            status: ToolCallStatus::Success,
            display: None,
            error: None,
            duration_ms: 3,
            output: None,
            exit_code: None,
            declined: false,
            diff: None,
        });
        let json = stats.to_json();
        let m = &json["models"]["gemini-2.5-flash"];
        assert_eq!(m["api"]["totalRequests"], 2);
        assert_eq!(m["tokens"]["prompt"], 220);
        assert_eq!(m["roles"]["main"]["tokens"]["candidates"], 13);
        assert_eq!(
            json["tools"]["byName"]["list_directory"]["decisions"]["accept"],
            1
        );
        let s = stats.to_stream_json(42);
        assert_eq!(s["input_tokens"], 220);
        assert_eq!(s["output_tokens"], 13);
        assert_eq!(s["tool_calls"], 1);
        assert_eq!(s["models"]["gemini-2.5-flash"]["total_tokens"], 233);
    }
}
