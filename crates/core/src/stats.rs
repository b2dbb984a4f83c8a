//! `/stats`: what a session used, counted from the events it emits and
//! nothing else (the session's [`crate::events::EventSink`] shows each one
//! to a [`StatsRecorder`] before the frontend gets it).

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use gd_protocol::{
    Event, ModelStats, SessionStats, ToolCallStatus, ToolDecisions, ToolNameStats, ToolStats,
};

/// Counts a session's requests, tokens and tool calls.
#[derive(Debug)]
pub struct StatsRecorder {
    session_id: String,
    started: Instant,
    started_ms: u64,
    turns: u32,
    /// The model of the latest request, which failures are counted against.
    model: String,
    models: Vec<ModelStats>,
    tools: BTreeMap<String, ToolNameStats>,
    decisions: ToolDecisions,
    /// Calls the user was asked about.
    asked: HashSet<String>,
}

impl StatsRecorder {
    pub fn new(session_id: &str, model: &str) -> Self {
        Self {
            session_id: session_id.to_owned(),
            started: Instant::now(),
            started_ms: now_ms(),
            turns: 0,
            model: model.to_owned(),
            models: Vec::new(),
            tools: BTreeMap::new(),
            decisions: ToolDecisions::default(),
            asked: HashSet::new(),
        }
    }

    /// Starts counting again for the conversation `session_id` (`/clear`).
    pub fn reset(&mut self, session_id: &str) {
        *self = Self::new(session_id, &self.model);
    }

    /// Updates the counters from one event.
    pub fn record(&mut self, event: &Event) {
        match event {
            Event::TurnStarted { .. } => self.turns += 1,
            Event::Usage {
                model,
                latency_ms,
                usage,
            } => {
                self.model = model.clone();
                let stats = self.model_stats(model);
                stats.requests += 1;
                stats.latency_ms += latency_ms;
                stats.prompt_tokens += usage.prompt_tokens;
                stats.cached_tokens += usage.cached_tokens;
                stats.output_tokens += usage.output_tokens;
                stats.thoughts_tokens += usage.thoughts_tokens;
                stats.tool_tokens += usage.tool_tokens;
                stats.total_tokens += usage.total_tokens;
            }
            Event::Retrying { reason, .. } => self.model_error(reason),
            Event::Error {
                status: Some(status),
                ..
            } => self.model_error(&status.to_string()),
            Event::ToolConfirmationRequest { call_id, .. } => {
                self.asked.insert(call_id.clone());
            }
            Event::ToolCallResponse {
                call_id,
                name,
                status,
                duration_ms,
                modified,
                ..
            } => {
                let tool = self
                    .tools
                    .entry(name.clone())
                    .or_insert_with(|| ToolNameStats {
                        name: name.clone(),
                        ..ToolNameStats::default()
                    });
                tool.calls += 1;
                tool.duration_ms += duration_ms;
                match status {
                    ToolCallStatus::Success => tool.success += 1,
                    ToolCallStatus::Error => tool.failed += 1,
                    ToolCallStatus::Cancelled => {
                        tool.failed += 1;
                        tool.cancelled += 1;
                    }
                }
                let decisions = &mut self.decisions;
                if !self.asked.remove(call_id) {
                    decisions.auto_accept += 1;
                } else if *modified {
                    decisions.modify += 1;
                } else if *status == ToolCallStatus::Cancelled {
                    decisions.reject += 1;
                } else {
                    decisions.accept += 1;
                }
            }
            _ => {}
        }
    }

    /// A failed request of the current model, by kind.
    fn model_error(&mut self, kind: &str) {
        let model = self.model.clone();
        let stats = self.model_stats(&model);
        stats.errors += 1;
        let key: String = kind.chars().take(80).collect();
        *stats.errors_by_type.entry(key).or_default() += 1;
    }

    fn model_stats(&mut self, model: &str) -> &mut ModelStats {
        let index = match self.models.iter().position(|m| m.model == model) {
            Some(index) => index,
            None => {
                self.models.push(ModelStats {
                    model: model.to_owned(),
                    ..ModelStats::default()
                });
                self.models.len() - 1
            }
        };
        &mut self.models[index]
    }

