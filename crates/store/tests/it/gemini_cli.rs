//! Reading and importing Gemini CLI's session recordings: a real one
//! (gemini-cli 0.61, tests/fixtures) and files written in its format.

use std::path::{Path, PathBuf};

use gd_store::gemini_cli::{list_sessions, project_hash, read_file, to_messages};
use gd_store::{MessageKind, Role, SOURCE_GEMINI_CLI, SearchQuery, Store};
use pretty_assertions::assert_eq;
use serde_json::json;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gemini-cli-0.61-session.jsonl")
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn the_real_recording_folds_into_the_conversation_the_model_saw() {
    let s = read_file(&fixture()).unwrap();
    assert_eq!(s.id, "966f807f-6f31-4838-834d-da61e10d105c");
    assert_eq!(s.skipped_lines, 0);
    assert_eq!(s.kind.as_deref(), Some("main"));
    // session context ($set.messages), prompt, gemini (upserted twice), tool result, answer
    assert_eq!(s.messages.len(), 5);
    assert_eq!(s.first_prompt().as_deref(), Some("Run echo hi"));
    let m = to_messages(&s);
    let kinds: Vec<(Role, MessageKind)> = m.iter().map(|m| (m.role, m.kind)).collect();
    assert_eq!(
        kinds,
        [
            (Role::User, MessageKind::Prompt),
            (Role::User, MessageKind::Prompt),
            (Role::Model, MessageKind::Model),
            (Role::User, MessageKind::ToolResult),
            (Role::Model, MessageKind::Model),
        ]
    );
    assert_eq!(m[0].text, "", "the session context is not searchable text");
    let call = &m[2].parts[0]["functionCall"];
    assert_eq!(call["name"], "run_shell_command");
    assert_eq!(call["args"]["command"], "echo hi");
    assert_eq!(m[2].tool_calls[0].status.as_deref(), Some("success"));
    assert_eq!(m[2].usage.unwrap().prompt, 11882);
    assert_eq!(m[3].parts[0]["functionResponse"]["id"], call["id"]);
    assert_eq!(m[4].text, "The command printed: hi");
    assert_eq!(m[4].model.as_deref(), Some("gemini-2.5-flash"));
}

