//! Run statistics in the shapes Gemini CLI prints (`stats` of `-o json`,
//! `result.stats` of `-o stream-json`). The counting is the core's
//! ([`gd_protocol::SessionStats`], asked for with `Op::Stats` at the end of
//! the run); this module only renders it.

use gd_protocol::{ModelStats, RoleStats, SessionStats, ToolNameStats};
use serde_json::{Map, Value, json};

/// What a run used, as the session counted it.
#[derive(Debug, Default, Clone)]
pub struct Stats(SessionStats);

impl From<SessionStats> for Stats {
    fn from(stats: SessionStats) -> Self {
        Self(stats)
    }
}

/// Token totals in Gemini CLI's terms.
#[derive(Debug, Default, Clone, Copy)]
struct TokenTotals {
    prompt: u64,
    candidates: u64,
    total: u64,
    cached: u64,
    thoughts: u64,
    tool: u64,
}

impl TokenTotals {
    fn of(m: &ModelStats) -> Self {
        Self {
            prompt: m.prompt_tokens,
            candidates: m.output_tokens,
            total: m.total_tokens,
            cached: m.cached_tokens,
            thoughts: m.thoughts_tokens,
            tool: m.tool_tokens,
        }
    }

    fn of_role(r: &RoleStats) -> Self {
        Self {
            prompt: r.prompt_tokens,
            candidates: r.output_tokens,
            total: r.total_tokens,
            cached: r.cached_tokens,
            thoughts: r.thoughts_tokens,
            tool: r.tool_tokens,
        }
    }

    fn input(&self) -> u64 {
        self.prompt.saturating_sub(self.cached)
    }

    fn to_json(self) -> Value {
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

impl Stats {
    /// Nothing used (a run that failed before its session started).
    pub fn empty() -> Self {
        Self::default()
    }

    pub fn tool_calls(&self) -> u64 {
        self.0.tools.calls.into()
    }

    /// The models by name, as Gemini CLI lists them.
    fn models(&self) -> Vec<&ModelStats> {
        let mut models: Vec<&ModelStats> = self.0.models.iter().collect();
        models.sort_by(|a, b| a.model.cmp(&b.model));
        models
    }

    /// The `stats` object of `-o json`.
    pub fn to_json(&self) -> Value {
        let models: Map<String, Value> = self
            .models()
            .into_iter()
            .map(|m| {
                let tokens = TokenTotals::of(m).to_json();
                let api = json!({
                    "totalRequests": m.requests,
                    "totalErrors": m.errors,
                    "totalLatencyMs": m.latency_ms,
                    "errorsByType": m.errors_by_type,
                });
                // Core counts every request under its role (0.61's
                // `LlmRole`); older figures without roles were all `main`.
                let roles: Map<String, Value> = if m.roles.is_empty() {
                    Map::from_iter([(
                        "main".to_owned(),
                        json!({
                            "totalRequests": m.requests,
                            "totalErrors": m.errors,
                            "totalLatencyMs": m.latency_ms,
                            "tokens": tokens,
                        }),
                    )])
                } else {
                    m.roles
                        .iter()
                        .map(|r| {
                            (
                                r.role.as_str().to_owned(),
                                json!({
                                    "totalRequests": r.requests,
                                    "totalErrors": r.errors,
                                    "totalLatencyMs": r.latency_ms,
                                    "tokens": TokenTotals::of_role(r).to_json(),
                                }),
                            )
                        })
                        .collect()
                };
                (
                    m.model.clone(),
                    json!({"api": api, "tokens": tokens, "roles": roles}),
                )
            })
            .collect();
        // Headless runs ask nothing: every call that ran was accepted, the
        // cancelled ones rejected (Gemini CLI's counting).
        let decisions = |accept: u32, reject: u32| json!({"accept": accept, "reject": reject, "modify": 0, "auto_accept": 0});
        let mut tools: Vec<&ToolNameStats> = self.0.tools.by_name.iter().collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name: Map<String, Value> = tools
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    json!({
                        "count": t.calls,
                        "success": t.success,
                        "fail": t.failed,
                        "durationMs": t.duration_ms,
                        "decisions": decisions(t.calls - t.cancelled, t.cancelled),
                    }),
                )
            })
            .collect();
        let cancelled: u32 = tools.iter().map(|t| t.cancelled).sum();
        let all = &self.0.tools;
        json!({
            "models": models,
            "tools": {
                "totalCalls": all.calls,
                "totalSuccess": all.success,
                "totalFail": all.failed,
                "totalDurationMs": all.duration_ms,
                "totalDecisions": decisions(all.calls - cancelled, cancelled),
                "byName": by_name,
            },
            "files": {
                "totalLinesAdded": self.0.files.lines_added,
                "totalLinesRemoved": self.0.files.lines_removed,
            },
        })
    }

    /// The `stats` of the stream-json `result` event.
    pub fn to_stream_json(&self, duration_ms: u64) -> Value {
        let mut totals = TokenTotals::default();
        let models: Map<String, Value> = self
            .models()
            .into_iter()
            .map(|m| {
                let t = TokenTotals::of(m);
                totals.prompt += t.prompt;
                totals.candidates += t.candidates;
                totals.total += t.total;
                totals.cached += t.cached;
                (m.model.clone(), compact_tokens(&t))
            })
            .collect();
        let mut stats = compact_tokens(&totals);
        if let Some(object) = stats.as_object_mut() {
            object.insert("duration_ms".into(), json!(duration_ms));
            object.insert("tool_calls".into(), json!(self.tool_calls()));
            object.insert("models".into(), Value::Object(models));
        }
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
    use gd_protocol::{ToolNameStats, ToolStats};

    #[test]
    fn shapes_match_gemini_cli() {
        let stats = Stats::from(SessionStats {
            models: vec![ModelStats {
                model: "gemini-2.5-flash".into(),
                requests: 2,
                latency_ms: 20,
                prompt_tokens: 220,
                output_tokens: 13,
                total_tokens: 233,
                ..ModelStats::default()
            }],
            tools: ToolStats {
                calls: 1,
                success: 1,
                duration_ms: 3,
                by_name: vec![ToolNameStats {
                    name: "list_directory".into(),
                    calls: 1,
                    success: 1,
                    duration_ms: 3,
                    ..ToolNameStats::default()
                }],
                ..ToolStats::default()
            },
            ..SessionStats::default()
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
