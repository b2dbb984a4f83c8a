//! Agent sessions of the window: each one is a core session whose events are
//! forwarded, in order, to the `Channel` the UI passed to `start_session`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use gd_core::launch::{self, LaunchError, LaunchOptions};
use gd_core::{Session, SessionHandle};
use gd_protocol::{CommandError, CommandErrorKind, Event, Op, SessionInfo};
use tauri::ipc::Channel;
use tracing::{Instrument, debug, info_span, warn};

/// The running sessions, by id.
#[derive(Debug, Default)]
pub struct Sessions {
    handles: Mutex<HashMap<String, SessionHandle>>,
}

impl Sessions {
    /// Starts a session on `workspace` and streams its events into `channel`.
    /// Must be called from within the async runtime (an async command).
    pub fn start(
        &self,
        workspace: &Path,
        channel: Channel<Event>,
    ) -> Result<SessionInfo, CommandError> {
        let launch = launch::prepare(LaunchOptions {
            workspace: workspace.to_path_buf(),
            // Until the app can show confirmations, only tools that need none
            // are offered, exactly as for the headless CLI.
            interactive: false,
            surface: "desktop".into(),
            ..LaunchOptions::default()
        })
        .map_err(|e| match e {
            LaunchError::Auth(m) => CommandError::new(CommandErrorKind::Auth, m),
            LaunchError::Config(m) => CommandError::new(CommandErrorKind::Config, m),
            LaunchError::Input(m) => CommandError::new(CommandErrorKind::Input, m),
        })?;
        let info = SessionInfo {
            session_id: launch.config.session_id.clone(),
            model: launch.config.model.clone(),
            auth: launch.client.backend().kind().to_owned(),
            warnings: launch.warnings.clone(),
        };
        let (handle, mut events) =
            Session::spawn(launch.config, launch.client, launch.tools, launch.policy);
        let span = info_span!("forward_events", session_id = %info.session_id);
        tauri::async_runtime::spawn(
            async move {
                while let Some(event) = events.recv().await {
                    if let Err(error) = channel.send(event) {
                        warn!(%error, "the window stopped listening; dropping the session");
                        break;
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
        handle.submit(op).map_err(|_| unknown(session_id))
    }

    /// Interrupts and forgets a session.
    pub fn stop(&self, session_id: &str) -> Result<(), CommandError> {
        let handle = self
            .lock()
            .remove(session_id)
            .ok_or_else(|| unknown(session_id))?;
        handle.interrupt();
        let _ = handle.submit(Op::Shutdown);
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionHandle>> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn unknown(session_id: &str) -> CommandError {
    CommandError::new(
        CommandErrorKind::UnknownSession,
        format!("No running session {session_id}"),
    )
}
