//! Restoring a checkpoint's code, conversation or both through
//! `Op::RestoreCheckpoint`, across a resume: a recorded session edits files,
//! the session ends, a new one resumes it from the store and undoes an edit
//! from before. Real git, real files, a real SQLite store, the fake Gemini
//! server over HTTP.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_checkpoint::CheckpointConfig;
use gd_core::history::HistoryRecorder;
use gd_core::tools::ToolRegistry;
use gd_core::{Session, SessionConfig, SessionHandle};
use gd_fake_gemini::FakeGemini;
use gd_protocol::{
    CheckpointInfo, Event, Op, RestoreAction, RestoredConversation, RestoredFile, TurnStatus,
};
use gd_store::{PageQuery, Store};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

/// A workspace, the history store and the checkpoint directory, kept across
/// the sessions of a test.
struct Place {
    dir: tempfile::TempDir,
    ws: PathBuf,
    store: Store,
}

impl Place {
    /// The peer-bench workspace; with `git`, a repository with one commit.
    fn new(git: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = gd_fake_gemini::fixtures::copy_peer_workspace(dir.path())
            .canonicalize()
            .unwrap();
        if git {
            self::git(&ws, &["init", "-q"]);
            self::git(&ws, &["add", "-A"]);
            self::git(&ws, &["commit", "-q", "-m", "initial"]);
        }
        let store = Store::open(dir.path().join("history.sqlite3")).unwrap();
        Self { dir, ws, store }
    }

    /// Starts a recorded session with checkpoints on: a new one, or with
    /// `resume` the stored session continued.
    async fn session(&self, scenario: Value, resume: Option<&str>) -> Running {
        let fake =
            FakeGemini::start_with_vars(scenario, &[("WORKSPACE", self.ws.to_str().unwrap())]);
        let mut config = SessionConfig::new(MODEL, self.ws.clone(), SYSTEM_PROMPT.into());
        config.temp_dir = self.dir.path().join("tmp");
        let mut checkpoints = CheckpointConfig::new(self.dir.path().join("checkpoints"));
        checkpoints.budget = Duration::from_secs(30);
        config.checkpointing = Some(checkpoints);
        let recorder = match resume {
            Some(id) => {
                config.session_id = id.to_owned();
                HistoryRecorder::resume(self.store.clone(), id)
                    .await
                    .unwrap()
            }
            None => HistoryRecorder::start(
                self.store.clone(),
                &config.session_id,
                &self.ws.display().to_string(),
                MODEL,
            )
            .await
            .unwrap(),
        };
        let session_id = config.session_id.clone();
        let (handle, events) = Session::spawn_recorded(
            config,
            client_for(&fake, fast_retry(1)),
            ToolRegistry::with_builtins(),
            Arc::new(gd_core::approval::AllowAll),
            Some(recorder),
        );
        Running {
            fake,
            handle,
            events,
            session_id,
        }
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.ws.join(path)).ok()
    }

    /// The texts of the session's stored messages, in order.
    fn transcript(&self, session_id: &str) -> Vec<String> {
        self.store
            .page(session_id, &PageQuery::default())
            .unwrap()
            .messages
            .into_iter()
            // The messages, not the turn ends recorded with them.
            .filter(|m| m.kind != gd_store::MessageKind::TurnEnd)
            .map(|m| m.text)
            .collect()
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

struct Running {
    fake: FakeGemini,
    handle: SessionHandle,
    events: UnboundedReceiver<Event>,
    session_id: String,
}

impl Running {
    async fn next(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(60), self.events.recv())
            .await
            .expect("an event within 60 s")
            .expect("session open")
    }

    async fn turn(&mut self, prompt: &str) -> Vec<Event> {
        self.handle.submit(Op::user_text(prompt)).unwrap();
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            let done = matches!(event, Event::TurnComplete { .. });
            events.push(event);
            if done {
                return events;
            }
        }
    }

    async fn checkpoints(&mut self) -> Vec<CheckpointInfo> {
        self.handle.submit(Op::ListCheckpoints).unwrap();
        loop {
            if let Event::Checkpoints { checkpoints } = self.next().await {
                return checkpoints;
            }
        }
    }

    /// The snapshot the last restore took first (to undo it).
    async fn undo_snapshot(&mut self) -> CheckpointInfo {
        self.checkpoints()
            .await
            .into_iter()
            .find(|c| c.label.is_some())
            .expect("the undo snapshot is listed")
    }

    /// Restores and returns the answer: the restored event or the error's message.
    async fn restore(
        &mut self,
        checkpoint_id: &str,
        code: bool,
        conversation: bool,
    ) -> Result<(Vec<RestoredFile>, Option<RestoredConversation>), String> {
        self.handle
            .submit(Op::RestoreCheckpoint {
                checkpoint_id: checkpoint_id.to_owned(),
                code,
                conversation,
            })
            .unwrap();
        loop {
            match self.next().await {
                Event::CheckpointRestored {
                    checkpoint_id: id,
                    files,
                    conversation,
                    ..
                } => {
                    assert_eq!(id, checkpoint_id);
                    return Ok((files, conversation));
                }
                Event::CheckpointError {
                    checkpoint_id: id,
                    message,
                } => {
                    assert_eq!(id.as_deref(), Some(checkpoint_id));
                    return Err(message);
                }
                _ => {}
            }
        }
    }

    async fn end(self) {
        self.handle.submit(Op::Shutdown).unwrap();
        self.handle.closed().await;
    }

    /// What the model was sent last, as text.
    fn last_request(&self) -> String {
        let bodies: Vec<Value> = self.fake.main_requests().into_iter().map(body).collect();
        bodies.last().expect("a request")["contents"].to_string()
    }
}

