//! A recorder whose store is opened while the first request is in flight
//! (`HistoryRecorder::start_deferred`, the headless CLI's): the request
//! does not wait for the database, and nothing of the answer is shown
//! before the prompt is committed in it, however slow the opening.

use crate::common;

use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use common::*;
use gd_core::history::HistoryRecorder;
use gd_core::tools::ToolRegistry;
use gd_core::{Session, SessionConfig};
use gd_fake_gemini::FakeGemini;
use gd_protocol::{Event, Op, TurnStatus};
use gd_store::{MessageKind, PageQuery, Store, StoreError};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

const ANSWER: &str = "The capybara is the largest rodent.";

struct Deferred {
    fake: FakeGemini,
    events: UnboundedReceiver<Event>,
    session_id: String,
    _handle: gd_core::SessionHandle,
    _ws_dir: tempfile::TempDir,
}

/// A session recorded through `opener`, which runs when the recorder
/// decides to open the store.
fn start(opener: gd_core::history::StoreOpener) -> Deferred {
    let (ws_dir, ws) = workspace();
    let fake = FakeGemini::start(json!({"steps": [{"text": ANSWER, "chunk_chars": 8}]}));
    let mut config = SessionConfig::new(MODEL, ws.clone(), SYSTEM_PROMPT.into());
    config.temp_dir = ws_dir.path().join("tmp");
    let recorder = HistoryRecorder::start_deferred(
        opener,
        Box::new(|_| vec!["a note from after the start".into()]),
        &config.session_id,
        &ws.display().to_string(),
        MODEL,
    );
    let session_id = config.session_id.clone();
    let (handle, events) = Session::spawn_recorded(
        config,
        client_for(&fake, fast_retry(1)),
        ToolRegistry::with_builtins(),
        std::sync::Arc::new(gd_core::approval::AllowAll),
        Some(recorder),
    );
    handle
        .submit(Op::user_text("Which rodent is the largest?"))
        .unwrap();
    Deferred {
        fake,
        events,
        session_id,
        _handle: handle,
        _ws_dir: ws_dir,
    }
}

impl Deferred {
    async fn next_event(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(30), self.events.recv())
            .await
            .expect("no event within 30 s")
            .expect("session ended")
    }

    /// Waits (polling the fake's record, which has no event for it) until
    /// the fake has sent the whole answer.
    fn wait_for_answer_sent(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.fake.main_requests()[0].stream_end_ts.is_none() {
            assert!(
                Instant::now() < deadline,
                "the fake never finished its answer"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_goes_out_before_the_database_opens_and_the_answer_waits_for_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new/history.sqlite3");
    let (release, released) = mpsc::channel::<()>();
    let (opening, opening_started) = mpsc::channel::<()>();
    let db = path.clone();
    // (The opener must be Sync: the session's agent is shared across awaits.)
    let (opening, released) = (Mutex::new(opening), Mutex::new(released));
    let mut s = start(Box::new(move || {
        let _ = opening.lock().unwrap().send(());
        // A database creation that takes as long as the test wants.
        released.lock().unwrap().recv().unwrap();
        Store::open(&db)
    }));

    // The waits below block: the session's tasks move to other threads.
    use tokio::task::block_in_place as wait;
    // The request went out with the database not even created...
    assert!(
        wait(|| s.fake.wait_for_requests(1, Duration::from_secs(20))),
        "the request waited for the database"
    );
    assert!(!path.exists());
    // ...and once it has, the opening starts (the request's body was sent).
    wait(|| opening_started.recv_timeout(Duration::from_secs(20)))
        .expect("the opening never started");
    // The whole answer has reached the client; none of it may be shown yet.
    wait(|| s.wait_for_answer_sent());
    let mut before_release = Vec::new();
    while let Ok(event) = s.events.try_recv() {
        before_release.push(event);
    }
    assert!(
        !before_release.iter().any(|e| matches!(
            e,
            Event::ContentDelta { .. } | Event::MessageRecorded { .. }
        )),
        "{before_release:?}"
    );
    release.send(()).unwrap();

    let mut seen = before_release;
    loop {
        let event = s.next_event().await;
        if let Event::ContentDelta { .. } = &event
            && !seen.iter().any(|e| matches!(e, Event::ContentDelta { .. }))
        {
            // The first piece of the answer: the prompt is on disk already
            // (and, the session running ahead of this test, maybe the answer).
            let store = Store::open(&path).unwrap();
            let page = store.page(&s.session_id, &PageQuery::default()).unwrap();
            assert!(!page.messages.is_empty());
            assert_eq!(page.messages[0].kind, MessageKind::Prompt);
            assert_eq!(page.messages[0].text, "Which rodent is the largest?");
        }
        let done = matches!(event, Event::TurnComplete { .. });
        seen.push(event);
        if done {
            break;
        }
    }
    let pos = |pick: &dyn Fn(&Event) -> bool| seen.iter().position(pick).unwrap();
    let recorded = pos(&|e| matches!(e, Event::MessageRecorded { kind, .. } if kind == "prompt"));
    let note = pos(
        &|e| matches!(e, Event::Warning { message } if message == "a note from after the start"),
    );
    let first_text = pos(&|e| matches!(e, Event::ContentDelta { .. }));
    assert!(note < first_text && recorded < first_text, "{seen:?}");
    assert!(matches!(
        seen.last(),
        Some(Event::TurnComplete {
            status: TurnStatus::Completed,
            ..
        })
    ));
    // The model's answer was recorded after it, as before.
    let store = Store::open(&path).unwrap();
    let summary = store.session(&s.session_id).unwrap().unwrap();
    assert_eq!(summary.message_count, 2);
    assert_eq!(summary.title, "Which rodent is the largest?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_cannot_open_leaves_the_run_unrecorded_with_a_warning() {
    let mut s = start(Box::new(|| {
        Err(StoreError::Invalid("the disk is on fire".into()))
    }));
    let mut seen = Vec::new();
    loop {
        let event = s.next_event().await;
        let done = matches!(event, Event::TurnComplete { .. });
        seen.push(event);
        if done {
            break;
        }
    }
    let warning = seen
        .iter()
        .position(|e| matches!(e, Event::Warning { message } if message.contains("not saved to the history") && message.contains("the disk is on fire")))
        .expect("no warning");
    let first_text = seen
        .iter()
        .position(|e| matches!(e, Event::ContentDelta { .. }))
        .unwrap();
    assert!(warning < first_text, "{seen:?}");
    let text: String = seen
        .iter()
        .filter_map(|e| match e {
            Event::ContentDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, ANSWER, "the answer is shown all the same");
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, Event::MessageRecorded { .. }))
    );
}
