//! The operations that change the conversation (a turn, `/clear`,
//! `/compress`, checkpoints, memory). Each runs as its own task that owns
//! the [`Agent`] while it runs and hands it back when done, so the op loop
//! keeps taking operations meanwhile; they run one at a time, in the order
//! they were submitted.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use gd_protocol::{Event, InputItem};
use tokio_util::sync::CancellationToken;
use tracing::warn;

use crate::agent::{Agent, TurnInput};
use crate::checkpoint::SessionCheckpoints;
use crate::events::EventSink;
use crate::restore::{RestoreChoice, RestoreError};
use crate::stats::StatsRecorder;

/// An operation that waits for the conversation: queued behind a running
/// one.
#[derive(Debug)]
pub(super) enum ConversationOp {
    UserTurn {
        items: Vec<InputItem>,
    },
    McpRunPrompt {
        server: String,
        name: String,
        arguments: BTreeMap<String, String>,
    },
    Clear,
    Compress,
    ListCheckpoints,
    RestoreCheckpoint {
        checkpoint_id: String,
        choice: RestoreChoice,
    },
    RefreshMemory,
    AddMemory {
        text: String,
    },
    RevertEdit(crate::revert::RevertRequest),
    ApplyTurnReview {
        decisions: Vec<gd_protocol::ReviewDecision>,
    },
    /// The session began (`startup`) or was reopened (`resume`): the
    /// SessionStart hooks run before anything else.
    SessionStart {
        source: &'static str,
    },
}

/// What the tasks share with the op loop.
#[derive(Clone)]
pub(super) struct TaskEnv {
    pub sink: EventSink,
    pub checkpoints: Option<Arc<SessionCheckpoints>>,
    pub stats: Arc<Mutex<StatsRecorder>>,
}

/// Runs one conversation operation and hands the agent back. `turn_id` names a turn's events;
/// `cancel` is what `Op::Interrupt` cancels.
pub(super) async fn run(
    mut agent: Agent,
    op: ConversationOp,
    turn_id: String,
    cancel: CancellationToken,
    env: TaskEnv,
) -> Agent {
    let sink = &env.sink;
    let input = match op {
        ConversationOp::UserTurn { items } => TurnInput::Items(items),
        ConversationOp::McpRunPrompt {
            server,
            name,
            arguments,
        } => TurnInput::McpPrompt {
            server,
            name,
            arguments,
        },
        ConversationOp::SessionStart { source } => {
            agent.session_start_hook(source, sink).await;
            return agent;
        }
        ConversationOp::Clear => {
            agent.session_end_hook("clear", sink).await;
            let id = agent.clear(sink).await;
            agent.session_start_hook("clear", sink).await;
            env.stats
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .reset(&id);
            sink.emit(Event::ConversationCleared { session_id: id });
            return agent;
        }
        ConversationOp::Compress => {
            agent.compress_now(&cancel, sink).await;
            return agent;
        }
        ConversationOp::ListCheckpoints => {
            list_checkpoints(env.checkpoints.as_ref(), sink).await;
            return agent;
        }
        ConversationOp::RestoreCheckpoint {
            checkpoint_id,
            choice,
        } => {
            restore_checkpoint(
                &mut agent,
                env.checkpoints.as_ref(),
                checkpoint_id,
                choice,
                sink,
            )
            .await;
            return agent;
        }
        ConversationOp::RefreshMemory => {
            refresh_memory(&mut agent, sink).await;
            return agent;
        }
        ConversationOp::AddMemory { text } => {
            add_memory(&mut agent, &text, sink).await;
            return agent;
        }
        ConversationOp::RevertEdit(request) => {
            crate::revert::revert_edit(&mut agent, env.checkpoints.as_ref(), request, sink).await;
            return agent;
        }
        ConversationOp::ApplyTurnReview { decisions } => {
            agent
                .apply_review(decisions, env.checkpoints.as_ref(), sink)
                .await;
            return agent;
        }
    };
    agent.run_turn(&turn_id, input, cancel, sink).await;
    agent
}