    /// The statistics as of now.
    pub fn snapshot(&self) -> SessionStats {
        let mut by_name: Vec<ToolNameStats> = self.tools.values().cloned().collect();
        by_name.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
        let tools = ToolStats {
            calls: by_name.iter().map(|t| t.calls).sum(),
            success: by_name.iter().map(|t| t.success).sum(),
            failed: by_name.iter().map(|t| t.failed).sum(),
            duration_ms: by_name.iter().map(|t| t.duration_ms).sum(),
            decisions: self.decisions,
            by_name,
        };
        SessionStats {
            session_id: self.session_id.clone(),
            started_ms: self.started_ms,
            duration_ms: self.started.elapsed().as_millis() as u64,
            turns: self.turns,
            api_time_ms: self.models.iter().map(|m| m.latency_ms).sum(),
            tool_time_ms: tools.duration_ms,
            models: self.models.clone(),
            tools,
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_protocol::Usage;

    fn response(call_id: &str, name: &str, status: ToolCallStatus) -> Event {
        response_modified(call_id, name, status, false)
    }

    fn response_modified(
        call_id: &str,
        name: &str,
        status: ToolCallStatus,
        modified: bool,
    ) -> Event {
        Event::ToolCallResponse {
            call_id: call_id.into(),
            name: name.into(),
            status,
            display: None,
            error: None,
            duration_ms: 5,
            output: None,
            exit_code: None,
            declined: false,
            modified,
            diff: None,
            decided_by: None,
        }
    }

    fn asked(call_id: &str) -> Event {
        Event::ToolConfirmationRequest {
            call_id: call_id.into(),
            name: "replace".into(),
            details: gd_protocol::ConfirmationDetails::Info {
                title: String::new(),
                prompt: String::new(),
                urls: Vec::new(),
            },
        }
    }

    #[test]
    fn counts_models_tools_and_decisions() {
        let mut stats = StatsRecorder::new("s1", "gemini-2.5-flash");
        stats.record(&Event::TurnStarted {
            turn_id: "t".into(),
        });
        stats.record(&Event::Usage {
            model: "gemini-2.5-flash".into(),
            latency_ms: 40,
            usage: Usage {
                prompt_tokens: 100,
                output_tokens: 7,
                total_tokens: 117,
                cached_tokens: 30,
                thoughts_tokens: 10,
                tool_tokens: 0,
            },
        });
        stats.record(&Event::Retrying {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 1,
            reason: "503".into(),
        });
        stats.record(&response("a", "read_file", ToolCallStatus::Success));
        stats.record(&asked("b"));
        stats.record(&response("b", "replace", ToolCallStatus::Cancelled));
        stats.record(&asked("c"));
        stats.record(&response_modified(
            "c",
            "replace",
            ToolCallStatus::Success,
            true,
        ));
        stats.record(&asked("d"));
        stats.record(&response("d", "replace", ToolCallStatus::Error));

        let s = stats.snapshot();
        assert_eq!((s.session_id.as_str(), s.turns), ("s1", 1));
        assert_eq!(s.models.len(), 1);
        let m = &s.models[0];
        assert_eq!(
            (m.requests, m.errors, m.prompt_tokens, m.cached_tokens),
            (1, 1, 100, 30)
        );
        assert_eq!(
            (m.output_tokens, m.thoughts_tokens, m.total_tokens),
            (7, 10, 117)
        );
        assert_eq!((s.api_time_ms, s.tool_time_ms), (40, 20));
        assert_eq!((s.tools.calls, s.tools.success, s.tools.failed), (4, 2, 2));
        assert_eq!(
            s.tools.decisions,
            ToolDecisions {
                accept: 1,
                reject: 1,
                modify: 1,
                auto_accept: 1
            }
        );
        assert_eq!(s.tools.by_name[0].name, "replace");
        assert_eq!(s.tools.by_name[0].calls, 3);

        stats.reset("s2");
        let s = stats.snapshot();
        assert_eq!(
            (s.session_id.as_str(), s.turns, s.tools.calls),
            ("s2", 0, 0)
        );
        assert!(s.models.is_empty());
    }
}