/// A turn that edits `hello.txt` and creates `notes/new.txt`.
fn edits() -> Value {
    json!({"steps": [
        {"functionCalls": [{"name": "replace", "args": {
            "file_path": "hello.txt", "old_string": "hello", "new_string": "goodbye",
            "instruction": "say goodbye"}}]},
        {"functionCalls": [{"name": "write_file", "args": {
            "file_path": "notes/new.txt", "content": "created by the agent\n"}}]},
        {"text": "Done."}
    ]})
}

/// Records the chat and the edits in a session that then ends; returns its
/// id. The files are edited on disk.
async fn record_edits(place: &Place) -> String {
    let mut first = place
        .session(json!({"steps": [{"text": "Noted: okapis."}]}), None)
        .await;
    assert_eq!(
        status(&first.turn("remember the okapi").await),
        TurnStatus::Completed
    );
    first
        .fake
        .reset(edits(), &[("WORKSPACE", place.ws.to_str().unwrap())]);
    let events = first.turn("change hello").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(place.read("hello.txt").as_deref(), Some("goodbye\n"));
    assert!(place.read("notes/new.txt").is_some());
    let id = first.session_id.clone();
    first.end().await;
    id
}

/// The checkpoint taken before the `replace` of session `id`, listed by a
/// session resumed from the store; it names the stored prompt of its turn.
async fn replace_checkpoint(place: &Place, session: &mut Running, id: &str) -> CheckpointInfo {
    let list = session.checkpoints().await;
    let edits: Vec<&CheckpointInfo> = list
        .iter()
        .filter(|c| c.session_id.as_deref() == Some(id) && c.tool.is_some())
        .collect();
    assert_eq!(edits.len(), 2, "{list:#?}");
    let replace = edits
        .iter()
        .find(|c| c.tool.as_deref() == Some("replace"))
        .unwrap();
    let (owner, prompt) = place
        .store
        .message(replace.message_id.as_deref().expect("linked to a message"))
        .unwrap()
        .expect("the linked message is stored");
    assert_eq!(owner, id);
    assert_eq!(prompt.text, "change hello", "the prompt of the edit's turn");
    let call = replace.call_id.as_deref().unwrap();
    assert!(
        place.store.message_for_call(id, call).unwrap().is_some(),
        "the tool call is the stored one"
    );
    (*replace).clone()
}

/// Records the edits in a session that ends, and resumes it from the store (as after a
/// restart): the session id, the resumed session and the `replace`'s checkpoint.
async fn resumed_after_edits(place: &Place) -> (String, Running, CheckpointInfo) {
    let id = record_edits(place).await;
    let mut resumed = place
        .session(json!({"steps": [{"text": "Fresh answer."}]}), Some(&id))
        .await;
    let checkpoint = replace_checkpoint(place, &mut resumed, &id).await;
    (id, resumed, checkpoint)
}

