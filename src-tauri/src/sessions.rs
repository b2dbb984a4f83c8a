//! Agent sessions of the window: each one is a core session whose events are
//! forwarded, in order, to the `Channel` the UI passed to `start_session`
//! (answer text coalesced by gd-core's [`CoalescedEvents`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use gd_core::coalesce::{CoalescedEvents, DELTA_WINDOW};
use gd_core::launch::{self, LaunchError, LaunchOptions};
use gd_core::{Session, SessionError, SessionHandle};
use gd_protocol::{CommandError, CommandErrorKind, Event, Op, SessionInfo};
use tauri::ipc::Channel;
use tracing::{Instrument, debug, info_span, warn};

use crate::history::History;

/// One running session: its handle, what `start_session` answered, and where its events go.
struct Running {
    handle: SessionHandle,
    info: SessionInfo,
    /// The window's channel its events are forwarded to; replaced when the conversation moves
    /// to another window ([`Sessions::attach`]).
    sink: Arc<Sink>,
}

/// Where a session's events go, and the last `turn_context` (the model and approval mode in
/// force), which a window taking the session over is told first.
struct Sink {
    channel: Mutex<Channel<Event>>,
    turn_context: Mutex<Option<Event>>,
    /// The pending end-of-turn review (`turn_review` until `turn_review_applied`), shown again
    /// to a window taking the session over.
    turn_review: Mutex<Option<Event>>,
}

/// The running sessions, by id.
#[derive(Default)]
pub struct Sessions {
    running: Mutex<HashMap<String, Running>>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("count", &self.lock().len())
            .finish()
    }
}

impl Sessions {
    /// Starts a session on `workspace` and streams its events into `channel`.
    /// Must be called from within the async runtime (an async command).
    ///
    /// The session is recorded into `history`; with `resume` (a stored
    /// session's id) it continues that session, whose id it takes and whose
    /// history the model sees. A history that cannot be opened leaves a new
    /// session unrecorded (with a warning) rather than unusable; a session
    /// that cannot be resumed is an error.
    pub async fn start(
        &self,
        workspace: &Path,
        model: Option<String>,
        resume: Option<String>,
        history: &History,
        channel: Channel<Event>,
    ) -> Result<SessionInfo, CommandError> {
        let mut launch = launch::prepare(LaunchOptions {
            workspace: workspace.to_path_buf(),
            model,
            // The window answers confirmations, so every tool is offered and
            // the policy decides per call whether to ask.
            interactive: true,
            surface: "desktop".into(),
            ..LaunchOptions::default()
        })
        .map_err(|e| match e {
            LaunchError::Auth(m) => CommandError::new(CommandErrorKind::Auth, m),
            LaunchError::Config(m) => CommandError::new(CommandErrorKind::Config, m),
            LaunchError::Input(m) => CommandError::new(CommandErrorKind::Input, m),
            // Only headless launches stop for an untrusted folder.
            LaunchError::Untrusted(m) => CommandError::new(CommandErrorKind::Config, m),
        })?;
        let recorder = match history
            .recorder(&mut launch.config, resume.as_deref())
            .await
        {
            Ok(recorder) => Some(recorder),
            Err(error) if resume.is_some() => return Err(error),
            Err(error) => {
                warn!(%error, "this session is not recorded");
                launch.warnings.push(format!(
                    "This session is not saved to the history: {}",
                    error.message
                ));
                None
            }
        };
        if recorder.is_some() {
            let keep = Some(launch.config.session_id.clone());
            let setting = launch.settings.general.session_retention.as_ref();
            if let Err(error) = history.apply_retention(setting, keep).await {
                launch
                    .warnings
                    .push(format!("Session retention failed: {}", error.message));
            }
        }
        // Remembered below, once the warnings are on their way to the window.
        let unseen_hooks = launch.unseen_hooks.take();
        let info = SessionInfo {
            session_id: launch.config.session_id.clone(),
            model: launch.config.model.clone(),
            auth: launch.client.backend().kind().to_owned(),
            approval_mode: launch.policy.mode(),
            workspace: launch.config.workspace_dirs[0].display().to_string(),
            warnings: launch.warnings.clone(),
        };
        let (handle, events) = Session::spawn_recorded(
            launch.config,
            launch.client,
            launch.tools,
            launch.policy,
            recorder,
        );
        let sink = Arc::new(Sink {
            channel: Mutex::new(channel),
            turn_context: Mutex::new(None),
            turn_review: Mutex::new(None),
        });
        let forward = sink.clone();
        let span = info_span!("forward_events", session_id = %info.session_id);
        tauri::async_runtime::spawn(
            async move {
                // Each event costs the webview a script evaluation: answer text is joined
                // into about one event per frame.
                let mut events = CoalescedEvents::new(events, DELTA_WINDOW);
                while let Some(event) = events.recv().await {
                    if matches!(event, Event::TurnContext { .. }) {
                        *lock(&forward.turn_context) = Some(event.clone());
                    }
                    match event {
                        Event::TurnReview { .. } => {
                            *lock(&forward.turn_review) = Some(event.clone())
                        }
                        Event::TurnReviewApplied { .. } => *lock(&forward.turn_review) = None,
                        _ => {}
                    }
                    let channel = lock(&forward.channel).clone();
                    if let Err(error) = channel.send(event) {
                        warn!(%error, "the window stopped listening; dropping the session");
                        return;
                    }
                }
                debug!("event stream ended");
            }
            .instrument(span),
        );
        self.lock().insert(
            info.session_id.clone(),
            Running {
                handle,
                info: info.clone(),
                sink,
            },
        );
        // The window shows `info.warnings`, the new hooks' among them.
        if let Some(hooks) = unseen_hooks {
            hooks.remember();
        }
        Ok(info)
    }

