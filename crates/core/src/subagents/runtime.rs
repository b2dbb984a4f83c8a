//! What a session lends its subagents: the agent catalog, the scheduler
//! (same policy, same confirmations, same checkpoints), the model client,
//! and the subagents running now (so `Op::CancelSubagent` can stop one) and
//! the transcripts of those that finished (taken by the scheduler into the
//! parent call's history record).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gd_gemini::GeminiClient;
use gd_protocol::SubagentTranscript;
use tokio_util::sync::CancellationToken;

use super::AgentCatalog;
use crate::config::SessionConfig;
use crate::scheduler::Scheduler;

/// One per session, shared by the `invoke_agent` tool (through
/// [`crate::tools::ToolServices::subagents`]) and the op loop.
pub struct SubagentRuntime {
    pub catalog: Arc<AgentCatalog>,
    pub(crate) scheduler: Scheduler,
    pub(crate) client: GeminiClient,
    pub(crate) config: SessionConfig,
    pub running: Arc<RunningSubagents>,
    /// The session's context files (GEMINI.md) as loaded at its start: an
    /// agent's system prompt carries them too, as in 0.61.
    pub(crate) memory: String,
    transcripts: Mutex<HashMap<String, SubagentTranscript>>,
}

impl std::fmt::Debug for SubagentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubagentRuntime")
            .field("agents", &self.catalog.all().len())
            .finish_non_exhaustive()
    }
}

impl SubagentRuntime {
    pub(crate) fn new(
        config: SessionConfig,
        scheduler: Scheduler,
        client: GeminiClient,
        running: Arc<RunningSubagents>,
    ) -> Self {
        Self {
            catalog: config.agents.clone(),
            scheduler,
            client,
            config,
            running,
            memory: String::new(),
            transcripts: Mutex::default(),
        }
    }

    /// The same runtime, whose agents also read `memory` (the session's
    /// context files).
    pub(crate) fn with_memory(mut self, memory: &str) -> Self {
        memory.clone_into(&mut self.memory);
        self
    }

    /// Keeps a finished run's transcript for the parent call's record.
    pub(crate) fn keep_transcript(&self, parent_call_id: &str, transcript: SubagentTranscript) {
        self.transcripts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(parent_call_id.to_owned(), transcript);
    }

    /// The transcript of the subagent `parent_call_id` ran, once (the
    /// scheduler puts it on the call's [`crate::scheduler::ShownResult`]).
    pub fn take_transcript(&self, parent_call_id: &str) -> Option<SubagentTranscript> {
        self.transcripts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(parent_call_id)
    }
}

/// The subagents running now, by the parent's `invoke_agent` call id.
#[derive(Debug, Default)]
pub struct RunningSubagents {
    tokens: Mutex<HashMap<String, CancellationToken>>,
}

impl RunningSubagents {
    pub(crate) fn start(&self, parent_call_id: &str, token: CancellationToken) {
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(parent_call_id.to_owned(), token);
    }

    pub(crate) fn finish(&self, parent_call_id: &str) {
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(parent_call_id);
    }

    /// Stops the subagent of `parent_call_id` (`Op::CancelSubagent`);
    /// `false` when none runs under that call.
    pub fn cancel(&self, parent_call_id: &str) -> bool {
        let token = self
            .tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(parent_call_id)
            .cloned();
        match token {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}