/// `Op::AddMemory`: remembers `text` in the global `GEMINI.md`, then
/// refreshes the memory.
async fn add_memory(agent: &mut Agent, text: &str, sink: &EventSink) {
    // The home the memory is read from (a test's stand-in, or `$HOME`).
    let home = agent
        .config
        .memory
        .as_ref()
        .and_then(|m| m.home.clone())
        .or_else(crate::launch::home_dir);
    let added = match home {
        Some(home) => crate::memory::add_global_memory(&home, text),
        None => Err("Cannot find the home directory to save the memory.".to_owned()),
    };
    match added {
        Ok(_) => refresh_memory(agent, sink).await,
        Err(message) => sink.emit(Event::Warning { message }),
    }
}

async fn list_checkpoints(checkpoints: Option<&Arc<SessionCheckpoints>>, sink: &EventSink) {
    let Some(checkpoints) = checkpoints else {
        sink.emit(Event::Checkpoints {
            checkpoints: Vec::new(),
        });
        return;
    };
    match checkpoints.list().await {
        Ok(list) => sink.emit(Event::Checkpoints { checkpoints: list }),
        Err(e) => sink.emit(Event::CheckpointError {
            checkpoint_id: None,
            message: format!("Cannot list the checkpoints: {e}"),
        }),
    }
}

/// `Op::RestoreCheckpoint`: the code, the conversation or both (see
/// [`crate::restore`]); the conversation is rewound in the stored history
/// and in the model's context.
async fn restore_checkpoint(
    agent: &mut Agent,
    checkpoints: Option<&Arc<SessionCheckpoints>>,
    checkpoint_id: String,
    choice: RestoreChoice,
    sink: &EventSink,
) {
    let result = match checkpoints {
        None => Err(RestoreError::CheckpointsOff),
        Some(checkpoints) => {
            let store = match agent.history.as_mut() {
                Some(history) => history.store().await,
                None => None,
            };
            let session_id = agent.config.session_id.clone();
            crate::restore::restore(
                checkpoints.checkpointer().repo(),
                &checkpoint_id,
                choice,
                Some(&session_id),
                store.as_ref(),
                async |point| agent.rewind(&point.message_id).await,
            )
            .await
        }
    };
    match result {
        Ok(restored) => sink.emit(Event::CheckpointRestored {
            checkpoint_id: restored.checkpoint_id,
            files: restored.files,
            undo_checkpoint_id: restored.undo_checkpoint_id,
            conversation: restored.conversation,
        }),
        Err(error) => {
            warn!(%error, checkpoint_id, "restore failed");
            sink.emit(Event::CheckpointError {
                checkpoint_id: Some(checkpoint_id),
                message: error.to_string(),
            })
        }
    }
}

/// Reads the context files again and puts them into the system instruction
/// of the next request; reports them with [`Event::MemoryLoaded`].
async fn refresh_memory(agent: &mut Agent, sink: &EventSink) {
    let options = agent.config.memory.clone().unwrap_or_else(|| {
        // A session configured without memory discovery still reloads the
        // global file, so `/memory add` shows up.
        crate::memory::DiscoveryOptions {
            workspace: agent.config.workspace_dirs[0].clone(),
            home: crate::launch::home_dir(),
            file_names: vec![crate::memory::DEFAULT_CONTEXT_FILE_NAME.to_owned()],
            max_dirs: crate::memory::DEFAULT_MAX_DIRS,
            filtering: agent.config.file_filtering,
            workspace_files: agent.config.workspace_trusted,
            boundary_markers: None,
            include_directories: false,
        }
    });
    let dirs = agent.config.workspace_dirs.clone();
    let loaded =
        tokio::task::spawn_blocking(move || crate::memory::load_memory(&options, &dirs)).await;
    match loaded {
        Ok(memory) => {
            agent
                .chat
                .set_system_prompt(&crate::memory::system_prompt_with_memory(
                    &agent.config.system_prompt,
                    &memory.text,
                ));
            for event in memory.events() {
                sink.emit(event);
            }
        }
        Err(error) => sink.emit(Event::Warning {
            message: format!("Refreshing the memory failed: {error}"),
        }),
    }
}