    /// Sends a running session's events to `channel` from now on (the conversation moved to
    /// another window) and returns what its start answered. The new window first gets the
    /// session's current `turn_context` (model, approval mode, review mode) and any pending
    /// end-of-turn review; the rest it asks for (the
    /// transcript from the history, the model list, MCP status) as after a start.
    pub fn attach(
        &self,
        session_id: &str,
        channel: Channel<Event>,
    ) -> Result<SessionInfo, CommandError> {
        let running = self.lock();
        let running = running.get(session_id).ok_or_else(|| unknown(session_id))?;
        let replay = [
            lock(&running.sink.turn_context).clone(),
            lock(&running.sink.turn_review).clone(),
        ];
        for event in replay.into_iter().flatten() {
            if let Err(error) = channel.send(event) {
                warn!(%error, "the new window is not listening");
            }
        }
        *lock(&running.sink.channel) = channel;
        Ok(running.info.clone())
    }

    /// Whether `session_id` is running.
    pub fn is_running(&self, session_id: &str) -> bool {
        self.lock().contains_key(session_id)
    }

    /// Sends an operation to a session.
    pub fn submit(&self, session_id: &str, op: Op) -> Result<(), CommandError> {
        let handle = self
            .lock()
            .get(session_id)
            .map(|r| r.handle.clone())
            .ok_or_else(|| unknown(session_id))?;
        handle.submit(op).map_err(|e| match e {
            SessionError::Closed => unknown(session_id),
            other @ SessionError::NoSuchConfirmation(_) => {
                CommandError::new(CommandErrorKind::Input, other.to_string())
            }
        })
    }

    /// Interrupts and forgets a session.
    pub fn stop(&self, session_id: &str) -> Result<(), CommandError> {
        let running = self
            .lock()
            .remove(session_id)
            .ok_or_else(|| unknown(session_id))?;
        running.handle.interrupt();
        let _ = running.handle.submit(Op::Shutdown);
        Ok(())
    }

    /// Stops every session (when the window switches folders).
    pub fn stop_all(&self) {
        for (_, running) in self.lock().drain() {
            running.handle.interrupt();
            let _ = running.handle.submit(Op::Shutdown);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        lock(&self.running)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn unknown(session_id: &str) -> CommandError {
    CommandError::new(
        CommandErrorKind::UnknownSession,
        format!("No running session {session_id}"),
    )
}
