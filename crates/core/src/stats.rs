//! `/stats`: what a session used, counted from the events it emits and
//! nothing else (the session's [`crate::events::EventSink`] shows each one
//! to a [`StatsRecorder`] before the frontend gets it).

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use gd_protocol::{
    ConfirmationDetails, Event, FileStats, ModelStats, RequestRole, RoleStats, SessionStats,
    ToolCallStatus, ToolDecisions, ToolNameStats, ToolStats, TurnRow, Usage,
};

/// What a resumed session's statistics start from (rebuilt from its records
/// by `history::resumed`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ResumedUsage {
    /// The conversation's statistics (none when nothing was ever used).
    pub stats: Option<SessionStats>,
    /// Each stored turn, oldest first.
    pub rows: Vec<TurnRow>,
}

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
    files: FileStats,
    /// Each turn's status and usage (a resumed conversation's stored ones first).
    turn_rows: Vec<TurnRow>,
    /// Wall time of the conversation before this session resumed it.
    earlier_ms: u64,
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
            files: FileStats::default(),
            turn_rows: Vec::new(),
            earlier_ms: 0,
        }
    }

    /// Continues counting from a resumed conversation's usage: its
    /// statistics as of its last turn and its turns' rows.
    pub fn seed(&mut self, resumed: ResumedUsage) {
        self.turn_rows = resumed.rows;
        let Some(stats) = resumed.stats else {
            return;
        };
        if stats.started_ms > 0 {
            self.started_ms = stats.started_ms;
        }
        self.earlier_ms = stats.duration_ms;
        self.turns = stats.turns;
        if let Some(last) = stats.models.last() {
            self.model.clone_from(&last.model);
        }
        self.models = stats.models;
        self.tools = stats
            .tools
            .by_name
            .into_iter()
            .map(|t| (t.name.clone(), t))
            .collect();
        self.decisions = stats.tools.decisions;
        self.files = stats.files;
    }

    /// Starts counting again for the conversation `session_id` (`/clear`).
    pub fn reset(&mut self, session_id: &str) {
        *self = Self::new(session_id, &self.model);
    }

    /// Updates the counters from one event.
    pub fn record(&mut self, event: &Event) {
        match event {
            // A subagent's requests and tool calls count as the session's
            // (its usage carries the `subagent` role).
            Event::Subagent { event, .. } => self.record(event),
            Event::TurnStarted { .. } => self.turns += 1,
            Event::TurnComplete { status, usage, .. } => self.turn_rows.push(TurnRow {
                status: *status,
                usage: usage.clone(),
            }),
            Event::Usage {
                model,
                latency_ms,
                usage,
                role,
            } => {
                // Failures count against the model of the agent's own
                // requests, not a utility call's.
                if *role == RequestRole::Main {
                    self.model = model.clone();
                }
                let stats = self.model_stats(model);
                stats.requests += 1;
                stats.latency_ms += latency_ms;
                add_tokens(
                    [
                        &mut stats.prompt_tokens,
                        &mut stats.cached_tokens,
                        &mut stats.output_tokens,
                        &mut stats.thoughts_tokens,
                        &mut stats.tool_tokens,
                        &mut stats.total_tokens,
                    ],
                    usage,
                );
                let role_stats = role_stats(stats, *role);
                role_stats.requests += 1;
                role_stats.latency_ms += latency_ms;
                add_tokens(
                    [
                        &mut role_stats.prompt_tokens,
                        &mut role_stats.cached_tokens,
                        &mut role_stats.output_tokens,
                        &mut role_stats.thoughts_tokens,
                        &mut role_stats.tool_tokens,
                        &mut role_stats.total_tokens,
                    ],
                    usage,
                );
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
                diff,
                ..
            } => {
                if *status == ToolCallStatus::Success
                    && let Some(ConfirmationDetails::Edit {
                        original, proposed, ..
                    }) = diff
                {
                    let (added, removed) = crate::diff::diff_stat(original.as_deref(), proposed);
                    self.files.lines_added += added;
                    self.files.lines_removed += removed;
                }
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
                for decisions in [&mut self.decisions, &mut tool.decisions] {
                    if !self.asked.contains(call_id) {
                        decisions.auto_accept += 1;
                    } else if *modified {
                        decisions.modify += 1;
                    } else if *status == ToolCallStatus::Cancelled {
                        decisions.reject += 1;
                    } else {
                        decisions.accept += 1;
                    }
                }
                self.asked.remove(call_id);
            }
            _ => {}
        }
    }

    /// A failed request of the current model (the agent's own), by kind.
    fn model_error(&mut self, kind: &str) {
        let model = self.model.clone();
        let stats = self.model_stats(&model);
        stats.errors += 1;
        let key: String = kind.chars().take(80).collect();
        *stats.errors_by_type.entry(key).or_default() += 1;
        role_stats(stats, RequestRole::Main).errors += 1;
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

    /// The statistics as of now, without the turn rows: what a turn end
    /// stores (the turn ends are the rows).
    pub fn snapshot_without_rows(&self) -> SessionStats {
        self.snapshot_rows(false)
    }

    /// The statistics as of now.
    pub fn snapshot(&self) -> SessionStats {
        self.snapshot_rows(true)
    }

    fn snapshot_rows(&self, rows: bool) -> SessionStats {
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
            duration_ms: self.earlier_ms + self.started.elapsed().as_millis() as u64,
            turns: self.turns,
            api_time_ms: self.models.iter().map(|m| m.latency_ms).sum(),
            tool_time_ms: tools.duration_ms,
            models: self.models.clone(),
            tools,
            files: self.files,
            turn_rows: if rows {
                self.turn_rows.clone()
            } else {
                Vec::new()
            },
        }
    }
}

