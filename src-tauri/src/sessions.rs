//! Agent sessions of the window: each one is a core session whose events are
//! forwarded, in order, to the `Channel` the UI passed to `start_session`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gd_core::launch::{self, LaunchError, LaunchOptions};
use gd_core::policy::PolicyApproval;
use gd_core::{ApprovalMode, Session, SessionError, SessionHandle};
use gd_gemini::{Backend, GeminiClient};
use gd_protocol::{CommandError, CommandErrorKind, Event, ModelChoice, Op, SessionInfo};
use tauri::ipc::Channel;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;
use tracing::{Instrument, debug, info_span, warn};

use crate::history::History;

/// Models offered when the API cannot list them (Vertex AI, Code Assist).
const KNOWN_MODELS: &[(&str, &str)] = &[
    ("gemini-2.5-pro", "Gemini 2.5 Pro"),
    ("gemini-2.5-flash", "Gemini 2.5 Flash"),
    ("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite"),
    ("gemini-3-pro-preview", "Gemini 3 Pro (preview)"),
];

/// Answer text arriving faster than this is sent to the window in one `content_delta` per
/// window (about one per frame at 60 Hz), see [`forward_events`].
pub const DELTA_WINDOW: Duration = Duration::from_millis(16);

/// One running session and what the commands need of it.
struct Running {
    handle: SessionHandle,
    policy: Arc<PolicyApproval>,
    client: GeminiClient,
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
        let info = SessionInfo {
            session_id: launch.config.session_id.clone(),
            model: launch.config.model.clone(),
            auth: launch.client.backend().kind().to_owned(),
            approval_mode: launch.policy.mode(),
            workspace: launch.config.workspace_dirs[0].display().to_string(),
            warnings: launch.warnings.clone(),
        };
        let client = launch.client.clone();
        let policy = launch.policy.clone();
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
                let sent = forward_events(events, DELTA_WINDOW, |event| {
                    channel.send(event).map_err(|e| e.to_string())
                })
                .await;
                match sent {
                    Ok(()) => debug!("event stream ended"),
                    Err(error) => {
                        warn!(%error, "the window stopped listening; dropping the session")
                    }
                }
            }
            .instrument(span),
        );
        self.lock().insert(
            info.session_id.clone(),
            Running {
                handle,
                policy,
                client,
            },
        );
        Ok(info)
    }

    /// Sends an operation to a session.
    pub fn submit(&self, session_id: &str, op: Op) -> Result<(), CommandError> {
        let handle = self.with(session_id, |r| r.handle.clone())?;
        handle.submit(op).map_err(|e| match e {
            SessionError::Closed => unknown(session_id),
            other @ SessionError::NoSuchConfirmation(_) => {
                CommandError::new(CommandErrorKind::Input, other.to_string())
            }
        })
    }

    pub fn approval_mode(&self, session_id: &str) -> Result<ApprovalMode, CommandError> {
        self.with(session_id, |r| r.policy.mode())
    }

    /// Switches the approval mode; it applies to the next tool calls.
    pub fn set_approval_mode(
        &self,
        session_id: &str,
        mode: ApprovalMode,
    ) -> Result<(), CommandError> {
        self.with(session_id, |r| r.policy.set_mode(mode))?
            .map_err(|m| CommandError::new(CommandErrorKind::Input, m))
    }

    /// The models the session's credentials can use.
    pub async fn models(&self, session_id: &str) -> Result<Vec<ModelChoice>, CommandError> {
        let client = self.with(session_id, |r| r.client.clone())?;
        if matches!(client.backend(), Backend::GeminiApi { .. }) {
            match client.list_models().await {
                Ok(models) => {
                    let mut choices: Vec<ModelChoice> = models
                        .into_iter()
                        .filter(|m| m.name.contains("gemini"))
                        .map(|m| {
                            let name = m.name.trim_start_matches("models/").to_owned();
                            ModelChoice {
                                display_name: m.display_name.unwrap_or_else(|| name.clone()),
                                name,
                            }
                        })
                        .collect();
                    choices.sort_by(|a, b| a.name.cmp(&b.name));
                    if !choices.is_empty() {
                        return Ok(choices);
                    }
                }
                Err(error) => warn!(%error, "listing models failed; offering the known ones"),
            }
        }
        Ok(KNOWN_MODELS
            .iter()
            .map(|(name, display)| ModelChoice {
                name: (*name).into(),
                display_name: (*display).into(),
            })
            .collect())
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

    fn with<T>(&self, session_id: &str, f: impl FnOnce(&Running) -> T) -> Result<T, CommandError> {
        self.lock()
            .get(session_id)
            .map(f)
            .ok_or_else(|| unknown(session_id))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Sends a session's events to the window in order, until the session ends or `send` fails.
///
/// Consecutive `content_delta` events are coalesced: a delta goes out at once when none was
/// sent during the last `window`; deltas arriving sooner are joined and sent when that window
/// ends, or earlier when any other event comes (which is sent right after them, so order is
/// kept). A slow stream is forwarded with no added delay, and a model streaming thousands of
/// small chunks a second costs the webview at most one message per window instead of one per
/// chunk (each message is a script evaluation in the page).
pub async fn forward_events<E>(
    mut events: UnboundedReceiver<Event>,
    window: Duration,
    mut send: impl FnMut(Event) -> Result<(), E>,
) -> Result<(), E> {
    let mut pending = String::new();
    // When the last delta was sent; the next one may go at `last + window`.
    let mut last_delta: Option<Instant> = None;
    loop {
        let next = if pending.is_empty() {
            events.recv().await
        } else {
            let due = last_delta.map_or_else(Instant::now, |last| last + window);
            tokio::select! {
                biased;
                event = events.recv() => event,
                () = tokio::time::sleep_until(due) => {
                    send(Event::ContentDelta { text: std::mem::take(&mut pending) })?;
                    last_delta = Some(Instant::now());
                    continue;
                }
            }
        };
        match next {
            Some(Event::ContentDelta { text }) => {
                let now = Instant::now();
                let may_send = last_delta.is_none_or(|last| now >= last + window);
                if pending.is_empty() && may_send {
                    send(Event::ContentDelta { text })?;
                    last_delta = Some(now);
                } else {
                    pending.push_str(&text);
                }
            }
            Some(other) => {
                if !pending.is_empty() {
                    send(Event::ContentDelta {
                        text: std::mem::take(&mut pending),
                    })?;
                    last_delta = Some(Instant::now());
                }
                send(other)?;
            }
            None => {
                if !pending.is_empty() {
                    send(Event::ContentDelta { text: pending })?;
                }
                return Ok(());
            }
        }
    }
}

fn unknown(session_id: &str) -> CommandError {
    CommandError::new(
        CommandErrorKind::UnknownSession,
        format!("No running session {session_id}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc;

    fn delta(text: &str) -> Event {
        Event::ContentDelta { text: text.into() }
    }

    fn warning(message: &str) -> Event {
        Event::Warning {
            message: message.into(),
        }
    }

    async fn forward_all(events: Vec<(Duration, Event)>, window: Duration) -> Vec<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            for (pause, event) in events {
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
                tx.send(event).unwrap();
            }
        });
        let mut out = Vec::new();
        forward_events(rx, window, |event| {
            out.push(event);
            Ok::<_, ()>(())
        })
        .await
        .unwrap();
        out
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_deltas_is_joined_and_order_is_kept() {
        // One delta a millisecond for 320 ms (the timer's resolution).
        let mut events: Vec<(Duration, Event)> = (0..320)
            .map(|i| (Duration::from_millis(1), delta(&format!("{i},"))))
            .collect();
        events.push((Duration::ZERO, warning("between")));
        events.push((Duration::ZERO, delta("tail")));
        let out = forward_all(events, Duration::from_millis(16)).await;

        // The first alone, then one message per 16 ms window.
        let deltas = out
            .iter()
            .take_while(|e| matches!(e, Event::ContentDelta { .. }))
            .count();
        assert!((18..=24).contains(&deltas), "{deltas} messages: {out:?}");
        let text: String = out
            .iter()
            .filter_map(|e| match e {
                Event::ContentDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let expected: String = (0..320).map(|i| format!("{i},")).collect::<String>() + "tail";
        assert_eq!(text, expected);
        assert_eq!(
            out[deltas],
            warning("between"),
            "flushed before the next event"
        );
        assert_eq!(
            out.last(),
            Some(&delta("tail")),
            "the end flushes what is left"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn slow_deltas_go_out_one_by_one_without_delay() {
        let events = vec![
            (Duration::ZERO, delta("a")),
            (Duration::from_millis(50), delta("b")),
            (Duration::from_millis(50), delta("c")),
        ];
        let out = forward_all(events, Duration::from_millis(16)).await;
        assert_eq!(out, vec![delta("a"), delta("b"), delta("c")]);
    }

    #[tokio::test]
    async fn a_failed_send_stops_forwarding() {
        let (tx, rx) = mpsc::unbounded_channel();
        tx.send(warning("one")).unwrap();
        tx.send(warning("two")).unwrap();
        let mut calls = 0;
        let result = forward_events(rx, Duration::from_millis(16), |_| {
            calls += 1;
            Err("closed")
        })
        .await;
        assert_eq!(result, Err("closed"));
        assert_eq!(calls, 1);
    }
}
