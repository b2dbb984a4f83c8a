//! Session history through the real CLI process: every run is recorded,
//! `--list-sessions`, `--resume` (with the full prior history in the next
//! request), `--delete-session`, Gemini CLI sessions, and crash safety
//! (`kill -9` mid-turn loses nothing that was shown).

use crate::common;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use common::*;
use gd_store::{ListQuery, MessageKind, Role, SOURCE_GEMINI_CLI, SearchQuery, Store};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn db(run: &Run) -> Store {
    Store::open(run.home.join(".local/share/gemini-desktop/history.sqlite3")).unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The text of every part of a request's contents, in order.
fn texts(body: &Value) -> Vec<String> {
    body["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap().iter())
        .map(|p| {
            if let Some(t) = p["text"].as_str() {
                t.to_owned()
            } else if let Some(f) = p.get("functionCall") {
                format!("call:{}", f["name"].as_str().unwrap())
            } else if let Some(f) = p.get("functionResponse") {
                format!("response:{}", f["name"].as_str().unwrap())
            } else {
                p.to_string()
            }
        })
        .collect()
}

fn unsigned(contents: &[Value]) -> Vec<Value> {
    contents
        .iter()
        .map(|c| {
            let mut c = c.clone();
            for p in c["parts"].as_array_mut().unwrap() {
                p.as_object_mut().unwrap().remove("thoughtSignature");
            }
            c
        })
        .collect()
}

#[test]
fn runs_are_recorded_listed_resumed_with_full_history_and_deleted() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "list_directory", "args": {"dir_path": "{{WORKSPACE}}"}}]},
        {"match_tool": "list_directory", "text": "There are three entries."},
        {"text": "You asked about the files."},
    ]}));
    let first = run.run(&[
        "-p",
        "List the files of the zanzibar project",
        "-o",
        "json",
        "--yolo",
    ]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let id = stdout_json(&first)["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let store = db(&run);
    let s = store.session(&id).unwrap().expect("the run was recorded");
    assert_eq!(s.title, "List the files of the zanzibar project");
    assert_eq!(s.message_count, 4);
    assert!(s.tokens.prompt > 0);
    let page = store.page(&id, &Default::default()).unwrap();
    let kinds: Vec<MessageKind> = page.messages.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        [
            MessageKind::Prompt,
            MessageKind::Model,
            MessageKind::ToolResult,
            MessageKind::Model,
            MessageKind::TurnEnd
        ]
    );
    assert_eq!(
        page.messages[2].tool_calls[0].status.as_deref(),
        Some("success")
    );
    assert_eq!(
        page.messages[2].tool_calls[0].call_id,
        page.messages[1].tool_calls[0].call_id
    );
    let hits = store
        .search(&SearchQuery {
            text: "zanzibar".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits[0].session_id, id);

    let listed = run.run(&["--list-sessions"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let text = stdout(&listed);
    assert!(
        text.contains("Available sessions for this project (1):"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  1. List the files of the zanzibar project (Just now) [{id}]"
        )),
        "{text}"
    );

    // Resume: the next request carries the whole prior conversation.
    let second = run.run(&[
        "--resume",
        "latest",
        "-p",
        "What did I ask?",
        "-o",
        "json",
        "--yolo",
    ]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert_eq!(stdout_json(&second)["session_id"], id.as_str());
    // Its statistics are this run's own, as Gemini CLI 0.61 reports them after --resume (seen
    // with the peer kit): one tool call here, not the first run's too.
    assert_eq!(stdout_json(&first)["stats"]["tools"]["totalCalls"], 1);
    assert_eq!(stdout_json(&second)["stats"]["tools"]["totalCalls"], 1);
    let bodies = run.bodies();
    // (The fake replays its script from the top for the new prompt, so the
    // resumed turn calls the tool again; its first request is what matters.)
    assert!(bodies.len() >= 3);
    let before = &bodies[1]["contents"];
    let resumed = &bodies[2]["contents"];
    let n = before.as_array().unwrap().len();
    assert_eq!(n, 3, "prompt, call, results");
    // Everything the model saw before, plus its answer, plus the new prompt.
    // (The synthetic signature only goes on calls of the active loop, so the
    // earlier request had one the resumed one rightly has not.)
    assert_eq!(
        unsigned(&resumed.as_array().unwrap()[..n]),
        unsigned(before.as_array().unwrap())
    );
    let t = texts(&bodies[2]);
    assert_eq!(
        &t[t.len() - 4..],
        [
            "call:list_directory",
            "response:list_directory",
            "There are three entries.",
            "What did I ask?"
        ]
    );
    assert_eq!(t[1], "List the files of the zanzibar project");
    assert!(store.session(&id).unwrap().unwrap().message_count >= 6);

    // By number and by id prefix too; unknown ones are input errors.
    let bad = run.run(&["--resume", "7", "-p", "x"]);
    assert_eq!(bad.status.code(), Some(42), "{}", stderr(&bad));

    let deleted = run.run(&["--delete-session", "1"]);
    assert_eq!(deleted.status.code(), Some(0), "{}", stderr(&deleted));
    assert!(
        stdout(&deleted).starts_with("Deleted session 1: List the files"),
        "{}",
        stdout(&deleted)
    );
    assert!(store.session(&id).unwrap().is_none());
    assert!(
        store
            .search(&SearchQuery {
                text: "zanzibar".into(),
                ..Default::default()
            })
            .unwrap()
            .is_empty()
    );
    let empty = run.run(&["--list-sessions"]);
    assert_eq!(
        stdout(&empty).trim(),
        "No previous sessions found for this project."
    );
    let none = run.run(&["--resume", "-p", "x"]);
    assert_eq!(none.status.code(), Some(42), "{}", stderr(&none));
}

#[test]
fn kill_9_mid_turn_loses_nothing_that_was_shown() {
    let run = Run::new(json!({
        "faults": [{"request": 2, "kind": "hang"}],
        "steps": [
            {"text": "Let me look. ", "functionCalls": [{"name": "list_directory", "args": {"dir_path": "{{WORKSPACE}}"}}]},
            {"text": "never sent"},
        ]
    }));
    let mut child = run
        .command(&[
            "-p",
            "Inspect the quetzal directory",
            "-o",
            "stream-json",
            "--yolo",
            // A pinned model: no routing request, so the second request
            // the fake sees is the second main one.
            "-m",
            "gemini-2.5-flash",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The second request is in flight: the prompt, the model's call and the
    // tool's result were all shown by now.
    assert!(run.fake.wait_for_requests(2, Duration::from_secs(20)));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let store = db(&run);
    let sessions = store.list_sessions(&ListQuery::default()).unwrap();
    assert_eq!(sessions.len(), 1);
    let id = &sessions[0].id;
    let page = store.page(id, &Default::default()).unwrap();
    let got: Vec<(Role, MessageKind, String)> = page
        .messages
        .iter()
        .map(|m| (m.role, m.kind, m.text.clone()))
        .collect();
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(
        got[0],
        (
            Role::User,
            MessageKind::Prompt,
            "Inspect the quetzal directory".into()
        )
    );
    assert_eq!(got[1].1, MessageKind::Model);
    assert!(got[1].2.starts_with("Let me look."), "{:?}", got[1]);
    assert_eq!(got[2].1, MessageKind::ToolResult);
    assert!(got[2].2.contains("hello.txt"), "{:?}", got[2]);
    // And the killed session can be resumed with that history.
    let ctx = store.load_context(id).unwrap();
    assert_eq!(ctx.len(), 3);
}

#[test]
fn a_fresh_home_has_the_prompt_on_disk_before_the_answer_is_printed() {
    // The database of a fresh HOME is created while the request is in
    // flight; the answer's first words wait for the prompt's commit.
    let run = Run::new(json!({
        "faults": [{"request": 1, "kind": "hang", "hang_after_chunks": 1}],
        "steps": [{"text": "Axolotls regrow their limbs.", "chunk_chars": 9}]
    }));
    let db_path = run.home.join(".local/share/gemini-desktop/history.sqlite3");
    assert!(!db_path.exists());
    let mut child = run
        .command(&["-p", "Tell me about axolotls", "-o", "stream-json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let mut printed = None;
    for line in lines {
        let line: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if line["type"] == "message" && line["role"] == "assistant" {
            printed = Some(line["content"].as_str().unwrap().to_owned());
            break;
        }
    }
    // The answer's first words are out (the rest hangs): the prompt is in.
    assert_eq!(printed.as_deref(), Some("Axolotls "));
    let store = Store::open(&db_path).unwrap();
    let sessions = store.list_sessions(&ListQuery::default()).unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].title, "Tell me about axolotls");
    let page = store.page(&sessions[0].id, &Default::default()).unwrap();
    assert_eq!(page.messages.len(), 1);
    assert_eq!(page.messages[0].kind, MessageKind::Prompt);
    child.kill().unwrap();
    child.wait().unwrap();
}

fn gemini_cli_fixture_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../store/tests/fixtures/gemini-cli-0.61-session.jsonl")
}

#[test]
fn gemini_cli_sessions_of_the_project_are_listed_and_resumed_by_import() {
    let run = Run::new(json!({"steps": [{"text": "It printed hi."}]}));
    let ws = run.ws.canonicalize().unwrap();
    let hash = gd_store::gemini_cli::project_hash(ws.to_str().unwrap());
    let recording = std::fs::read_to_string(gemini_cli_fixture_file())
        .unwrap()
        .replace(
            "e621a553c97df570aad9e5e07c314508d82d100964e453c8cc84898d10dc9ce2",
            &hash,
        );
    let chats = run.home.join(".gemini/tmp/ws/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let file = chats.join("session-2026-11-21T23-22-966f807f.jsonl");
    // A malformed line is skipped, not fatal.
    std::fs::write(&file, format!("{recording}{{broken\n")).unwrap();

    let listed = run.run(&["--list-sessions"]);
    let text = stdout(&listed);
    assert!(
        text.contains("  1. [Gemini CLI] Run echo hi (")
            && text.contains("[966f807f-6f31-4838-834d-da61e10d105c]"),
        "{text}{}",
        stderr(&listed)
    );

    let out = run.run(&["--resume", "1", "-p", "What did it print?", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout_json(&out)["session_id"],
        "966f807f-6f31-4838-834d-da61e10d105c"
    );
    let body = &run.bodies()[0];
    let t = texts(body);
    assert!(t[0].starts_with("<session_context>"), "{t:?}");
    assert_eq!(
        &t[1..],
        [
            "Run echo hi",
            "call:run_shell_command",
            "response:run_shell_command",
            "The command printed: hi",
            "What did it print?"
        ]
    );
    let store = db(&run);
    let s = store
        .session("966f807f-6f31-4838-834d-da61e10d105c")
        .unwrap()
        .unwrap();
    assert_eq!(s.source, SOURCE_GEMINI_CLI);
    assert_eq!(s.message_count, 7);
    // Gemini CLI's file is untouched, and it is now listed once (ours).
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .ends_with("{broken\n")
    );
    let again = stdout(&run.run(&["--list-sessions"]));
    assert!(
        again.contains("(1):") && again.contains("  1. Run echo hi ("),
        "{again}"
    );
    let refused = run.run(&["--delete-session", "966f807f"]);
    assert_eq!(
        refused.status.code(),
        Some(0),
        "ours now: {}",
        stderr(&refused)
    );
}

#[test]
fn session_retention_from_gemini_cli_settings_prunes_old_sessions() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    for prompt in ["first", "second"] {
        let out = run.run(&["-p", prompt]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    assert_eq!(db(&run).session_count().unwrap(), 2, "kept by default");
    // A malformed entry warns and keeps everything.
    run.write_settings(
        &run.user_settings(),
        r#"{"general": {"sessionRetention": {"enabled": true, "maxCount": "two"}}}"#,
    );
    let out = run.run(&["-p", "third"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("sessionRetention"),
        "{}",
        stderr(&out)
    );
    assert_eq!(db(&run).session_count().unwrap(), 3);
    run.write_settings(
        &run.user_settings(),
        r#"{"general": {"sessionRetention": {"enabled": true, "maxCount": 1}}}"#,
    );
    let out = run.run(&["-p", "fourth"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let left = db(&run).list_sessions(&ListQuery::default()).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].title, "fourth", "the running session is kept");
}