/// Adds one request's tokens to the counters `[prompt, cached, output,
/// thoughts, tool, total]`.
fn add_tokens(counters: [&mut u64; 6], usage: &Usage) {
    let values = [
        usage.prompt_tokens,
        usage.cached_tokens,
        usage.output_tokens,
        usage.thoughts_tokens,
        usage.tool_tokens,
        usage.total_tokens,
    ];
    for (counter, value) in counters.into_iter().zip(values) {
        *counter += value;
    }
}

/// The figures of `role` within one model's, created on first use (`main`
/// kept first, as Gemini CLI lists it).
fn role_stats(stats: &mut ModelStats, role: RequestRole) -> &mut RoleStats {
    let index = match stats.roles.iter().position(|r| r.role == role) {
        Some(index) => index,
        None => {
            let fresh = RoleStats {
                role,
                ..RoleStats::default()
            };
            if role == RequestRole::Main {
                stats.roles.insert(0, fresh);
                0
            } else {
                stats.roles.push(fresh);
                stats.roles.len() - 1
            }
        }
    };
    &mut stats.roles[index]
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
            sandbox: None,
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
            role: RequestRole::Main,
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

    fn usage(model: &str, role: RequestRole, prompt: u64) -> Event {
        Event::Usage {
            model: model.into(),
            latency_ms: 10,
            usage: Usage {
                prompt_tokens: prompt,
                output_tokens: 2,
                total_tokens: prompt + 2,
                ..Usage::default()
            },
            role,
        }
    }

    #[test]
    fn counts_roles_per_model_with_main_first() {
        let mut stats = StatsRecorder::new("s", "gemini-2.5-pro");
        stats.record(&usage(
            "gemini-2.5-flash-lite",
            RequestRole::UtilityRouter,
            50,
        ));
        stats.record(&usage("gemini-2.5-flash", RequestRole::UtilityRouter, 40));
        stats.record(&usage("gemini-2.5-flash", RequestRole::Main, 100));
        stats.record(&usage("gemini-2.5-flash", RequestRole::Main, 120));
        // A failure after a utility call counts against the main model.
        stats.record(&Event::Retrying {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 1,
            reason: "429".into(),
        });
        let s = stats.snapshot();
        let flash = s.models.iter().find(|m| m.model == "gemini-2.5-flash");
        let flash = flash.expect("flash counted");
        assert_eq!(
            (flash.requests, flash.prompt_tokens, flash.errors),
            (3, 260, 1)
        );
        let roles: Vec<_> = flash
            .roles
            .iter()
            .map(|r| (r.role, r.requests, r.prompt_tokens, r.errors))
            .collect();
        assert_eq!(
            roles,
            vec![
                (RequestRole::Main, 2, 220, 1),
                (RequestRole::UtilityRouter, 1, 40, 0)
            ]
        );
        let lite = &s.models[0];
        assert_eq!(lite.roles.len(), 1);
        assert_eq!(lite.roles[0].role, RequestRole::UtilityRouter);
        assert_eq!(lite.errors, 0);
    }

    fn edit(
        call_id: &str,
        original: Option<&str>,
        proposed: &str,
        status: ToolCallStatus,
    ) -> Event {
        let mut event = response(call_id, "replace", status);
        if let Event::ToolCallResponse { diff, .. } = &mut event {
            *diff = Some(ConfirmationDetails::Edit {
                title: String::new(),
                file_path: "/w/a.txt".into(),
                file_name: "a.txt".into(),
                original: original.map(str::to_owned),
                proposed: proposed.into(),
                unified_diff: String::new(),
                side_by_side: Default::default(),
                is_new_file: original.is_none(),
            });
        }
        event
    }

    #[test]
    fn counts_lines_changed_and_decisions_per_tool() {
        let mut stats = StatsRecorder::new("s", "m");
        // A new file of 3 lines, then one line changed and one removed.
        stats.record(&edit("a", None, "1\n2\n3\n", ToolCallStatus::Success));
        stats.record(&asked("b"));
        stats.record(&edit(
            "b",
            Some("1\n2\n3\n"),
            "1\nTWO\n",
            ToolCallStatus::Success,
        ));
        // A declined edit changed nothing.
        stats.record(&asked("c"));
        stats.record(&edit("c", Some("1\n"), "9\n9\n", ToolCallStatus::Cancelled));
        stats.record(&response("d", "read_file", ToolCallStatus::Success));
        let s = stats.snapshot();
        assert_eq!(
            s.files,
            FileStats {
                lines_added: 4,
                lines_removed: 2
            }
        );
        let replace = s
            .tools
            .by_name
            .iter()
            .find(|t| t.name == "replace")
            .unwrap();
        assert_eq!(
            replace.decisions,
            ToolDecisions {
                accept: 1,
                reject: 1,
                modify: 0,
                auto_accept: 1
            }
        );
        let read = s
            .tools
            .by_name
            .iter()
            .find(|t| t.name == "read_file")
            .unwrap();
        assert_eq!(read.decisions.auto_accept, 1);
        assert_eq!(s.tools.decisions.auto_accept, 2);
    }
}
