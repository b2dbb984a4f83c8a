//! Where a recorder's store is: open, still to be opened, or committing the
//! running turn's prompt while its request is in flight.
//!
//! A new run on a fresh HOME creates the history database (schema, WAL,
//! several fsyncs: ~20 ms on a VM disk), and every run commits its prompt.
//! Neither has to happen before the request is sent, only before the model's
//! answer is handled. A deferred store is therefore opened (the session
//! created in it) and the prompt committed in one blocking task that starts
//! once the request has gone out ([`gd_gemini::sent`]; it does not compete
//! with building and sending it), and [`super::HistoryRecorder::settle`],
//! which the chat awaits before it handles the first piece of the answer,
//! waits for that task. An open store commits the prompt at once, while the
//! request is being sent. A crash in between loses a prompt whose answer
//! nobody saw.

use futures::future::select;
use gd_gemini::sent::Sent;
use gd_store::{MessageRef, NewMessage, NewSession, Store, StoreError};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::HistoryError;

/// What opens the store of a [`super::HistoryRecorder::start_deferred`]
/// recorder, on the blocking pool.
pub type StoreOpener = Box<dyn FnOnce() -> Result<Store, StoreError> + Send + Sync>;

/// What runs on the store once the session is created in it (e.g. the
/// retention, which keeps the running session), on the blocking pool:
/// warnings to show the user.
pub type AfterStart = Box<dyn FnOnce(&Store) -> Vec<String> + Send + Sync>;

/// A store still to be opened, and what to do when it is.
pub(super) struct Deferred {
    opener: StoreOpener,
    session: NewSession,
    after: AfterStart,
}

impl Deferred {
    /// Opens the store, creates the session in it and runs `after`.
    fn run(self) -> Result<Opened, HistoryError> {
        let store = (self.opener)()?;
        store.create_session(&self.session)?;
        let notes = (self.after)(&store);
        Ok(Opened { store, notes })
    }
}

/// The store once opened, with the warnings the opening gave.
pub(super) struct Opened {
    pub store: Store,
    pub notes: Vec<String>,
}

/// A prompt commit that ran: the store (or why it could not be opened) and
/// the prompt's outcome (none if there was no store).
pub(super) struct Committed {
    pub opened: Result<Opened, HistoryError>,
    pub prompt: Option<Result<MessageRef, HistoryError>>,
}

pub(super) enum StoreSlot {
    Ready(Store),
    /// Not opened yet.
    Deferred(Deferred),
    /// A prompt being committed (after the opening, if it was deferred).
    Committing(JoinHandle<Committed>),
    /// Opening failed or the task died: nothing is recorded any more.
    Gone,
}

/// Lets a deferred commit start: fired by the request going out, or by the
/// recorder when the answer (or the turn's end) comes first.
pub(super) struct Triggers {
    pub sent: oneshot::Receiver<()>,
    pub settle: oneshot::Receiver<()>,
}

impl StoreSlot {
    pub fn deferred(opener: StoreOpener, session: NewSession, after: AfterStart) -> Self {
        Self::Deferred(Deferred {
            opener,
            session,
            after,
        })
    }

    /// Opens a deferred store now, on the blocking pool.
    pub async fn open_now(deferred: Deferred) -> Result<Opened, HistoryError> {
        tokio::task::spawn_blocking(move || deferred.run())
            .await
            .unwrap_or_else(|e| Err(HistoryError::Task(e.to_string())))
    }

    /// Starts committing a prompt (`title` set on the session if it has
    /// none): at once on an open store, after `triggers` on a deferred one.
    /// Returns the new slot; `Gone` stays `Gone` and the prompt is not
    /// recorded. The caller settles a running commit before starting
    /// another.
    pub fn commit_prompt(
        self,
        message: NewMessage,
        title: String,
        session_id: String,
        triggers: Triggers,
    ) -> Self {
        let append = move |store: &Store| -> Result<MessageRef, HistoryError> {
            let r = store.append_message(&session_id, &message)?;
            if !title.is_empty() {
                store.set_title_if_empty(&session_id, &title)?;
            }
            Ok(r)
        };
        match self {
            Self::Ready(store) => Self::Committing(tokio::task::spawn_blocking(move || {
                let prompt = append(&store);
                Committed {
                    opened: Ok(Opened {
                        store,
                        notes: Vec::new(),
                    }),
                    prompt: Some(prompt),
                }
            })),
            Self::Deferred(deferred) => Self::Committing(tokio::spawn(async move {
                // Either one, fired or dropped, starts the work.
                let _ = select(triggers.sent, triggers.settle).await;
                tokio::task::spawn_blocking(move || match deferred.run() {
                    Ok(opened) => {
                        let prompt = append(&opened.store);
                        Committed {
                            opened: Ok(opened),
                            prompt: Some(prompt),
                        }
                    }
                    Err(e) => Committed {
                        opened: Err(e),
                        prompt: None,
                    },
                })
                .await
                .unwrap_or_else(|e| Committed {
                    opened: Err(HistoryError::Task(e.to_string())),
                    prompt: None,
                })
            })),
            busy @ Self::Committing(_) => busy,
            Self::Gone => Self::Gone,
        }
    }
}

/// A new trigger pair: the [`Sent`] for the request and the recorder's own.
pub(super) fn triggers() -> (Sent, oneshot::Sender<()>, Triggers) {
    let (sent_tx, sent) = oneshot::channel();
    let (settle_tx, settle) = oneshot::channel();
    (sent_tx, settle_tx, Triggers { sent, settle })
}