async fn code_and_conversation_across_a_resume(in_git: bool) {
    let place = Place::new(in_git);
    let head = in_git.then(|| git_head(&place.ws));
    let (id, mut resumed, checkpoint) = resumed_after_edits(&place).await;
    let (files, conversation) = resumed
        .restore(&checkpoint.checkpoint_id, true, true)
        .await
        .unwrap();
    assert_eq!(
        files,
        vec![
            RestoredFile {
                path: "hello.txt".into(),
                action: RestoreAction::Reverted
            },
            RestoredFile {
                path: "notes/new.txt".into(),
                action: RestoreAction::Removed
            },
        ]
    );
    // The edit's turn went: its prompt, two calls with their results, the answer.
    assert_eq!(
        conversation,
        Some(RestoredConversation {
            message_id: checkpoint.message_id.clone().unwrap(),
            removed: 6
        })
    );
    assert_eq!(place.read("hello.txt").as_deref(), Some("hello\n"));
    assert_eq!(place.read("notes/new.txt"), None);
    assert_eq!(
        place.transcript(&id),
        ["remember the okapi", "Noted: okapis."]
    );
    if let Some(head) = head {
        assert_eq!(git_head(&place.ws), head, "the project's git is untouched");
        assert_eq!(
            git(&place.ws, &["status", "--porcelain"]),
            "",
            "the work tree is as committed again"
        );
    }

    // The next request carries the earlier turn but not the undone one.
    assert_eq!(
        status(&resumed.turn("what now?").await),
        TurnStatus::Completed
    );
    let sent = resumed.last_request();
    assert!(sent.contains("remember the okapi"), "{sent}");
    assert!(sent.contains("Noted: okapis."), "{sent}");
    assert!(!sent.contains("change hello"), "{sent}");
    assert!(!sent.contains("functionCall"), "{sent}");
    assert!(sent.contains("what now?"), "{sent}");

    // The snapshot taken before the restore is this session's and undoes it.
    let undo = resumed.undo_snapshot().await;
    assert_eq!(undo.session_id.as_deref(), Some(id.as_str()));
    resumed
        .restore(&undo.checkpoint_id, true, false)
        .await
        .unwrap();
    assert_eq!(place.read("hello.txt").as_deref(), Some("goodbye\n"));
    assert!(place.read("notes/new.txt").is_some());
    resumed.end().await;
}

fn git_head(ws: &Path) -> String {
    git(ws, &["rev-parse", "HEAD"])
}

#[tokio::test]
async fn code_and_conversation_are_restored_across_a_resume_in_a_git_repository() {
    code_and_conversation_across_a_resume(true).await;
}

#[tokio::test]
async fn code_and_conversation_are_restored_across_a_resume_in_a_plain_folder() {
    code_and_conversation_across_a_resume(false).await;
}

#[tokio::test]
async fn the_conversation_alone_leaves_the_files_and_the_code_alone_leaves_the_conversation() {
    let place = Place::new(false);
    let (id, mut resumed, checkpoint) = resumed_after_edits(&place).await;

    // Code only: the files go back, the conversation stays.
    let (files, conversation) = resumed
        .restore(&checkpoint.checkpoint_id, true, false)
        .await
        .unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(conversation, None);
    assert_eq!(place.read("hello.txt").as_deref(), Some("hello\n"));
    assert_eq!(place.transcript(&id).len(), 8);

    // Put the edits back (the undo snapshot), then the conversation only.
    let undo = resumed.undo_snapshot().await;
    resumed
        .restore(&undo.checkpoint_id, true, false)
        .await
        .unwrap();
    let (files, conversation) = resumed
        .restore(&checkpoint.checkpoint_id, false, true)
        .await
        .unwrap();
    assert!(files.is_empty());
    assert_eq!(conversation.unwrap().removed, 6);
    assert_eq!(
        place.read("hello.txt").as_deref(),
        Some("goodbye\n"),
        "the files stay as they are"
    );
    assert_eq!(place.transcript(&id).len(), 2);

    // Its conversation is gone now: asking again is a clear error, and
    // nothing changes (not even the code of a "both").
    let message = resumed
        .restore(&checkpoint.checkpoint_id, true, true)
        .await
        .unwrap_err();
    assert!(message.contains("no longer in the history"), "{message}");
    assert_eq!(place.read("hello.txt").as_deref(), Some("goodbye\n"));
    resumed.end().await;
}