#[test]
fn set_rewind_upserts_and_malformed_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session-x.jsonl");
    let meta = json!({"sessionId": "sess-1", "projectHash": "abc", "startTime": "2026-09-10T18:13:00Z", "lastUpdated": "2026-09-10T18:13:00Z", "kind": "main"});
    let lines = vec![
        meta.to_string(),
        json!({"id": "u1", "timestamp": "2026-09-10T18:13:01Z", "type": "user", "content": "first question"}).to_string(),
        "{not json".to_string(),
        json!({"id": "g1", "type": "gemini", "content": "first answer", "model": "gemini-2.5-pro"}).to_string(),
        json!({"$set": {"lastUpdated": "2026-09-10T18:20:00Z", "summary": "Questions"}}).to_string(),
        json!({"id": "u2", "type": "user", "content": [{"text": "second question"}]}).to_string(),
        json!({"id": "g2", "type": "gemini", "content": "wrong answer"}).to_string(),
        // Rewind drops u2 and g2 ...
        json!({"$rewindTo": "u2"}).to_string(),
        json!({"id": "u3", "type": "user", "content": "second question, again"}).to_string(),
        // ... an upsert replaces g1 in place ...
        json!({"id": "g1", "type": "gemini", "content": "first answer, edited"}).to_string(),
        json!({"id": "i1", "type": "info", "content": "an info line"}).to_string(),
        json!([1, 2, 3]).to_string(),
        json!({"unknown": true}).to_string(),
        "".to_string(),
    ];
    write_lines(&file, &lines);
    let s = read_file(&file).unwrap();
    assert_eq!(s.skipped_lines, 3);
    assert_eq!(s.summary.as_deref(), Some("Questions"));
    assert_eq!(s.updated_ms, 1789064400000);
    let ids: Vec<String> = (0..s.messages.len())
        .map(|i| s.message(i).unwrap()["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["u1", "g1", "u3", "i1"]);
    assert_eq!(s.kinds, ["user", "gemini", "user", "info"]);
    assert_eq!(s.message(1).unwrap()["content"], "first answer, edited");
    let m = to_messages(&s);
    assert_eq!(m.len(), 3, "the info line is not conversation");
    assert_eq!(m[0].id, "sess-1:u1");

    // $rewindTo an unknown id clears everything; $set.messages replaces.
    let lines = vec![
        meta.to_string(),
        json!({"id": "a", "type": "user", "content": "x"}).to_string(),
        json!({"$rewindTo": "missing"}).to_string(),
        json!({"id": "b", "type": "user", "content": "y"}).to_string(),
        json!({"$set": {"messages": [{"id": "c", "type": "user", "content": "compressed"}]}})
            .to_string(),
        json!({"id": "d", "type": "gemini", "content": "after"}).to_string(),
    ];
    write_lines(&file, &lines);
    let s = read_file(&file).unwrap();
    let ids: Vec<String> = (0..s.messages.len())
        .map(|i| s.message(i).unwrap()["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["c", "d"]);
}

#[test]
fn legacy_json_files_with_results_only_in_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session-2025-01-01T10-00-abcd1234.json");
    let doc = json!({
        "sessionId": "legacy-1",
        "projectHash": "h",
        "startTime": "2025-01-01T10:00:00Z",
        "lastUpdated": "2025-01-01T10:05:00Z",
        "messages": [
            {"id": "1", "type": "user", "content": "list files"},
            {"id": "2", "type": "gemini", "content": "", "thoughts": [{"subject": "Listing", "description": "use ls"}],
             "toolCalls": [{"id": "c1", "name": "list_directory", "args": {"dir_path": "."}, "status": "success",
                            "result": [{"functionResponse": {"id": "c1", "name": "list_directory", "response": {"output": "a.txt\nb.txt"}}}]}]},
            {"id": "3", "type": "gemini", "content": "Two files."}
        ]
    });
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let s = read_file(&file).unwrap();
    let m = to_messages(&s);
    let kinds: Vec<MessageKind> = m.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        [
            MessageKind::Prompt,
            MessageKind::Model,
            MessageKind::ToolResult,
            MessageKind::Model
        ]
    );
    assert_eq!(m[1].thoughts[0].subject, "Listing");
    assert_eq!(
        m[2].parts[0]["functionResponse"]["response"]["output"],
        "a.txt\nb.txt"
    );
    assert_eq!(m[2].text, "a.txt\nb.txt");
    // Not a session at all.
    let bad = dir.path().join("session-bad.json");
    std::fs::write(&bad, "[]").unwrap();
    assert!(read_file(&bad).is_err());
}

#[test]
fn listing_finds_a_projects_sessions_and_import_makes_them_searchable_and_resumable() {
    let home = tempfile::tempdir().unwrap();
    let gemini = home.path().join(".gemini");
    let workspace = "/home/me/project";
    let hash = project_hash(workspace);
    let chats = gemini.join("tmp/project/chats");
    let mine = |id: &str, when: &str, prompt: &str| {
        vec![
            json!({"sessionId": id, "projectHash": hash, "startTime": when, "lastUpdated": when, "kind": "main"}).to_string(),
            json!({"id": "u", "timestamp": when, "type": "user", "content": prompt}).to_string(),
            json!({"id": "g", "timestamp": when, "type": "gemini", "content": "ok", "tokens": {"input": 10, "output": 2, "total": 12}}).to_string(),
        ]
    };
    write_lines(
        &chats.join("session-2026-01-01T10-00-aaaaaaaa.jsonl"),
        &mine(
            "aaaaaaaa-1",
            "2026-01-01T10:00:00Z",
            "older pelican question",
        ),
    );
    write_lines(
        &chats.join("session-2026-01-02T10-00-bbbbbbbb.jsonl"),
        &mine("bbbbbbbb-2", "2026-01-02T10:00:00Z", "newer question"),
    );
    // Another project's, a subagent's, and garbage.
    write_lines(
        &gemini.join("tmp/other/chats/session-2026-01-03T10-00-cccccccc.jsonl"),
        &[json!({"sessionId": "c", "projectHash": "other"}).to_string()],
    );
    write_lines(
        &chats.join("session-2026-01-04T10-00-dddddddd.jsonl"),
        &[json!({"sessionId": "d", "projectHash": hash, "kind": "subagent"}).to_string()],
    );
    write_lines(
        &chats.join("session-garbage.jsonl"),
        &["garbage".to_string()],
    );
    let found = list_sessions(&gemini, Some(&hash));
    assert_eq!(
        found.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["bbbbbbbb-2", "aaaaaaaa-1"]
    );
    assert_eq!(list_sessions(&gemini, None).len(), 3);

    let db = tempfile::tempdir().unwrap();
    let store = Store::open(db.path().join("h.sqlite3")).unwrap();
    let id = store.import_gemini_cli(&found[1], workspace).unwrap();
    assert_eq!(
        store.import_gemini_cli(&found[1], workspace).unwrap(),
        id,
        "importing twice is a no-op"
    );
    let s = store.session(&id).unwrap().unwrap();
    assert_eq!(s.source, SOURCE_GEMINI_CLI);
    assert_eq!(s.workspace, workspace);
    assert_eq!(s.title, "older pelican question");
    assert_eq!(s.message_count, 2);
    assert_eq!(s.tokens.total, 12);
    assert!(s.origin.unwrap().ends_with("aaaaaaaa.jsonl"));
    let hits = store
        .search(&SearchQuery {
            text: "pelican".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits[0].session_id, id);
    let ctx = store.load_context(&id).unwrap();
    assert_eq!(ctx.len(), 2);
    assert_eq!(ctx[0].parts, json!([{"text": "older pelican question"}]));
}

#[test]
fn project_hash_is_sha256_of_the_path() {
    assert_eq!(
        project_hash(""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_ne!(project_hash("/a"), project_hash("/b"));
}
