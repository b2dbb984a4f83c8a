//! Agent sessions of the window: each one is a core session whose events are
//! forwarded, in order, to the `Channel` the UI passed to `start_session`
//! (answer text coalesced by gd-core's [`CoalescedEvents`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use gd_core::coalesce::{CoalescedEvents, DELTA_WINDOW};
use gd_core::launch::{self, LaunchError, LaunchOptions};
use gd_core::{Session, SessionError, SessionHandle};
use gd_protocol::{CommandError, CommandErrorKind, Event, Op, SessionInfo};
use tauri::ipc::Channel;
use tracing::{Instrument, debug, info_span, warn};

use crate::history::History;

/// The running sessions, by id.
#[derive(Default)]
pub struct Sessions {
    running: Mutex<HashMap<String, SessionHandle>>,
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
        let span = info_span!("forward_events", session_id = %info.session_id);
        tauri::async_runtime::spawn(
            async move {
                // Each event costs the webview a script evaluation: answer text is joined
                // into about one event per frame.
                let mut events = CoalescedEvents::new(events, DELTA_WINDOW);
                while let Some(event) = events.recv().await {
                    if let Err(error) = channel.send(event) {
                        warn!(%error, "the window stopped listening; dropping the session");
                        return;
                    }
                }
                debug!("event stream ended");
            }
            .instrument(span),
        );
        self.lock().insert(info.session_id.clone(), handle);
        Ok(info)
    }

    /// Sends an operation to a session.
    pub fn submit(&self, session_id: &str, op: Op) -> Result<(), CommandError> {
        let handle = self
            .lock()
            .get(session_id)
            .cloned()
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
        running.interrupt();
        let _ = running.submit(Op::Shutdown);
        Ok(())
    }

    /// Stops every session (when the window switches folders).
    pub fn stop_all(&self) {
        for (_, running) in self.lock().drain() {
            running.interrupt();
            let _ = running.submit(Op::Shutdown);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionHandle>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn unknown(session_id: &str) -> CommandError {
    CommandError::new(
        CommandErrorKind::UnknownSession,
        format!("No running session {session_id}"),
    )
}