#[tokio::test]
async fn another_sessions_conversation_is_refused_before_anything_changes() {
    let place = Place::new(true);
    let id = record_edits(&place).await;
    // A new session on the same folder sees the checkpoints of the other.
    let mut other = place
        .session(json!({"steps": [{"text": "Hi."}]}), None)
        .await;
    assert_ne!(other.session_id, id);
    let checkpoint = replace_checkpoint(&place, &mut other, &id).await;
    let message = other
        .restore(&checkpoint.checkpoint_id, true, true)
        .await
        .unwrap_err();
    assert!(message.contains("belongs to another session"), "{message}");
    assert!(message.contains(&id), "{message}");
    assert_eq!(
        place.read("hello.txt").as_deref(),
        Some("goodbye\n"),
        "not restored by halves"
    );
    assert_eq!(place.transcript(&id).len(), 8);
    // Its code can be restored from here.
    other
        .restore(&checkpoint.checkpoint_id, true, false)
        .await
        .unwrap();
    assert_eq!(place.read("hello.txt").as_deref(), Some("hello\n"));
    // Nothing at all is an error too.
    let message = other
        .restore(&checkpoint.checkpoint_id, false, false)
        .await
        .unwrap_err();
    assert!(message.contains("Nothing to restore"), "{message}");
    other.end().await;
}

#[tokio::test]
async fn a_checkpoint_naming_the_chats_prompt_id_is_found_by_its_tool_call() {
    // Checkpoints taken before the history store held the chat's prompt id.
    let place = Place::new(false);
    let id = record_edits(&place).await;
    let repo = gd_checkpoint::ShadowRepo::open(
        &CheckpointConfig::new(place.dir.path().join("checkpoints")),
        &place.ws,
    )
    .unwrap();
    let mut checkpoint = repo
        .list()
        .unwrap()
        .into_iter()
        .find(|c| c.meta.tool.as_deref() == Some("replace"))
        .unwrap();
    let stored_prompt = checkpoint.meta.message_id.clone().unwrap();
    checkpoint.meta.message_id = Some(format!("{id}########2"));
    let point = gd_core::restore::conversation_point(&place.store, &checkpoint, None).unwrap();
    assert_eq!(point.session_id, id);
    assert_eq!(point.message_id, stored_prompt);
    // And a checkpoint of no session has no conversation.
    checkpoint.meta.session_id = None;
    let error = gd_core::restore::conversation_point(&place.store, &checkpoint, None).unwrap_err();
    assert!(
        error.to_string().contains("restore the code only"),
        "{error}"
    );
}

#[tokio::test]
async fn a_stored_sessions_checkpoints_are_listed_without_a_session() {
    let place = Place::new(false);
    let id = record_edits(&place).await;
    let root = place.dir.path().join("checkpoints");
    let list = gd_core::checkpoint::session_checkpoints(&root, &place.ws, &id).unwrap();
    assert_eq!(
        list.iter()
            .map(|c| c.tool.as_deref().unwrap())
            .collect::<Vec<_>>(),
        ["write_file", "replace"],
        "newest first"
    );
    assert!(list.iter().all(|c| c.message_id.is_some()));
    assert!(
        gd_core::checkpoint::session_checkpoints(&root, &place.ws, "another")
            .unwrap()
            .is_empty()
    );
    // A folder without checkpoints, or gone: nothing, and nothing created.
    let elsewhere = place.dir.path().join("no-checkpoints");
    assert!(
        gd_core::checkpoint::session_checkpoints(&elsewhere, &place.ws, &id)
            .unwrap()
            .is_empty()
    );
    assert!(!elsewhere.exists());
    assert!(
        gd_core::checkpoint::session_checkpoints(&root, &place.dir.path().join("gone"), &id)
            .unwrap()
            .is_empty()
    );
}
